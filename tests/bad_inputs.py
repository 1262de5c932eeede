#!/usr/bin/env python3
"""End to end: each bad input gives one clear message (printed once, by rank 0), the expected exit
code, and no files at all in the run's directory.

usage: bad_inputs.py --golmpi PATH --patterns DIR [--ranks N] --mpiexec MPIEXEC [FLAGS...]
"""
import argparse
import hashlib
import os
import subprocess
import sys
import tempfile

USAGE, NOGPU = 2, 3


def cases(pat):
    """(name, args, exit code, substring, files made before the run {name: bytes})."""
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
        ("--no-output with --output", small + ["--no-output", "--output", "a.h5"], USAGE,
         "--no-output and --output", {}),
        ("--chunk 0", small + ["--chunk", "0"], USAGE, "--chunk: '0'", {}),
        ("--save-every 0", ["--size", "32", "--steps", "2", "--save-every", "0"], USAGE,
         "--save-every: '0'", {}),
        ("existing output without --force", small, USAGE, "--force",
         {"life.h5": b"an earlier run's index\n"}),
        # "no usable GPU" in a CUDA build, "built without CUDA" otherwise: both start so
        ("--backend cuda without a GPU", small + ["--backend", "cuda"], NOGPU, "--backend cuda: ",
         {}),
    ]


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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--golmpi", required=True)
    ap.add_argument("--patterns", required=True)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--mpiexec", nargs=argparse.REMAINDER, required=True,
                    help="mpiexec and its flags; must come last")
    a = ap.parse_args()
    golmpi = os.path.abspath(a.golmpi)
    pat = os.path.abspath(a.patterns)
    env = dict(os.environ, OMP_NUM_THREADS="1")
    gpu = have_gpu()

    failures = 0
    table = cases(pat)
    for name, args, code, needle, before in table:
        if code == NOGPU and gpu:
            print(f"skip  {name}: this machine has a GPU")
            continue
        with tempfile.TemporaryDirectory(prefix="golmpi_bad_") as d:
            for fname, data in before.items():
                with open(os.path.join(d, fname), "wb") as f:
                    f.write(data)
            want_files = snapshot(d)
            cmd = a.mpiexec + ["-n", str(a.ranks), golmpi] + args
            try:
                r = subprocess.run(cmd, cwd=d, env=env, capture_output=True, text=True,
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
                failures += 1
                print(f"FAIL  {name}: {' '.join(args)}")
                for p in problems:
                    print(f"      {p}")
                print("      output:\n" + "\n".join("        " + l for l in out.splitlines()))
            else:
                msg = next((l for l in out.splitlines() if "golmpi: error:" in l), "")
                print(f"ok    {name}: {msg}")
    print(f"{len(table) - failures} of {len(table)} bad inputs handled correctly")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
