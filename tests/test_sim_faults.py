#!/usr/bin/env python3
"""Faults of the CUDA path on the simulated GPU (tests/cudasim; docs/GPU.md): a 3-rank run of
--backend cuda writing frames, and one fault at rank 1 while it runs. Every rank and mpiexec must
be gone within --timeout + GRACE_S of the fault, non-zero, with a line that names rank 1 (or the
library's error, for an NCCL error). Each case prints how long the ranks took.
    test_sim_faults.py --golmpi PATH [--cases a,b] [--no-output] [--ranks N] [--via-abort]
                       --mpiexec MPIEXEC [FLAGS...]
--via-abort: also no rank's way out may block until its fatal path's deadline ends it ("the way
out blocked": a teardown waiting on a stopped peer, say); meant for --ranks 2, whose one survivor
finds the fault itself, and so tears NCCL down itself.
Cases: stop-nccl, stop-mpi (SIGSTOP), kill-nccl, kill-mpi (SIGKILL), nccl-error (the simulated
NCCL's asynchronous error, GOLMPI_SIM_NCCL_ERROR_RANK), device-nccl, device-mpi (rank 1's device
stops making progress, GOLMPI_SIM_STALL_RANK; timed from the simulator's line announcing the
stop, which may come before the run printed its first progress)."""
import argparse, os, re, signal, subprocess, sys, tempfile, time

from mpi_ranks import alive, find_ranks, kill_run

RANKS, TIMEOUT_S, GRACE_S, FAULTY = 3, 5, 5, 1
VIA_ABORT = False  # --via-abort: no rank's way out may block
AFTER_S = 2.0  # the simulated faults begin this long after the ranks start their devices
STALL_LINE = "cudasim: the device stops now"  # tests/cudasim/sim.h's SIM_STALL_LINE
QUEUE_FULL_LINE = "cudasim: the launch queue is full"  # its SIM_QUEUE_FULL_LINE
CASES = ("stop-nccl", "stop-mpi", "kill-nccl", "kill-mpi", "nccl-error", "device-nccl",
         "device-mpi")
# what names the faulty rank: golmpi's watchdog or heartbeat, the CUDA watchdog, mpiexec's report
NAMES = re.compile(r"rank 1\b|\[\[\d+,\d+\],1\]|rank 1 ")


def start(golmpi, mpiexec, tmp, name, env, marker, frames=True):
    halo = "mpi" if name.endswith("-mpi") else "nccl"
    out = ["--save-every", "200", "--output", os.path.join(tmp, name, "life.h5")]
    cmd = mpiexec + ["-n", str(RANKS), golmpi, "--backend", "cuda", "--halo", halo, "--size", "256",
                     "--steps", "100000000", "--timeout", str(TIMEOUT_S), "--progress", "0.2",
                     "--seed", marker] + (out if frames else ["--no-output"])
    os.mkdir(os.path.join(tmp, name))
    err = open(os.path.join(tmp, name + ".err"), "w")
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, cwd=tmp, env=env,
                            process_group=0), err.name


def running(mpi, err_path, marker, golmpi, deadline):
    while time.monotonic() < deadline and mpi.poll() is None:
        with open(err_path) as f:
            started = "golmpi: generation" in f.read()
        pids = find_ranks(marker, golmpi)
        if started and len(pids) == RANKS:
            return pids
        time.sleep(0.1)
    return None


def stall_seen(mpi, err_path, deadline):
    """When the stalled device announced its stop (the fault's moment), or None."""
    while time.monotonic() < deadline and mpi.poll() is None:
        with open(err_path) as f:
            if STALL_LINE in f.read():
                return time.monotonic()
        time.sleep(0.05)
    return None


def case(golmpi, mpiexec, tmp, name, frames=True):
    marker = str(800000000 + os.getpid() * 10 + CASES.index(name))
    env = dict(os.environ)
    if name == "nccl-error":
        env.update(GOLMPI_SIM_NCCL_ERROR_RANK=str(FAULTY), GOLMPI_SIM_NCCL_ERROR_AFTER_S=str(AFTER_S))
    if name.startswith("device"):
        env.update(GOLMPI_SIM_STALL_RANK=str(FAULTY), GOLMPI_SIM_STALL_AFTER_S=str(AFTER_S))
    mpi, err_path = start(golmpi, mpiexec, tmp, name, env, marker, frames)
    pids = {}
    try:
        t_start = time.monotonic()
        if name.startswith("device"):  # timed from the stop itself, which may precede the start
            t_fault = stall_seen(mpi, err_path, t_start + 60)
            pids = find_ranks(marker, golmpi) if t_fault else {}
        else:
            pids = running(mpi, err_path, marker, golmpi, t_start + 60) or {}
        if len(pids) != RANKS:
            return [f"{name}: the run did not start (exit {mpi.poll()}):\n{open(err_path).read()}"]
        if name.startswith("stop") or name.startswith("kill"):
            os.kill(pids[FAULTY], signal.SIGSTOP if name.startswith("stop") else signal.SIGKILL)
            t_fault = time.monotonic()
        elif name == "nccl-error":  # counts from the communicator's creation, about the start
            t_fault = t_start + AFTER_S
        deadline = t_fault + TIMEOUT_S + GRACE_S + 5
        while time.monotonic() < deadline and (mpi.poll() is None
                                               or any(alive(p) for p in pids.values())):
            with open(err_path) as f:
                if QUEUE_FULL_LINE in f.read():  # the simulator saw the bound fail: no need to wait
                    break
            time.sleep(0.1)
        took = time.monotonic() - t_fault
        return check(name, mpi, pids, took, open(err_path).read())
    finally:
        kill_run(mpi, list(pids.values()) + list(find_ranks(marker).values()))


def check(name, mpi, pids, took, err):
    # golmpi bounds the work it queues (cuda/cuda_watch.c): a host thread blocked in the full
    # launch queue can never run the watchdog that would end the run
    if QUEUE_FULL_LINE in err:
        return [f"{name}: a rank blocked in the full launch queue, {took:.1f} s after the fault"]
    left = [r for r, p in pids.items() if alive(p)]
    if mpi.poll() is None or left:
        return [f"{name}: {took:.1f} s after the fault, still running: "
                f"{'mpiexec ' if mpi.poll() is None else ''}{left}\n{err[-3000:]}"]
    if mpi.returncode == 0:
        return [f"{name}: mpiexec exited 0"]
    lines = [l for l in err.splitlines()
             if not l.startswith("golmpi: generation") and not l.startswith("cudasim:")]
    # the way out itself must not block: a rank whose teardown hangs is ended by its fatal path's
    # deadline, which says so (core/ending.c) and exits without MPI_Abort. Said first: it is the
    # cause, whether or not the deadline's wait also made the ranks late.
    blocked = [l for l in lines if "the way out blocked" in l]
    if VIA_ABORT and blocked:
        return [f"{name}: a rank's way out blocked, {took:.1f} s after the fault: {blocked[0]}"]
    if took > TIMEOUT_S + GRACE_S:
        return [f"{name}: gone {took:.1f} s after the fault, past --timeout {TIMEOUT_S} + {GRACE_S}:\n"
                + "\n".join(lines)[-3000:]]
    named = [l for l in lines if NAMES.search(l) or (name == "nccl-error" and "NCCL" in l)]
    if not named:
        return [f"{name}: no line names rank {FAULTY}; stderr:\n{err[-3000:]}"]
    print(f"{name}: every rank gone {took:.1f} s after the fault, exit {mpi.returncode}; "
          f"{named[0].strip()[:220]}")
    return []


def main():
    global RANKS, VIA_ABORT  # noqa: PLW0603  (the options read by start, running, case, check)
    ap = argparse.ArgumentParser()
    ap.add_argument("--golmpi", required=True)
    ap.add_argument("--cases", default=",".join(CASES))
    # without frames the host waits on the device only at the watchdog's marks: a run that must
    # show the marks' bound (cudasim_mutation_watch_bound) is not ended early by a frame's wait
    ap.add_argument("--no-output", action="store_true")
    # two ranks: rank 0 alone survives a fault at rank 1, so it alone finds it
    ap.add_argument("--ranks", type=int, default=RANKS)
    ap.add_argument("--via-abort", action="store_true")
    ap.add_argument("--mpiexec", nargs=argparse.REMAINDER, required=True)
    a = ap.parse_args()
    RANKS, VIA_ABORT = a.ranks, a.via_abort
    fails = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.cases.split(","):
            fails += case(os.path.abspath(a.golmpi), a.mpiexec, tmp, name, not a.no_output)
    if fails:
        sys.exit("FAIL\n" + "\n".join(fails))
    print("every fault ended every rank within --timeout + %d s" % GRACE_S)


if __name__ == "__main__":
    main()
