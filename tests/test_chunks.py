"""Per-chunk timings (src/chunk_log.h), on the CPU backend.

sums:   runs with frames, on 1 and 2 ranks, write --stats with a "chunks" list: one entry a chunk
        file, covering the run's generations end to end, whose bytes add up to bytes_written and
        whose times add up to the summary's: each stage's means to times_over_ranks' means (any
        rank count), and on one rank the maxima to the totals. --profile prints one flushed line
        a chunk, in order, before the summary, with the figures --stats holds.
slow:   GOLMPI_DEBUG_WRITE_DELAY=2:1.5 writes chunk 2 1.5 s slower (as a slow disk would): the
        writer's time shows on chunk 2, and the wait for a free slot on chunk 4, the chunk that
        needs chunk 2's slot, and on no chunk before it.
plot:   bench/plot_chunks.py (--plot-python: a Python with matplotlib) draws a PNG of the "sums"
        run's chunks and prints their table, whose sum row is the --stats totals.

With --backend cuda (--halo mpi: host-timed exchanges, whose chunks add up exactly; a sampled
NCCL halo is an estimate per chunk) the same checks on the GPU; exit 77 (skipped) without one.

Usage: test_chunks.py --mpiexec "mpiexec ... -n" --golmpi build/golmpi [--backend cuda]
                      {sums|slow|plot}
About 5 s each on an idle machine; everything goes into a temporary directory, removed also on
failure.
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

NOGPU = 3  # golmpi's exit code for --backend cuda without a GPU
STAGES = ("compute_s", "halo_s", "frame_s", "io_write_s", "io_wait_s")
LABELS = ("compute", "halo", "frames", "write", "wait")


def fail(msg):
    sys.exit(f"FAIL: {msg}")


def run(args, ranks, tmp, extra_env=None, steps=60, every=5, chunk=2):
    stats = os.path.join(tmp, f"stats{ranks}.json")
    out = os.path.join(tmp, f"run{ranks}", "life.h5")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    cmd = shlex.split(args.mpiexec) + [str(ranks), args.golmpi, "--backend", args.backend,
                                        "--halo", "mpi", "--size",
                                        "256", "--steps", str(steps), "--save-every", str(every),
                                        "--chunk", str(chunk), "--output", out, "--stats", stats,
                                        "--profile", "--progress", "0"]
    env = dict(os.environ, **(extra_env or {}))
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    if r.returncode == NOGPU and args.backend == "cuda":
        print(f"SKIP: no usable GPU\n{r.stderr}")
        sys.exit(77)
    if r.returncode != 0:
        fail(f"{' '.join(cmd)} exited {r.returncode}\n{r.stdout}\n{r.stderr}")
    with open(stats) as f:
        return json.load(f), r.stdout


def close(a, b):
    return abs(a - b) <= 1e-9 + 1e-9 * abs(b)


def check_cover(d):
    chunks = d["chunks"]
    if len(chunks) != d["files"] or not chunks:
        fail(f"{len(chunks)} chunks in --stats, {d['files']} chunk files")
    g = d["generation_start"]
    for i, c in enumerate(chunks):
        if c["chunk"] != i or c["generation_from"] != g or c["generations"] != c["generation_to"] - g:
            fail(f"chunk {i} {c} does not follow generation {g}")
        g = c["generation_to"]
    if g != d["generation_end"]:
        fail(f"the chunks end at generation {g}, the run at {d['generation_end']}")
    for what, total in (("frames", d["frames"]), ("bytes", d["bytes_written"])):
        got = sum(c[what] for c in chunks)
        if got != total:
            fail(f"the chunks' {what} add up to {got}, the run's to {total}")


def check_sums(d, ranks):
    for s in STAGES:
        means = sum(c[s]["mean"] for c in d["chunks"])
        if not close(means, d["times_over_ranks"][s]["mean"]):
            fail(f"{s}: the chunks' means add up to {means!r}, "
                 f"times_over_ranks.{s}.mean is {d['times_over_ranks'][s]['mean']!r}")
        maxima = sum(c[s]["max"] for c in d["chunks"])
        if ranks == 1 and not close(maxima, d[s]):
            fail(f"{s}: the chunks add up to {maxima!r}, the total is {d[s]!r}")
        if any(not 0 <= c[s]["rank"] < ranks for c in d["chunks"]):
            fail(f"{s}: a rank outside 0..{ranks - 1}: {[c[s]['rank'] for c in d['chunks']]}")
        if maxima < d[s] - 1e-9:  # a sum of maxima is never below the maximum of sums
            fail(f"{s}: the chunks' maxima add up to {maxima!r}, below the total {d[s]!r}")


def profile_lines(stdout, d):
    lines = [l for l in stdout.splitlines() if l.startswith("chunk ")]
    if len(lines) != len(d["chunks"]):
        fail(f"{len(lines)} --profile lines for {len(d['chunks'])} chunks:\n{stdout}")
    summary = stdout.index("golmpi ")
    if stdout.rfind("\nchunk ") > summary:
        fail(f"a --profile line after the summary:\n{stdout}")
    for i, (line, c) in enumerate(zip(lines, d["chunks"])):
        m = re.match(r"chunk (\d+)  generations (\d+)-(\d+)", line)
        if not m or [int(x) for x in m.groups()] != [i, c["generation_from"], c["generation_to"]]:
            fail(f"--profile line {line!r} for chunk {c}")
        for label, s in zip(LABELS, STAGES):
            if s == "io_wait_s" and i == len(lines) - 1:
                continue  # --stats adds the wait in output_close to the last chunk
            m = re.search(rf"  {label} ([0-9.]+) s \(rank (\d+)\)", line)
            if not m or abs(float(m.group(1)) - c[s]["max"]) > 6e-5 or int(m.group(2)) != c[s]["rank"]:
                fail(f"--profile line {line!r}: {label} is not --stats' {c[s]}")


def case_sums(args, tmp):
    for ranks in (1, 2):
        d, stdout = run(args, ranks, tmp)
        check_cover(d)
        check_sums(d, ranks)
        profile_lines(stdout, d)
        print(f"ok: {ranks} rank(s): {len(d['chunks'])} chunks add up to the totals")


def case_slow(args, tmp):
    delay = 1.5
    d, stdout = run(args, 2, tmp, {"GOLMPI_DEBUG_WRITE_DELAY": f"2:{delay}"}, steps=80)
    check_cover(d)
    check_sums(d, 2)
    chunks = d["chunks"]
    if len(chunks) < 7:
        fail(f"{len(chunks)} chunks, expected at least 7")
    write = [c["io_write_s"]["max"] for c in chunks]
    wait = [c["io_wait_s"]["max"] for c in chunks]
    if write[2] < delay or max(write[:2] + write[3:]) >= delay:
        fail(f"the writer's time by chunk {write}: expected over {delay} s on chunk 2 alone")
    if wait[4] < 0.6 * delay or max(wait[:4]) > 0.3 * delay:
        fail(f"the wait by chunk {wait}: expected most of {delay} s on chunk 4, little before it")
    print(f"ok: write by chunk {[round(x, 3) for x in write]}, wait {[round(x, 3) for x in wait]}")


def case_plot(args, tmp):
    d, _ = run(args, 1, tmp)
    png = os.path.join(tmp, "chunks.png")
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench",
                          "plot_chunks.py")
    r = subprocess.run([args.plot_python, script, os.path.join(tmp, "stats1.json"), "-o", png],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        fail(f"plot_chunks.py exited {r.returncode}\n{r.stdout}\n{r.stderr}")
    with open(png, "rb") as f:
        if f.read(8) != b"\x89PNG\r\n\x1a\n":
            fail(f"{png} is not a PNG")
    sums = [l for l in r.stdout.splitlines() if l.split()[:1] == ["sum"]]
    want = [d[k] for k in ("compute_s", "halo_s", "frame_s", "io_wait_s", "io_write_s")]
    if len(sums) != 1 or any(abs(float(x) - w) > 6e-6 for x, w in zip(sums[0].split()[1:], want)):
        fail(f"the table's sum row {sums} is not the totals {want}")
    print(f"ok: {png} drawn, {len(d['chunks'])} chunks, sums {sums[0]}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mpiexec", required=True)
    p.add_argument("--golmpi", required=True)
    p.add_argument("--plot-python", default=sys.executable)
    p.add_argument("--backend", default="cpu", choices=("cpu", "cuda"))
    p.add_argument("case", choices=("sums", "slow", "plot"))
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="golmpi-chunks-") as tmp:
        {"sums": case_sums, "slow": case_slow, "plot": case_plot}[args.case](args, tmp)


if __name__ == "__main__":
    main()
