#!/usr/bin/env python3
"""End to end: each bad input gives one clear message (printed once, by rank 0), the expected exit
code, and no files at all in the run's directory.

A file made before the run is given as bytes, or as a function of its path (a FIFO, a directory,
an HDF5 file made with h5py); a case whose file cannot be made (no h5py) is skipped, and says so.

usage: bad_inputs.py --golmpi PATH --patterns DIR [--ranks N] --mpiexec MPIEXEC [FLAGS...]
"""
import argparse
import concurrent.futures
import hashlib
import os
import subprocess
import sys
import tempfile

USAGE, NOGPU = 2, 3


def huge_restart(path, side=3000000):
    """A golmpi output file in every respect but its size: a side x side grid, one packed frame,
    chunked and never written, so the file is a few kB."""
    import h5py  # noqa: PLC0415 (only this case needs it; without it the case is skipped)
    import numpy as np  # noqa: PLC0415
    with h5py.File(path, "w") as f:
        row_bytes = (side + 7) // 8
        f.create_dataset("frames", shape=(1, side, row_bytes), dtype="u1",
                         chunks=(1, 64, 4096))
        f.create_dataset("generations", data=np.array([10], dtype="i8"))
        for key, value in (("width", np.int64(side)), ("height", np.int64(side)),
                           ("seed", np.uint64(1)), ("density", np.float64(0.5)),
                           ("ranks", np.int32(1))):
            f.attrs[key] = value
        for key, value in (("rule", "B3/S23"), ("boundary", "torus"),
                           ("encoding", "packed-lsb"), ("version", "0.1.0")):
            f.attrs[key] = value


def cases(pat):
    """(name, args, exit code, substring, files made before the run {name: bytes}[, environment
    variables set for the run {name: value}])."""
    small = ["--size", "32", "--steps", "2", "--save-every", "1"]
    return [
        ("unknown option", ["--bogus"], USAGE, "unknown option '--bogus'", {}),
        ("stray argument", small + ["glider.rle"], USAGE, "unexpected argument 'glider.rle'", {}),
        ("bad --size", ["--size", "abc"], USAGE, "--size: 'abc' is not an integer", {}),
        ("zero --size", ["--size", "0"], USAGE, "--size: '0' is out of range", {}),
        ("--size with --width", ["--size", "32", "--width", "8", "--height", "8"], USAGE,
         "either --size or --width/--height", {}),
        ("negative --steps", ["--size", "32", "--steps", "-1"], USAGE, "--steps: '-1'", {}),
        ("--density 1.5", small + ["--density", "1.5"], USAGE, "--density: '1.5' is outside 0..1",
         {}),
        ("--rule B9/S23", small + ["--rule", "B9/S23"], USAGE, "rule 'B9/S23'", {}),
        ("bad --boundary", small + ["--boundary", "klein"], USAGE,
         "--boundary: 'klein' is not one of torus, dead", {}),
        ("bad --backend", small + ["--backend", "opencl"], USAGE,
         "--backend: 'opencl' is not one of", {}),
        ("bad --frame-format", small + ["--frame-format", "x"], USAGE,
         "--frame-format: 'x' is not one of", {}),
        ("missing pattern", small + ["--pattern", "missing.rle"], USAGE,
         "pattern missing.rle: No such file or directory", {}),
        ("malformed RLE", small + ["--pattern", os.path.join(pat, "malformed.rle")], USAGE,
         "malformed.rle: line 3: 'q'", {}),
        ("not a pattern", small + ["--pattern", os.path.join(pat, "not_a_pattern.txt")], USAGE,
         "not_a_pattern.txt: line 1", {}),
        ("pattern larger than grid", small + ["--pattern", os.path.join(pat, "big60.rle")], USAGE,
         "larger than the 32 x 32 grid", {}),
        ("--at outside the grid", small + ["--pattern", os.path.join(pat, "glider.rle"),
                                           "--at", "40,0"], USAGE, "--at 40,0", {}),
        ("--at pattern overhangs", small + ["--pattern", os.path.join(pat, "glider.rle"),
                                            "--at", "30,0"], USAGE, "--at 30,0", {}),
        ("--at malformed", small + ["--pattern", os.path.join(pat, "glider.rle"), "--at", "3"],
         USAGE, "--at: '3' is not of the form X,Y", {}),
        ("more ranks than rows", ["--size", "1", "--steps", "1"], USAGE,
         "every rank needs at least one row", {}),
        ("--restart missing file", ["--restart", "gone.h5", "--steps", "2"], USAGE, "gone.h5",
         {}),
        ("--restart of a text file", ["--restart", "notes.txt", "--steps", "2"], USAGE,
         "notes.txt", {"notes.txt": b"not a golmpi file\n"}),
        ("--output not .h5", small + ["--output", "life.hdf5"], USAGE,
         "--output: 'life.hdf5' does not end in .h5", {}),
        ("--output with a colon", small + ["--output", "run:1.h5"], USAGE,
         "--output: 'run:1.h5': a ':' in the file name", {}),
        ("--no-output with --output", small + ["--no-output", "--output", "a.h5"], USAGE,
         "--no-output and --output", {}),
        ("--profile with --no-output", small + ["--no-output", "--profile"], USAGE,
         "--profile prints a line per chunk file", {}),
        ("--chunk 0", small + ["--chunk", "0"], USAGE, "--chunk: '0'", {}),
        ("--save-every 0", ["--size", "32", "--steps", "2", "--save-every", "0"], USAGE,
         "--save-every: '0'", {}),
        ("existing output without --force", small, USAGE, "--force",
         {"life.h5": b"an earlier run's index\n"}),
        # "no usable GPU" in a CUDA build, "built without CUDA" otherwise: both start so
        ("--backend cuda without a GPU", small + ["--backend", "cuda"], NOGPU, "--backend cuda: ",
         {}),
        # sizes that cannot fit: refused with what they need and what the node has, before any
        # allocation, not with "out of host memory" and an MPI_ABORT banner
        ("--size 2000000", ["--size", "2000000"], USAGE,
         "the 2000000 x 2000000 grid does not fit", {}),
        ("--size 33554432", ["--size", "33554432"], USAGE,
         "the 33554432 x 33554432 grid does not fit", {}),
        ("pattern header grid 3e6", ["--pattern", "big_grid.rle"], USAGE,
         "the 3000000 x 3000000 grid does not fit",
         {"big_grid.rle": b"x = 3, y = 3, rule = B3/S23:T3000000,3000000\nbo$2bo$3o!\n"}),
        ("--restart of a 3e6 grid", ["--restart", "huge.h5", "--steps", "2"], USAGE,
         "the 3000000 x 3000000 grid does not fit", {"huge.h5": huge_restart}),
        ("frame slots that cannot fit",
         ["--size", "1024", "--chunk", "1048576", "--save-every", "1", "--steps", "2000000"],
         USAGE, "the 1024 x 1024 grid does not fit", {}),
        # pattern files that reached the allocator or took seconds
        ("pattern 1 x 2^31-1, header only", ["--pattern", "tall.rle"], USAGE,
         "tall.rle: line 1: the pattern has no live cells",
         {"tall.rle": b"x = 1, y = 2147483647"}),
        ("pattern 1 x 2^31-1 (16 GiB of words)", ["--pattern", "tall.rle"], USAGE,
         "more than a pattern file may hold", {"tall.rle": b"x = 1, y = 2147483647\n!\n"}),
        ("run count 2147483647", small + ["--pattern", "run.rle"], USAGE,
         "run.rle is 2147483647 x 1 cells, larger than the 32 x 32 grid",
         {"run.rle": b"x = 1, y = 1\n2147483647o!\n"}),
        ("header-only RLE", small + ["--pattern", "empty.rle"], USAGE,
         "empty.rle: line 1: the pattern has no live cells", {"empty.rle": b"x = 3, y = 3\n"}),
        ("FIFO as --pattern", small + ["--pattern", "fifo.rle"], USAGE,
         "pattern fifo.rle: is a FIFO, not a regular file", {"fifo.rle": os.mkfifo}),
        ("device as --pattern", small + ["--pattern", "/dev/zero"], USAGE,
         "pattern /dev/zero: is a character device", {}),
        ("FIFO as --restart", ["--restart", "fifo.h5", "--steps", "2"], USAGE,
         "--restart fifo.h5: is a FIFO, not a regular file", {"fifo.h5": os.mkfifo}),
        ("device as --restart", ["--restart", "/dev/null", "--steps", "2"], USAGE,
         "--restart /dev/null: is a character device", {}),
        # --tune times every kernel shape of the CUDA backend
        ("--tune with --kernel", small + ["--tune", "--kernel", "short"], USAGE,
         "--tune times every kernel shape; it takes no --kernel short", {}),
        ("--tune on the CPU backend", small + ["--tune", "--backend", "cpu"], USAGE,
         "--tune times the CUDA kernel's shapes; it needs --backend cuda (or auto)", {}),
        # a repeated option is refused, not last-wins (--help says so)
        ("--size twice", ["--size", "32", "--size", "48", "--steps", "2"], USAGE,
         "--size given twice", {}),
        ("-q and --quiet", small + ["-q", "--quiet"], USAGE, "--quiet given twice", {}),
        # --stats is checked with the other inputs, and never replaces an input or an output
        ("--stats is the index", small + ["--stats", "life.h5"], USAGE,
         "--stats life.h5 is the output index of --output life.h5", {}),
        ("--stats is a chunk file", small + ["--stats", "life_000000-000001.h5"], USAGE,
         "--stats life_000000-000001.h5 is a chunk file of --output life.h5", {}),
        ("--stats is the XDMF file", small + ["--output", "r.h5", "--stats", "./r.xmf"], USAGE,
         "--stats ./r.xmf is the XDMF file of --output r.h5", {}),
        ("--stats is the pattern", small + ["--pattern", "g.rle", "--stats", "./g.rle"], USAGE,
         "--stats ./g.rle is the --pattern file",
         {"g.rle": b"x = 3, y = 3\nbo$2bo$3o!\n"}),
        ("--stats is a directory", small + ["--stats", "stats"], USAGE,
         "--stats stats is a directory", {"stats": os.mkdir}),
        ("--stats under a regular file", small + ["--stats", "notes.txt/s.json"], USAGE,
         "--stats notes.txt/s.json: 'notes.txt' is not a directory",
         {"notes.txt": b"a note\n"}),
        ("--pattern is an output", small + ["--pattern", "life.h5", "--force"], USAGE,
         "--pattern life.h5 is the output index of --output life.h5",
         {"life.h5": b"x = 3, y = 3\nbo$2bo$3o!\n"}),
        # output names that a rename or the file system would refuse only after a chunk
        ("--output is a directory, with --force", small + ["--output", "out.h5", "--force"],
         USAGE, "output file 'out.h5' is a directory", {"out.h5": os.mkdir}),
        ("the .xmf name is a directory, with --force", small + ["--force"], USAGE,
         "output file 'life.xmf' is a directory", {"life.xmf": os.mkdir}),
        ("a chunk name is a directory, with --force", small + ["--force"], USAGE,
         "output file 'life_000000-000001.h5' is a directory",
         {"life_000000-000001.h5": os.mkdir}),
        ("300-character --output name", small + ["--output", "x" * 296 + ".h5"], USAGE,
         "this file system allows 255 characters in a name", {}),
        # the CPU step's instruction set, chosen by the environment (cpu/cpu_strip_table.c)
        ("GOLMPI_CPU_ISA=bogus", small + ["--backend", "cpu"], USAGE,
         "GOLMPI_CPU_ISA=bogus: this CPU or build has no such kernel", {},
         {"GOLMPI_CPU_ISA": "bogus"}),
        # the writer's settings (io/tuning.h)
        ("GOLMPI_IO_TRANSFER=bogus", small, USAGE,
         "GOLMPI_IO_TRANSFER='bogus': expected auto, direct, independent or collective", {},
         {"GOLMPI_IO_TRANSFER": "bogus"}),
        ("GOLMPI_WRITER_CPUS=0-1", small, USAGE,
         "GOLMPI_WRITER_CPUS='0-1': expected auto or inherit", {}, {"GOLMPI_WRITER_CPUS": "0-1"}),
    ]


def make_files(d, before):
    for fname, data in before.items():
        path = os.path.join(d, fname)
        if callable(data):
            data(path)
        else:
            with open(path, "wb") as f:
                f.write(data)


def snapshot(d):
    out = {}
    for root, dirs, files in os.walk(d):
        for name in dirs + files:
            p = os.path.join(root, name)
            rel = os.path.relpath(p, d)
            if os.path.isfile(p):
                with open(p, "rb") as f:
                    out[rel] = hashlib.sha256(f.read()).hexdigest()
            else:
                out[rel] = "dir"
    return out


def have_gpu():
    try:
        r = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
        return r.returncode == 0 and "GPU" in r.stdout
    except (OSError, subprocess.TimeoutExpired):
        return False


def check(a, golmpi, env, gpu, case):
    """One case: ("ok" | "fail" | "skip", the lines it prints)."""
    name, args, code, needle, before, *case_env = case
    if code == NOGPU and gpu:
        return "skip", [f"skip  {name}: this machine has a GPU"]
    with tempfile.TemporaryDirectory(prefix="golmpi_bad_") as d:
        try:
            make_files(d, before)
        except ImportError as e:
            return "skip", [f"skip  {name}: cannot make its input file ({e})"]
        want_files = snapshot(d)
        cmd = a.mpiexec + ["-n", str(a.ranks), golmpi] + args
        run_env = dict(env, **case_env[0]) if case_env else env
        try:
            r = subprocess.run(cmd, cwd=d, env=run_env, capture_output=True, text=True,
                               timeout=120)
            out, rc = r.stdout + r.stderr, r.returncode
        except subprocess.TimeoutExpired as e:
            out, rc = f"(timed out after 120 s) {e.stdout or ''}{e.stderr or ''}", None
        problems = []
        if rc != code:
            problems.append(f"exit code {rc}, want {code}")
        n = out.count(needle)
        if n != 1:
            problems.append(f"'{needle}' appears {n} times, want once")
        nerr = out.count("golmpi: error:")
        if nerr != 1:
            problems.append(f"'golmpi: error:' appears {nerr} times, want once")
        got_files = snapshot(d)
        if got_files != want_files:
            made = sorted(set(got_files) - set(want_files))
            changed = sorted(k for k in want_files if got_files.get(k) != want_files[k])
            problems.append(f"files appeared {made} or changed {changed}")
        if problems:
            return "fail", ([f"FAIL  {name}: {' '.join(args)}"] + [f"      {p}" for p in problems]
                            + ["      output:\n" + "\n".join("        " + l for l in out.splitlines())])
        msg = next((l for l in out.splitlines() if "golmpi: error:" in l), "")
        return "ok", [f"ok    {name}: {msg}"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--golmpi", required=True)
    ap.add_argument("--patterns", required=True)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--jobs", type=int, default=2,
                    help="cases run at once (each its own directory and mpiexec); the results "
                         "are printed in the table's order")
    ap.add_argument("--mpiexec", nargs=argparse.REMAINDER, required=True,
                    help="mpiexec and its flags; must come last")
    a = ap.parse_args()
    golmpi = os.path.abspath(a.golmpi)
    pat = os.path.abspath(a.patterns)
    env = dict(os.environ, OMP_NUM_THREADS="1")
    gpu = have_gpu()

    table = cases(pat)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        results = list(pool.map(lambda case: check(a, golmpi, env, gpu, case), table))
    for _, lines in results:
        print("\n".join(lines))
    failures = sum(status == "fail" for status, _ in results)
    skipped = sum(status == "skip" for status, _ in results)
    print(f"{len(table) - failures - skipped} of {len(table)} bad inputs handled correctly"
          + (f", {skipped} skipped" if skipped else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
