#!/usr/bin/env python3
"""Population (live cells) against generation for a golmpi run, as Golly's population plot.

    plot_population.py life.h5 [-o life_population.png] [--csv series.csv] [--log] [--no-plot]

FILE is the index <base>.h5 (the whole run) or one chunk file. The series is the file's
/population dataset (int64 [F], one value per frame, written by golmpi beside /frames). A file
from a golmpi without it has none: the script then counts the live cells of every frame itself,
which reads every frame (slow for large grids), and says so. Copying the index without its chunk
files leaves frames and population reading as zeros.

Needs h5py and numpy; the plot needs matplotlib (Debian: apt-get install python3-matplotlib) and
draws without a display (Agg). --csv writes "generation,population" rows; --no-plot skips
matplotlib. The first and last population are printed.
"""
import argparse
import sys

import h5py
import numpy as np


def attr_text(attrs, name, default=""):
    """A string attribute as str: golmpi writes fixed-length ASCII (h5py gives bytes), h5py and
    other writers variable-length UTF-8 (str)."""
    v = attrs.get(name, default)
    if isinstance(v, np.ndarray) and v.shape == ():
        v = v[()]
    return v.decode("ascii") if isinstance(v, (bytes, np.bytes_)) else str(v)


def counted_population(f):
    """Live cells of every frame, one frame at a time (a frame may be large)."""
    frames = f["frames"]
    packed = "packed" in (attr_text(frames.attrs, "encoding") or attr_text(f.attrs, "encoding"))
    out = np.zeros(frames.shape[0], dtype=np.int64)
    for t in range(frames.shape[0]):
        frame = frames[t]
        if packed:
            # padding bits past the width are 0, so counting every bit of the bytes is exact
            out[t] = int(np.unpackbits(frame).sum(dtype=np.int64))
        else:
            out[t] = int(np.count_nonzero(frame))
    return out


def read_series(path):
    """(generations, population, where it came from, title facts) of a golmpi file."""
    with h5py.File(path, "r") as f:
        gens = f["generations"][...].astype(np.int64)
        if "population" in f:
            pop, source = f["population"][...].astype(np.int64), "/population"
        else:
            print(f"{path}: no /population dataset (a run by an older golmpi): counting the live "
                  "cells of each frame instead", file=sys.stderr)
            pop, source = counted_population(f), "counted from /frames"
        facts = (f"{attr_text(f.attrs, 'rule', '?')}, {attr_text(f.attrs, 'boundary', '?')}, "
                 f"{int(f.attrs.get('width', 0))} x {int(f.attrs.get('height', 0))}")
    if pop.shape != gens.shape:
        sys.exit(f"{path}: {pop.shape[0]} population values but {gens.shape[0]} generations")
    return gens, pop, source, facts


def plot(gens, pop, path, out, facts, log):
    import matplotlib

    matplotlib.use("Agg")  # batch nodes and ctest have no display
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.0, 4.0), dpi=120)
    ax.plot(gens, pop, color="tab:green", linewidth=1.2, marker="." if len(gens) <= 200 else None)
    ax.set_xlabel("generation")
    ax.set_ylabel("population (live cells)")
    if log and (pop > 0).all():
        ax.set_yscale("log")
    ax.set_title(f"{path}: {facts}", fontsize=9)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", help="a golmpi output file: the index <base>.h5 or a chunk file")
    ap.add_argument("-o", "--output", help="PNG to write (default: FILE without .h5 + _population.png)")
    ap.add_argument("--csv", help="also write the series as generation,population rows")
    ap.add_argument("--log", action="store_true", help="logarithmic population axis")
    ap.add_argument("--no-plot", action="store_true", help="no PNG (no matplotlib needed)")
    args = ap.parse_args()

    gens, pop, source, facts = read_series(args.file)
    if args.csv:
        with open(args.csv, "w") as f:
            f.write("generation,population\n")
            f.writelines(f"{g},{p}\n" for g, p in zip(gens.tolist(), pop.tolist()))
    print(f"{args.file}: {len(gens)} frames ({source}); population {pop[0]} at generation {gens[0]}, "
          f"{pop[-1]} at generation {gens[-1]} (min {pop.min()}, max {pop.max()})")
    if not args.no_plot:
        base = args.file[:-3] if args.file.endswith(".h5") else args.file
        out = args.output or base + "_population.png"
        plot(gens, pop, args.file, out, facts, args.log)
        print(f"wrote {out}")


if __name__ == "__main__":
    main()
