#!/usr/bin/env python3
"""One message when the output's directory goes away under a run: golmpi writes a chunk
into out/, the test renames out/ (or removes it) while the next chunk computes, and every rank
must then exit 5 with exactly one line of golmpi's own naming the file and the directory, and
nothing from HDF5's or Open MPI's error paths (no HDF5-DIAG stack, no ORTE_ERROR_LOG, no MPI_ABORT
banner). The chunk written before stays whole in the moved directory. About 5 s a case.

    test_dir_removed.py --golmpi build/golmpi --mpiexec mpiexec --oversubscribe ...
"""
import argparse, os, re, shutil, subprocess, sys, tempfile, time

import h5py

FORBIDDEN = re.compile(r"HDF5-DIAG|fbtl|ORTE_ERROR_LOG|MPI_ABORT|MPI_Abort|H5[A-Z][a-z_]*\(\)")


def case(a, work, how):
    out = os.path.join(work, "out")
    moved = os.path.join(work, "moved")
    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(moved, ignore_errors=True)
    os.makedirs(out)
    script = '"$0" "$@"; rc=$?; echo $rc > "%s/rc.${OMPI_COMM_WORLD_RANK}"; exit $rc' % work
    # each chunk is one frame a few seconds of generations apart: the directory goes while the
    # second chunk computes, with no write in flight
    cmd = a.mpiexec + ["--mca", "orte_abort_on_non_zero_status", "0", "-n", "2", "sh", "-c",
                       script, a.golmpi, "--size", "1024", "--steps", "100000000",
                       "--save-every", "400000", "--chunk", "1", "--quiet",
                       "--output", os.path.join(out, "life.h5")]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    index = os.path.join(out, "life.h5")
    deadline = time.time() + 120
    while not (os.path.exists(index) and os.path.exists(os.path.join(out, "life.xmf"))):
        if time.time() > deadline or p.poll() is not None:
            p.kill()
            return [f"{how}: the first chunk and its index never appeared: {p.communicate()[0]}"]
        time.sleep(0.05)
    time.sleep(0.3)  # the .xmf's rename is the writer's last step of a chunk
    if how == "renamed":
        os.rename(out, moved)
    else:
        shutil.rmtree(out)
    try:
        text = p.communicate(timeout=300)[0]
    except subprocess.TimeoutExpired:
        p.kill()
        return [f"{how}: golmpi went on for 300 s after its directory was {how}"]
    fails = []
    rcs = sorted(open(os.path.join(work, f"rc.{r}")).read().strip()
                 if os.path.exists(os.path.join(work, f"rc.{r}")) else "killed" for r in range(2))
    for r in range(2):
        if os.path.exists(os.path.join(work, f"rc.{r}")):
            os.unlink(os.path.join(work, f"rc.{r}"))
    ours = [ln for ln in text.splitlines() if ln.startswith("golmpi")]
    bad = [ln for ln in text.splitlines() if FORBIDDEN.search(ln)]
    if rcs != ["5", "5"]:
        fails.append(f"{how}: the ranks exited {rcs}, want 5 on every rank")
    if len(ours) != 1 or not re.search(r"cannot write '.*life_\d+(-\d+)?\.h5': its directory "
                                       r"'.*out' is gone or not writable", ours[0]):
        fails.append(f"{how}: want one golmpi line naming the file and its directory, got {ours}")
    if bad:
        fails.append(f"{how}: lines from the libraries' error paths: {bad[:5]}")
    if how == "renamed":
        with h5py.File(os.path.join(moved, "life.h5"), "r") as f:
            if f["generations"].shape[0] < 1 or f["frames"].shape[0] != f["generations"].shape[0]:
                fails.append(f"{how}: the index written before is not whole")
    if fails:
        print(text)
    else:
        print(f"ok: directory {how}: exit 5 on both ranks, one message: {ours[0][:160]}")
    return fails


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--golmpi", required=True)
    ap.add_argument("--mpiexec", nargs=argparse.REMAINDER, required=True)
    a = ap.parse_args()
    a.golmpi = os.path.abspath(a.golmpi)
    work = tempfile.mkdtemp(prefix="golmpi_gone_")
    fails = []
    try:
        for how in ("renamed", "removed"):
            fails += case(a, work, how)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if fails:
        print("FAIL\n" + "\n".join(fails))
        sys.exit(1)
    print("PASS")


main()
