#!/usr/bin/env python3
"""One message on a full disk: golmpi fills a small tmpfs, 20 times at 2 ranks and 20
times at 4; every time it must exit 5 on every rank with exactly one line of its own that names
the file and the cause, and nothing from HDF5's or Open MPI's error paths: no HDF5-DIAG stack,
no fbtl line, no ORTE_ERROR_LOG, no MPI_ABORT banner (mpirun's own closing note about a
non-zero exit may stay). Root only (mount), 77 otherwise. The tmpfs is unmounted in a finally.
About 1 to 2 s a run.

    test_disk_full_quiet.py --golmpi build/golmpi --mpiexec mpiexec --oversubscribe ...
"""
import argparse, os, re, shutil, subprocess, sys, tempfile

FORBIDDEN = re.compile(r"HDF5-DIAG|fbtl|ORTE_ERROR_LOG|MPI_ABORT|MPI_Abort|H5[A-Z][a-z_]*\(\)")
RUNS = 20


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--golmpi", required=True)
    ap.add_argument("--runs", type=int, default=RUNS)
    ap.add_argument("--mpiexec", nargs=argparse.REMAINDER, required=True)
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("skip: mounting a tmpfs needs root")
        sys.exit(77)
    golmpi = os.path.abspath(a.golmpi)
    work = tempfile.mkdtemp(prefix="golmpi_full_")
    fs = os.path.join(work, "fs")
    os.makedirs(fs)
    fails = []
    try:
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", fs], check=True)
        for ranks in (2, 4):
            for i in range(a.runs):
                for f in os.listdir(fs):
                    os.unlink(os.path.join(fs, f))
                # each rank writes its exit code beside the output: the same on every rank
                script = ('"$0" "$@"; rc=$?; echo $rc > "%s/rc.${OMPI_COMM_WORLD_RANK}"; exit $rc'
                          % work)
                # Open MPI's mpirun would kill the other ranks at the first non-zero exit, before
                # they could record theirs: let each rank end by itself
                cmd = a.mpiexec + ["--mca", "orte_abort_on_non_zero_status", "0"]
                cmd += ["-n", str(ranks), "sh", "-c", script, golmpi, "--size", "512",
                                   "--steps", "100", "--save-every", "5", "--output",
                                   os.path.join(fs, "life.h5"), "--quiet"]
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
                out = p.stdout + p.stderr
                rcs = sorted(open(os.path.join(work, f"rc.{r}")).read().strip()
                             if os.path.exists(os.path.join(work, f"rc.{r}")) else "killed"
                             for r in range(ranks))
                ours = [ln for ln in out.splitlines() if ln.startswith("golmpi")]
                bad = [ln for ln in out.splitlines() if FORBIDDEN.search(ln)]
                label = f"{ranks} ranks, run {i + 1}"
                if rcs != ["5"] * ranks:  # (mpirun itself says 0 in this mode)
                    fails.append(f"{label}: the ranks exited {rcs}, want 5 on every rank")
                if len(ours) != 1 or not re.search(r"cannot write '.*life_\d+-\d+\.h5': no space",
                                                   ours[0]):
                    fails.append(f"{label}: want one golmpi line naming the file, got {ours}")
                if bad:
                    fails.append(f"{label}: lines from the libraries' error paths: {bad[:5]}")
                for r in range(ranks):
                    if os.path.exists(os.path.join(work, f"rc.{r}")):
                        os.unlink(os.path.join(work, f"rc.{r}"))
                if fails:
                    print(out)
                    break
            if fails:
                break
            print(f"ok: {a.runs} runs at {ranks} ranks: exit 5 everywhere, one message: {ours[0][:120]}")
    finally:
        subprocess.run(["umount", fs])
        shutil.rmtree(work, ignore_errors=True)
    if fails:
        print("FAIL\n" + "\n".join(fails))
        sys.exit(1)
    print("PASS")


main()
