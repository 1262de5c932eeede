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

# Print the command so that it can be pasted back into a shell: quotes only where needed.
show_cmd() {
    local w q=() sq="'"
    for w in "$@"; do
        if [[ "$w" =~ ^[A-Za-z0-9_./=:,%@+-]+$ ]]; then q+=("$w"); else q+=("'${w//$sq/$sq\\$sq$sq}'"); fi
    done
    echo "+ ${q[*]}"
}
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
