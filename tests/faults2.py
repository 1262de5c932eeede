#!/usr/bin/env python3
"""Faults and inputs nobody had tried (issue 20). One part a run:

  slow_index  rank 0 slowed in its own metadata work on each chunk (GOLMPI_DEBUG_SLOW_INDEX=2.5,
              a debug setting) longer than --timeout 2, at 4 ranks: the run finishes, exit 0, no
              "stopped answering", and its chunks equal a run without the setting, cell for
              cell. The halo watchdog judges silence, not slowness. (About 30 s.)

usage: faults2.py --golmpi PATH --work DIR --part PART --mpiexec MPIEXEC [FLAGS...]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_faults as tf  # noqa: E402  (the runner and the consistency check of issue 9)

OK, USAGE = 0, 2


def part_slow_index(run, work):
    args = ["--backend", "cpu", "--size", "256", "--steps", "40", "--save-every", "5", "--chunk",
            "2", "--seed", "7", "--timeout", "2", "--output", "life.h5"]
    ref = tf.fresh(os.path.join(work, "ref"))
    rc, out = run.run(4, args, ref)
    if rc != OK:
        tf.fail(f"slow_index: the reference run exited {rc}:\n{out}")
        return
    slow = tf.fresh(os.path.join(work, "slow"))
    run.env["GOLMPI_DEBUG_SLOW_INDEX"] = "2.5"
    try:
        rc, out = run.run(4, args, slow, timeout=240)
    finally:
        del run.env["GOLMPI_DEBUG_SLOW_INDEX"]
    if rc != OK or "stopped answering" in out:
        tf.fail(f"slow_index: rank 0 slowed 2.5 s in its metadata work, --timeout 2: exit {rc}:\n"
                f"{out}")
        return
    n = tf.check_consistent(slow, "life", ref, "slow_index")
    if n != 5:
        tf.fail(f"slow_index: {n} finished chunks, not 5")
    else:
        tf.ok("slow_index: rank 0 busy 2.5 s a chunk with --timeout 2: finished, 5 chunks equal")


PARTS = {"slow_index": part_slow_index}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--golmpi", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--part", required=True, choices=sorted(PARTS))
    ap.add_argument("--mpiexec", nargs=argparse.REMAINDER, required=True)
    a = ap.parse_args()
    run = tf.Runner(os.path.abspath(a.golmpi), a.mpiexec)
    work = tf.fresh(os.path.abspath(a.work))
    rc = PARTS[a.part](run, work)
    if tf.failures:
        print(f"{len(tf.failures)} failure(s)")
        return 1
    return rc or 0


if __name__ == "__main__":
    sys.exit(main())
