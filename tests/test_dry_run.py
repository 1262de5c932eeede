#!/usr/bin/env python3
"""--dry-run: the plan, a row per rank, on 1 to 4 ranks, and nothing written; the same
verdicts as a real run; host bytes that grow with the halo depth as the CPU backend's allocations
do; and a grid admitted at depth 1 but refused at a deep halo, up front, with one message, exit 2
and nothing written.
    test_dry_run.py MPIEXEC_LINE GOLMPI"""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

mpiexec, golmpi = shlex.split(sys.argv[1]), os.path.abspath(sys.argv[2])
failures = []


def run(n, args, cwd):
    p = subprocess.run(mpiexec + [str(n), golmpi] + args, cwd=cwd, capture_output=True,
                       text=True, timeout=120)
    # golmpi's own lines; mpiexec adds its account of a non-zero exit
    err = "\n".join(l for l in p.stderr.splitlines() if l.startswith("golmpi"))
    return p.returncode, p.stdout, err


def expect(cond, what):
    if not cond:
        failures.append(what)


def rows_of(out):
    """The plan's rank rows: rank, host, first row, rows, depth, halo, host bytes, device bytes."""
    return [l.split() for l in out.splitlines() if re.match(r"\s*\d+\s", l)]


def available():
    """The host memory golmpi sees: MemAvailable, lowered to a cgroup v2 limit's room."""
    avail = None
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                avail = int(line.split()[1]) * 1024
    try:
        rel = open("/proc/self/cgroup").read().split("::", 1)[1].strip()
        d = "/sys/fs/cgroup" + rel
        lim = open(d + "/memory.max").read().strip()
        if lim != "max":
            avail = min(avail, int(lim) - int(open(d + "/memory.current").read()))
    except (OSError, IndexError, ValueError):
        pass
    return avail


def rows_per_rank(height, n):
    return [height // n + (1 if r < height % n else 0) for r in range(n)]


# a row per rank, the rows of decomp_make, totals; nothing written, not even the lock
for n in range(1, 5):
    with tempfile.TemporaryDirectory() as tmp:
        rc, out, err = run(n, ["--dry-run", "--size", "301", "--steps", "10", "--output", "o.h5",
                               "--halo-depth", "4", "--backend", "cpu"], tmp)
        rows = rows_of(out)
        expect(rc == 0, f"{n} ranks: exit {rc}: {err}")
        expect([int(r[3]) for r in rows] == rows_per_rank(301, n), f"{n} ranks: rows {rows}")
        expect(all(r[4] == "4" and r[5] == "mpi" for r in rows), f"{n} ranks: depth/halo {rows}")
        total = [l for l in out.splitlines() if l.strip().startswith("total")]
        expect(len(total) == 1 and int(total[0].split()[1]) == 301, f"{n} ranks: total {total}")
        expect(int(total[0].split()[-2]) == sum(int(r[6]) for r in rows), "total host bytes")
        expect(os.listdir(tmp) == [], f"{n} ranks: --dry-run wrote {os.listdir(tmp)}")

# a stale .part of a killed run stays (a real run removes it), and no lock is left behind
with tempfile.TemporaryDirectory() as tmp:
    open(os.path.join(tmp, "o.h5.part"), "w").close()
    rc, out, err = run(2, ["--dry-run", "-q", "--size", "64", "--steps", "2", "--output", "o.h5"],
                       tmp)
    expect(rc == 0 and os.listdir(tmp) == ["o.h5.part"], f"stale part: {rc} {os.listdir(tmp)}")

# --stats: the plan as JSON, the one file written; host bytes grow with the depth by what the
# CPU backend allocates more: 2k halo rows in each of two grids and 2k send rows
with tempfile.TemporaryDirectory() as tmp:
    width, nw, got = 1000, (1000 + 63) // 64, {}
    for k in (1, 4, 16, 64):
        rc, out, err = run(2, ["--dry-run", "--width", str(width), "--height", "300",
                               "--backend", "cpu", "--halo-depth", str(k), "--no-output",
                               "--stats", "p.json"], tmp)
        expect(rc == 0, f"depth {k}: exit {rc}: {err}")
        expect(os.listdir(tmp) == ["p.json"], f"depth {k}: files {os.listdir(tmp)}")
        plan = json.load(open(os.path.join(tmp, "p.json")))
        expect(plan["halo_depth"] == k and len(plan["ranks"]) == 2, f"depth {k}: {plan}")
        got[k] = [r["host_bytes"] for r in plan["ranks"]]
    for k in (4, 16, 64):
        for r in range(2):
            grown = got[k][r] - got[1][r]
            expect(grown == 6 * (k - 1) * nw * 8,
                   f"rank {r}: depth {k} adds {grown} bytes, the backend {6 * (k - 1) * nw * 8}")

# the same verdicts as a real run: a bad rule, an output in the way
with tempfile.TemporaryDirectory() as tmp:
    open(os.path.join(tmp, "o.h5"), "w").close()
    for args in (["--rule", "B9/S1"], ["--output", "o.h5"], ["--pattern", "none.rle"]):
        base = ["--size", "64", "--steps", "2", "-q"] + args
        real, dry = run(2, base, tmp), run(2, ["--dry-run"] + base, tmp)
        expect(real[0] == dry[0] == 2 and real[2] == dry[2],
               f"{args}: real {real[0]} {real[2]!r}, dry {dry[0]} {dry[2]!r}")
    expect(sorted(os.listdir(tmp)) == ["o.h5"], f"files {os.listdir(tmp)}")

# a grid that fits at depth 1 and not at depth 1024: 2 ranks of 2048 rows; depth 1 needs
# 2 x (2 x 2050 + 2) rows of words, depth 1024 2 x (2 x 4096 + 2048): 2.5 times as much
avail = available()
nw = int(0.6 * avail / (2 * (2 * 2050 + 2) * 8))
with tempfile.TemporaryDirectory() as tmp:
    grid = ["--width", str(nw * 64), "--height", "4096", "--steps", "1", "--backend", "cpu",
            "--no-output", "-q"]
    rc, out, err = run(2, ["--dry-run", "--halo-depth", "1"] + grid, tmp)
    expect(rc == 0, f"depth 1 ({avail} bytes available): exit {rc}: {err}")
    rc, out, err = run(2, ["--halo-depth", "1024", "--stats", "s.json"] + grid, tmp)
    lines = err.strip().splitlines()
    expect(rc == 2 and len(lines) == 1 and "does not fit in memory" in lines[0],
           f"depth 1024: exit {rc}, stderr {err!r}")
    expect(os.listdir(tmp) == [], f"a refused run wrote {os.listdir(tmp)}")

if failures:
    sys.exit("FAIL:\n" + "\n".join(failures))
print("--dry-run: a row per rank on 1-4 ranks, nothing written, figures grow with the depth as "
      "allocated; a deep halo too big for memory refused, depth 1 admitted")
