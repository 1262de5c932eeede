#!/bin/bash
# jobs/run_local.sh for real (2 ranks, CPU), and the commands the other scripts would run
# (GOLMPI_DRY_RUN=1): nsys's per-rank report names under srun and mpirun, submit.sh's flags.
set -uo pipefail
SRC=${GOLMPI_SRC:?}
BIN=${GOLMPI_BIN:?}
PY=${GOLMPI_PYTHON:-python3}
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d /tmp/golmpi-jobs.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
expect() { # expect TEXT FILE
    grep -qF -- "$1" "$2" || { cat "$2"; fail "'$1' not in the output of $(basename "$2" .log)"; }
}

# a real run; oversubscribed, since ctest may run other tests beside this one
GOLMPI_BIN=$BIN GOLMPI_BACKEND=cpu GOLMPI_RANKS=2 GOLMPI_OVERSUBSCRIBE=1 GOLMPI_SIZE=128 \
    GOLMPI_STEPS=12 GOLMPI_SAVE_EVERY=4 GOLMPI_CHUNK=2 GOLMPI_OUTDIR="$TMP/local" \
    bash "$SRC/jobs/run_local.sh" --seed 9 >"$TMP/run_local.log" 2>&1 ||
    { cat "$TMP/run_local.log"; fail "run_local.sh exited with $?"; }
cat "$TMP/run_local.log"
expect "+ mpirun -n 2 " "$TMP/run_local.log"
expect "--seed 9" "$TMP/run_local.log"
"$PY" "$HERE/check_output.py" "$TMP/local/life.h5" --size 128 --steps 12 --save-every 4 --chunk 2 ||
    fail "run_local.sh output"

# a bad golmpi option: golmpi's own exit code comes back through the script
GOLMPI_BIN=$BIN GOLMPI_BACKEND=cpu GOLMPI_RANKS=2 GOLMPI_OVERSUBSCRIBE=1 GOLMPI_OUTDIR="$TMP/bad" \
    bash "$SRC/jobs/run_local.sh" --no-such-option >"$TMP/bad.log" 2>&1
rc=$?
[[ $rc != 0 ]] || fail "run_local.sh with a bad option exited 0"
echo "ok: a bad option gives exit code $rc"

# nsys_profile.sh: one report per rank, named by the launcher's rank variable
GOLMPI_DRY_RUN=1 GOLMPI_LAUNCHER=srun SLURM_JOB_ID=42 GOLMPI_NSYS_DIR=/r \
    bash "$SRC/jobs/nsys_profile.sh" --seed 1 >"$TMP/nsys_srun.log" 2>&1 || fail "nsys_profile.sh (srun)"
expect "+ srun --mpi=pmix --cpu-bind=cores " "$TMP/nsys_srun.log"
expect "nsys profile --trace=cuda,nvtx,mpi,osrt " "$TMP/nsys_srun.log"
expect "-o '/r/golmpi.%q{SLURM_PROCID}'" "$TMP/nsys_srun.log"
GOLMPI_DRY_RUN=1 GOLMPI_LAUNCHER=mpirun GOLMPI_RANKS=3 GOLMPI_NSYS_DIR=/r \
    bash "$SRC/jobs/nsys_profile.sh" >"$TMP/nsys_mpirun.log" 2>&1 || fail "nsys_profile.sh (mpirun)"
expect "+ mpirun -n 3 " "$TMP/nsys_mpirun.log"
expect "-o '/r/golmpi.%q{OMPI_COMM_WORLD_RANK}'" "$TMP/nsys_mpirun.log"
cat "$TMP/nsys_srun.log" "$TMP/nsys_mpirun.log"

# the sbatch scripts under srun, as they would run in a job
for s in slurm_node_4gpu slurm_multinode; do
    GOLMPI_DRY_RUN=1 SLURM_CPUS_PER_TASK=8 SLURM_GPUS_PER_NODE=4 \
        bash "$SRC/jobs/$s.sbatch" --rule B36/S23 >"$TMP/$s.log" 2>&1 || fail "$s.sbatch dry run"
    # every rank sees the node's GPUs, so NCCL keeps P2P (jobs/README.md, "GPU binding")
    expect "+ srun --mpi=pmix --cpu-bind=cores --cpus-per-task=8 --gpus-per-node=4 --gpu-bind=none " "$TMP/$s.log"
    expect "--backend cuda" "$TMP/$s.log"
    expect "--rule B36/S23" "$TMP/$s.log"
done
GOLMPI_DRY_RUN=1 SLURM_CPUS_PER_TASK=4 bash "$SRC/jobs/slurm_cpu.sbatch" >"$TMP/cpu.log" 2>&1 || fail "cpu dry run"
expect "--backend cpu" "$TMP/cpu.log"
GOLMPI_DRY_RUN=1 GOLMPI_LAUNCHER=bogus bash "$SRC/jobs/slurm_cpu.sbatch" >"$TMP/bogus.log" 2>&1 &&
    fail "an unknown launcher was accepted"
expect "GOLMPI_LAUNCHER must be srun or mpirun" "$TMP/bogus.log"

# submit.sh: allocation settings from the environment become sbatch flags
GOLMPI_DRY_RUN=1 GOLMPI_ACCOUNT=proj GOLMPI_PARTITION=gpu GOLMPI_TIME=01:00:00 GOLMPI_NODES=3 \
    bash "$SRC/jobs/submit.sh" jobs/slurm_multinode.sbatch --seed 2 >"$TMP/submit.log" 2>&1 || fail "submit.sh"
expect "+ sbatch -A proj -p gpu -t 01:00:00 -N 3 jobs/slurm_multinode.sbatch --seed 2" "$TMP/submit.log"
echo "PASS"
