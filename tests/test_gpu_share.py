#!/usr/bin/env python3
"""Ranks that share a GPU: golmpi sees two ranks of one node on one GPU (the same PCI bus
id), asks whether an MPS control daemon serves them, and without one says once, on rank 0, what it
costs and the command that starts MPS. The plan (--dry-run --stats) and a run's --stats say
ranks_per_gpu and mps.

    test_gpu_share.py MPIEXEC_LINE GOLMPI [--sim]

Both ranks are put on one GPU: CUDA_VISIBLE_DEVICES=0 on a real GPU, GOLMPI_SIM_DEVICES=1 on the
simulated one. The MPS control socket is looked for in CUDA_MPS_PIPE_DIRECTORY, which each case
points at a directory of its own. With --sim (the simulated GPU, whose runtime never connects to
MPS itself) the test also plays the daemon: a UNIX socket listening at <dir>/control, the notice
gone and mps true; a socket file nobody listens on (a daemon killed), the notice back; and two
devices, one rank each, ranks_per_gpu 1. On a real GPU the driver itself would connect to a
stand-in daemon and wait for its answer, so those cases run only on the simulated GPU.
Exit 77 when golmpi finds no usable GPU."""
import json
import os
import shlex
import socket
import subprocess
import sys
import tempfile
import threading

NOTICE = "golmpi: notice: up to 2 ranks share one GPU"
START = "nvidia-cuda-mps-control -d"


def fail(msg, p=None):
    extra = f"\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}" if p is not None else ""
    sys.exit(f"FAIL: {msg}{extra}")


def run(mpiexec, golmpi, cwd, env, dry):
    """golmpi on 2 ranks, a tiny grid; the completed process and its --stats JSON."""
    args = ["--backend", "cuda", "--halo", "mpi", "--size", "64", "--steps", "4", "--no-output",
            "--stats", "s.json"] + (["--dry-run"] if dry else [])
    p = subprocess.run(mpiexec + ["2", golmpi] + args, cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=240)
    if p.returncode == 3:
        print("SKIP: golmpi found no usable GPU")
        sys.exit(77)
    if p.returncode != 0:
        fail(f"exit {p.returncode}", p)
    with open(os.path.join(cwd, "s.json")) as f:
        return p, json.load(f)


def check(what, p, stats, dry, ranks_per_gpu, mps):
    """The notice once exactly when ranks share a GPU without MPS, and the plan's fields."""
    notices = [l for l in p.stderr.splitlines() if "golmpi: notice:" in l]
    want_notice = ranks_per_gpu > 1 and not mps
    if want_notice:
        if len(notices) != 1 or NOTICE not in notices[0] or START not in notices[0]:
            fail(f"{what}: want the notice once, naming `{START}`; got {notices}", p)
    elif notices:
        fail(f"{what}: no notice wanted, got {notices}", p)
    if stats.get("ranks_per_gpu") != ranks_per_gpu or stats.get("mps") is not mps:
        fail(f"{what}: ranks_per_gpu {stats.get('ranks_per_gpu')!r}, mps {stats.get('mps')!r}; "
             f"want {ranks_per_gpu}, {mps}", p)
    if dry:
        if [r.get("ranks_on_gpu") for r in stats["ranks"]] != [ranks_per_gpu] * 2:
            fail(f"{what}: the plan's ranks_on_gpu: {stats['ranks']}", p)
        line = f"up to {ranks_per_gpu} rank{'s' if ranks_per_gpu > 1 else ''} a GPU, " \
               f"MPS {'yes' if mps else 'no'}"
        if line not in p.stdout:
            fail(f"{what}: the dry run does not say '{line}'", p)
    print(f"ok: {what}: ranks_per_gpu {ranks_per_gpu}, mps {mps}, "
          f"{'the notice once' if want_notice else 'no notice'}")


def listen(path):
    """A stand-in MPS control daemon: a UNIX socket accepting and closing connections."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen(16)

    def serve():
        while True:
            try:
                c, _ = s.accept()
            except OSError:
                return  # closed: the test is over
            c.close()
    threading.Thread(target=serve, daemon=True).start()
    return s


def main():
    mpiexec, golmpi = shlex.split(sys.argv[1]), os.path.abspath(sys.argv[2])
    sim = "--sim" in sys.argv[3:]
    with tempfile.TemporaryDirectory() as tmp:
        pipes = os.path.join(tmp, "mps")
        os.mkdir(pipes)
        env = dict(os.environ, CUDA_MPS_PIPE_DIRECTORY=pipes, CUDA_VISIBLE_DEVICES="0",
                   GOLMPI_SIM_DEVICES="1")
        for dry in (True, False):
            p, stats = run(mpiexec, golmpi, tmp, env, dry)
            check(f"no MPS, {'dry run' if dry else 'run'}", p, stats, dry, 2, False)
        if not sim:
            print("PASS (the stand-in daemon's cases run on the simulated GPU only)")
            return
        daemon = listen(os.path.join(pipes, "control"))
        try:
            for dry in (True, False):
                p, stats = run(mpiexec, golmpi, tmp, env, dry)
                check(f"MPS, {'dry run' if dry else 'run'}", p, stats, dry, 2, True)
        finally:
            # shutdown wakes the accept() in the thread: a close alone leaves the socket
            # listening in the kernel until that call returns
            daemon.shutdown(socket.SHUT_RDWR)
            daemon.close()
        # the socket file stays behind, as a killed daemon's does: nobody answers it
        if not os.path.exists(os.path.join(pipes, "control")):
            fail("the stand-in's socket file should outlive it")
        p, stats = run(mpiexec, golmpi, tmp, env, True)
        check("a dead daemon's socket file", p, stats, True, 2, False)
        env_two = dict(env, GOLMPI_SIM_DEVICES="2")
        del env_two["CUDA_VISIBLE_DEVICES"]
        p, stats = run(mpiexec, golmpi, tmp, env_two, True)
        check("a device a rank", p, stats, True, 1, False)
    print("PASS")


if __name__ == "__main__":
    main()
