#!/usr/bin/env python3
"""Frames are bit-identical whatever kernel shape runs (cuda/life_geometry.h's GOL_SHAPES):
golmpi --backend cuda --kernel SHAPE for every shape, on 2 ranks at halo depth 16 (passes of each
shape's most generations), a width not a multiple of 32 or 64, torus and dead, against --kernel
baseline and the CPU backend, every cell of every frame; the first frame also against
tests/reference.py's random start.

    test_kernel_shapes.py "mpiexec --oversubscribe -n" GOLMPI

Exit 0 when all match, 1 on the first wrong cell, 77 when golmpi finds no GPU (exit code 3)."""
import os
import re
import shlex
import subprocess
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference  # noqa: E402

WIDTH, HEIGHT, STEPS, EVERY, SEED, DENSITY = 200, 96, 32, 8, 5, 0.4


def shapes(golmpi):
    """The shapes --help lists for --kernel: "auto | baseline | unrolled | ..."."""
    text = subprocess.run([golmpi, "--help"], capture_output=True, text=True).stdout
    m = re.search(r"the kernel's shape: auto((?: \| [a-z0-9_-]+)+)", text)
    if not m:
        sys.exit("FAIL: --help lists no kernel shapes")
    return m.group(1).replace("|", " ").split()


def frames(mpiexec, golmpi, tmp, name, args):
    out = os.path.join(tmp, name + ".h5")
    cmd = mpiexec + ["2", golmpi, "--quiet", "--width", str(WIDTH), "--height", str(HEIGHT),
                     "--steps", str(STEPS), "--save-every", str(EVERY), "--seed", str(SEED),
                     "--density", str(DENSITY), "--halo-depth", "16", "--wisdom", "off",
                     "--output", out] + args
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode == 3:
        print("no GPU:", p.stderr.strip().splitlines()[:1])
        sys.exit(77)
    if p.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)}: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
    with h5py.File(out, "r") as f:
        return [int(g) for g in f["generations"][:]], f["frames"][:]


def main():
    mpiexec, golmpi = shlex.split(sys.argv[1]), sys.argv[2]
    names = shapes(golmpi)
    if "baseline" not in names or len(names) < 2:
        sys.exit(f"FAIL: shapes {names}")
    with tempfile.TemporaryDirectory() as tmp:
        for boundary in ("torus", "dead"):
            b = ["--boundary", boundary]
            gens, cpu = frames(mpiexec, golmpi, tmp, f"cpu_{boundary}", b + ["--backend", "cpu"])
            start = reference.random_grid(SEED, DENSITY, WIDTH, HEIGHT)
            if not np.array_equal(cpu[0], start):
                sys.exit(f"FAIL: {boundary}: the CPU's first frame is not the reference start")
            if len(gens) != STEPS // EVERY + 1:
                sys.exit(f"FAIL: {boundary}: generations {gens}")
            for shape in names:
                g, got = frames(mpiexec, golmpi, tmp, f"{shape}_{boundary}",
                                b + ["--backend", "cuda", "--kernel", shape])
                for i in range(len(gens)):
                    bad = np.argwhere(got[i] != cpu[i])
                    if g != gens or len(bad):
                        y, x = bad[0] if len(bad) else (0, 0)
                        sys.exit(f"FAIL: --kernel {shape}, {boundary}: generation {gens[i]}: "
                                 f"{len(bad)} cells differ from the CPU backend's, first at row "
                                 f"{y} col {x}")
                print(f"{shape:10s} {boundary:5s}: {len(gens)} frames identical to the CPU's")
    # baseline's frames equal the CPU's, so each shape equal to the CPU's equals baseline's too
    return 0


if __name__ == "__main__":
    sys.exit(main())
