#!/usr/bin/env python3
"""Chunk files past generation 10^6: golmpi names them with as many digits as the generation has
(io/format.c: at least six), and every checker of the tests must read such names. A one-rank CPU
run of 1,000,001 generations on a small grid, frames every 500,000, two to a chunk: its files are
exactly those tests/reference.py names and its CHUNK_NAME finds, life_1000000-1000001.h5 among
them; the index names each once (tests/cluster/check_cluster.py's series check, against itself);
its last frame follows from the one before by the reference's rule.
    test_chunk_names.py --mpiexec "MPIEXEC FLAGS -n" --golmpi PATH
About 3 s on an idle machine (the generations of a 64 x 8 grid)."""
import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile

import h5py
import numpy as np

import reference

STEPS, EVERY, CHUNK = 1000001, 500000, 2
HERE = os.path.dirname(os.path.abspath(__file__))


def fail(msg):
    sys.exit(f"FAIL: {msg}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--golmpi", required=True)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cmd = shlex.split(a.mpiexec) + ["1", a.golmpi, "--backend", "cpu", "--width", "64",
                                         "--height", "8", "--steps", str(STEPS), "--save-every",
                                         str(EVERY), "--chunk", str(CHUNK), "--seed", "3",
                                         "--boundary", "torus", "--quiet", "--output", "life.h5"]
        r = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            fail(f"{' '.join(cmd)} exited {r.returncode}\n{r.stdout}\n{r.stderr}")
        want = sorted(reference.chunk_name("life", c)
                      for c in reference.chunk_schedule(0, STEPS, EVERY, CHUNK))
        if "life_1000000-1000001.h5" not in want:
            fail(f"the reference names {want}: no chunk past generation 10^6 to check")
        found = sorted(n for n in os.listdir(tmp) if re.fullmatch("life" + reference.CHUNK_NAME, n))
        if found != want:
            fail(f"the directory holds {sorted(os.listdir(tmp))}; reference.CHUNK_NAME finds "
                 f"{found}, reference.chunk_name names {want}")
        check = [sys.executable, os.path.join(HERE, "cluster", "check_cluster.py"), "series",
                 os.path.join(tmp, "life.h5"), "--same-as", os.path.join(tmp, "life.h5")]
        c = subprocess.run(check, capture_output=True, text=True, timeout=120)
        if c.returncode != 0:
            fail(f"check_cluster.py series: {c.stdout}{c.stderr}")
        with h5py.File(os.path.join(tmp, "life.h5"), "r") as f:
            gens = f["generations"][...].tolist()
            before, last = f["frames"][-2], f["frames"][-1]
        if gens[-2:] != [STEPS - 1, STEPS]:
            fail(f"the index ends at generations {gens[-2:]}, not {[STEPS - 1, STEPS]}")
        if not np.array_equal(reference.evolve(before, reference.LIFE, True, 1), last):
            fail(f"generation {STEPS} does not follow from generation {STEPS - 1}")
    print(f"chunk files {want}: named, found and indexed")


if __name__ == "__main__":
    main()
