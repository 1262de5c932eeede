#!/usr/bin/env python3
"""The README's speed plot, from recorded measurements (no GPU, no run):

    make_pictures.py speed OUT.png

Left: one H200's rate against the grid's size, golmpi (--kernel auto, and the baseline shape)
beside a peer kernel (bench/data/h200-2026-11-28/shapes.tsv, docs/PERFORMANCE.md's table).
Right: the CPU backend's rate on 1 and 2 ranks of a 2-core machine, strong and weak scaling,
with the ideal (bench/data/cpu-2026-11-21/scaling.csv, docs/performance-history.md, Scaling).
Needs matplotlib (scripts/deps.txt: python3-matplotlib); draws without a display (Agg).
scripts/make_pictures.sh runs it, and renders the frame picture with golmpi-render.
"""
import csv
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GPU = os.path.join(ROOT, "bench", "data", "h200-2026-11-28", "shapes.tsv")
CPU = os.path.join(ROOT, "bench", "data", "cpu-2026-11-21", "scaling.csv")


def gpu_rows():
    """[(size, {column: rate})] of the GPU table, in size order"""
    rows, names = [], None
    with open(GPU) as f:
        for line in f:
            if line.startswith("# size"):
                names = line[1:].split()
            elif line.strip() and not line.startswith("#"):
                fields = line.split()
                rows.append((int(fields[0]), dict(zip(names[1:], map(float, fields[1:])))))
    return sorted(rows)


def rate(value, _pos=None):
    """3e12, 1e13, 2.5e11: a tick's rate, short"""
    mantissa, exponent = f"{value:.1e}".split("e")
    return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}" if value else "0"


def speed(out):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, (gpu, cpu) = plt.subplots(1, 2, figsize=(8.0, 3.0), dpi=100,
                                   gridspec_kw={"width_ratios": [3, 2]})
    rows = gpu_rows()
    sizes = [s for s, _ in rows]
    for col, label, style in (("auto", "golmpi (--kernel auto)", "o-"),
                              ("baseline", "golmpi, baseline shape", "s--"),
                              ("peer", "peer kernel (fast-game-of-life)", "^:")):
        gpu.plot(sizes, [r[col] for _, r in rows], style, label=label, linewidth=1.5,
                 markersize=4)
    gpu.set_xscale("log", base=2)
    gpu.set_yscale("log")
    gpu.set_xticks(sizes)
    gpu.set_xticklabels([f"{s // 1024}K²" for s in sizes])
    gpu.set_xlabel("grid (one rank, depth 16, dead edges)")
    gpu.set_yticks([3e12, 5e12, 1e13, 2e13, 3e13])
    gpu.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(rate))
    gpu.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    gpu.set_ylabel("cell updates/s")
    gpu.set_title("one NVIDIA H200, 2026-11-28", fontsize=10)
    gpu.grid(True, which="major", alpha=0.3)
    gpu.legend(fontsize=7, loc="lower right")

    with open(CPU, newline="") as f:
        runs = list(csv.DictReader(f))
    for mode, style in (("strong", "o-"), ("weak", "s-")):
        mine = sorted((r for r in runs if r["mode"] == mode), key=lambda r: int(r["ranks"]))
        x = [int(r["ranks"]) for r in mine]
        y = [float(r["cell_updates_per_s"]) for r in mine]
        w, h = int(mine[0]["width"]), int(mine[0]["height"])
        what = f"{w}² total" if mode == "strong" else f"{w}² a rank"
        cpu.plot(x, y, style, label=f"{mode}: {what}", linewidth=1.5, markersize=4)
        for xi, yi, r in zip(x, y, mine):
            cpu.annotate(f"{float(r['efficiency']):.2f}", (xi, yi), textcoords="offset points",
                         xytext=(6, -10 if mode == "weak" else 4), fontsize=7)
    one = float(next(r for r in runs if r["ranks"] == "1")["cell_updates_per_s"])
    cpu.plot([1, 2], [one, 2 * one], color="gray", linestyle="--", linewidth=1, label="ideal")
    cpu.set_xticks([1, 2])
    cpu.set_xlim(0.7, 2.4)
    cpu.set_ylim(0, 2.4 * one)
    cpu.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(rate))
    cpu.set_xlabel("MPI ranks (CPU backend, 1 core each)")
    cpu.set_title("2-core VM, 2026-11-21 (efficiency)", fontsize=10)
    cpu.grid(True, alpha=0.3)
    cpu.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(out)


def main():
    if len(sys.argv) != 3 or sys.argv[1] != "speed":
        sys.exit(__doc__)
    speed(sys.argv[2])


if __name__ == "__main__":
    main()
