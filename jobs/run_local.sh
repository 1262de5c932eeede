#!/bin/bash
# golmpi on this machine with mpirun: a workstation with one or more GPUs, or CPUs only.
#
#   jobs/run_local.sh [extra golmpi options]
#   GOLMPI_RANKS=4 GOLMPI_SIZE=8192 jobs/run_local.sh --rule B36/S23
#   GOLMPI_BACKEND=cpu GOLMPI_THREADS=4 GOLMPI_RANKS=2 jobs/run_local.sh
#   GOLMPI_OVERSUBSCRIBE=1 GOLMPI_RANKS=4 jobs/run_local.sh     (more ranks than cores)
set -euo pipefail

# Print the command so that it can be pasted back into a shell: quotes only where needed.
show_cmd() {
    local w q=() sq="'"
    for w in "$@"; do
        if [[ "$w" =~ ^[A-Za-z0-9_./=:,%@+-]+$ ]]; then q+=("$w"); else q+=("'${w//$sq/$sq\\$sq$sq}'"); fi
    done
    echo "+ ${q[*]}"
}

# ---- settings: environment variables, with defaults ----------------------------------------
: "${GOLMPI_BIN:=golmpi}"
: "${GOLMPI_RANKS:=2}"                 # MPI ranks: one per GPU for the CUDA backend
: "${GOLMPI_THREADS:=1}"               # OpenMP threads per rank (CPU backend)
: "${GOLMPI_SIZE:=4096}"
: "${GOLMPI_STEPS:=200}"
: "${GOLMPI_SAVE_EVERY:=20}"
: "${GOLMPI_CHUNK:=5}"
: "${GOLMPI_BACKEND:=auto}"            # cuda where every rank has a GPU, else pass cpu
: "${GOLMPI_OUTDIR:=$PWD/golmpi-runs/local-$(date +%Y%m%d-%H%M%S)-$$}"
: "${GOLMPI_OUTPUT:=$GOLMPI_OUTDIR/life.h5}"
: "${GOLMPI_STATS:=${GOLMPI_OUTPUT%.h5}.stats.json}"
: "${GOLMPI_ARGS:=}"                   # more golmpi options, split on blanks
: "${GOLMPI_MPIRUN:=mpirun}"
: "${GOLMPI_MPIRUN_FLAGS:=}"           # more mpirun options, split on blanks
: "${GOLMPI_OVERSUBSCRIBE:=0}"         # 1: allow more ranks than cores (no core binding then)
: "${GOLMPI_DRY_RUN:=0}"

export OMP_NUM_THREADS="$GOLMPI_THREADS"
launcher=("$GOLMPI_MPIRUN" -n "$GOLMPI_RANKS" -x OMP_NUM_THREADS)
if [[ "$GOLMPI_OVERSUBSCRIBE" == 1 ]]; then
    launcher+=(--oversubscribe --bind-to none)
else
    launcher+=(--map-by "slot:PE=$GOLMPI_THREADS" --bind-to core)
fi
[[ "$(id -u)" == 0 ]] && launcher+=(--allow-run-as-root)
launcher+=($GOLMPI_MPIRUN_FLAGS)

golmpi=("$GOLMPI_BIN" --backend "$GOLMPI_BACKEND" --size "$GOLMPI_SIZE" --steps "$GOLMPI_STEPS"
        --save-every "$GOLMPI_SAVE_EVERY" --chunk "$GOLMPI_CHUNK" --output "$GOLMPI_OUTPUT"
        --stats "$GOLMPI_STATS" $GOLMPI_ARGS "$@")
cmd=("${launcher[@]}" "${golmpi[@]}")

show_cmd "${cmd[@]}"
[[ "$GOLMPI_DRY_RUN" == 1 ]] && exit 0
if ! command -v "$GOLMPI_BIN" >/dev/null; then
    echo "error: golmpi not found: '$GOLMPI_BIN' (set GOLMPI_BIN)" >&2
    exit 2
fi
mkdir -p "$(dirname "$GOLMPI_OUTPUT")"
rc=0
"${cmd[@]}" || rc=$?
echo "golmpi exited with $rc; output: $GOLMPI_OUTPUT"
exit "$rc"
