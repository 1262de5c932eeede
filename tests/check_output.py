#!/usr/bin/env python3
"""Check the files test_io_roundtrip wrote, independently of the C code: every run described by a
<base>.manifest.json in DIR must have exactly the chunk files its schedule names, with the right
shapes, types, attributes and generations, every cell of every frame equal to the known pattern,
an index whose virtual /frames shows the same frames (also after the directory is moved), a
/population in every chunk and in the index equal to the live cells of those frames, and no
.part file left anywhere.

Exits 77 (ctest: skipped) when this Python cannot import h5py and numpy.

usage: check_output.py DIR"""
import glob
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import h5py
    import numpy as np
    import reference  # the frame schedule and chunk names
except Exception as e:  # ctest reports the check skipped (SKIP_RETURN_CODE 77), never absent
    print("SKIP: %s cannot import h5py and numpy (%s)" % (sys.executable, e))
    sys.exit(77)

failures = []


def expect(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAILED:", msg, file=sys.stderr)


def schedule(m):
    return reference.frame_generations(m["g_start"], m["g_end"], m["save_every"])


def chunks(m):
    return reference.chunk_schedule(m["g_start"], m["g_end"], m["save_every"], m["chunk"])


def expected_frame(m, g):
    """(7x + 13y + 31g) % 101 < 30, as stored: u8 cells or packed bytes, LSB = leftmost cell."""
    y, x = np.mgrid[0:m["height"], 0:m["width"]]
    cells = ((7 * x + 13 * y + 31 * g) % 101 < 30).astype(np.uint8)
    if m["encoding"] == "packed-lsb":
        return np.packbits(cells, axis=1, bitorder="little")
    return cells


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def check_attrs(where, attrs, m):
    want = {"rule": m["rule"], "boundary": m["boundary"], "encoding": m["encoding"]}
    for k, v in want.items():
        expect(k in attrs and text(attrs[k]) == v, "%s: attribute %s = %r, want %r"
               % (where, k, attrs.get(k), v))
    for k, dtype in (("width", np.int64), ("height", np.int64), ("seed", np.uint64),
                     ("density", np.float64), ("ranks", np.int32)):
        ok = k in attrs and attrs[k].dtype == dtype and attrs[k] == m[k]
        expect(ok, "%s: attribute %s = %r, want %r (%s)" % (where, k, attrs.get(k), m[k],
                                                             dtype.__name__))
    expect("version" in attrs and len(text(attrs["version"])) > 0, "%s: no version" % where)


def live_cells(m, frame):
    """The live cells of one stored frame: a packed row's bits past the width do not count."""
    if m["encoding"] == "packed-lsb":
        return int(np.unpackbits(frame, axis=1, bitorder="little")[:, :m["width"]].sum())
    return int(frame.astype(np.int64).sum())


def row_bytes(m):
    return (m["width"] + 7) // 8 if m["encoding"] == "packed-lsb" else m["width"]


def check_run(d, m):
    base = m["base"]
    shape_hw = (m["height"], row_bytes(m))
    names = [reference.chunk_name(base, gens) for gens in chunks(m)]
    present = sorted(os.path.basename(p) for p in glob.glob(os.path.join(d, base + "_*")))
    expect(present == sorted(names), "%s: chunk files %s, want %s" % (base, present, names))

    frames_by_t = []
    for name, gens in zip(names, chunks(m)):
        path = os.path.join(d, name)
        if not os.path.exists(path):
            continue
        with h5py.File(path, "r") as f:
            check_attrs(name, f.attrs, m)
            fr = f["frames"]
            expect(fr.dtype == np.uint8, "%s: frames dtype %s" % (name, fr.dtype))
            expect(fr.shape == (len(gens),) + shape_hw, "%s: frames shape %s" % (name, fr.shape))
            expect(fr.chunks is None and fr.compression is None,
                   "%s: frames not contiguous" % name)
            if m["encoding"] == "packed-lsb":
                expect(text(fr.attrs.get("encoding", b"")) == "packed-lsb",
                       "%s: /frames lacks encoding=packed-lsb" % name)
            g = f["generations"]
            expect(g.dtype == np.int64 and g[()].tolist() == gens,
                   "%s: generations %s (%s), want %s" % (name, g[()], g.dtype, gens))
            data = fr[()]
            pop = f["population"][()].tolist() if "population" in f else None
            want_pop = [live_cells(m, expected_frame(m, gen)) for gen in gens]
            expect(pop == want_pop and f["population"].dtype == np.int64,
                   "%s: /population %s, the frames hold %s" % (name, pop, want_pop))
            for i, gen in enumerate(gens):
                want = expected_frame(m, gen)
                bad = int(np.count_nonzero(data[i] != want)) if data.shape[1:] == shape_hw else -1
                expect(bad == 0, "%s: frame %d (generation %d): %d cells differ"
                       % (name, i, gen, bad))
                frames_by_t.append(data[i])

    check_index(os.path.join(d, base + ".h5"), m, frames_by_t, names)


def check_index(path, m, frames_by_t, names):
    gens = schedule(m)
    expect(os.path.exists(path), "%s missing" % path)
    if not os.path.exists(path):
        return
    with h5py.File(path, "r") as f:
        check_attrs(path, f.attrs, m)
        fr = f["frames"]
        expect(fr.is_virtual, "%s: /frames is not virtual" % path)
        srcs = sorted({s.file_name for s in fr.virtual_sources()})
        expect(srcs == sorted(names), "%s: sources %s, want bare names %s" % (path, srcs, names))
        expect(fr.shape == (len(gens), m["height"], row_bytes(m)) and fr.dtype == np.uint8,
               "%s: frames %s %s" % (path, fr.shape, fr.dtype))
        expect(f["generations"].dtype == np.int64 and f["generations"][()].tolist() == gens,
               "%s: generations %s" % (path, f["generations"][()]))
        want_pop = [live_cells(m, expected_frame(m, g)) for g in gens]
        pop = f["population"][()].tolist() if "population" in f else None
        expect(pop == want_pop and f["population"].dtype == np.int64,
               "%s: /population %s, the frames hold %s" % (path, pop, want_pop))
        for t, want in enumerate(frames_by_t):
            if t < fr.shape[0]:
                expect(np.array_equal(fr[t], want), "%s: frame %d differs from its chunk"
                       % (path, t))


def check_moved(d, m):
    """The index names its chunks relative to itself: it works from another directory and cwd."""
    with tempfile.TemporaryDirectory() as tmp:
        moved = os.path.join(tmp, "moved")
        shutil.copytree(d, moved)
        cwd = os.getcwd()
        os.chdir(tmp)
        try:
            with h5py.File(os.path.join("moved", m["base"] + ".h5"), "r") as f:
                last = f["frames"][-1]
            expect(np.array_equal(last, expected_frame(m, m["g_end"])),
                   "%s: the moved index does not show the last frame" % m["base"])
        finally:
            os.chdir(cwd)


def main():
    d = sys.argv[1]
    manifests = sorted(glob.glob(os.path.join(d, "*.manifest.json")))
    expect(len(manifests) >= 3, "expected 3 manifests in %s, found %d" % (d, len(manifests)))
    parts = [p for p in os.listdir(d) if p.endswith(".part")]
    expect(not parts, "leftover .part files: %s" % parts)
    for p in manifests:
        with open(p) as fp:
            m = json.load(fp)
        check_run(d, m)
        check_moved(d, m)
    if failures:
        print("check_output: %d failures" % len(failures))
        return 1
    print("check_output: %d runs ok" % len(manifests))
    return 0


if __name__ == "__main__":
    sys.exit(main())
