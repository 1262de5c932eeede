#!/usr/bin/env python3
"""Write frame T of a golmpi output file as an RLE with a Golly bounded-grid rule (":T" for a torus
run, ":P" for a dead boundary), so Golly or bgolly starts from exactly the grid golmpi holds:

    frame_to_rle.py life.h5 soup.rle [T]      (T: the frame's index, default the last)

The RLE itself is written by `golmpi-render --rle` (tools/render_rle.c), the one writer of it;
this script only finds the tool and turns a frame index into the generation it asks for. It looks
for golmpi-render in $GOLMPI_RENDER, beside an installed golmpi (<prefix>/bin, this script being
in <prefix>/share/golmpi/bench), in the source tree's build/tools/, then on PATH."""
import os
import shutil
import subprocess
import sys


def find_render():
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [
        os.environ.get("GOLMPI_RENDER", ""),
        os.path.join(here, "..", "..", "..", "bin", "golmpi-render"),
        os.path.join(here, "..", "build", "tools", "golmpi-render"),
        shutil.which("golmpi-render") or "",
    ]
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    sys.exit("frame_to_rle.py: golmpi-render not found (build it, install it, put it on PATH, "
             "or set GOLMPI_RENDER)")


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    src, dst = sys.argv[1], sys.argv[2]
    cmd = [find_render(), "--rle", "-o", dst]
    if len(sys.argv) == 4:
        import h5py  # only to turn the index T into its generation

        with h5py.File(src, "r") as f:
            cmd += ["--frame", str(int(f["generations"][int(sys.argv[3])]))]
    sys.exit(subprocess.run(cmd + [src], stdout=subprocess.DEVNULL).returncode)


if __name__ == "__main__":
    main()
