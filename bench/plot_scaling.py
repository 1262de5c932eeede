#!/usr/bin/env python3
"""Parallel efficiency against rank count, from the CSV of jobs/scaling.sbatch or
jobs/scaling_local.sh: one line for strong scaling, one for weak, the ideal at 1, as in NVIDIA's
multi-GPU programming models plots.

    plot_scaling.py scaling.csv [-o scaling.png] [--title TEXT]

Needs matplotlib (Debian: apt-get install python3-matplotlib); draws without a display (Agg).
"""
import argparse
import csv
import sys

COLUMNS = ["mode", "ranks", "width", "height", "generations", "seconds", "cell_updates_per_s",
           "efficiency"]
# colour, marker, and where the value labels go (strong above, weak below: they share 1 rank)
STYLE = {"strong": ("tab:blue", "o", 7), "weak": ("tab:orange", "s", -13)}


def read_rows(path):
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames != COLUMNS:
            sys.exit(f"{path}: columns {reader.fieldnames}, expected {COLUMNS}")
        rows = list(reader)
    if not rows:
        sys.exit(f"{path}: no runs")
    return rows


def label(mode, runs):
    """The legend says what was held fixed: the whole grid (strong) or the rows per rank (weak)."""
    first = runs[0]
    w, h, p = int(first["width"]), int(first["height"]), int(first["ranks"])
    if mode == "strong":
        return f"strong: {w} x {h} total"
    return f"weak: {w} x {h // p} per rank"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("-o", "--output", help="PNG to write (default: the CSV name with .png)")
    ap.add_argument("--title", default="golmpi parallel efficiency")
    args = ap.parse_args()
    out = args.output or (args.csv[:-4] if args.csv.endswith(".csv") else args.csv) + ".png"

    import matplotlib

    matplotlib.use("Agg")  # batch nodes and ctest have no display
    import matplotlib.pyplot as plt

    rows = read_rows(args.csv)
    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=120)
    ranks_all = sorted({int(r["ranks"]) for r in rows})
    ax.axhline(1.0, color="gray", linestyle="--", linewidth=1, label="ideal")
    top = 1.0
    for mode in ("strong", "weak"):
        runs = sorted((r for r in rows if r["mode"] == mode), key=lambda r: int(r["ranks"]))
        if not runs:
            continue
        x = [int(r["ranks"]) for r in runs]
        y = [float(r["efficiency"]) for r in runs]
        top = max(top, *y)
        color, marker, dy = STYLE[mode]
        ax.plot(x, y, color=color, marker=marker, linewidth=2, label=label(mode, runs))
        for xi, yi in zip(x, y):
            ax.annotate(f"{yi:.2f}", (xi, yi), textcoords="offset points", xytext=(0, dy),
                        ha="center", fontsize=8, color=color)
    lo, hi = ranks_all[0], ranks_all[-1]
    if hi / lo >= 8:
        ax.set_xscale("log", base=2)  # 1, 2, 4, ... evenly spaced
        ax.set_xlim(lo / 1.3, hi * 1.3)
    else:
        span = max(hi - lo, 1)
        ax.set_xlim(lo - 0.15 * span, hi + 0.15 * span)
    ax.set_xticks(ranks_all)
    ax.set_xticklabels([str(p) for p in ranks_all])
    ax.set_ylim(0, max(1.2, top * 1.1))
    ax.set_xlabel("MPI ranks")
    ax.set_ylabel("parallel efficiency")
    ax.set_title(args.title)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="lower left")
    fig.tight_layout()
    fig.savefig(out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
