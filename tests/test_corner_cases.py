#!/usr/bin/env python3
r"""Corner cases of faults and inputs: a slow rank, quoted bytes, colliding names, a lost reader,
a deleted chunk, extreme values, a stop inside I/O. One part a run:

  slow_index  rank 0 slowed in its own metadata work on each chunk (GOLMPI_DEBUG_SLOW_INDEX=2.5,
              a debug setting) longer than --timeout 2, at 4 ranks: the run finishes, exit 0, no
              "stopped answering", and its chunks equal a run without the setting, cell for
              cell. The halo watchdog judges silence, not slowness. (About 30 s.)

  quote       messages that quote input escape it: an RLE whose first line holds terminal escape
              sequences (OSC title, clear screen, colours), binary junk, a NUL byte, a --rule, a
              --pattern name and an --output directory holding ESC: each run exits 2 with one
              message whose bytes are all printable ASCII, showing the ESC as \x1b (or the junk
              as \xNN). At 2 ranks; about 10 s.

  names       one set of output names (io/output_names.c): --stats and --pattern naming any file an
              output to life.h5 makes (the index, its .part, the .xmf, its .part, the lock, a
              chunk, a chunk's .part, the log of fatal messages; through another path spelling
              too) -> exit 2, one message naming the option and what the file is, and the
              directory unchanged, --force or not. 24 runs of golmpi alone (an MPI singleton:
              the check is rank 0's), about 15 s.

  pipe_hup    a run whose reader goes away (golmpi 2>&1 | head -1) finishes: exit 0, every chunk,
              the index and the .xmf equal a run with its output kept, no lock, no .part (SIGPIPE
              killed it half-written, leaving both). A run whose terminal hangs up (SIGHUP) stops
              as on SIGTERM: exit 4, a checkpoint as the last frame, no lock, no .part. golmpi
              alone (an MPI singleton, so the signal and the pipe reach it, not mpiexec); about
              20 s.

  chunk_gone  a finished chunk deleted by the user while the run goes on: the index that would name
              it fails its read-back, so the run stops with exit 5 and one message naming the
              chunk, the free space said once; the lock is given back and no index appears that
              names a missing file. 2 ranks, a few seconds.

  extremes    the largest --timeout and --progress (1e9 s) run to the end (exit 0; a heartbeat period
              or a sleep built from them must not overflow); junk in the debug settings
              (GOLMPI_DEBUG_SLOW_INDEX, GOLMPI_DEBUG_PIECE: junk, nan, -1, 1e300, inf) is ignored
              (exit 0, same cells as without); junk in GOLMPI_CPU_ISA is one message, exit 2, no
              file. At 2 ranks; about 20 s.

  stop_in_io  rank 0 of 4 SIGSTOPped while it is busy in its own metadata work (the slow_index
              setting), the other ranks wherever they are (a halo wait, their writer's wait, a
              collective): every rank and mpiexec are gone within --timeout 2 + 15 s, with a
              non-zero exit and a line saying rank 0 stopped answering. The heartbeat must not
              hide a stopped rank behind a living neighbour that waits on it. About 15 s.

usage: test_corner_cases.py --golmpi PATH --work DIR --part PART --mpiexec MPIEXEC [FLAGS...]
"""
import argparse
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_faults as tf  # noqa: E402  (the runner and the output's consistency check)

OK, USAGE = 0, 2


def reference_run(run, work, ranks, args, label):
    """The uninterrupted run a part compares with, in WORK/ref; None (and a failure) if it fails."""
    ref = tf.fresh(os.path.join(work, "ref"))
    rc, out = run.run(ranks, args, ref)
    if rc != OK:
        tf.fail(f"{label}: the reference run exited {rc}:\n{out}")
        return None
    return ref


def part_slow_index(run, work):
    args = ["--backend", "cpu", "--size", "256", "--steps", "40", "--save-every", "5", "--chunk",
            "2", "--seed", "7", "--timeout", "2", "--output", "life.h5"]
    ref = reference_run(run, work, 4, args, "slow_index")
    if ref is None:
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


def run_bytes(run, ranks, args, cwd):
    """Like run.run, but stdout and stderr as bytes: what a terminal would receive."""
    import subprocess  # noqa: PLC0415
    r = subprocess.run(run.cmd(ranks, args), cwd=cwd, env=run.env, capture_output=True,
                       timeout=120)
    return r.returncode, r.stdout + r.stderr


def part_quote(run, work):
    esc = b"\x1b]0;pwned\x07\x1b[2J\x1b[31m"
    files = {"esc.rle": b"x = 3, y = 3" + esc + b", rule = B3/S23\n3o!\n",
             "junk.rle": b"\x00\xff\x1b[2J junk\x01\x02\x80\n3o!\n",
             "nul.rle": b"x = 3, y = 3\n0\x003o!\n",
             "cells\x1b[2J.cells": b"!x\n.O\x1b[5m.\n"}
    d = tf.fresh(os.path.join(work, "quote"))
    for name, data in files.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)
    common = ["--steps", "1", "--no-output"]
    cases = [(["--pattern", n] + common, "--pattern " + repr(n)) for n in files]
    cases += [(["--rule", "B3\x1b[2J/S23"] + common, "--rule with ESC"),
              (["--steps", "1", "--output", "no\x1b]0;x\x07dir/life.h5"], "--output with ESC"),
              (["--size", "\x1b[2J64"] + common, "--size with ESC"),
              (["--stats", "no\x1b[2Jdir/s.json"] + common, "--stats with ESC")]
    for args, label in cases:
        rc, out = run_bytes(run, 2, args, d)
        bad = sorted({b for b in out if not (0x20 <= b <= 0x7e or b == 0x0a)})
        lines = [ln for ln in out.decode("ascii", "replace").splitlines()
                 if ln.startswith("golmpi")]  # not mpiexec's banner
        if rc != USAGE or bad or len(lines) != 1 or "\\x" not in lines[0]:
            tf.fail(f"quote: {label}: exit {rc} (want {USAGE}), raw bytes "
                    f"{[hex(b) for b in bad]}, message {out!r}")
        else:
            tf.ok(f"quote: {label}: {lines[0]}")
    if "life.h5" in os.listdir(d) or "s.json" in os.listdir(d):
        tf.fail("quote: a refused run wrote its output")


def part_names(run, work):
    import subprocess  # noqa: PLC0415
    d = tf.fresh(os.path.join(work, "names"))
    os.makedirs(os.path.join(d, "sub"))
    names = {"life.h5": "the output index", "life.h5.part": "the output index's .part",
             "life.xmf": "the XDMF file", "life.xmf.part": "the XDMF file's .part",
             "life.lock": "the output's lock", "life.log": "the output's log of fatal messages",
             "life_000000-000005.h5": "a chunk file",
             "life_000010.h5.part": "a chunk file's .part"}
    cases = [(opt, spelled, force) for name in names
             for opt, spelled, force in (("--stats", name, []),
                                         ("--stats", "sub/../" + name, ["--force"]),
                                         ("--pattern", name, []))]
    for opt, spelled, force in cases:
        name = os.path.basename(spelled)
        what = names[name]
        pat = os.path.join(d, name)
        if opt == "--pattern":  # it must read as a pattern to reach the check
            with open(pat, "w") as f:
                f.write("x = 3, y = 1\n3o!\n")
        before = sorted(os.listdir(d))
        args = ["--size", "64", "--steps", "10", "--save-every", "5", "--output",
                "life.h5", opt, spelled] + force
        r = subprocess.run([run.golmpi, "-q"] + args, cwd=d, env=run.env,
                           capture_output=True, text=True, timeout=120)
        rc, out = r.returncode, r.stdout + r.stderr
        lines = [ln for ln in out.splitlines() if ln.startswith("golmpi")]
        label = f"{opt} {spelled} {' '.join(force)}".strip()
        if (rc != USAGE or len(lines) != 1 or what not in lines[0]
                or opt not in lines[0] or sorted(os.listdir(d)) != before):
            tf.fail(f"names: {label}: exit {rc}, files {sorted(os.listdir(d))} "
                    f"(were {before}):\n{out}")
        else:
            tf.ok(f"names: {label}: {lines[0]}")
        if opt == "--pattern":
            os.remove(pat)


def leftovers(d):
    return [f for f in os.listdir(d) if f.endswith((".lock", ".part"))]


def part_pipe_hup(run, work):
    import signal  # noqa: PLC0415
    import subprocess  # noqa: PLC0415
    args = [run.golmpi, "--backend", "cpu", "--size", "256", "--steps", "400", "--save-every",
            "20", "--chunk", "2", "--seed", "5", "--output", "p.h5"]
    ref = tf.fresh(os.path.join(work, "ref"))
    r = subprocess.run(args, cwd=ref, env=run.env, capture_output=True, timeout=120)
    if r.returncode != OK:
        tf.fail(f"pipe_hup: the reference run exited {r.returncode}: {r.stderr!r}")
        return
    d = tf.fresh(os.path.join(work, "pipe"))
    p = subprocess.Popen(args + ["--progress", "0.01"], cwd=d, env=run.env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    first = p.stdout.readline()
    p.stdout.close()  # the reader goes away, as head does
    try:
        rc = p.wait(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = "hung"
    n = tf.check_consistent(d, "p", ref, "pipe")
    if rc != OK or leftovers(d) or n != 11:
        tf.fail(f"pipe_hup: reader gone after {first!r}: exit {rc}, {n} chunks, left "
                f"{leftovers(d)}")
    else:
        tf.ok("pipe_hup: reader gone after one line: exit 0, 11 chunks equal, no lock or .part")

    d = tf.fresh(os.path.join(work, "hup"))
    long = args[:args.index("--steps") + 1] + ["1000000"] + args[args.index("--steps") + 2:]
    p = subprocess.Popen(long, cwd=d, env=run.env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any(f.endswith(".h5") and "_" in f
                                                  for f in os.listdir(d)):
        time.sleep(0.1)
    p.send_signal(signal.SIGHUP)
    try:
        out, _ = p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
    if p.returncode != 4 or leftovers(d) or "stopped by a signal" not in out:
        tf.fail(f"pipe_hup: SIGHUP: exit {p.returncode} (want 4), left {leftovers(d)}:\n{out}")
    else:
        tf.ok("pipe_hup: SIGHUP: " + [ln for ln in out.splitlines() if "stopped" in ln][0])


def part_chunk_gone(run, work):
    import subprocess  # noqa: PLC0415
    d = tf.fresh(os.path.join(work, "gone"))
    p = run.start(2, ["--backend", "cpu", "--size", "512", "--steps", "100000", "--save-every",
                      "100", "--chunk", "2", "--output", "p.h5"], d)
    first = os.path.join(d, "p_000000-000100.h5")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not os.path.exists(first):
        time.sleep(0.02)
    try:
        os.remove(first)
        # what was finished by then: an index written later cannot pass its read-back (a chunk it
        # names is gone), so it may name these at most; listed after the removal, since a loaded
        # machine may finish more chunks between the poll above and the removal
        finished = {n for n in os.listdir(d) if n.endswith(".h5") and n != "p.h5"}
        finished.add(os.path.basename(first))
        out, _ = p.communicate(timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        p.kill()
        tf.fail(f"chunk_gone: {e}")
        return
    lines = [ln for ln in out.splitlines() if ln.startswith("golmpi")]
    import h5py  # noqa: PLC0415
    index_ok = True
    if os.path.exists(os.path.join(d, "p.h5")):
        with h5py.File(os.path.join(d, "p.h5"), "r") as f:
            srcs = [s.file_name for s in f["frames"].virtual_sources()]
        index_ok = set(srcs) <= finished  # named before it went
    if (p.returncode != 5 or len(lines) != 1 or "p_000000-000100.h5" not in lines[0]
            or lines[0].count("bytes are free") > 1 or "p.lock" in os.listdir(d)):
        tf.fail(f"chunk_gone: exit {p.returncode} (want 5), files {sorted(os.listdir(d))}:\n{out}")
    elif not index_ok:
        tf.fail("chunk_gone: the index names more chunks than before the deleted one")
    else:
        tf.ok("chunk_gone: " + lines[0])


def part_extremes(run, work):
    args = ["--backend", "cpu", "--size", "96", "--steps", "12", "--save-every", "4", "--seed",
            "3", "--output", "e.h5"]
    ref = reference_run(run, work, 2, args, "extremes")
    if ref is None:
        return
    d = tf.fresh(os.path.join(work, "big"))
    rc, out = run.run(2, args + ["--timeout", "1e9", "--progress", "1e9"], d)
    n = tf.check_consistent(d, "e", ref, "extremes: --timeout 1e9")
    if rc != OK or n != 2:
        tf.fail(f"extremes: --timeout 1e9 --progress 1e9: exit {rc}, {n} chunks:\n{out}")
    else:
        tf.ok("extremes: --timeout 1e9 --progress 1e9: exit 0, chunks equal")
    for junk in ("junk", "nan", "-1", "1e300", "inf"):
        d = tf.fresh(os.path.join(work, "junk"))
        run.env.update(GOLMPI_DEBUG_SLOW_INDEX=junk, GOLMPI_DEBUG_PIECE=junk)
        try:
            rc, out = run.run(2, args, d, timeout=120)
        finally:
            del run.env["GOLMPI_DEBUG_SLOW_INDEX"], run.env["GOLMPI_DEBUG_PIECE"]
        n = tf.check_consistent(d, "e", ref, f"extremes: debug settings {junk}")
        if rc != OK or n != 2:
            tf.fail(f"extremes: debug settings '{junk}': exit {rc}, {n} chunks:\n{out}")
        else:
            tf.ok(f"extremes: debug settings '{junk}': ignored, chunks equal")
    d = tf.fresh(os.path.join(work, "isa"))
    run.env["GOLMPI_CPU_ISA"] = "\x1b[2Jjunk"
    try:
        rc, out = run.run(2, args, d)
    finally:
        del run.env["GOLMPI_CPU_ISA"]
    lines = [ln for ln in out.splitlines() if ln.startswith("golmpi")]
    if rc != USAGE or len(lines) != 1 or "\x1b" in out or os.listdir(d):
        tf.fail(f"extremes: GOLMPI_CPU_ISA junk: exit {rc}, files {os.listdir(d)}:\n{out!r}")
    else:
        tf.ok("extremes: GOLMPI_CPU_ISA junk: " + lines[0])


def part_stop_in_io(run, work):
    import signal  # noqa: PLC0415
    from mpi_ranks import alive, find_ranks, kill_run  # noqa: PLC0415
    d = tf.fresh(os.path.join(work, "stop"))
    seed = str(800000000 + os.getpid())  # marks this run's processes
    run.env["GOLMPI_DEBUG_SLOW_INDEX"] = "2.5"
    try:
        p = run.start(4, ["--backend", "cpu", "--size", "256", "--steps", "100000", "--save-every",
                          "5", "--chunk", "2", "--seed", seed, "--timeout", "2", "--output",
                          "life.h5"], d)
    finally:
        del run.env["GOLMPI_DEBUG_SLOW_INDEX"]
    pids = {}
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and p.poll() is None:
            pids = find_ranks(seed.encode())
            if len(pids) == 4 and any(f.endswith(".h5.part") for f in os.listdir(d)):
                break  # rank 0's writer is in (or about to be in) its slow metadata work
            time.sleep(0.05)
        if len(pids) != 4 or p.poll() is not None:
            tf.fail(f"stop_in_io: the run did not start (exit {p.poll()})")
            return
        time.sleep(0.5)
        os.kill(pids[0], signal.SIGSTOP)
        t0 = time.monotonic()
        while time.monotonic() < t0 + 17 and (p.poll() is None
                                              or any(alive(q) for q in pids.values())):
            time.sleep(0.1)
        took = time.monotonic() - t0
        left = [r for r, q in pids.items() if alive(q)]
        out = p.stdout.read() if p.poll() is not None else ""
        said = [ln for ln in out.splitlines()
                if "stopped answering" in ln and re.search(r"\brank 0\b", ln.split(":", 2)[-1])]
        if p.poll() is None or left or p.returncode == 0 or not said:
            tf.fail(f"stop_in_io: {took:.1f} s after SIGSTOP: mpiexec "
                    f"{'running' if p.poll() is None else p.returncode}, ranks left {left}:\n{out}")
        else:
            tf.ok(f"stop_in_io: all gone {took:.1f} s after SIGSTOP of rank 0: {said[0]}")
    finally:
        kill_run(p, list(pids.values()), wait_s=30)


PARTS = {"extremes": part_extremes, "stop_in_io": part_stop_in_io, "slow_index": part_slow_index, "quote": part_quote, "names": part_names,
         "pipe_hup": part_pipe_hup, "chunk_gone": part_chunk_gone}


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
