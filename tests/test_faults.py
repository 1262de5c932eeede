#!/usr/bin/env python3
"""Output that survives faults. One part a run:

  disk_full  a small tmpfs fills up at 1, 2 and 3 ranks: one clear message naming the file, exit
             5 (GOL_EXIT_OUTPUT), every file under a final name reads back equal to a run that had
             room, the index and the .xmf name only such files. Needs root to mount (else 77).
  lock       one writer per output: two runs started together (both --force) -> one exits 0, the
             other 2 naming the lock and the winner; a lock of a live process, of another host,
             or unreadable -> exit 2 and nothing written; a lock whose process is gone -> taken
             over with a notice.
  stale      .part files left by a killed run are removed by the next run without --force, with
             one notice line; a run killed with SIGKILL (lock and .part left behind) is followed
             by a run that takes over and finishes.
  verify     the read-back before a rename (test_verify.c) against a chunk damaged after an
             HDF5 write that succeeded, as OMPIO leaves one on a full disk: a hole, a short file,
             no signature, a changed byte -> exit 5 naming the file and the cause; a hole where
             zeros were written, or no damage -> accepted.
  names      '%' in --output (HDF5 reads it as a format in virtual-dataset sources): the index
             reads the same frames as the chunks; a 230-character directory works.

usage: test_faults.py --golmpi PATH --work DIR --part PART [--verify-helper PATH]
                      --mpiexec MPIEXEC [FLAGS...]
"""
import argparse
import glob
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

OUTPUT_FAILED, USAGE, SKIP = 5, 2, 77
CHUNK = re.compile(r"_(\d+)(?:-(\d+))?\.h5$")
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL  " + msg)


def ok(msg):
    print("ok    " + msg)


class Runner:
    def __init__(self, golmpi, mpiexec):
        self.golmpi, self.mpiexec = golmpi, mpiexec
        self.env = dict(os.environ, OMP_NUM_THREADS="1")

    def cmd(self, ranks, args):
        return self.mpiexec + ["-n", str(ranks), self.golmpi, "-q"] + args

    def run(self, ranks, args, cwd, timeout=180, env=None):
        r = subprocess.run(self.cmd(ranks, args), cwd=cwd, env=dict(self.env, **(env or {})),
                           capture_output=True, text=True, timeout=timeout)
        return r.returncode, r.stdout + r.stderr

    def start(self, ranks, args, cwd):
        return subprocess.Popen(self.cmd(ranks, args), cwd=cwd, env=self.env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                process_group=0)


def fresh(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


# ---- what a consistent output is ----------------------------------------------------------------

def chunk_files(d, stem):
    return sorted(f for f in os.listdir(d) if f.startswith(stem + "_") and CHUNK.search(f)
                  and CHUNK.sub("", f[len(stem):]) == "")


def read_chunk(path):
    import h5py  # noqa: PLC0415
    with h5py.File(path, "r") as f:
        return f["generations"][:], f["frames"][:]


def unescape_vds(name):
    return name.replace("%%", "%")


def check_consistent(d, stem, ref, label, need_index=True):
    """Every final chunk in d equals ref's; the index and .xmf name only final chunks, and the
    index reads the same frames. Returns the number of final chunks."""
    import h5py  # noqa: PLC0415
    import numpy as np  # noqa: PLC0415
    finals = chunk_files(d, stem)
    for name in finals:
        try:
            gens, frames = read_chunk(os.path.join(d, name))
        except Exception as e:  # noqa: BLE001 (any read failure is the finding)
            fail(f"{label}: {name} is under its final name but does not read: {e}")
            continue
        rgens, rframes = read_chunk(os.path.join(ref, name))
        if not (np.array_equal(gens, rgens) and np.array_equal(frames, rframes)):
            fail(f"{label}: {name} differs from the same chunk of a run with room")
    index = os.path.join(d, stem + ".h5")
    if not os.path.exists(index):
        if need_index:
            fail(f"{label}: no index {stem}.h5")
        return len(finals)
    with h5py.File(index, "r") as f:
        sources = [unescape_vds(s.file_name) for s in f["frames"].virtual_sources()]
        missing = [s for s in sources if s not in finals]
        if missing:
            fail(f"{label}: the index names {missing}, which are not finished chunk files")
            return len(finals)
        if sources != finals[:len(sources)] or len(finals) - len(sources) > 1:
            fail(f"{label}: the index covers {len(sources)} of {len(finals)} finished chunks")
        want = [read_chunk(os.path.join(ref, s)) for s in sources]
        gens = np.concatenate([g for g, _ in want]) if want else np.zeros(0)
        if not np.array_equal(f["generations"][:], gens):
            fail(f"{label}: the index's /generations differ from its chunks'")
        elif want and not np.array_equal(f["frames"][:], np.concatenate([fr for _, fr in want])):
            fail(f"{label}: the index's frames differ from its chunks'")
    xmf = os.path.join(d, stem + ".xmf")
    if os.path.exists(xmf):
        with open(xmf) as fx:
            named = set(re.findall(r">([^<>]*):/frames_2d/\d+<", fx.read()))
        named = {n.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
                 .replace("&quot;", '"').replace("&apos;", "'") for n in named}
        if named - set(finals):
            fail(f"{label}: the .xmf names {sorted(named - set(finals))}, not finished chunks")
    return len(finals)


# ---- disk full ----------------------------------------------------------------------------------

def mount_tmpfs(path, size):
    fresh(path)
    if os.geteuid() != 0:
        return "not root"
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", path],
                       capture_output=True, text=True)
    return None if r.returncode == 0 else f"mount failed: {r.stderr.strip()}"


def part_disk_full(run, work):
    # frames fill the disk first (512^2), or the index and .xmf do (64^2, a frame every 2); the
    # frames every way they may travel (io/tuning.h: 512^2 slabs are collective on auto; direct
    # at 1024^2 is O_DIRECT at 1 and 2 ranks, whose rows are whole pages, independent at 3)
    frames = ["--size", "512", "--steps", "8000", "--save-every", "250", "--chunk", "2"]
    configs = [("frames", frames, {}),
               ("frames, independent", frames, {"GOLMPI_IO_TRANSFER": "independent"}),
               ("frames, direct", ["--size", "1024", "--steps", "3000", "--save-every", "250",
                                   "--chunk", "2"], {"GOLMPI_IO_TRANSFER": "direct"}),
               ("index and .xmf", ["--size", "64", "--steps", "6000", "--save-every", "2",
                                   "--chunk", "50"], {})]
    for what, args, env in configs:
        ref = fresh(os.path.join(work, "full_ref"))
        rc, out = run.run(1, args, ref)  # the frames do not depend on the rank count
        if rc != 0:
            fail(f"disk full ({what}): the reference run failed ({rc}):\n{out}")
            continue
        for ranks in (1, 2, 3):
            if disk_full_once(run, work, what, args, ranks, ref, env) == SKIP:
                return SKIP
    return 0


def disk_full_once(run, work, what, args, ranks, ref, env):
    label = f"disk full ({what}), {ranks} rank(s)"
    fs = os.path.join(work, "full_fs")
    why = mount_tmpfs(fs, "6m")
    if why:
        print(f"skip  {label}: {why}")
        return SKIP
    try:
        before = len(failures)
        rc, out = run.run(ranks, args, fs, env=env)
        msgs = [ln for ln in out.splitlines() if re.search(r"cannot write (the chunk file )?'", ln)]
        if rc != OUTPUT_FAILED:
            fail(f"{label}: exit code {rc}, want {OUTPUT_FAILED}")
        if not msgs:
            fail(f"{label}: no message naming the file that could not be written:\n{out}")
        n = check_consistent(fs, "life", ref, label)
        if n == 0:
            fail(f"{label}: no chunk was finished before the disk filled (test too small?)")
        if len(failures) == before:
            ok(f"{label}: exit {rc}, {n} chunks kept; {msgs[0][:200]}")
    finally:
        subprocess.run(["umount", fs])
    return 0


# ---- the lock ----------------------------------------------------------------------------------

def proc_start(pid):
    with open(f"/proc/{pid}/stat") as f:
        stat = f.read()
    return int(stat[stat.rindex(")") + 2:].split()[19])


def write_lock(path, host, pid, start, job=None):
    with open(path, "w") as f:
        f.write(f"golmpi-lock host={host} pid={pid} start={start} since=2026-01-01T00:00:00Z"
                + (f" job={job}" if job else "") + "\n")


def dead_pid():
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def part_lock(run, work):
    args = ["--size", "256", "--steps", "3000", "--save-every", "50", "--chunk", "4", "--force"]
    # two runs at once, different seeds, so a mixed output would show
    d = fresh(os.path.join(work, "lock_race"))
    procs = [run.start(2, args + ["--seed", str(seed)], d) for seed in (5, 9)]
    outs = [p.communicate(timeout=300)[0] for p in procs]
    rcs = [p.returncode for p in procs]
    if sorted(rcs) != [0, USAGE]:
        fail(f"two runs at once: exit codes {rcs}, want one 0 and one {USAGE}:\n"
             + "\n".join(outs))
    else:
        loser = outs[rcs.index(USAGE)]
        host = socket.gethostname()
        if not re.search(rf"golmpi pid \d+ on host {re.escape(host)} .*holds the lock "
                         r"'life\.lock'", loser):
            fail(f"two runs at once: the refused run does not name the lock and the winner:\n"
                 + loser)
        winner = (5, 9)[rcs.index(0)]
        ref = fresh(os.path.join(work, "lock_ref"))
        rc, out = run.run(2, args + ["--seed", str(winner)], ref)
        n = check_consistent(d, "life", ref, "two runs at once") if rc == 0 else 0
        if os.path.exists(os.path.join(d, "life.lock")):
            fail("two runs at once: life.lock is left after both ended")
        if n and not failures:
            ok(f"two runs at once: seed {winner} wrote all {n} chunks; the other: "
               + next(ln for ln in loser.splitlines() if "lock" in ln)[:150])

    small = ["--size", "32", "--steps", "4", "--save-every", "2"]
    host = socket.gethostname()
    cases = [
        ("lock of a live process", (host, os.getpid(), proc_start(os.getpid())), USAGE,
         "holds the lock 'life.lock'"),
        ("lock from another host", ("elsewhere.invalid", 4242, 1), USAGE, "rm 'life.lock'"),
        ("unreadable lock", None, USAGE, "does not name a golmpi run"),
        ("lock of a pid reused by another process", (host, os.getpid(), 1), 0,
         "took over the output lock 'life.lock'"),
        ("stale lock", (host, dead_pid(), 1), 0, "took over the output lock 'life.lock'"),
        # a requeued Slurm job (SLURM_JOB_ID 77, restarted once) whose rank 0 ran on a node now
        # lost: the lock of its earlier instance is over; another job's, or its own instance's, not
        ("lock from another host, an earlier instance of this Slurm job",
         ("lost-node.invalid", 4242, 1, "77.0"), 0, "took over the output lock 'life.lock'"),
        ("lock from another host, this Slurm job's own instance",
         ("lost-node.invalid", 4242, 1, "77.1"), USAGE, "rm 'life.lock'"),
        ("lock from another host, another Slurm job",
         ("lost-node.invalid", 4242, 1, "76.0"), USAGE, "rm 'life.lock'"),
    ]
    requeued = {"SLURM_JOB_ID": "77", "SLURM_RESTART_COUNT": "1"}
    for name, owner, code, needle in cases:
        d = fresh(os.path.join(work, "lock_case"))
        lock = os.path.join(d, "life.lock")
        if owner:
            write_lock(lock, *owner)
        else:
            with open(lock, "w") as f:
                f.write("not a lock\n")
        rc, out = run.run(2, small, d, env=requeued if "Slurm job" in name else None)
        problems = []
        if rc != code:
            problems.append(f"exit code {rc}, want {code}")
        if out.count(needle) != 1:
            problems.append(f"'{needle}' appears {out.count(needle)} times, want once")
        left = sorted(os.listdir(d))
        if code == USAGE and left != ["life.lock"]:
            problems.append(f"files changed: {left}")
        if code == 0 and ("life.lock" in left or "life.h5" not in left):
            problems.append(f"files after the run: {left}")
        if problems:
            fail(f"{name}: " + "; ".join(problems) + "\n" + out)
        else:
            ok(f"{name}: exit {rc}: " + next(ln for ln in out.splitlines() if needle in ln)[:150])
    return 0


# ---- stale .part files ---------------------------------------------------------------------------

def marked_pids(marker):
    pids = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if marker.encode() in f.read().split(b"\0"):
                    pids.append(int(entry))
        except (OSError, ValueError):
            pass
    return pids


def kill_run(p, marker):
    """SIGKILL mpiexec and every rank at once, as a node lost would: no rank cleans up."""
    for pid in marked_pids(marker):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    deadline = time.time() + 20
    while marked_pids(marker) and time.time() < deadline:
        time.sleep(0.1)


def part_stale(run, work):
    args = ["--size", "64", "--steps", "8", "--save-every", "2", "--chunk", "2"]
    ref = fresh(os.path.join(work, "stale_ref"))
    rc, out = run.run(2, args, ref)
    d = fresh(os.path.join(work, "stale"))
    stale = ["life.h5.part", "life.xmf.part", "life_000000-000002.h5.part",
             "life_000000-000099.h5.part"]  # the last: a chunk name of another schedule
    for name in stale:
        with open(os.path.join(d, name), "wb") as f:
            f.write(b"half a file")
    with open(os.path.join(d, "notes.part"), "wb") as f:  # not this output's: it stays
        f.write(b"mine")
    rc, out = run.run(2, args, d)
    notices = [ln for ln in out.splitlines() if "unfinished .part file" in ln]
    left = sorted(f for f in os.listdir(d) if f.endswith(".part"))
    if rc != 0 or len(notices) != 1 or left != ["notes.part"] or "4 unfinished" not in notices[0]:
        fail(f"stale .part files: exit {rc}, notices {notices}, .part left {left}:\n{out}")
    else:
        check_consistent(d, "life", ref, "stale .part files")
        ok(f"stale .part files: exit 0; {notices[0][:150]}")

    # a run killed outright (a node lost): its lock and .part files stay behind
    long_args = ["--size", "512", "--steps", "100000", "--save-every", "20", "--chunk", "8"]
    d = fresh(os.path.join(work, "killed"))
    marker = os.path.join(d, "life.h5")  # in the command line of this run's ranks alone
    p = run.start(2, long_args + ["--force", "--output", marker], d)
    deadline = time.time() + 60
    while time.time() < deadline and not glob.glob(os.path.join(d, "life_*.h5")):
        time.sleep(0.05)
    kill_run(p, marker)
    before = sorted(os.listdir(d))
    if "life.lock" not in before:
        fail(f"killed run: no lock left behind to test with: {before}")
    short = ["--size", "512", "--steps", "200", "--save-every", "20", "--chunk", "8", "--force"]
    rc, out = run.run(2, short, d)
    after = sorted(os.listdir(d))
    ref = fresh(os.path.join(work, "killed_ref"))
    run.run(2, short, ref)
    if rc != 0 or "took over the output lock" not in out or any(
            f.endswith(".part") or f.endswith(".lock") for f in after):
        fail(f"after a killed run: exit {rc}, files {after}:\n{out}")
    else:
        # The killed run's schedule was longer: chunks it finished past generation 200 (how many
        # depends on the machine's speed) are not this run's names, so --force leaves them. They
        # must not be in this run's index; set them aside before comparing this run's files.
        theirs = [c for c in chunk_files(d, "life") if not os.path.exists(os.path.join(ref, c))]
        os.makedirs(os.path.join(d, "killed_run"), exist_ok=True)
        for c in theirs:
            os.rename(os.path.join(d, c), os.path.join(d, "killed_run", c))
        check_consistent(d, "life", ref, "after a killed run")
        ok(f"after a killed run ({len(before)} files left, "
           f"{sum(f.endswith('.part') for f in before)} .part): exit 0, lock taken over")
    return 0


# ---- the read-back itself ----------------------------------------------------------------------

def part_verify(run, work):
    cases = [("ok", 0, None), ("zero-hole", 0, None),
             ("hole", OUTPUT_FAILED, r"rank \d+'s rows \d+-\d+ of generation 10 were never written"),
             ("short", OUTPUT_FAILED,  # rank 0 may see it first, as HDF5's truncated-file check
              r"rank \d+'s rows \d+-\d+ of generation 20 lie past its end|truncated file"),
             ("signature", OUTPUT_FAILED, r"it does not open as HDF5"),
             ("byte", OUTPUT_FAILED, r"rank \d+'s last row of generation 20 does not read back")]
    for ranks in (1, 3):
        for how, code, pattern in cases:
            d = fresh(os.path.join(work, f"verify_{how}_{ranks}"))
            r = subprocess.run(run.mpiexec + ["-n", str(ranks), run.helper, d, how],
                               env=run.env, capture_output=True, text=True, timeout=120)
            out = r.stdout + r.stderr
            label = f"read-back, {how}, {ranks} rank(s)"
            errors = [ln for ln in out.splitlines() if ln.startswith("golmpi: error:")]
            if r.returncode != code:
                fail(f"{label}: exit {r.returncode}, want {code}:\n{out}")
            elif code == 0 and "verified" not in out:
                fail(f"{label}: no 'verified':\n{out}")
            elif code and (len(errors) != 1 or not re.search(pattern, errors[0])
                           or "d.h5.part" not in errors[0]):
                fail(f"{label}: want one 'golmpi: error:' line naming d.h5.part and "
                     f"/{pattern}/:\n{out}")
            else:
                ok(f"{label}: exit {r.returncode}" + (f": {errors[0][:170]}" if errors else ""))
    return 0


# ---- odd names ---------------------------------------------------------------------------------

def part_names(run, work):
    args = ["--size", "48", "--steps", "12", "--save-every", "2", "--chunk", "3"]
    ref = fresh(os.path.join(work, "names_ref"))
    run.run(2, args, ref)
    for out_name in ("p%%.h5", "50%.h5", "x%b.h5", "a%d_%s.h5"):
        stem = out_name[:-3]
        d = fresh(os.path.join(work, "names"))
        rc, out = run.run(2, args + ["--output", out_name], d)
        if rc != 0:
            fail(f"--output {out_name}: exit {rc}:\n{out}")
            continue
        n = check_named(d, stem, ref, f"--output {out_name}")
        if n:
            ok(f"--output {out_name}: {n} chunks, the index reads the same frames")

    top = fresh(os.path.join(work, "long"))
    deep = os.path.join(top, "d" * (230 - len(top) - 1))
    os.makedirs(deep)
    rc, out = run.run(2, args + ["--output", os.path.join(deep, "life.h5")], top)
    if rc == 0:
        n = check_consistent(deep, "life", ref, f"a {len(deep)}-character directory")
        ok(f"a {len(deep)}-character directory: exit 0, {n} chunks")
    elif rc == USAGE and out.count("golmpi: error:") == 1:
        ok(f"a {len(deep)}-character directory: refused cleanly")
    else:
        fail(f"a {len(deep)}-character directory: exit {rc}:\n{out}")
    return 0


def check_named(d, stem, ref, label):
    """For an output whose stem is not 'life': its chunks hold the reference's frames, one for
    one, and its index names exactly them and reads the same frames through them."""
    import h5py  # noqa: PLC0415
    import numpy as np  # noqa: PLC0415
    finals, want = chunk_files(d, stem), chunk_files(ref, "life")
    if [f[len(stem):] for f in finals] != [f[len("life"):] for f in want]:
        fail(f"{label}: chunks {finals}, want the reference's {want}")
        return 0
    chunks = [read_chunk(os.path.join(d, f))[1] for f in finals]
    if any(not np.array_equal(c, read_chunk(os.path.join(ref, w))[1])
           for c, w in zip(chunks, want)):
        fail(f"{label}: a chunk differs from the reference's")
        return 0
    with h5py.File(os.path.join(d, stem + ".h5"), "r") as f:
        sources = [unescape_vds(s.file_name) for s in f["frames"].virtual_sources()]
        if sources != finals:
            fail(f"{label}: the index names {sources}, the chunks are {finals}")
            return 0
        if not np.array_equal(f["frames"][:], np.concatenate(chunks)):
            fail(f"{label}: the index's frames differ from its chunks' (HDF5 read a '%' as a "
                 "format?)")
            return 0
    return len(finals)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--golmpi", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--verify-helper", help="tests/test_verify.c's program (--part verify)")
    ap.add_argument("--part", required=True, choices=["disk_full", "lock", "stale", "names", "verify"])
    ap.add_argument("--mpiexec", nargs=argparse.REMAINDER, required=True)
    a = ap.parse_args()
    try:
        import h5py  # noqa: F401, PLC0415
        import numpy  # noqa: F401, PLC0415
    except ImportError as e:
        print(f"SKIP: {e}")
        return SKIP
    run = Runner(os.path.abspath(a.golmpi), a.mpiexec)
    work = fresh(os.path.abspath(a.work))
    run.helper = a.verify_helper
    part = {"disk_full": part_disk_full, "lock": part_lock, "stale": part_stale,
            "names": part_names, "verify": part_verify}[a.part]
    rc = part(run, work)
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
