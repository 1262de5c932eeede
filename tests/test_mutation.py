#!/usr/bin/env python3
"""Proof that the simulated GPU catches a missing ordering (tests/cudasim.cmake): golmpi built with
one ordering of its CUDA path taken out (the mutant) must fail, and golmpi as it is must pass, in
the same configuration, under every schedule seed given (GOLMPI_SIM_SEED).
    test_mutation.py --golmpi PATH --mutant PATH --ranks N --seeds 1,2 [--every-seed] [--]
                     GOLMPI_ARGS... --mpiexec MPIEXEC [FLAGS...]
Passing means: exit 0, no race report, frames equal to the CPU backend's. The mutant fails when it
exits non-zero (a race report exits 66; a CUDA error, such as an unjoined capture, aborts), or
reports a race, or writes a frame that differs, or hangs past the limit. Exit 0 when the mutant
failed under at least one seed (--every-seed: under every one, for a mutant the simulator must
catch whatever the schedule) and golmpi passed under all of them; the mutant's outcome under
each seed is printed."""
import argparse, os, subprocess, sys, tempfile

import h5py
import numpy as np

LIMIT_S = 120


def run(golmpi, backend, args, ranks, mpiexec, workdir, seed):
    env = dict(os.environ, GOLMPI_SIM_SEED=str(seed), GOLMPI_SIM_REPORTS=workdir)
    cmd = mpiexec + ["-n", str(ranks), golmpi, "--backend", backend, "--quiet", "--timeout", "20",
                     "--output", "life.h5"] + args
    try:
        p = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, timeout=LIMIT_S,
                           env=env, process_group=0)
    except subprocess.TimeoutExpired:
        return "hung", None, f"no end in {LIMIT_S} s: {' '.join(cmd)}"
    if p.returncode != 0 or "RACE" in p.stderr:
        return f"exit {p.returncode}", None, p.stderr
    with h5py.File(os.path.join(workdir, "life.h5"), "r") as f:
        frames = {int(g): fr for g, fr in zip(f["generations"][:], f["frames"][:])}
    return "ok", frames, p.stderr


def differs(got, want):
    if sorted(got) != sorted(want):
        return f"generations {sorted(got)} against {sorted(want)}"
    for g in sorted(want):
        bad = int(np.count_nonzero(got[g] != want[g]))
        if bad:
            return f"generation {g}: {bad} wrong cells"
    return None


def main():
    ap = argparse.ArgumentParser(allow_abbrev=False)  # golmpi's --seed is not --seeds
    ap.add_argument("--golmpi", required=True)
    ap.add_argument("--mutant", required=True)
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--seeds", default="1")
    ap.add_argument("--every-seed", action="store_true")
    ap.add_argument("--mpiexec", nargs=argparse.REMAINDER, required=True)
    opts, args = ap.parse_known_args()
    args = [a for a in args if a != "--"]
    seeds = [int(s) for s in opts.seeds.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        def where(name):
            d = os.path.join(tmp, name)
            os.mkdir(d)
            return d
        # the CPU backend's frames, with its own halo mode (the device modes are the GPU's)
        cpu_args = [a for i, a in enumerate(args) if a != "--halo" and args[i - 1] != "--halo"]
        state, want, err = run(opts.golmpi, "cpu", cpu_args, opts.ranks, opts.mpiexec,
                               where("cpu"), 0)
        if state != "ok":
            sys.exit(f"FAIL: the CPU reference did not run ({state}):\n{err}")
        caught = 0
        for seed in seeds:
            state, got, err = run(opts.golmpi, "cuda", args, opts.ranks, opts.mpiexec,
                                  where(f"real{seed}"), seed)
            wrong = differs(got, want) if state == "ok" else state
            if wrong:
                sys.exit(f"FAIL: golmpi itself, seed {seed}: {wrong}\n{err}")
            state, got, err = run(opts.mutant, "cuda", args, opts.ranks, opts.mpiexec,
                                  where(f"mutant{seed}"), seed)
            wrong = differs(got, want) if state == "ok" else state
            first = next((l for l in err.splitlines() if "RACE" in l or "error" in l), "")
            print(f"seed {seed}: golmpi passed; the mutant {'FAILED: ' + wrong if wrong else 'passed'}"
                  + (f" ({first.strip()[:200]})" if wrong and first else ""))
            caught += bool(wrong)
        if not caught:
            sys.exit("FAIL: the mutant passed under every seed: the simulated GPU missed it")
        if opts.every_seed and caught < len(seeds):
            sys.exit(f"FAIL: the mutant passed under {len(seeds) - caught} seed(s): the simulated "
                     "GPU must catch it under every schedule")
        print(f"mutant caught under {caught} of {len(seeds)} seed(s)")


main()
