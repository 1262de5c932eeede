"""The processes of one MPI run, found through /proc: the tests that signal or stop a chosen rank
(test_stalled_rank.py, test_checkpoint.py) use it.

The tests start mpiexec in a process group of its own (Popen's process_group=0), so one killpg
ends the run, but never in a session of its own (start_new_session): Linux schedules each session
as one group (kernel.sched_autogroup_enabled), and the ranks' yielding waits in one group starved
the test's own process in another for seconds (os.kill to the next line took 3.5 s, 2026-11-27),
so the test timed the ranks' exits from a fault seconds late and judged them early."""
import os

RANK_VARS = ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK")  # Open MPI, MPICH, PMIx


def proc_read(pid, name):
    try:
        with open("/proc/%d/%s" % (pid, name), "rb") as f:
            return f.read()
    except OSError:
        return None


def alive(pid):
    """Running or stopped; a zombie (killed, not yet reaped) counts as gone."""
    stat = proc_read(pid, "stat")
    return stat is not None and stat[stat.rindex(b")") + 2:][:1] != b"Z"


def find_ranks(marker, exe=None):
    """{rank: pid} of the live processes whose argv holds marker (an argument unique to the run),
    and, with exe, that run that executable (so a shell or mpiexec with the same argv is not
    taken for a rank)."""
    marker = marker.encode() if isinstance(marker, str) else marker
    exe = os.path.realpath(exe) if exe else None
    found = {}
    for d in filter(str.isdigit, os.listdir("/proc")):
        pid = int(d)
        if pid == os.getpid():
            continue
        cmd = proc_read(pid, "cmdline")
        if not cmd or marker not in cmd.split(b"\0") or not alive(pid):
            continue
        if exe:
            try:
                if os.readlink("/proc/%d/exe" % pid) != exe:
                    continue
            except OSError:
                continue
        env = dict(kv.split(b"=", 1) for kv in (proc_read(pid, "environ") or b"").split(b"\0")
                   if b"=" in kv)
        for var in RANK_VARS:
            if var.encode() in env:
                found[int(env[var.encode()])] = pid
                break
    return found


def kill_run(mpi, pids, wait_s=10):
    """SIGKILL to each pid and to mpiexec's process group (it leads one), then reaps mpiexec:
    whatever a test saw, nothing of its run is left behind."""
    import signal
    import subprocess
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    try:
        os.killpg(mpi.pid, signal.SIGKILL)
    except OSError:
        pass
    try:
        mpi.wait(timeout=wait_s)
    except subprocess.TimeoutExpired:
        pass
