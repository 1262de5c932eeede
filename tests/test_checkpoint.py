"""Checkpoint on a signal, and resume into the same series (DESIGN, Checkpoint and resume).

  1. A 3-rank run; SIGTERM to rank 1 alone once it runs. Every rank exits 4 (each rank's exit code
     is caught by a shell around it), rank 0 says where it stopped, and the output is whole: the
     index reads back, its last frame is the stop generation, its chunks are the chunk files on
     disk, each once, and the last chunk's name ends at the stop generation.
  2. The documented command (--restart life.h5 --output life.h5, same other options) on 2 ranks;
     SIGUSR1 to mpiexec, which forwards it: exit 4 again.
  3. The same command once more: it completes the series (exit 0); once more after that: nothing
     to do (exit 0, no file written).
The series then equals a run that never stopped: every generation of that run is in the index,
with the same frame, byte for byte; the only extra generations are the two stop generations; the
last frame and generation are the same; the .xmf lists the index's generations, in order.
    test_checkpoint.py --golmpi PATH [--run "GOLMPI ARGS"] --mpiexec MPIEXEC [FLAGS...]
--run replaces the run's grid, generations and frames (and may name a backend: the simulated
GPU's case runs --backend cuda on a smaller grid)."""
import argparse, glob, os, re, signal, subprocess, sys, tempfile, time

import h5py
import numpy as np

from mpi_ranks import find_ranks

RUN = ["--size", "512", "--steps", "150000", "--save-every", "1000", "--chunk", "4"]
STOPPED = re.compile(r"golmpi: stopped by a signal at generation (\d+)")


class Run:
    """mpiexec -n N golmpi ARGS in `where`, optionally each rank inside a shell that writes its
    exit code to rc.<rank>."""

    def __init__(self, opts, where, ranks, args, rc_files=False):
        self.where, self.err = where, os.path.join(where, "err.txt")
        cmd = opts.mpiexec + ["-n", str(ranks)]
        if rc_files:
            script = ('"$0" "$@"; echo $? > rc.${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-$PMIX_RANK}}')
            cmd += ["sh", "-c", script]
        cmd += [opts.golmpi] + args
        with open(self.err, "w") as err:
            self.proc = subprocess.Popen(cmd, cwd=where, stdout=subprocess.DEVNULL, stderr=err,
                                         process_group=0)

    def stderr(self):
        with open(self.err) as f:
            return f.read()

    def wait_running(self, timeout=120):
        """True once rank 0 has printed a progress line."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.proc.poll() is None:
            if "golmpi: generation" in self.stderr():
                return True
            time.sleep(0.05)
        return False

    def finish(self, timeout=300):
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            return None


def series(where):
    """generations, frames (all in memory: 512^2 x ~150 bytes), chunk names of the index."""
    with h5py.File(os.path.join(where, "life.h5"), "r") as f:
        gens = f["generations"][:]
        frames = f["frames"][:]
        sources = [s.file_name for s in f["frames"].virtual_sources()]
    return gens, frames, sources


def check_whole(where, stop, fails, label):
    """The output of a stopped run reads back and ends at its stop generation."""
    gens, frames, sources = series(where)
    on_disk = sorted(os.path.basename(p) for p in glob.glob(os.path.join(where, "life_*.h5")))
    if gens[-1] != stop:
        fails.append("%s: the index ends at generation %d, not at the stop %d" % (label, gens[-1], stop))
    if sorted(sources) != on_disk or len(set(sources)) != len(sources):
        fails.append("%s: the index lists %s, the directory holds %s" % (label, sources, on_disk))
    if not sources[-1].endswith("%06d.h5" % stop):
        fails.append("%s: the last chunk %s does not end at %d" % (label, sources[-1], stop))
    if glob.glob(os.path.join(where, "*.part")):
        fails.append("%s: .part files left: %s" % (label, glob.glob(os.path.join(where, "*.part"))))
    if frames.shape[0] != len(gens):
        fails.append("%s: %d frames, %d generations" % (label, frames.shape[0], len(gens)))


def stop_rank(opts, where, fails):
    """Case 1: SIGTERM to rank 1 of 3. Returns the stop generation, or None."""
    marker = "--stats=" + os.path.join(where, "stats.json")  # an argument unique to this run
    run = Run(opts, where, 3, opts.run + ["--seed", "7", marker, "--output", "life.h5", "--progress",
                                     "0.1"], rc_files=True)
    pids = find_ranks(marker, exe=opts.golmpi) if run.wait_running() else {}
    deadline = time.monotonic() + 30
    while len(pids) < 3 and time.monotonic() < deadline and run.proc.poll() is None:
        time.sleep(0.05)
        pids = find_ranks(marker, exe=opts.golmpi)
    if len(pids) < 3:
        run.finish(30)
        fails.append("SIGTERM to rank 1: the run never ran on 3 ranks:\n" + run.stderr())
        return None
    os.kill(pids[1], signal.SIGTERM)
    run.finish()
    rcs = {}
    for r in range(3):
        try:
            with open(os.path.join(where, "rc.%d" % r)) as f:
                rcs[r] = int(f.read())
        except (OSError, ValueError):
            rcs[r] = None
    if any(rc != 4 for rc in rcs.values()):
        fails.append("SIGTERM to rank 1: exit codes by rank %s, not 4 on every rank:\n%s"
                     % (rcs, run.stderr()))
    m = STOPPED.search(run.stderr())
    if not m or "--restart life.h5 --output life.h5" not in run.stderr():
        fails.append("SIGTERM to rank 1: no 'stopped by a signal ... resume' line:\n" + run.stderr())
        return None
    check_whole(where, int(m.group(1)), fails, "after SIGTERM to rank 1")
    return int(m.group(1))


def stop_mpiexec(opts, where, fails):
    """Case 2: resume on 2 ranks, SIGUSR1 to mpiexec. Returns the stop generation, or None."""
    run = Run(opts, where, 2, opts.run + ["--seed", "7", "--restart", "life.h5", "--output", "life.h5",
                                     "--progress", "0.1"])
    if not run.wait_running():
        fails.append("resume: it never ran:\n" + run.stderr())
        run.finish(60)
        return None
    os.kill(run.proc.pid, signal.SIGUSR1)
    rc = run.finish()
    m = STOPPED.search(run.stderr())
    if rc != 4 or not m:
        fails.append("SIGUSR1 to mpiexec: exit %s, not 4, or no stop line:\n%s" % (rc, run.stderr()))
        return None
    check_whole(where, int(m.group(1)), fails, "after SIGUSR1 to mpiexec")
    return int(m.group(1))


def complete(opts, where, fails):
    """Case 3: the same command runs the series to its end, then has nothing left to do."""
    cmd = opts.run + ["--seed", "7", "--restart", "life.h5", "--output", "life.h5", "--quiet"]
    run = Run(opts, where, 2, cmd)
    if run.finish() != 0:
        fails.append("the last resume failed:\n" + run.stderr())
    files = sorted(os.listdir(where))
    again = Run(opts, where, 1, cmd)
    if again.finish() != 0 or sorted(os.listdir(where)) != files:
        fails.append("a resume of a finished series: exit %s, or files changed:\n%s"
                     % (again.proc.returncode, again.stderr()))


def compare(where, ref, stops, fails):
    gens, frames, _ = series(where)
    rgens, rframes, _ = series(ref)
    extra = sorted(set(gens) - set(rgens))
    if list(gens) != sorted(set(rgens) | set(stops)) or extra != sorted(set(stops) - set(rgens)):
        fails.append("generations %s..., not the uninterrupted run's %s... plus the stops %s"
                     % (list(gens), list(rgens), stops))
        return
    at = {int(g): i for i, g in enumerate(gens)}
    for i, g in enumerate(rgens):
        if not np.array_equal(frames[at[int(g)]], rframes[i]):
            fails.append("frame at generation %d differs from the uninterrupted run's" % g)
    if gens[-1] != rgens[-1] or not np.array_equal(frames[-1], rframes[-1]):
        fails.append("the last frame differs from the uninterrupted run's")
    with open(os.path.join(where, "life.xmf")) as f:
        times = [int(t) for t in re.findall(r'<Time Value="(\d+)"', f.read())]
    if times != list(gens):
        fails.append(".xmf times %s are not the index's generations %s" % (times, list(gens)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--golmpi", required=True)
    ap.add_argument("--run", default=" ".join(RUN))
    ap.add_argument("--mpiexec", required=True)
    opts, flags = ap.parse_known_args()
    opts.run = opts.run.split()
    opts.mpiexec = [opts.mpiexec] + flags  # e.g. --oversubscribe --allow-run-as-root
    fails = []
    with tempfile.TemporaryDirectory(prefix="golmpi_checkpoint_") as tmp:
        where, ref = os.path.join(tmp, "stopped"), os.path.join(tmp, "ref")
        os.mkdir(where)
        os.mkdir(ref)
        r = Run(opts, ref, 2, opts.run + ["--seed", "7", "--output", "life.h5", "--quiet"])
        if r.finish() != 0:
            print("FAIL: the uninterrupted run:\n" + r.stderr())
            return 1
        stops = [stop_rank(opts, where, fails)]
        if stops[0] is not None:
            stops.append(stop_mpiexec(opts, where, fails))
        if None not in stops:
            complete(opts, where, fails)
            compare(where, ref, stops, fails)
    for f in fails:
        print("FAIL: " + f)
    if not fails:
        print("PASS: stopped at %s, resumed twice; the series equals the uninterrupted run" % stops)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
