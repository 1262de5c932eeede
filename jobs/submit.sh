#!/bin/bash
# sbatch with the allocation taken from environment variables, since #SBATCH lines cannot expand
# them. Everything after the script is passed to it (extra golmpi options).
#
#   GOLMPI_ACCOUNT=proj42 GOLMPI_PARTITION=gpu GOLMPI_TIME=01:00:00 \
#       jobs/submit.sh jobs/slurm_node_4gpu.sbatch --rule B36/S23
#   GOLMPI_NODES=4 GOLMPI_SBATCH_FLAGS="--wait --qos=high" jobs/submit.sh jobs/slurm_multinode.sbatch
#
# GOLMPI_ACCOUNT (-A), GOLMPI_PARTITION (-p), GOLMPI_TIME (-t), GOLMPI_NODES (-N),
# GOLMPI_NTASKS_PER_NODE, GOLMPI_CPUS_PER_TASK (-c), GOLMPI_GPUS_PER_NODE, GOLMPI_SBATCH_FLAGS.
# The GOLMPI_* settings of the scripts (GOLMPI_SIZE, ...) reach the job through sbatch's
# default --export=ALL.
set -euo pipefail

# The job library (jobs/golmpi_job.sh), found through GOLMPI_SHARE: scripts/env.sh, or the installed
# <prefix>/share/golmpi/env.sh, exports it, and sbatch passes it on to the job.
source "${GOLMPI_SHARE:-$(dirname "$0")/..}/jobs/golmpi_job.sh" || { echo "golmpi job: error: no jobs/golmpi_job.sh in ${GOLMPI_SHARE:-$(dirname "$0")/..}: set GOLMPI_SHARE to golmpi's share directory (source scripts/env.sh in the sources, or <prefix>/share/golmpi/env.sh)" >&2; exit 2; }
if [[ $# -lt 1 || "$1" == -h || "$1" == --help ]]; then
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
    [[ $# -lt 1 ]] && exit 2 || exit 0
fi
script=$1
shift
flags=()
[[ -n "${GOLMPI_ACCOUNT:-}" ]] && flags+=(-A "$GOLMPI_ACCOUNT")
[[ -n "${GOLMPI_PARTITION:-}" ]] && flags+=(-p "$GOLMPI_PARTITION")
[[ -n "${GOLMPI_TIME:-}" ]] && flags+=(-t "$GOLMPI_TIME")
[[ -n "${GOLMPI_NODES:-}" ]] && flags+=(-N "$GOLMPI_NODES")
[[ -n "${GOLMPI_NTASKS_PER_NODE:-}" ]] && flags+=("--ntasks-per-node=$GOLMPI_NTASKS_PER_NODE")
[[ -n "${GOLMPI_CPUS_PER_TASK:-}" ]] && flags+=(-c "$GOLMPI_CPUS_PER_TASK")
[[ -n "${GOLMPI_GPUS_PER_NODE:-}" ]] && flags+=("--gpus-per-node=$GOLMPI_GPUS_PER_NODE")
# kept for old habits; per-task GPUs cost NCCL its P2P path (jobs/README.md, "GPU binding")
[[ -n "${GOLMPI_GPUS_PER_TASK:-}" ]] && flags+=("--gpus-per-task=$GOLMPI_GPUS_PER_TASK")
flags+=(${GOLMPI_SBATCH_FLAGS:-})
cmd=(sbatch "${flags[@]}" "$script" "$@")
show_cmd "${cmd[@]}"
[[ "${GOLMPI_DRY_RUN:-0}" == 1 ]] && exit 0
exec "${cmd[@]}"
