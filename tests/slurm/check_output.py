#!/usr/bin/env python3
"""Check one golmpi run's output: the index, the chunk files, the run statistics, and that each
frame follows from the one before under B3/S23 on a torus (tests/reference.py's step and frame
schedule). With --same-as, also that other runs (other rank counts, other launchers) wrote the very
same frames."""
import argparse
import json
import os
import re
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import reference  # noqa: E402  (tests/reference.py: the Life step and the frame schedule)


def fail(msg):
    print("check_output: FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def read_index(path):
    with h5py.File(path, "r") as f:
        return f["frames"][...], f["generations"][...].tolist()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("index")
    ap.add_argument("--size", type=int)
    ap.add_argument("--steps", type=int)
    ap.add_argument("--save-every", type=int)
    ap.add_argument("--chunk", type=int)
    ap.add_argument("--same-as", action="append", default=[])
    a = ap.parse_args()
    if not os.path.isfile(a.index):
        fail(f"{a.index}: missing")
    frames, gens = read_index(a.index)
    d = os.path.dirname(os.path.abspath(a.index))
    base = os.path.basename(a.index)[:-len(".h5")]

    if a.size:
        want = reference.frame_generations(0, a.steps, a.save_every)
        if gens != want:
            fail(f"{a.index}: generations {gens}, expected {want}")
        if frames.shape != (len(want), a.size, a.size) or frames.dtype != np.uint8:
            fail(f"{a.index}: frames {frames.shape} {frames.dtype}, expected ({len(want)}, {a.size}, {a.size}) uint8")
        if not np.isin(frames, (0, 1)).all():
            fail(f"{a.index}: frame values other than 0 and 1")
        if not frames[0].any():
            fail(f"{a.index}: generation 0 is empty")
        for i in range(1, len(gens)):
            after = reference.evolve(frames[i - 1], reference.LIFE, True, gens[i] - gens[i - 1])
            if not np.array_equal(after, frames[i]):
                fail(f"{a.index}: generation {gens[i]} does not follow from generation {gens[i - 1]}")
        chunks = reference.chunk_schedule(0, a.steps, a.save_every, a.chunk)
        names = [reference.chunk_name(base, c) for c in chunks]
        name = re.escape(base) + reference.CHUNK_NAME
        present = sorted(n for n in os.listdir(d) if re.fullmatch(name, n))
        if present != sorted(names):
            fail(f"{d}: chunk files {present}, expected {sorted(names)}")
        leftovers = [n for n in os.listdir(d) if n.endswith(".part")]
        if leftovers:
            fail(f"{d}: unfinished files left: {leftovers}")
        k = 0
        for name, c in zip(names, chunks):
            with h5py.File(os.path.join(d, name), "r") as f:
                if f["generations"][...].tolist() != c:
                    fail(f"{name}: generations {f['generations'][...].tolist()}, expected {c}")
                if not np.array_equal(f["frames"][...], frames[k:k + len(c)]):
                    fail(f"{name}: frames differ from the index")
                for attr in ("width", "height", "rule"):
                    if attr not in f.attrs:
                        fail(f"{name}: no attribute '{attr}'")
            k += len(c)
        stats = os.path.join(d, base + ".stats.json")
        if os.path.exists(stats):
            with open(stats) as f:
                json.load(f)
        else:
            fail(f"{stats}: missing")
        print(f"check_output: ok: {a.index}: {len(gens)} frames {gens[0]}..{gens[-1]} in {len(names)} files, "
              f"population {int(frames[-1].sum())} at generation {gens[-1]}")

    for other in a.same_as:
        ofr, ogens = read_index(other)
        if ogens != gens or not np.array_equal(ofr, frames):
            fail(f"{other} holds other frames than {a.index}")
        print(f"check_output: ok: {other} has the same {len(gens)} frames")


if __name__ == "__main__":
    main()
