"""The one oracle of golmpi's Python checks, written independently of the C code: a deliberately
naive Game of Life (numpy, one cell at a time in meaning: neighbour sums by shifting the whole grid,
no bit packing, no decomposition), the counter-based random start, and the frame schedule (which
generations get a frame, how they group into chunk files, and the files' names). Every check under
tests/ that needs one of these imports it from here, so a wrong answer cannot hide in a copy.

Import it from a script in tests/ or below with:
    sys.path.insert(0, <the tests/ directory>); import reference"""
import numpy as np

MASK64 = (1 << 64) - 1


def mix64(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def random_grid(seed, density, width, height):
    """The counter-based start of DESIGN: cell (row, col) from a hash of (seed, row, col)."""
    threshold = int(density * 2**53)
    base = mix64((seed + 0x9E3779B97F4A7C15) & MASK64)
    grid = np.zeros((height, width), dtype=np.uint8)
    for r in range(height):
        hr = mix64(base ^ r)
        for c in range(width):
            h = mix64(hr ^ ((c + 0x632BE59BD9B4E019) & MASK64))
            grid[r, c] = 1 if (h >> 11) < threshold else 0
    return grid


def parse_rule(text):
    text = text.upper()
    b, s = text.split("/")
    assert b[0] == "B" and s[0] == "S", text
    return {int(d) for d in b[1:]}, {int(d) for d in s[1:]}


LIFE = parse_rule("B3/S23")


def step(grid, rule, torus):
    birth, survive = rule
    h, w = grid.shape
    g = grid.astype(np.int32)
    if torus:
        n = sum(np.roll(np.roll(g, dy, 0), dx, 1)
                for dy in (-1, 0, 1) for dx in (-1, 0, 1) if (dy, dx) != (0, 0))
    else:
        p = np.pad(g, 1)
        n = sum(p[1 + dy:1 + dy + h, 1 + dx:1 + dx + w]
                for dy in (-1, 0, 1) for dx in (-1, 0, 1) if (dy, dx) != (0, 0))
    born = np.isin(n, list(birth)) & (g == 0)
    stays = np.isin(n, list(survive)) & (g == 1)
    return (born | stays).astype(np.uint8)


def evolve(grid, rule, torus, generations):
    """`generations` steps of `step`."""
    for _ in range(generations):
        grid = step(grid, rule, torus)
    return grid


def frame_generations(g_start, g_end, save_every):
    """The generations golmpi saves a frame of (DESIGN, Output): the start, every multiple of
    save_every after it and before the end, and the end; one frame when the run has no steps. A
    restart at g_start continues the multiples of the original series, not of g_start."""
    if g_start == g_end:
        return [g_start]
    first = (g_start // save_every + 1) * save_every
    return [g_start] + list(range(first, g_end, save_every)) + [g_end]


def chunk_schedule(g_start, g_end, save_every, chunk):
    """The frames' generations grouped into chunk files, `chunk` frames a file, the last shorter."""
    gens = frame_generations(g_start, g_end, save_every)
    return [gens[i:i + chunk] for i in range(0, len(gens), chunk)]


def chunk_name(base, gens):
    """A chunk file's name: <base>_<first>.h5 for one frame, <base>_<first>-<last>.h5 for more."""
    if len(gens) == 1:
        return "%s_%06d.h5" % (base, gens[0])
    return "%s_%06d-%06d.h5" % (base, gens[0], gens[-1])


# what follows <base> in a chunk file's name, as a regex: six digits or more (io/format.c's %06lld)
CHUNK_NAME = r"_\d{6,}(-\d{6,})?\.h5"


def unpack(frame, width):
    """packed-lsb rows [H, ceil(W/8)] to cells [H, W]."""
    bits = np.unpackbits(frame, axis=1, bitorder="little")
    return bits[:, :width]
