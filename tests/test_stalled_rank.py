"""A rank that stops answering must not hang the others: a 3-rank run on the
CPU backend, one rank SIGSTOPped once it runs; every rank and mpiexec must be gone within
--timeout + 15 s, with a non-zero exit code and a message that names the stopped rank. Once with
rank 1 stopped, once with rank 0 (the rank that prints). Every process the test started is
SIGKILLed on the way out, whatever happened.
    test_stalled_rank.py --golmpi PATH --mpiexec MPIEXEC [FLAGS...]"""
import argparse, os, re, signal, subprocess, sys, tempfile, time

from mpi_ranks import alive, find_ranks, kill_run

RANKS, TIMEOUT_S, GRACE_S = 3, 5, 15
# the one line a waiting rank prints before it aborts every rank (halo/halo_mpi.c): the peers
# whose rows did not arrive, or, when every row arrived, the peers that did not take ours (a large
# message waits for its receiver)
MESSAGE = re.compile(r"^golmpi: rank (\d+) on host (\S+): no halo row (?:arrived from|was taken by) "
                     r"ranks? "
                     r"(.+) for ([\d.]+) s \(--timeout [\d.]+\)")


def wait_running(mpi, err_path, marker, deadline):
    """The rank pids once rank 0 has printed a progress line and every rank is found."""
    while time.monotonic() < deadline:
        if mpi.poll() is not None:
            return None
        with open(err_path) as f:
            started = "golmpi: generation" in f.read()
        pids = find_ranks(marker)
        if started and len(pids) == RANKS:
            return pids
        time.sleep(0.1)
    return None


def case(golmpi, mpiexec, tmp, stop):
    """Runs one case; returns a list of failures."""
    seed = str(900000000 + os.getpid() * 10 + stop)  # marks this run's processes
    err_path = os.path.join(tmp, "stop%d.err" % stop)
    cmd = mpiexec + ["-n", str(RANKS), golmpi, "--backend", "cpu", "--size", "2048", "--steps",
                     "1000000", "--no-output", "--timeout", str(TIMEOUT_S), "--progress", "0.2",
                     "--seed", seed]
    pids = {}
    with open(err_path, "w") as err:
        mpi = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, cwd=tmp,
                               process_group=0)
    try:
        pids = wait_running(mpi, err_path, seed.encode(), time.monotonic() + 60)
        if pids is None:
            return ["stop %d: the run did not start (exit %s):\n%s"
                    % (stop, mpi.poll(), open(err_path).read())]
        os.kill(pids[stop], signal.SIGSTOP)
        t_stop = time.monotonic()
        deadline = t_stop + TIMEOUT_S + GRACE_S
        while time.monotonic() < deadline and (mpi.poll() is None
                                               or any(alive(p) for p in pids.values())):
            time.sleep(0.1)
        took = time.monotonic() - t_stop
        return check(stop, mpi, pids, took, open(err_path).read())
    finally:
        kill_run(mpi, list(pids.values()) + list(find_ranks(seed.encode()).values()))


def check(stop, mpi, pids, took, err):
    fails = []
    left = [r for r, p in pids.items() if alive(p)]
    if mpi.poll() is None or left:
        fails.append("stop %d: %.1f s after SIGSTOP, still running: %s%s"
                     % (stop, took, "mpiexec " if mpi.poll() is None else "",
                        " ".join("rank %d" % r for r in left)))
    elif mpi.returncode == 0:
        fails.append("stop %d: mpiexec exited 0" % stop)
    if took < TIMEOUT_S - 1:
        fails.append("stop %d: gone after %.1f s, before --timeout %d" % (stop, took, TIMEOUT_S))
    named = [m for m in map(MESSAGE.match, err.splitlines()) if m]
    if not any(int(m.group(1)) != stop and re.search(r"\b%d \(" % stop, m.group(3))
               for m in named):
        fails.append("stop %d: no line names rank %d as silent; stderr:\n%s" % (stop, stop, err))
    if fails:
        return fails
    print("stop rank %d: all gone %.1f s after SIGSTOP, exit %d; %s"
          % (stop, took, mpi.returncode, named[0].group(0)))
    return []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--golmpi", required=True)
    ap.add_argument("--mpiexec", nargs=argparse.REMAINDER, required=True)
    a = ap.parse_args()
    if not os.path.isdir("/proc/self"):
        print("no /proc: cannot find the ranks' processes")
        sys.exit(77)
    fails = []
    with tempfile.TemporaryDirectory() as tmp:
        for stop in (1, 0):
            fails += case(os.path.abspath(a.golmpi), a.mpiexec, tmp, stop)
    if fails:
        sys.exit("FAIL\n" + "\n".join(fails))
    print("a stopped rank aborts every rank within --timeout")


if __name__ == "__main__":
    main()
