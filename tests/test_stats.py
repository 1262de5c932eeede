#!/usr/bin/env python3
"""What a run tells about itself, checked on real runs of golmpi:

- --stats: the JSON parses, and every field has the right type (the figures scripts already read,
  the command line, start and end time, hosts, versions, min/mean/max over ranks, I/O bandwidth);
- the population: each chunk's /population, the index's /population and --stats'
  population_series equal the live cells counted from the frames, u8 and packed (a width that is
  not a multiple of 8, whose padding bits must be 0), on 1-3 ranks and after a restart; the
  summary prints the first and last;
- the start-up table: one line per rank, in rank order, and none with --quiet;
- --version names golmpi, the commit and every library version, the same as --stats.

Exits 77 (skipped) when this Python has no h5py or numpy.
    test_stats.py --golmpi GOLMPI --cuda ON|OFF --mpiexec MPIEXEC [FLAGS...]"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

try:
    import h5py
    import numpy as np
except Exception as e:
    print(f"SKIP: {sys.executable} cannot import h5py and numpy ({e})")
    sys.exit(77)

from stats_fields import stats_problems

FAILS = []
TABLE = re.compile(r"^  rank +(\d+)  local +(\d+)  host (\S+) +backend (cpu|cuda)  (.*)cores (\S+)$")
WIDTH, HEIGHT = 61, 37  # 61 = 7 * 8 + 5: a packed row ends in a byte with 3 padding bits


def fail(msg):
    FAILS.append(msg)
    print("FAIL:", msg, file=sys.stderr)


def run(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)}: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p.stdout


def live_cells(frames, encoding):
    """(per-frame live cells, padding bits set) of a [F, H, row bytes] array."""
    if encoding == "packed-lsb":
        bits = np.unpackbits(frames, axis=2, bitorder="little")
        return bits[:, :, :WIDTH].sum(axis=(1, 2)).tolist(), int(bits[:, :, WIDTH:].sum())
    return frames.astype(np.int64).sum(axis=(1, 2)).tolist(), 0


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def check_population(name, tmp, base, s):
    """Every chunk's /population against its frames, the index against the chunks, --stats
    against the index; returns the series."""
    gens_all, pops_all = [], []
    for path in sorted(glob.glob(os.path.join(tmp, base + "_*.h5"))):
        with h5py.File(path, "r") as f:
            enc = text(f.attrs["encoding"])
            want, padding = live_cells(f["frames"][()], enc)
            if padding:
                fail(f"{name}: {path}: {padding} padding bits set in packed rows")
            if "population" not in f:
                fail(f"{name}: {path} has no /population")
                continue
            pop = f["population"]
            if pop.dtype != np.int64 or pop.shape != (f["frames"].shape[0],) or pop[()].tolist() != want:
                fail(f"{name}: {path}: /population {pop[()].tolist()} ({pop.dtype}), frames hold {want}")
            gens_all += f["generations"][()].tolist()
            pops_all += want
    with h5py.File(os.path.join(tmp, base + ".h5"), "r") as f:
        if "population" not in f or f["population"].dtype != np.int64:
            fail(f"{name}: the index has no int64 /population")
        elif f["population"][()].tolist() != pops_all or f["generations"][()].tolist() != gens_all:
            fail(f"{name}: index /population {f['population'][()].tolist()}, chunks {pops_all}")
    series = s["population_series"]
    if series["generation"] != gens_all or series["population"] != pops_all:
        fail(f"{name}: --stats series {series}, frames {list(zip(gens_all, pops_all))}")
    if pops_all and s["population"] != pops_all[-1]:
        fail(f"{name}: --stats population {s['population']}, last frame {pops_all[-1]}")
    return gens_all, pops_all


def check_stdout(name, out, ranks, gens, pops):
    rows = [TABLE.match(l) for l in out.splitlines() if l.startswith("  rank ")]
    if len(rows) != ranks or not all(rows) or [int(m.group(1)) for m in rows] != list(range(ranks)):
        fail(f"{name}: expected {ranks} start-up lines, rank 0..{ranks - 1}, got:\n{out}")
    want = f"  population  {pops[0]} at generation {gens[0]}, {pops[-1]} at generation {gens[-1]}"
    if want not in out.splitlines():
        fail(f"{name}: the summary lacks {want!r}:\n{out}")


def one_run(golmpi, mpiexec, tmp, cuda, ranks, fmt, base, extra):
    args = ["--backend", "cpu", "--steps", "20", "--save-every", "3", "--chunk", "3",
            "--frame-format", fmt, "--output", base + ".h5", "--stats", base + ".json"] + extra
    out = run(mpiexec + ["-n", str(ranks), golmpi] + args, tmp)
    name = f"{base} ({ranks} rank(s), {fmt})"
    with open(os.path.join(tmp, base + ".json")) as f:
        s = json.load(f)
    for problem in stats_problems(s, ranks, cuda, args):
        fail(f"{name}: {problem}")
    gens, pops = check_population(name, tmp, base, s)
    check_stdout(name, out, ranks, gens, pops)
    return s


def check_quiet_and_version(golmpi, mpiexec, tmp, s):
    out = run(mpiexec + ["-n", "3", golmpi, "--backend", "cpu", "--size", "32", "--steps", "3",
                         "--no-output", "--quiet", "--stats", "q.json"], tmp)
    if out.strip():
        fail(f"--quiet printed on stdout:\n{out}")
    with open(os.path.join(tmp, "q.json")) as f:
        q = json.load(f)
    for problem in stats_problems(q, 3, None, ["--backend", "cpu", "--size", "32", "--steps", "3",
                                               "--no-output", "--quiet", "--stats", "q.json"]):
        fail(f"--no-output --quiet: {problem}")
    if q.get("population_series") != {"generation": [3], "population": [q.get("population")]} \
            or q.get("io_bandwidth_bytes_per_s") is not None or q.get("collective_io") is not None \
            or q.get("io_transfer") is not None:
        fail(f"--no-output: series {q.get('population_series')}, bandwidth/collective must be null")
    out = run([golmpi, "--version"], tmp)
    v = s["versions"]
    for want in ("golmpi " + v["golmpi"], "git commit " + v["git_commit"], "HDF5 " + v["hdf5"],
                 "MPI: " + v["mpi"], "CUDA runtime " + v["cuda_runtime"], "NCCL " + v["nccl"],
                 v["compiler"]):
        if want not in out:
            fail(f"--version lacks {want!r}:\n{out}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--golmpi", required=True)
    ap.add_argument("--cuda", default="OFF")
    ap.add_argument("--mpiexec", nargs=argparse.REMAINDER, required=True)
    a = ap.parse_args()
    golmpi, cuda = os.path.abspath(a.golmpi), a.cuda.upper() in ("ON", "1", "TRUE", "YES")
    grid = ["--width", str(WIDTH), "--height", str(HEIGHT), "--density", "0.3", "--seed", "7"]
    with tempfile.TemporaryDirectory() as tmp:
        s = one_run(golmpi, a.mpiexec, tmp, cuda, 1, "u8", "u1", grid)
        last = s["population_series"]["population"][-1]
        for ranks, fmt in ((2, "packed"), (3, "u8"), (3, "packed")):
            p = one_run(golmpi, a.mpiexec, tmp, cuda, ranks, fmt, f"{fmt}{ranks}", grid)
            if p["population_series"]["population"][-1] != last:
                fail(f"{fmt} on {ranks} ranks ends at {p['population']} live cells, 1 rank at {last}")
        # a restart on another rank count continues the series from the restart generation
        r = one_run(golmpi, a.mpiexec, tmp, cuda, 2, "packed", "restart",
                    ["--restart", "packed3.h5"])
        series = r["population_series"]
        if series["generation"][0] != 20 or series["population"][0] != last or r["generation_end"] != 40:
            fail(f"restart: series {series}, end {r['generation_end']}; it starts at 20 with {last}")
        check_quiet_and_version(golmpi, a.mpiexec, tmp, s)
    if FAILS:
        sys.exit(f"FAIL: {len(FAILS)} problem(s)")
    print("stats, population and start-up table ok")


if __name__ == "__main__":
    main()
