#!/bin/bash
# One rank of golmpi under its node's MPS: the job scripts put this before golmpi in the launch
# (srun ... golmpi_mps_node.sh golmpi ...), so the daemon lives as long as the ranks, inside their
# step, in a directory private to the launch (jobs/golmpi_job.sh, mps_node_run).
#   golmpi_mps_node.sh COMMAND...
source "$(dirname "${BASH_SOURCE[0]}")/golmpi_job.sh" || exit 2
mps_node_run "$@"
