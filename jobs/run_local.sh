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

user_args=($GOLMPI_ARGS "$@")
# the user's --output is where this job writes (and, requeued, resumes from)
if user_output=$(user_value --output); then GOLMPI_OUTPUT=$user_output; fi
golmpi=("$GOLMPI_BIN")
with_defaults --backend "$GOLMPI_BACKEND" --size "$GOLMPI_SIZE" --steps "$GOLMPI_STEPS" \
    --save-every "$GOLMPI_SAVE_EVERY" --chunk "$GOLMPI_CHUNK" --output "$GOLMPI_OUTPUT" \
    --stats "$GOLMPI_STATS" --
cmd=("${launcher[@]}" "${golmpi[@]}")

show_cmd "${cmd[@]}"
[[ "$GOLMPI_DRY_RUN" == 1 ]] && exit 0
if ! command -v "$GOLMPI_BIN" >/dev/null; then
    echo "error: golmpi not found: '$GOLMPI_BIN' (set GOLMPI_BIN)" >&2
    exit 2
fi
mkdir -p "$(dirname "$GOLMPI_OUTPUT")"
trap mps_stop EXIT
mps_start "$GOLMPI_RANKS" "$(user_value --backend || echo "$GOLMPI_BACKEND")"
rc=0
"${cmd[@]}" || rc=$?
echo "golmpi exited with $rc; output: $GOLMPI_OUTPUT"
mps_stop
exit "$rc"
