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

# Print the command so that it can be pasted back into a shell: quotes only where needed.
show_cmd() {
    local w q=() sq="'"
    for w in "$@"; do
        if [[ "$w" =~ ^[A-Za-z0-9_./=:,%@+-]+$ ]]; then q+=("$w"); else q+=("'${w//$sq/$sq\\$sq$sq}'"); fi
    done
    echo "+ ${q[*]}"
}

# The user's golmpi options (GOLMPI_ARGS, then this script's arguments) win over the script's
# defaults: a default is left out when the user gives that option or one it cannot go with
# (--size with --width/--height, --output with --no-output), so `--steps 50` is never "given
# twice". An option's value may follow it or be joined with '='.
user_args=()
user_gives() {
    local a o
    for a in "${user_args[@]}"; do
        for o in "$@"; do [[ "$a" == "$o" || "$a" == "$o="* ]] && return 0; done
    done
    return 1
}
user_value() { # the value the user gives option $1, if any
    local i
    for ((i = 0; i < ${#user_args[@]}; i++)); do
        case "${user_args[i]}" in
        "$1") echo "${user_args[i + 1]:-}"; return 0 ;;
        "$1="*) echo "${user_args[i]#*=}"; return 0 ;;
        esac
    done
    return 1
}
with_defaults() { # with_defaults OPT VALUE ... -- : `golmpi` += the defaults the user leaves, then theirs
    local opt
    while [[ "$1" != -- ]]; do
        opt=$1
        case "$opt" in
        --size) user_gives --size --width --height || golmpi+=("$1" "$2") ;;
        --output | --save-every | --chunk) user_gives "$opt" --no-output || golmpi+=("$1" "$2") ;;
        *) user_gives "$opt" || golmpi+=("$1" "$2") ;;
        esac
        shift 2
    done
    golmpi+=("${user_args[@]}")
}

# ---- MPS: ranks that share a GPU run side by side only under NVIDIA's Multi-Process Service;
# without it they take turns on the GPU, 4-17x slower (docs/GPU.md, "Ranks sharing a GPU"). When
# a node's ranks outnumber the GPUs they see and nvidia-cuda-mps-control exists, the script starts
# the MPS control daemon there, unless one already runs, and after the run stops only a daemon it
# started. GOLMPI_MPS=0: never (GOLMPI_MPS=auto, the default: as said).
: "${GOLMPI_MPS:=auto}"
gpus_seen() { # the GPUs a rank sees: CUDA_VISIBLE_DEVICES's list, else nvidia-smi's (0: none)
    local ids=()
    if [[ -n "${CUDA_VISIBLE_DEVICES+set}" ]]; then
        IFS=, read -ra ids <<<"$CUDA_VISIBLE_DEVICES"
        echo "${#ids[@]}"
    elif command -v nvidia-smi >/dev/null; then
        nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true
    else
        echo 0
    fi
}
mps_running() { # a control daemon answers on its socket, as golmpi itself asks (kernels/device.c)
    [[ -S "${CUDA_MPS_PIPE_DIRECTORY:-/tmp/nvidia-mps}/control" ]] &&
        echo get_server_list | timeout 10 nvidia-cuda-mps-control >/dev/null 2>&1
}
mps_started=0
mps_start() { # mps_start RANKS BACKEND: MPS on this node for RANKS ranks of golmpi's BACKEND
    local gpus
    [[ "$GOLMPI_MPS" != 0 && "$2" != cpu ]] || return 0
    command -v nvidia-cuda-mps-control >/dev/null || return 0
    gpus=$(gpus_seen)
    ((gpus > 0 && $1 > gpus)) || return 0
    if mps_running; then
        echo "golmpi job: $1 ranks on $gpus GPU(s); an MPS control daemon already runs"
        return 0
    fi
    echo "golmpi job: $1 ranks on $gpus GPU(s): starting MPS (nvidia-cuda-mps-control -d)"
    if nvidia-cuda-mps-control -d; then
        mps_started=1
    else
        echo "golmpi job: nvidia-cuda-mps-control -d failed; the ranks take turns on the GPUs" >&2
    fi
}
mps_stop() { # only the daemon mps_start started: one that ran before serves others too
    ((mps_started == 1)) || return 0
    mps_started=0
    echo "golmpi job: stopping the MPS control daemon it started (echo quit | nvidia-cuda-mps-control)"
    echo quit | nvidia-cuda-mps-control || echo "golmpi job: stopping MPS failed" >&2
}

# ---- settings: environment variables, with defaults ----------------------------------------
# A short run: a timeline of a few chunks says everything, and reports of long runs get huge.
: "${GOLMPI_BIN:=golmpi}"
: "${GOLMPI_SIZE:=16384}"
: "${GOLMPI_STEPS:=200}"
: "${GOLMPI_SAVE_EVERY:=20}"
: "${GOLMPI_CHUNK:=4}"
: "${GOLMPI_BACKEND:=cuda}"
: "${GOLMPI_OUTDIR:=${SLURM_SUBMIT_DIR:-$PWD}/golmpi-runs/${SLURM_JOB_ID:-local-$$}}"
: "${GOLMPI_OUTPUT:=$GOLMPI_OUTDIR/life.h5}"
: "${GOLMPI_STATS:=${GOLMPI_OUTPUT%.h5}.stats.json}"
: "${GOLMPI_ARGS:=}"                   # more golmpi options, split on blanks
: "${GOLMPI_RANKS:=4}"                 # ranks for mpirun outside Slurm
: "${GOLMPI_SRUN_MPI:=pmix}"
: "${GOLMPI_CPU_BIND:=cores}"
: "${GOLMPI_GPU_BIND:=none}"           # srun --gpu-bind: none keeps NCCL's P2P (jobs/README.md)
: "${GOLMPI_MPIRUN_FLAGS:=}"
: "${GOLMPI_DRY_RUN:=0}"
: "${GOLMPI_NSYS:=nsys}"               # the nsys executable
: "${GOLMPI_NSYS_DIR:=$GOLMPI_OUTDIR/nsys}"   # where the per-rank reports go
: "${GOLMPI_NSYS_TRACE:=cuda,nvtx,mpi,osrt}"
: "${GOLMPI_NSYS_MPI_IMPL:=openmpi}"   # --mpi-impl for the MPI trace (openmpi or mpich); empty: omit
: "${GOLMPI_NSYS_FLAGS:=}"             # more nsys profile options, split on blanks
# srun inside a Slurm job, mpirun elsewhere, unless the user says.
if [[ -z "${GOLMPI_LAUNCHER:-}" ]]; then
    if [[ -n "${SLURM_JOB_ID:-}" ]]; then GOLMPI_LAUNCHER=srun; else GOLMPI_LAUNCHER=mpirun; fi
fi

export OMP_NUM_THREADS="${OMP_NUM_THREADS:-${SLURM_CPUS_PER_TASK:-1}}"
export OMP_PLACES="${OMP_PLACES:-cores}" OMP_PROC_BIND="${OMP_PROC_BIND:-close}"

launcher=()
case "$GOLMPI_LAUNCHER" in
srun)
    rank_var=SLURM_PROCID
    launcher=(srun "--mpi=$GOLMPI_SRUN_MPI" "--cpu-bind=$GOLMPI_CPU_BIND")
    [[ -n "${SLURM_CPUS_PER_TASK:-}" ]] && launcher+=("--cpus-per-task=$SLURM_CPUS_PER_TASK")
    # Every rank sees every GPU of its node and picks node-local rank % GPUs (kernels/device.c),
    # so NCCL keeps P2P/NVLink; per-task GPU binding would hide the peers (jobs/README.md).
    if [[ -n "${SLURM_GPUS_PER_NODE:-}" && "${SLURM_GPUS_PER_NODE##*:}" != 0 ]]; then
        launcher+=("--gpus-per-node=$SLURM_GPUS_PER_NODE" "--gpu-bind=$GOLMPI_GPU_BIND")
    fi
    ;;
mpirun)
    # Open MPI sets OMPI_COMM_WORLD_RANK in each rank's environment before nsys starts.
    rank_var=OMPI_COMM_WORLD_RANK
    launcher=(mpirun -n "${SLURM_NTASKS:-$GOLMPI_RANKS}"
              --map-by "slot:PE=${SLURM_CPUS_PER_TASK:-1}" --bind-to core
              -x OMP_NUM_THREADS -x OMP_PLACES -x OMP_PROC_BIND)
    [[ "$(id -u)" == 0 ]] && launcher+=(--allow-run-as-root)
    launcher+=($GOLMPI_MPIRUN_FLAGS)
    ;;
*)
    echo "error: GOLMPI_LAUNCHER must be srun or mpirun, not '$GOLMPI_LAUNCHER'" >&2
    exit 2
    ;;
esac

# nsys runs once per rank, inside the launcher, and expands %q{VAR} from that rank's environment.
# --cuda-graph-trace=node: golmpi replays its generations as CUDA graphs; show their kernels.
nsys=("$GOLMPI_NSYS" profile "--trace=$GOLMPI_NSYS_TRACE" --cuda-graph-trace=node
      --force-overwrite=true --stats=false -o "$GOLMPI_NSYS_DIR/golmpi.%q{$rank_var}")
[[ -n "$GOLMPI_NSYS_MPI_IMPL" ]] && nsys+=("--mpi-impl=$GOLMPI_NSYS_MPI_IMPL")
nsys+=($GOLMPI_NSYS_FLAGS)

user_args=($GOLMPI_ARGS "$@")
# the user's --output is where this job writes (and, requeued, resumes from)
if user_output=$(user_value --output); then GOLMPI_OUTPUT=$user_output; fi
golmpi=("$GOLMPI_BIN")
with_defaults --backend "$GOLMPI_BACKEND" --size "$GOLMPI_SIZE" --steps "$GOLMPI_STEPS" \
    --save-every "$GOLMPI_SAVE_EVERY" --chunk "$GOLMPI_CHUNK" --output "$GOLMPI_OUTPUT" \
    --stats "$GOLMPI_STATS" --
cmd=("${launcher[@]}" "${nsys[@]}" "${golmpi[@]}")

echo "golmpi profile ${SLURM_JOB_ID:-(no job)} on ${SLURM_JOB_NODELIST:-$(hostname -s)}, $(date -Is)"
show_cmd "${cmd[@]}"
[[ "$GOLMPI_DRY_RUN" == 1 ]] && exit 0
for exe in "$GOLMPI_NSYS" "$GOLMPI_BIN"; do
    if ! command -v "$exe" >/dev/null; then
        echo "error: not found: '$exe' (set GOLMPI_NSYS / GOLMPI_BIN)" >&2
        exit 2
    fi
done
mkdir -p "$GOLMPI_NSYS_DIR" "$(dirname "$GOLMPI_OUTPUT")"
# MPS where the node's ranks outnumber its GPUs (a profile under MPS shows the ranks' kernels side
# by side); stopped after the run, and by the EXIT trap on any other way out
trap mps_stop EXIT
nodes=${SLURM_JOB_NUM_NODES:-1}
mps_start "$(((${SLURM_NTASKS:-$GOLMPI_RANKS} + nodes - 1) / nodes))" \
    "$(user_value --backend || echo "$GOLMPI_BACKEND")"
rc=0
"${cmd[@]}" || rc=$?
mps_stop
echo "exit code $rc; reports: $GOLMPI_NSYS_DIR/golmpi.<rank>.nsys-rep"
echo "open them together: nsys-ui $GOLMPI_NSYS_DIR/golmpi.*.nsys-rep  (multi-report view)"
echo "or: nsys recipe nccl_gpu_overlap_trace --input $GOLMPI_NSYS_DIR"
exit "$rc"
