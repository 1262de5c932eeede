#!/bin/bash
# The job scripts start MPS when a node's ranks outnumber its GPUs, and stop after the run only the
# daemon they started. Stand-ins first in PATH play the machine: nvidia-smi lists FAKE_GPUS GPUs,
# nvidia-cuda-mps-control keeps its daemon's state in CUDA_MPS_PIPE_DIRECTORY (a socket file
# "control" and a file "running") and logs every call, and mpirun logs whether the daemon runs
# when the ranks start. No GPU, MPI or Slurm. For each script:
#   1. 4 ranks, 1 GPU, no daemon: started before the launch, running during it, quit after;
#   2. 4 ranks, 1 GPU, a daemon already running: neither started nor stopped, still running after;
#   3. 2 ranks, 2 GPUs: no MPS at all;
#   4. 4 ranks, 1 GPU, --backend cpu: no MPS;
#   5. 4 ranks, 1 GPU, no nvidia-cuda-mps-control on PATH: the run goes on without MPS, exit 0;
#   6. 4 ranks, the launcher fails (exit 3): the daemon it started is still stopped.
# slurm_multinode.sbatch also on two nodes (a stand-in srun runs its MPS steps once a node): each
# node's own daemon started and stopped, one that ran before left alone; a CPU job runs no step.
# Usage: test_jobs_mps.sh SCRIPT... (jobs/run_local.sh, jobs/slurm_node_4gpu.sbatch, ...)
set -uo pipefail
TMP=$(mktemp -d /tmp/golmpi-mps.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fail() {
    echo "test_jobs_mps: FAIL: $*" >&2
    exit 1
}
mkdir -p "$TMP/bin" "$TMP/nompsbin"
cat >"$TMP/bin/nvidia-smi" <<'EOF'
#!/bin/bash
[[ "$1" == -L ]] || exit 2
for ((i = 0; i < FAKE_GPUS; i++)); do echo "GPU $i: Stand-in GPU (UUID: GPU-$i)"; done
EOF
cat >"$TMP/bin/nvidia-cuda-mps-control" <<'EOF'
#!/bin/bash
d=${CUDA_MPS_PIPE_DIRECTORY:-/tmp/nvidia-mps}
if [[ "${1:-}" == -d ]]; then
    echo "start" >>"$FAKE_LOG"
    [[ -e "$d/running" ]] && { echo "An instance of this daemon is already running" >&2; exit 1; }
    mkdir -p "$d"
    rm -f "$d/control"
    python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$d/control"
    : >"$d/running"
    exit 0
fi
read -r command
echo "$command" >>"$FAKE_LOG"
[[ -e "$d/running" ]] || { echo "Cannot find MPS control daemon process" >&2; exit 1; }
case "$command" in
quit) rm -f "$d/running" ;;
get_server_list) ;;
*) exit 1 ;;
esac
EOF
cat >"$TMP/bin/mpirun" <<'EOF'
#!/bin/bash
# a --stats file with what jobs/scaling.sbatch reads (ranks, grid, generations, time)
p=1 w=0 h=0 stats=""
while (($#)); do
    case "$1" in -n) p=$2 ;; --width) w=$2 ;; --height) h=$2 ;; --stats) stats=$2 ;; esac
    shift
done
[[ -z "$stats" ]] || echo "{\"ranks\": $p, \"width\": $w, \"height\": $h, \"generations\": 1, \"wall_s\": 1.0}" >"$stats"
if [[ -e "${CUDA_MPS_PIPE_DIRECTORY:-/tmp/nvidia-mps}/running" ]]; then echo "launch mps-on" >>"$FAKE_LOG"; else echo "launch mps-off" >>"$FAKE_LOG"; fi
exit "${FAKE_LAUNCH_RC:-0}"
EOF
# srun, in the one form the scripts use it for MPS across nodes (--overlap ... bash -c STEPS): the
# steps once a node, each node with a TMPDIR and a pipe directory of its own under FAKE_NODES
cat >"$TMP/bin/srun" <<'EOF'
#!/bin/bash
n=1 overlap=0
while (($#)); do
    case "$1" in
    --nodes=*) n=${1#*=} ;;
    --overlap) overlap=1 ;;
    bash) shift; break ;;
    esac
    shift
done
[[ $overlap == 1 && "${1:-}" == -c ]] || { echo "srun stand-in: not the MPS steps' form" >&2; exit 2; }
echo "srun" >>"$FAKE_LOG"
for ((i = 1; i <= n; i++)); do
    mkdir -p "$FAKE_NODES/n$i/mps"
    TMPDIR="$FAKE_NODES/n$i" CUDA_MPS_PIPE_DIRECTORY="$FAKE_NODES/n$i/mps" bash -c "$2" || exit $?
done
EOF
chmod +x "$TMP/bin/"*
for tool in mpirun nvidia-smi; do cp "$TMP/bin/$tool" "$TMP/nompsbin/"; done

# run_case NAME SCRIPT RANKS GPUS PATHDIR [VAR=VALUE...] -- [golmpi options]: the script's exit
# code in RC, the stand-ins' calls (one word a line) in CALLS, its output in $TMP/NAME.out
run_case() {
    local name=$1 script=$2 ranks=$3 gpus=$4 bin=$5 dir=$TMP/$1
    shift 5
    local vars=()
    while (($#)) && [[ "$1" != -- ]]; do vars+=("$1"); shift; done
    shift
    mkdir -p "$dir/mps"
    : >"$dir/log"
    RC=0
    env -u CUDA_VISIBLE_DEVICES -u SLURM_JOB_ID -u SLURM_NTASKS -u SLURM_JOB_NUM_NODES \
        PATH="$bin:$PATH" FAKE_GPUS="$gpus" FAKE_LOG="$dir/log" CUDA_MPS_PIPE_DIRECTORY="$dir/mps" \
        GOLMPI_LAUNCHER=mpirun GOLMPI_RANKS="$ranks" GOLMPI_SCALING_RANKS="$ranks" \
        GOLMPI_SCALING_MODES=strong GOLMPI_SCALING_REPEAT=1 GOLMPI_REQUEUE=0 GOLMPI_BIN=true \
        GOLMPI_NSYS=true \
        GOLMPI_OUTPUT="$dir/out/life.h5" GOLMPI_OUTDIR="$dir/out" ${vars[@]+"${vars[@]}"} \
        timeout 60 bash "$script" "$@" >"$TMP/$name.out" 2>&1 || RC=$?
    CALLS=$(tr '\n' ' ' <"$dir/log")
    CALLS=${CALLS% }
}

for script in "$@"; do
    s=$(basename "$script")

    run_case "$s-start" "$script" 4 1 "$TMP/bin" --
    [[ $RC == 0 ]] || fail "$s: 4 ranks on 1 GPU: exit $RC: $(tail -n 20 "$TMP/$s-start.out")"
    [[ "$CALLS" == "start launch mps-on quit" ]] ||
        fail "$s: 4 ranks on 1 GPU: want MPS started, running at the launch, stopped; the calls: '$CALLS'"
    [[ ! -e "$TMP/$s-start/mps/running" ]] || fail "$s: the daemon it started still runs"
    grep -q "starting MPS" "$TMP/$s-start.out" || fail "$s: does not say it starts MPS"
    echo "test_jobs_mps: ok: $s: 4 ranks on 1 GPU: MPS started, on at the launch, stopped"

    mkdir -p "$TMP/$s-running/mps"
    FAKE_LOG=/dev/null CUDA_MPS_PIPE_DIRECTORY="$TMP/$s-running/mps" "$TMP/bin/nvidia-cuda-mps-control" -d
    run_case "$s-running" "$script" 4 1 "$TMP/bin" --
    [[ $RC == 0 ]] || fail "$s: a daemon already running: exit $RC: $(tail -n 20 "$TMP/$s-running.out")"
    [[ "$CALLS" == "get_server_list launch mps-on" ]] ||
        fail "$s: a daemon already running: want it asked about and left alone; the calls: '$CALLS'"
    [[ -e "$TMP/$s-running/mps/running" ]] || fail "$s: stopped a daemon it did not start"
    echo "test_jobs_mps: ok: $s: a daemon that ran before is used and left running"

    run_case "$s-enough" "$script" 2 2 "$TMP/bin" --
    [[ $RC == 0 && "$CALLS" == "launch mps-off" ]] ||
        fail "$s: 2 ranks on 2 GPUs: exit $RC, calls '$CALLS'; want no MPS"
    echo "test_jobs_mps: ok: $s: a GPU a rank: no MPS"

    run_case "$s-cpu" "$script" 4 1 "$TMP/bin" -- --backend cpu
    [[ $RC == 0 && "$CALLS" == "launch mps-off" ]] ||
        fail "$s: --backend cpu: exit $RC, calls '$CALLS'; want no MPS"
    echo "test_jobs_mps: ok: $s: --backend cpu: no MPS"

    run_case "$s-nomps" "$script" 4 1 "$TMP/nompsbin" --
    [[ $RC == 0 && "$CALLS" == "launch mps-off" ]] ||
        fail "$s: no nvidia-cuda-mps-control: exit $RC, calls '$CALLS': $(tail -n 20 "$TMP/$s-nomps.out")"
    echo "test_jobs_mps: ok: $s: without nvidia-cuda-mps-control the run goes on"

    run_case "$s-failed" "$script" 4 1 "$TMP/bin" FAKE_LAUNCH_RC=3 --
    [[ "$CALLS" == "start launch mps-on quit" ]] ||
        fail "$s: a failed launch: want MPS stopped all the same; the calls: '$CALLS'"
    echo "test_jobs_mps: ok: $s: a failed launch (exit $RC) still stops the daemon it started"

    [[ $s == slurm_multinode.sbatch ]] || continue
    # two nodes of 4 ranks and 1 GPU each (the launch sees node 1's daemon); node 2's daemon
    # already runs: node 1's is started and stopped, node 2's used and left running
    mkdir -p "$TMP/$s-nodes/n2/mps"
    FAKE_LOG=/dev/null CUDA_MPS_PIPE_DIRECTORY="$TMP/$s-nodes/n2/mps" "$TMP/bin/nvidia-cuda-mps-control" -d
    run_case "$s-nodes" "$script" 8 1 "$TMP/bin" SLURM_JOB_NUM_NODES=2 SLURM_NTASKS=8 \
        FAKE_NODES="$TMP/$s-nodes" CUDA_MPS_PIPE_DIRECTORY="$TMP/$s-nodes/n1/mps" --
    [[ $RC == 0 && "$CALLS" == "srun start get_server_list launch mps-on srun quit" ]] ||
        fail "$s: two nodes: exit $RC, calls '$CALLS': $(tail -n 20 "$TMP/$s-nodes.out")"
    [[ ! -e "$TMP/$s-nodes/n1/mps/running" && -e "$TMP/$s-nodes/n2/mps/running" ]] ||
        fail "$s: two nodes: node 1's daemon must be stopped, node 2's left running"
    ! ls "$TMP/$s-nodes"/n*/golmpi-mps-started.* 2>/dev/null || fail "$s: a node's marker left behind"
    echo "test_jobs_mps: ok: $s: two nodes: each node's own daemon started and stopped, another's left alone"
    # a CPU job across nodes runs no MPS step on them
    run_case "$s-nodes-cpu" "$script" 8 1 "$TMP/bin" SLURM_JOB_NUM_NODES=2 SLURM_NTASKS=8 \
        FAKE_NODES="$TMP/$s-nodes-cpu" CUDA_MPS_PIPE_DIRECTORY="$TMP/$s-nodes-cpu/n1/mps" -- --backend cpu
    [[ $RC == 0 && "$CALLS" == "launch mps-off" ]] ||
        fail "$s: two nodes, --backend cpu: exit $RC, calls '$CALLS'; want no step on the nodes"
    echo "test_jobs_mps: ok: $s: two nodes, --backend cpu: no MPS step on the nodes"
done
echo "test_jobs_mps: PASS"
