#!/usr/bin/env python3
r"""The fault matrix on one node: a rank lost in each blocking phase of a run, and what
every other rank does about it.

Each cell runs golmpi on RANKS ranks (--timeout 2, 4 on the simulated GPU) with the debug hook
GOLMPI_DEBUG_HOLD=<phase>:<rank>[:<n>], which makes that rank print "golmpi: debug: rank R
holding at PHASE" at the n-th entry of the phase and hold there; the test waits for that line,
then SIGSTOPs the rank ("stop": a frozen process, its helper threads too) or SIGKILLs it ("kill"),
and times each process's exit from that moment. A cell passes when:

  - every surviving rank and mpiexec are gone within --timeout + 5 s of the fault, mpiexec's exit
    code is 6 (a stopped rank; a killed one: mpiexec's own non-zero code, see below), and no
    survivor left before --timeout (a stop found by silence, not guessed);
  - "stop": every surviving rank wrote one line to the output's log (<base>.log) naming the lost
    rank and its host ("rank 1 (host vm"); "kill": some line (ours or mpiexec's) names the rank;
  - every file under a final name reads back, each frame equal to the uninterrupted run's frame of
    the same generation;
  - the resume (--restart OUT --output OUT, the same command line otherwise; a fresh run with
    --force where no index was written yet) gives, frame for frame, exactly the uninterrupted
    run's series (the checkpoint cell's extra stop frame aside).

On one node Open MPI's mpiexec itself ends the job as soon as a rank dies of a signal, so the
kill column tests that nothing of golmpi's delays that (a rank held in a collective write, in
MPI_Finalize) and the output is whole; the cells that differ are the stop column's.

usage: test_fault_matrix.py --golmpi PATH --work DIR [--cells NAME[,NAME...]]
       [--backend cpu|cuda-nccl|cuda-mpi] --mpiexec MPIEXEC [FLAGS...]
       (a cell is PHASE-FAULT, e.g. exchange-stop; --list lists them; the cuda backends need a
       golmpi built with CUDA, or the simulated GPU's build, -DGOLMPI_CUDA_SIM=ON)
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_faults as tf  # noqa: E402  (the runner, fresh(), read_chunk(), chunk_files())
from mpi_ranks import alive, find_ranks, kill_run  # noqa: E402

RANKS, GRACE_S = 4, 5
STEPS, EVERY, CHUNK = 3000, 100, 3
BACKENDS = {"cpu": ["--backend", "cpu"], "cuda-nccl": ["--backend", "cuda", "--halo", "nccl"],
            "cuda-mpi": ["--backend", "cuda", "--halo", "mpi"]}  # cuda: the simulated GPU's build
# --timeout: 2 s; 4 s on the simulated GPU, whose device is host threads: at 4 ranks on 2 cores
# its streams made no progress for 3 s with no fault at all, now and then ("the halo exchange made
# no progress", every rank: once in a CI run of the sim stage, once in about 100 runs here,
# 2026-11-27), which a real GPU, not scheduled by the host, does not do
TIMEOUTS = {"cpu": 2, "cuda-nccl": 4, "cuda-mpi": 4}
TIMEOUT_S = TIMEOUTS["cpu"]  # the backend's, set by main
# A resume runs at most the uninterrupted run's generations: its limit is five times what that
# run took here (at least 180 s, the uninterrupted run's own), so a machine that gets loaded
# later still passes. On the simulated GPU a 4-rank run's time varies tenfold with the machine's
# load (the same run: 6 s and 68 s at a load average of 20), and a fixed limit would fail a
# resume that is still writing, not hung.
RESUME_LIMIT_S = 180.0  # set by main
BASE_ARGS = ["--size", "256", "--steps", str(STEPS), "--save-every",
             str(EVERY), "--chunk", str(CHUNK), "--seed", "28"]

# phase: (rank held, entry held). Rank 1's ring neighbours are 0 and 2; rank 3 hears of the loss
# only through the notice. The index and the rename are rank 0's alone. The n-th entry puts the
# fault after some chunks are finished, so the resume has something to continue.
PHASES = {
    "startup": (1, 1), "wireup": (1, 1), "first_exchange": (1, 1), "exchange": (1, 120),
    "vote": (2, 20), "handover": (1, 4), "chunk_write": (1, 3), "chunk_end": (2, 3),
    "index": (0, 2), "rename": (0, 3), "checkpoint": (1, 1), "report": (1, 1),
    "finalize": (1, 1),
}
FAULTS = {"stop": signal.SIGSTOP, "kill": signal.SIGKILL}
CELLS = [f"{p}-{f}" for f in FAULTS for p in PHASES]
HOLD_LINE = re.compile(r"golmpi: debug: rank (\d+) holding at (\w+)")


def read_series(path):
    """{generation: frame} of an index or a chunk file."""
    import h5py  # noqa: PLC0415
    with h5py.File(path, "r") as f:
        gens, frames = f["generations"][:], f["frames"][:]
    return {int(g): frames[i] for i, g in enumerate(gens)}


def threads_state(procs):
    """Each process's threads: name, state (R, S, D, T...) and kernel wait, for a late one."""
    out = []
    for who, pid in procs.items():
        tasks = []
        for tid in sorted(os.listdir(f"/proc/{pid}/task")) if os.path.isdir(f"/proc/{pid}/task") else []:
            try:
                with open(f"/proc/{pid}/task/{tid}/stat", "rb") as f:
                    stat = f.read()
                with open(f"/proc/{pid}/task/{tid}/wchan") as f:
                    wchan = f.read()
            except OSError:
                continue
            name = stat[stat.index(b"(") + 1:stat.rindex(b")")].decode(errors="replace")
            tasks.append(f"{name}:{chr(stat[stat.rindex(b')') + 2])}:{wchan or '-'}")
        out.append(f"{who} (pid {pid}): {' '.join(tasks) or 'gone'}")
    return "\n".join(out)


class Cell:
    def __init__(self, run, work, ref, name):
        self.run, self.name = run, name
        self.phase, fault = name.rsplit("-", 1)
        self.held, self.entry = PHASES[self.phase]
        self.sig = FAULTS[fault]
        self.dir = tf.fresh(os.path.join(work, name))
        self.out = os.path.join(self.dir, "life.h5")  # absolute: it also marks the ranks
        self.ref = ref
        self.fails = []

    def fail(self, msg):
        self.fails.append(f"{self.name}: {msg}")

    def env(self):
        env = dict(self.run.env, GOLMPI_DEBUG_HOLD=f"{self.phase}:{self.held}:{self.entry}")
        if self.phase == "checkpoint":  # a run long enough for the signal to stop it
            env["GOLMPI_DEBUG_WRITE_DELAY"] = "1:3"
        return env

    def start(self):
        self.err_path = os.path.join(self.dir, "stderr.txt")
        with open(self.err_path, "w") as err:
            return subprocess.Popen(self.run.cmd(RANKS, BASE_ARGS + ["--output", self.out]),
                                    cwd=self.dir, env=self.env(), stdout=err,
                                    stderr=subprocess.STDOUT, process_group=0)

    def stderr(self):
        with open(self.err_path, errors="replace") as f:
            return f.read()

    def wait_hold(self, mpi, deadline):
        """The ranks' pids once the held rank said it holds; None if the run ended first."""
        signalled = False
        while time.monotonic() < deadline and mpi.poll() is None:
            pids = find_ranks(self.out, self.run.golmpi)
            if (self.phase == "checkpoint" and not signalled and len(pids) == RANKS
                    and tf.chunk_files(self.dir, "life")):  # the stop after a finished chunk
                os.kill(pids[0], signal.SIGUSR1)  # one signalled rank stops them all
                signalled = True
            m = HOLD_LINE.search(self.stderr())
            if m and len(pids) == RANKS:
                if (int(m.group(1)), m.group(2)) != (self.held, self.phase):
                    self.fail(f"held {m.group(0)!r}, not rank {self.held} at {self.phase}")
                return pids
            time.sleep(0.02)
        return None

    def watch_exits(self, mpi, pids, t0):
        """Seconds from the fault to each survivor's exit and mpiexec's (None: still there)."""
        gone = {}
        deadline = t0 + TIMEOUT_S + GRACE_S + 3  # a little past the bound, to report how late
        while time.monotonic() < deadline:
            now = time.monotonic() - t0
            for r, pid in pids.items():
                if r != self.held and r not in gone and not alive(pid):
                    gone[r] = now
            if "mpiexec" not in gone and mpi.poll() is not None:
                gone["mpiexec"] = now
            if len(gone) == len(pids):  # survivors and mpiexec
                break
            time.sleep(0.01)
        return gone

    def run_fault(self):
        mpi = self.start()
        pids = {}
        try:
            pids = self.wait_hold(mpi, time.monotonic() + 90)
            if pids is None:
                self.fail(f"never held (exit {mpi.poll()}):\n{self.stderr()}")
                return None
            os.kill(pids[self.held], self.sig)
            t0 = time.monotonic()
            gone = self.watch_exits(mpi, pids, t0)
            self.judge_exits(mpi, pids, gone)
            return max(gone.values()) if len(gone) == len(pids) else None
        finally:
            kill_run(mpi, list((pids or {}).values()) + list(find_ranks(self.out).values()))

    def judge_exits(self, mpi, pids, gone):
        bound = TIMEOUT_S + GRACE_S
        late = [f"{w} {'never' if w not in gone else f'{gone[w]:.1f} s'}"
                for w in [r for r in pids if r != self.held] + ["mpiexec"]
                if w not in gone or gone[w] > bound]
        if late:
            left = {r: p for r, p in pids.items() if r not in gone}
            if "mpiexec" not in gone:
                left["mpiexec"] = mpi.pid
            if os.environ.get("GOLMPI_FAULT_MATRIX_STACKS"):  # debugging a hang: each one's stacks
                for who, pid in left.items():
                    subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "thread apply all bt 14"],
                                   stdout=open(f"{self.dir}-{int(time.time())}-stacks-{who}.txt", "w"),
                                   stderr=subprocess.DEVNULL, timeout=60)
            self.fail(f"not gone within --timeout + {GRACE_S} s = {bound} s: {', '.join(late)}"
                      f"\n{threads_state(left)}\n{self.stderr()}")
            return
        early = [w for w, t in gone.items() if t < TIMEOUT_S - 0.5]
        if self.sig == signal.SIGSTOP and early:
            self.fail(f"gone before --timeout: {early} ({gone})\n{self.stderr()}")
        rc = mpi.returncode
        if self.sig == signal.SIGSTOP and rc != 6:
            self.fail(f"mpiexec exited {rc}, not 6\n{self.stderr()}")
        elif rc == 0:
            self.fail("mpiexec exited 0")
        self.judge_messages(pids)

    def judge_messages(self, pids):
        log_path = self.out[:-3] + ".log"
        log = open(log_path, errors="replace").read() if os.path.exists(log_path) else ""
        names = re.compile(r"\brank %d \(host [^\s,)]+" % self.held)
        if self.sig == signal.SIGKILL:
            text = log + self.stderr()
            if not (names.search(text) or re.search(r"rank %d with PID \d+ on node \S+ exited"
                                                     % self.held, text)):
                self.fail(f"no line names rank {self.held}:\n{text}")
            return
        for r in pids:
            if r == self.held:
                continue
            lines = [ln for ln in log.splitlines()
                     if re.search(r"golmpi: rank %d on host \S+: " % r, ln) and names.search(ln)]
            if len(lines) != 1:
                self.fail(f"rank {r}: {len(lines)} lines in {os.path.basename(log_path)} naming "
                          f"rank {self.held} and its host, not 1:\n{log}{self.stderr()}")
            # the exit code ends the line: a job script whose launcher lost the ranks' messages
            # learns the code there
            elif not lines[0].endswith(" (exit 6)"):
                self.fail(f"rank {r}: its line in {os.path.basename(log_path)} does not end with "
                          f"its exit code, ' (exit 6)':\n{lines[0]}")

    def check_output(self):
        """Every final file reads back, frame for frame equal to the reference."""
        ref = read_series(os.path.join(self.ref, "life.h5"))
        finals = tf.chunk_files(self.dir, "life") + (["life.h5"] if os.path.exists(self.out)
                                                     else [])
        for name in finals:
            try:
                got = read_series(os.path.join(self.dir, name))
            except Exception as e:  # noqa: BLE001 (any read failure is the finding)
                self.fail(f"{name} is under a final name but does not read: {e}")
                continue
            for g, frame in got.items():
                if g in ref and not (frame == ref[g]).all():
                    self.fail(f"{name}: generation {g} differs from the uninterrupted run's")
                elif g not in ref and self.phase != "checkpoint":
                    self.fail(f"{name}: generation {g} is no frame of the uninterrupted run")
        return len(finals)

    def resume(self):
        """The same command line with --restart (or afresh, where no index was written): the
        series equals the uninterrupted run's exactly."""
        args = BASE_ARGS + ["--output", self.out]
        args += ["--restart", self.out] if os.path.exists(self.out) else ["--force"]
        rc, out = self.run.run(RANKS, args, self.dir, timeout=RESUME_LIMIT_S,
                               env={"GOLMPI_DEBUG_HOLD": ""})
        if rc != 0:
            self.fail(f"the resume exited {rc}:\n{out}")
            return
        ref = read_series(os.path.join(self.ref, "life.h5"))
        got = read_series(self.out)
        extra = sorted(set(got) - set(ref))
        if self.phase == "checkpoint" and len(extra) <= 1:
            extra = []  # the generation the ranks agreed to stop at
        if sorted(set(ref) - set(got)) or extra:
            self.fail(f"the resumed series has generations {sorted(got)}, not {sorted(ref)}")
        for g in ref:
            if g in got and not (got[g] == ref[g]).all():
                self.fail(f"the resumed series' generation {g} differs")
                break


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--golmpi", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--cells", default=",".join(CELLS))
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--backend", choices=sorted(BACKENDS), default="cpu")
    ap.add_argument("--mpiexec", nargs=argparse.REMAINDER, required=True)
    a = ap.parse_args()
    if a.list:
        print("\n".join(CELLS))
        return 0
    if not os.path.isdir("/proc/self"):
        print("no /proc: cannot find the ranks' processes")
        return 77
    cells = a.cells.split(",")
    unknown = [c for c in cells if c not in CELLS]
    if unknown:
        sys.exit(f"unknown cells {unknown}; --list lists them")
    run = tf.Runner(os.path.abspath(a.golmpi), a.mpiexec)
    global TIMEOUT_S, RESUME_LIMIT_S
    TIMEOUT_S = TIMEOUTS[a.backend]
    BASE_ARGS[:0] = BACKENDS[a.backend]
    BASE_ARGS.extend(["--timeout", str(TIMEOUT_S)])
    work = tf.fresh(os.path.abspath(a.work))
    ref = tf.fresh(os.path.join(work, "ref"))
    t0 = time.monotonic()
    rc, out = run.run(RANKS, BASE_ARGS + ["--output", os.path.join(ref, "life.h5")], ref)
    if rc != 0:
        sys.exit(f"the uninterrupted run exited {rc}:\n{out}")
    RESUME_LIMIT_S = max(RESUME_LIMIT_S, 5 * (time.monotonic() - t0))
    fails = []
    for name in cells:
        cell = Cell(run, work, ref, name)
        took = cell.run_fault()
        n = cell.check_output()
        if not cell.fails:
            cell.resume()
        fails += cell.fails
        took_s = f"{took:.2f} s" if took is not None else "-"
        print(f"{'FAIL' if cell.fails else 'ok  '}  {name}: fault to last exit {took_s} "
              f"(bound {TIMEOUT_S + GRACE_S} s), {n} final files read back"
              + ("" if cell.fails else ", resume equal"))
        for f in cell.fails:
            print("      " + f.replace("\n", "\n      "))
        sys.stdout.flush()
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
