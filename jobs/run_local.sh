#!/bin/bash
# golmpi on this machine with mpirun: a workstation with one or more GPUs, or CPUs only.
#
#   jobs/run_local.sh [extra golmpi options]
#   GOLMPI_RANKS=4 GOLMPI_SIZE=8192 jobs/run_local.sh --rule B36/S23
#   GOLMPI_BACKEND=cpu GOLMPI_THREADS=4 GOLMPI_RANKS=2 jobs/run_local.sh
#   GOLMPI_OVERSUBSCRIBE=1 GOLMPI_RANKS=4 jobs/run_local.sh     (more ranks than cores)
set -euo pipefail

# The job library (jobs/golmpi_job.sh), found through GOLMPI_SHARE: scripts/env.sh, or the installed
# <prefix>/share/golmpi/env.sh, exports it, and sbatch passes it on to the job.
source "${GOLMPI_SHARE:-$(dirname "$0")/..}/jobs/golmpi_job.sh" || { echo "golmpi job: error: no jobs/golmpi_job.sh in ${GOLMPI_SHARE:-$(dirname "$0")/..}: set GOLMPI_SHARE to golmpi's share directory (source scripts/env.sh in the sources, or <prefix>/share/golmpi/env.sh)" >&2; exit 2; }

# ---- settings: environment variables, with defaults ----------------------------------------
: "${GOLMPI_RANKS:=2}"                 # MPI ranks: one per GPU for the CUDA backend
: "${GOLMPI_THREADS:=1}"               # OpenMP threads per rank (CPU backend)
: "${GOLMPI_SIZE:=4096}"
: "${GOLMPI_STEPS:=200}"
: "${GOLMPI_SAVE_EVERY:=20}"
: "${GOLMPI_CHUNK:=5}"
: "${GOLMPI_BACKEND:=auto}"            # cuda where every rank has a GPU, else pass cpu
: "${GOLMPI_OUTDIR:=$PWD/golmpi-runs/local-$(date +%Y%m%d-%H%M%S)-$$}"
: "${GOLMPI_OVERSUBSCRIBE:=0}"         # 1: allow more ranks than cores (no core binding then)
GOLMPI_LAUNCHER=mpirun
export OMP_NUM_THREADS="$GOLMPI_THREADS"
job_defaults
job_launcher "$GOLMPI_RANKS" "$GOLMPI_RANKS"
job_prepare "$@"
rc=0
"${cmd[@]}" || rc=$?
echo "golmpi exited with $rc; output: $GOLMPI_OUTPUT"
exit "$rc"
