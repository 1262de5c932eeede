#!/usr/bin/env python3
"""Run every command line that jobs/README.md shows, as written, and check that the options a
user adds win over the script's own settings (never "--steps given twice").

Command lines are the README's indented code lines that start a command (sbatch, jobs/...,
golmpi-render, python3, with VAR=value words before it) and its `inline` spans that hold an
sbatch or jobs/ script with arguments or settings. Lines with "..." are sketches, not commands.
They run from a scratch directory linked to the source tree's jobs/, bench/ and tests/ (and
build/golmpi, which one line names), with golmpi, golmpi-render and this python3 first on PATH:

- sbatch (also through jobs/submit.sh) is a stand-in that runs the batch script as Slurm would
  start it (SLURM_JOB_ID, SLURM_NTASKS, SLURM_CPUS_PER_TASK from its flags) with
  GOLMPI_DRY_RUN=1: this machine has no GPU nodes, accounts or partitions. The real one-node Slurm
  of tests/test_slurm.sh runs `sbatch jobs/slurm_cpu.sbatch --steps 30 --size 128` for real.
- nsys_profile.sh without nsys, and the scaling study (minutes), run with GOLMPI_DRY_RUN=1.
- run_local.sh runs for real (GOLMPI_OVERSUBSCRIBE=1 where the machine has fewer cores than
  ranks, as the README says for a laptop); its --stats must show the user's --steps.
- the golmpi-render and plot_population.py lines run for real on golmpi-runs/123456/life.h5,
  written first by golmpi at 8704^2 (the crops reach 8512), packed, 2 frames.
Every printed golmpi command must hold each option once, and the user's value for every option
the user gave. About a minute.

    test_jobs_readme.py --src SRC --golmpi build/golmpi --render build/tools/golmpi-render
"""
import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

SBATCH_SHIM = r'''#!/bin/bash
# stand-in for sbatch: the script runs here, dry, with the job's environment
flags=() nodes=1 ntasks="" per_node="" cpus=""
while (($#)) && [[ ! -f $1 ]]; do
    case $1 in
    -N) nodes=$2; shift ;; -N*) nodes=${1#-N} ;; --nodes=*) nodes=${1#*=} ;;
    -n) ntasks=$2; shift ;; --ntasks=*) ntasks=${1#*=} ;;
    -c) cpus=$2; shift ;; --cpus-per-task=*) cpus=${1#*=} ;;
    --ntasks-per-node=*) per_node=${1#*=} ;;
    -A|-p|-t) shift ;;
    esac
    flags+=("$1"); shift
done
script=$1; shift
[[ -f $script ]] || { echo "sbatch stand-in: no script" >&2; exit 1; }
if [[ -z $ntasks ]]; then
    per_node=${per_node:-$(sed -n 's/^#SBATCH --ntasks-per-node=//p' "$script" | head -1)}
    ntasks=$((nodes * ${per_node:-1}))
fi
cpus=${cpus:-$(sed -n 's/^#SBATCH --cpus-per-task=//p' "$script" | head -1)}
echo "sbatch stand-in: $script, $ntasks tasks, ${cpus:-1} cpus each, args: $*"
SLURM_JOB_ID=4242 SLURM_NTASKS=$ntasks SLURM_CPUS_PER_TASK=${cpus:-1} SLURM_SUBMIT_DIR=$PWD \
    SLURM_JOB_NODELIST=$(hostname -s) GOLMPI_DRY_RUN=1 exec bash "$script" "$@"
'''

CMD = re.compile(r"^((?:[A-Z_]+=\S+ )*)(sbatch|jobs/\S+|golmpi-render|python3|out=)")


def command_lines(text):
    lines = []
    for ln in text.splitlines():
        if ln.startswith("    ") and CMD.match(ln.strip()) and "..." not in ln:
            lines.append(ln.strip().split("  #")[0].strip())
    for span in re.findall(r"`([^`\n]+)`", text):
        if "..." in span or not CMD.match(span):
            continue
        words = span.split()
        script = [w for w in words if w.startswith("jobs/")]
        # a command: sbatch with a script, or a script with settings before it or arguments after
        if script and (words[0] == "sbatch" or words[0] != script[0] or words[-1] != script[0]):
            lines.append(span)
    return lines


def user_args(line):
    """The golmpi options given after the script on a command line."""
    words = shlex.split(line)
    scripts = [i for i, w in enumerate(words) if w.startswith("jobs/") and
               not w.endswith("submit.sh")]
    return words[scripts[-1] + 1:] if scripts else []


def check_golmpi_commands(line, out, golmpi):
    cmds = [c for c in out.splitlines() if c.startswith("+ ") and re.search(
        r"(^|\s)(\S*/)?golmpi(\s|$)", c)]
    if not cmds:
        fail(f"{line!r}: printed no golmpi command:\n{out}")
    given = user_args(line)
    for c in cmds:
        words = shlex.split(c[2:])
        at = max(i for i, w in enumerate(words) if os.path.basename(w) == "golmpi")
        opts = [w.split("=")[0] for w in words[at + 1:] if w.startswith("--")]
        twice = sorted({o for o in opts if opts.count(o) > 1})
        if twice:
            fail(f"{line!r}: {', '.join(twice)} given twice in: {c}")
        tail = words[at + 1:]
        for i, w in enumerate(given):
            if w.startswith("--") and i + 1 < len(given) and not given[i + 1].startswith("--"):
                j = tail.index(w) if w in tail else -1
                if j < 0 or tail[j + 1] != given[i + 1]:
                    fail(f"{line!r}: the user's {w} {given[i + 1]} is not in: {c}")
    return cmds


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def setup(args, work):
    for d in ("jobs", "bench", "tests"):
        os.symlink(os.path.join(args.src, d), os.path.join(work, d))
    os.makedirs(os.path.join(work, "build"))
    os.symlink(os.path.abspath(args.golmpi), os.path.join(work, "build", "golmpi"))
    bindir = os.path.join(work, ".bin")
    os.makedirs(bindir)
    for name, target in (("golmpi", args.golmpi), ("golmpi-render", args.render),
                         ("python3", sys.executable)):
        os.symlink(os.path.abspath(target), os.path.join(bindir, name))
    with open(os.path.join(bindir, "sbatch"), "w") as f:
        f.write(SBATCH_SHIM)
    os.chmod(os.path.join(bindir, "sbatch"), 0o755)
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ["PATH"], OMP_NUM_THREADS="1")
    env["OMPI_MCA_rmaps_base_oversubscribe"] = "1"
    for k in list(env):
        if k.startswith(("SLURM_", "GOLMPI_")):
            del env[k]
    # the frames the render lines read: golmpi-runs/123456/life.h5, large enough for the crops
    out = os.path.join(work, "golmpi-runs", "123456")
    os.makedirs(out)
    run(["mpirun", "--allow-run-as-root", "-n", "2", "golmpi", "--size", "8704", "--steps", "1",
         "--save-every", "1", "--frame-format", "packed", "--quiet", "--output",
         os.path.join(out, "life.h5")], work, env, "the frames for the render lines")
    return env


def run(cmd, cwd, env, what, shell=False):
    p = subprocess.run(cmd, cwd=cwd, env=env, shell=shell, executable="/bin/bash" if shell else None,
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        fail(f"{what} exited {p.returncode}:\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    return p.stdout + p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", required=True)
    ap.add_argument("--golmpi", required=True)
    ap.add_argument("--render", required=True)
    args = ap.parse_args()
    lines = command_lines(open(os.path.join(args.src, "jobs", "README.md")).read())
    for must in ("jobs/run_local.sh --steps 50", "sbatch jobs/slurm_cpu.sbatch --steps 50"):
        if must not in lines:
            fail(f"jobs/README.md does not show {must!r}, one of its examples")
    work = tempfile.mkdtemp(prefix="golmpi_jobs_readme_")
    try:
        env = setup(args, work)
        ncpu = os.cpu_count() or 1
        for line in lines:
            e = dict(env)
            how = "run"
            if "scaling" in line or ("nsys_profile" in line and not shutil.which("nsys")):
                e["GOLMPI_DRY_RUN"], how = "1", "dry run"
            if "run_local.sh" in line:
                m = re.search(r"GOLMPI_RANKS=(\d+)", line)
                if int(m.group(1) if m else 2) > ncpu:
                    e["GOLMPI_OVERSUBSCRIBE"] = "1"
            if "plot_scaling.py" in line:
                print(f"--- {line}\n    skipped: needs a study's CSV; jobs_scaling_plot runs it")
                continue
            print(f"--- {line}    ({how})", flush=True)
            out = run(line if not line.startswith("out=") else line, work, e, line, shell=True) \
                if not line.startswith(("golmpi-render", "python3")) else run(
                    "out=golmpi-runs/123456; " + line, work, e, line, shell=True)
            sys.stdout.write("    " + out.strip().replace("\n", "\n    ")[-1500:] + "\n")
            if line.startswith(("sbatch", "GOLMPI_", "jobs/")):
                check_golmpi_commands(line, out, args.golmpi)
            if "run_local.sh" in line:
                m = re.search(r"output: (\S+)\.h5", out)
                stats = json.load(open(m.group(1) + ".stats.json"))
                want = int(dict(zip(*[iter(user_args(line) or ["--steps", "200"])] * 2))
                           .get("--steps", 200))
                if stats["generations"] != want:
                    fail(f"{line!r}: ran {stats['generations']} generations, not {want}")
        print(f"PASS: {len(lines)} command lines of jobs/README.md")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
