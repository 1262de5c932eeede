#!/bin/bash
# The scaling study at a tiny size: jobs/scaling_local.sh on 1 and 2 ranks writes the CSV that
# bench/plot_scaling.py reads; then the plot is a PNG.
#   test_scaling.sh csv DIR    run the study into DIR, check the CSV's columns and rows
#   test_scaling.sh plot DIR   draw DIR/scaling.csv; 77 (skip) when python3 lacks matplotlib
# Environment: GOLMPI_BIN, GOLMPI_SRC, GOLMPI_PYTHON (as for the other jobs tests).
set -uo pipefail
SRC=${GOLMPI_SRC:?}
PY=${GOLMPI_PYTHON:-python3}
mode=${1:?csv or plot} dir=${2:?directory}
fail() { echo "FAIL: $*" >&2; exit 1; }

if [[ "$mode" == plot ]]; then
    [[ -f "$dir/scaling.csv" ]] || fail "no $dir/scaling.csv (the jobs_scaling test makes it)"
    "$PY" -c "import matplotlib" 2>/dev/null ||
        { echo "SKIP: $PY lacks matplotlib (apt-get install python3-matplotlib)"; exit 77; }
    rm -f "$dir/scaling.png"
    "$PY" "$SRC/bench/plot_scaling.py" "$dir/scaling.csv" -o "$dir/scaling.png" ||
        fail "plot_scaling.py exited with $?"
    "$PY" - "$dir/scaling.png" <<'PY' || fail "not a PNG"
import sys
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000, (data[:8], len(data))
print(f"PASS: {sys.argv[1]}, {len(data)} bytes")
PY
    exit $?
fi

rm -rf "$dir"
mkdir -p "$dir"

# Under Slurm (dry run): srun with P ranks, every GPU of the node visible to every rank
GOLMPI_DRY_RUN=1 SLURM_JOB_ID=7 SLURM_NTASKS=4 SLURM_CPUS_PER_TASK=8 SLURM_GPUS_PER_NODE=4 \
    GOLMPI_OUTDIR="$dir/dry" bash "$SRC/jobs/scaling.sbatch" >"$dir/dry.log" 2>&1 ||
    { cat "$dir/dry.log"; fail "scaling.sbatch dry run"; }
for want in "--cpus-per-task=8 --gpus-per-node=4 --gpu-bind=none" "ranks: 1 2 4;" \
    "+ srun --mpi=pmix --cpu-bind=cores -n 4 " "--backend cuda --width 32768 --height 131072 "; do
    grep -qF -- "$want" "$dir/dry.log" || { cat "$dir/dry.log"; fail "'$want' not in the dry run"; }
done
# oversubscribed and unbound, since ctest may run other tests beside this one; 2 repeats so the
# best-of logic runs
GOLMPI_BIN=${GOLMPI_BIN:?} GOLMPI_OUTDIR="$dir" GOLMPI_SCALING_RANKS="1 2" GOLMPI_OVERSUBSCRIBE=1 \
    GOLMPI_STRONG_SIZE=512 GOLMPI_STRONG_STEPS=20 GOLMPI_WEAK_SIZE=256 GOLMPI_WEAK_STEPS=20 \
    GOLMPI_SCALING_REPEAT=2 GOLMPI_SCALING_PLOT=0 GOLMPI_PYTHON="$PY" \
    bash "$SRC/jobs/scaling_local.sh" --seed 5 >"$dir/scaling.log" 2>&1 ||
    { cat "$dir/scaling.log"; fail "scaling_local.sh exited with $?"; }
cat "$dir/scaling.log"
grep -qF -- "+ mpirun -n 2 " "$dir/scaling.log" || fail "no 2-rank mpirun command printed"
grep -qF -- "--no-output" "$dir/scaling.log" || fail "runs without --no-output"
"$PY" - "$dir/scaling.csv" <<'PY' || fail "CSV check"
import csv, sys
cols = ["mode", "ranks", "width", "height", "generations", "seconds", "cell_updates_per_s",
        "efficiency"]
with open(sys.argv[1], newline="") as f:
    r = csv.DictReader(f)
    assert r.fieldnames == cols, r.fieldnames
    rows = list(r)
got = [(x["mode"], int(x["ranks"]), int(x["width"]), int(x["height"]), int(x["generations"]))
       for x in rows]
want = [("strong", 1, 512, 512, 20), ("strong", 2, 512, 512, 20),
        ("weak", 1, 256, 256, 20), ("weak", 2, 256, 512, 20)]
assert got == want, got
for x in rows:
    s, rate, eff = float(x["seconds"]), float(x["cell_updates_per_s"]), float(x["efficiency"])
    assert s > 0 and rate > 0 and eff > 0, x
    # the rate is golmpi's own, and agrees with the row's size, generations and time (to the
    # microsecond that --stats gives the time in)
    cells = int(x["width"]) * int(x["height"]) * int(x["generations"])
    assert abs(rate * s / cells - 1) < 0.01, (x, rate * s / cells)
    if x["ranks"] == "1":
        assert eff == 1.0, x
# efficiency from the times: strong T1 / (P TP), weak T1 / TP. The CSV gives times to the
# microsecond and the efficiency to 1e-4, and the times of a tiny run are tens of microseconds:
# the ratio of the rounded times may differ from the efficiency by as much as that rounding.
t = {(x["mode"], int(x["ranks"])): float(x["seconds"]) for x in rows}
e = {(x["mode"], int(x["ranks"])): float(x["efficiency"]) for x in rows}
for mode, p in (("strong", 2), ("weak", 1)):
    ratio = t[mode, 1] / (p * t[mode, 2])
    slack = ratio * 0.5e-6 * (1 / t[mode, 1] + 1 / t[mode, 2]) + 0.5e-4 + 1e-6
    assert abs(e[mode, 2] - ratio) <= slack, (mode, e, ratio, slack)
print("PASS:", len(rows), "rows")
PY
