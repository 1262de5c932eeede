#!/bin/bash
# Profile golmpi with Nsight Systems: one report per rank, named by rank, so the reports open
# together in one multi-report timeline (see jobs/README.md, "Reading a multi-rank report").
#
# Inside an allocation or as a batch job (srun: the rank is %q{SLURM_PROCID}):
#   sbatch jobs/nsys_profile.sh [extra golmpi options]
#   salloc -N1 --exclusive --ntasks-per-node=4 --gpus-per-node=4 -c 8   then   jobs/nsys_profile.sh
# Without Slurm, or with GOLMPI_LAUNCHER=mpirun (the rank is %q{OMPI_COMM_WORLD_RANK}):
#   GOLMPI_RANKS=2 jobs/nsys_profile.sh --steps 200
#
# #SBATCH lines cannot expand variables: override them with sbatch flags (-A, -p, -t, -N, -n, -c,
# --gpus-per-node) or SBATCH_ACCOUNT / SBATCH_PARTITION / SBATCH_TIMELIMIT, or jobs/submit.sh.
#SBATCH --job-name=golmpi-nsys
#SBATCH --nodes=1
#SBATCH --exclusive
#SBATCH --ntasks-per-node=4
#SBATCH --gpus-per-node=4
#SBATCH --gpu-bind=none
#SBATCH --cpus-per-task=8
#SBATCH --time=00:20:00
#SBATCH --output=golmpi-nsys-%j.out

# ---- site setup: put your site's module load lines here ------------------------------------
# module load cuda/12.4 nccl openmpi hdf5-parallel
# --------------------------------------------------------------------------------------------

set -euo pipefail

# The job library (jobs/golmpi_job.sh), found through GOLMPI_SHARE: scripts/env.sh, or the installed
# <prefix>/share/golmpi/env.sh, exports it, and sbatch passes it on to the job.
source "${GOLMPI_SHARE:-$(dirname "$0")/..}/jobs/golmpi_job.sh" || { echo "golmpi job: error: no jobs/golmpi_job.sh in ${GOLMPI_SHARE:-$(dirname "$0")/..}: set GOLMPI_SHARE to golmpi's share directory (source scripts/env.sh in the sources, or <prefix>/share/golmpi/env.sh)" >&2; exit 2; }

# ---- settings: environment variables, with defaults ----------------------------------------
# A short run: a timeline of a few chunks says everything, and reports of long runs get huge.
: "${GOLMPI_SIZE:=16384}"
: "${GOLMPI_STEPS:=200}"
: "${GOLMPI_SAVE_EVERY:=20}"
: "${GOLMPI_CHUNK:=4}"
: "${GOLMPI_BACKEND:=cuda}"
: "${GOLMPI_RANKS:=4}"                 # ranks for mpirun outside Slurm
job_defaults
: "${GOLMPI_NSYS:=nsys}"               # the nsys executable
: "${GOLMPI_NSYS_DIR:=$GOLMPI_OUTDIR/nsys}"   # where the per-rank reports go
: "${GOLMPI_NSYS_TRACE:=cuda,nvtx,mpi,osrt}"
: "${GOLMPI_NSYS_MPI_IMPL:=openmpi}"   # --mpi-impl for the MPI trace (openmpi or mpich); empty: omit
: "${GOLMPI_NSYS_FLAGS:=}"             # more nsys profile options, split on blanks
job_launcher "$GOLMPI_RANKS"
# Open MPI sets OMPI_COMM_WORLD_RANK in each rank's environment before nsys starts.
rank_var=OMPI_COMM_WORLD_RANK
[[ "$GOLMPI_LAUNCHER" != srun ]] || rank_var=SLURM_PROCID

# nsys runs once per rank, inside the launcher, and expands %q{VAR} from that rank's environment.
# --cuda-graph-trace=node: golmpi replays its generations as CUDA graphs; show their kernels.
nsys=("$GOLMPI_NSYS" profile "--trace=$GOLMPI_NSYS_TRACE" --cuda-graph-trace=node
      --force-overwrite=true --stats=false -o "$GOLMPI_NSYS_DIR/golmpi.%q{$rank_var}")
[[ -n "$GOLMPI_NSYS_MPI_IMPL" ]] && nsys+=("--mpi-impl=$GOLMPI_NSYS_MPI_IMPL")
nsys+=($GOLMPI_NSYS_FLAGS)

job_tool=("${nsys[@]}")
job_prepare "$@"
if ! command -v "$GOLMPI_NSYS" >/dev/null; then
    echo "error: not found: '$GOLMPI_NSYS' (set GOLMPI_NSYS)" >&2
    exit 2
fi
mkdir -p "$GOLMPI_NSYS_DIR"
rc=0
"${cmd[@]}" || rc=$?
echo "exit code $rc; reports: $GOLMPI_NSYS_DIR/golmpi.<rank>.nsys-rep"
echo "open them together: nsys-ui $GOLMPI_NSYS_DIR/golmpi.*.nsys-rep  (multi-report view)"
echo "or: nsys recipe nccl_gpu_overlap_trace --input $GOLMPI_NSYS_DIR"
exit "$rc"
