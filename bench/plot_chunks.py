#!/usr/bin/env python3
"""Where each chunk's time went, from a golmpi --stats file (its "chunks" list; src/chunk_log.h).

    plot_chunks.py stats.json [-o chunks.png] [--mean] [--no-plot]

Per chunk two bars side by side: the main thread's (compute, halo, frames, and the wait for a
free slot, stacked) and the writer's (its time on the chunk's file and the index). The writer
works on chunk c while chunk c + 1 computes, so a writer bar no taller than the next chunk's
main bar means the writes hide behind the compute; when the writer falls behind, the wait grows
on the chunk that needed its slot. Figures are the slowest rank's (max over ranks), or the mean
over ranks with --mean. On the CPU backend compute excludes the halo time; on the GPU they are
stream times that overlap (the halo bar then shows how much of compute was exchange).

A table is printed always; the PNG needs matplotlib (Debian: apt-get install python3-matplotlib)
and draws without a display (Agg). --no-plot prints the table only.
"""
import argparse
import json
import sys

MAIN = (("compute_s", "compute", "tab:blue"), ("halo_s", "halo", "tab:orange"),
        ("frame_s", "frames", "tab:green"), ("io_wait_s", "wait for a slot", "tab:red"))
WRITER = ("io_write_s", "writer", "tab:purple")


def figures(stats, which):
    chunks = stats.get("chunks")
    if chunks is None:
        sys.exit("this --stats file has no 'chunks' list: a golmpi from before per-chunk timings")
    if not chunks:
        sys.exit("no chunks: a run with --no-output writes no frames")
    return chunks, {key: [c[key][which] for c in chunks] for key, _, _ in MAIN + (WRITER,)}


def print_table(chunks, v):
    cols = [k for k, _, _ in MAIN] + [WRITER[0]]
    print(f"{'chunk':>5} {'generations':>19} " + " ".join(f"{k:>11}" for k in cols) + "  MiB")
    for i, c in enumerate(chunks):
        gens = f"{c['generation_from']}-{c['generation_to']}"
        print(f"{i:>5} {gens:>19} " + " ".join(f"{v[k][i]:>11.5f}" for k in cols) +
              f"  {c['bytes'] / 1048576:.2f}")
    print(f"{'sum':>5} {'':>19} " + " ".join(f"{sum(v[k]):>11.5f}" for k in cols))


def plot(chunks, v, which, title, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = list(range(len(chunks)))
    w = 0.4
    fig, ax = plt.subplots(figsize=(max(6.0, 0.35 * len(x) + 2), 4.5))
    bottom = [0.0] * len(x)
    for key, label, color in MAIN:
        ax.bar([i - w / 2 for i in x], v[key], w, bottom=bottom, label=label, color=color)
        bottom = [b + y for b, y in zip(bottom, v[key])]
    key, label, color = WRITER
    ax.bar([i + w / 2 for i in x], v[key], w, label=label, color=color)
    ax.set_xlabel("chunk (left: main thread, right: writer)")
    ax.set_ylabel(f"seconds ({'mean over ranks' if which == 'mean' else 'slowest rank'})")
    ax.set_title(title)
    step = max(1, len(x) // 20)
    ax.set_xticks(x[::step])
    ax.set_xticklabels([str(i) for i in x[::step]])
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(f"wrote {out}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("stats", help="a golmpi --stats JSON file")
    p.add_argument("-o", "--output", default="chunks.png")
    p.add_argument("--mean", action="store_true", help="the mean over ranks, not the maximum")
    p.add_argument("--no-plot", action="store_true")
    args = p.parse_args()
    with open(args.stats) as f:
        stats = json.load(f)
    which = "mean" if args.mean else "max"
    chunks, v = figures(stats, which)
    print_table(chunks, v)
    if not args.no_plot:
        title = (f"{stats.get('width')} x {stats.get('height')}, {stats.get('ranks')} ranks, "
                 f"{stats.get('backend')} backend: per-chunk times")
        plot(chunks, v, which, title, args.output)


if __name__ == "__main__":
    main()
