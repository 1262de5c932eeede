#!/usr/bin/env python3
"""--backend auto: cuda when every rank has a GPU, otherwise the CPU with a one-line notice.
    test_backend_auto.py MPIEXEC_LINE GOLMPI"""
import json
import os
import shlex
import subprocess
import sys
import tempfile

mpiexec, golmpi = shlex.split(sys.argv[1]), os.path.abspath(sys.argv[2])
with tempfile.TemporaryDirectory() as tmp:
    p = subprocess.run(mpiexec + ["2", golmpi, "--size", "64", "--steps", "5", "--no-output",
                                  "--stats", "s.json"], cwd=tmp, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"FAIL: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
    stats = json.load(open(os.path.join(tmp, "s.json")))
    notices = [l for l in p.stderr.splitlines() if "using the CPU backend" in l]
    if stats["backend"] == "cpu":
        if len(notices) != 1:
            sys.exit(f"FAIL: the CPU fallback must say so exactly once; stderr:\n{p.stderr}")
        # A CUDA build without any NVIDIA driver: the runtime's own words ("CUDA driver version is
        # insufficient for CUDA runtime version") would send the reader after a driver upgrade.
        if "insufficient" in notices[0]:
            sys.exit(f"FAIL: the notice blames the driver version: {notices[0]}")
        no_driver = not os.path.exists("/dev/nvidiactl") and not os.path.exists("/proc/driver/nvidia")
        if "no usable GPU" in notices[0] and no_driver and "no NVIDIA driver or GPU found" not in notices[0]:
            sys.exit(f"FAIL: no NVIDIA driver here, and the notice does not say so: {notices[0]}")
    elif stats["backend"] == "cuda":
        if notices:
            sys.exit(f"FAIL: cuda chosen but a fallback notice was printed:\n{p.stderr}")
    else:
        sys.exit(f"FAIL: backend {stats['backend']!r}")
    if stats["generations"] != 5 or stats["width"] != 64:
        sys.exit(f"FAIL: stats {stats}")
    # every --stats field with its type, the versions of the backend chosen among them
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from stats_fields import stats_problems
    problems = stats_problems(stats, 2, None, ["--size", "64", "--steps", "5", "--no-output",
                                               "--stats", "s.json"])
    if problems:
        sys.exit("FAIL: --stats:\n" + "\n".join(problems))
    print(f"PASS: auto chose {stats['backend']}" + (f" ({notices[0]})" if notices else ""))
