#!/usr/bin/env python3
"""Write frame T of a golmpi output file as an RLE with a Golly torus rule, so bgolly starts
from exactly the grid golmpi starts from:  frame_to_rle.py life.h5 soup.rle [T]"""
import re
import sys

import h5py
import numpy as np


def rows_to_rle(cells):
    out = []
    for row in cells:
        alive = np.flatnonzero(row)
        line, x = [], 0
        # runs of consecutive live cells
        if len(alive):
            breaks = np.flatnonzero(np.diff(alive) != 1) + 1
            for run in np.split(alive, breaks):
                gap = int(run[0]) - x
                if gap:
                    line.append(f"{gap if gap > 1 else ''}b")
                n = len(run)
                line.append(f"{n if n > 1 else ''}o")
                x = int(run[-1]) + 1
        out.append("".join(line))
    return out


def main():
    src, dst = sys.argv[1], sys.argv[2]
    with h5py.File(src, "r") as f:
        t = int(sys.argv[3]) if len(sys.argv) > 3 else f["frames"].shape[0] - 1
        frame = f["frames"][t]
        width, height = int(f.attrs["width"]), int(f.attrs["height"])
        rule = f.attrs["rule"]
        rule = rule.decode() if isinstance(rule, bytes) else str(rule)
        boundary = f.attrs["boundary"]
        boundary = boundary.decode() if isinstance(boundary, bytes) else str(boundary)
        if frame.shape[1] != width:
            frame = np.unpackbits(frame, axis=1, bitorder="little")[:, :width]
    grid = "T" if boundary == "torus" else "P"
    lines = rows_to_rle(frame)
    # lines of at most 70 characters, broken between tokens so no run count is split
    tokens = re.findall(r"\d*[bo$!]", "$".join(lines) + "!")
    text, line = [], ""
    for tok in tokens:
        if len(line) + len(tok) > 70:
            text.append(line)
            line = ""
        line += tok
    text.append(line)
    with open(dst, "w") as f:
        # Golly centres a bounded grid on the origin: place the pattern's top-left cell there
        f.write(f"#CXRLE Pos={-(width // 2)},{-(height // 2)}\n")
        f.write(f"x = {width}, y = {height}, rule = {rule}:{grid}{width},{height}\n")
        f.write("\n".join(text) + "\n")


if __name__ == "__main__":
    main()
