"""An independent, deliberately naive Game of Life for checking golmpi: numpy, one cell at a time
in meaning (neighbour sums by shifting the whole grid), no bit packing, no decomposition."""
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


def unpack(frame, width):
    """packed-lsb rows [H, ceil(W/8)] to cells [H, W]."""
    bits = np.unpackbits(frame, axis=1, bitorder="little")
    return bits[:, :width]
