#!/bin/bash
# MPS on the nodes of a job (jobs/golmpi_job.sh, mps_node_run): each rank runs under
# jobs/golmpi_mps_node.sh; where a node's ranks outnumber its GPUs, its first rank starts a daemon
# in a directory private to the launch, every rank finds it answering, and the last to leave stops
# it. Stand-ins first in PATH play the machine: tests/mps/nvidia-cuda-mps-control (python3; it
# forks a daemon that answers on its pipe and quits on `quit`), nvidia-smi listing FAKE_GPUS GPUs,
# mpirun starting its -n ranks here with Open MPI's local-rank variables, and a golmpi rank that
# logs whether a daemon answers on its CUDA_MPS_PIPE_DIRECTORY. No GPU, MPI or Slurm.
# The whole matrix on the first script, the rest through each other script:
#   4 ranks on 1 GPU (auto): started once, on for every rank, private to the launch, gone after;
#   GOLMPI_MPS=0: none; --backend cpu: none; 2 ranks on 2 GPUs: none (auto), started (GOLMPI_MPS=1);
#   no nvidia-cuda-mps-control: none, exit 0; the daemon fails to start: one line, ranks go on
#   without it, exit 0; a rank fails (exit 3): the daemon stopped all the same, exit 3;
#   a daemon answering on the user's CUDA_MPS_PIPE_DIRECTORY: used, left running.
# Then the wrapper alone: srun's local-rank variables, and Slurm's own MPS (--gres=mps).
# Usage: test_jobs_mps.sh SCRIPT... (jobs/run_local.sh first, then the others)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
wrapper=$here/../jobs/golmpi_mps_node.sh
TMP=$(mktemp -d /tmp/golmpi-mps.XXXXXX)
# at exit: every stand-in daemon the test started and still running ended, by its process id (one
# that has quit may have left its id to another process)
trap 'while read -r pid; do
          grep -q nvidia-cuda-mps-control "/proc/$pid/cmdline" 2>/dev/null && kill "$pid" 2>/dev/null
      done <"$TMP/pids"; rm -rf "$TMP"' EXIT
: >"$TMP/pids"
fail() {
    echo "test_jobs_mps: FAIL: $*" >&2
    exit 1
}
mkdir -p "$TMP/bin" "$TMP/nompsbin"
# the stand-in daemon runs on GOLMPI_PYTHON (ctest's python3)
printf '#!/bin/sh\nexec %q %q "$@"\n' "${GOLMPI_PYTHON:-python3}" "$here/mps/nvidia-cuda-mps-control" \
    >"$TMP/bin/nvidia-cuda-mps-control"
chmod +x "$TMP/bin/nvidia-cuda-mps-control"
cat >"$TMP/nompsbin/nvidia-smi" <<'EOF2'
#!/bin/bash
[[ "$1" == -L ]] || exit 2
for ((i = 0; i < FAKE_GPUS; i++)); do echo "GPU $i: Stand-in GPU (UUID: GPU-$i)"; done
EOF2
# a rank: whether a daemon answers on its pipe directory, and a --stats file for scaling.sbatch
cat >"$TMP/nompsbin/golmpi" <<'EOF2'
#!/bin/bash
stats="" w=0 h=0
while (($#)); do
    case "$1" in --stats) stats=$2 ;; --width) w=$2 ;; --height) h=$2 ;; esac
    shift
done
if [[ -n "${CUDA_MPS_PIPE_DIRECTORY:-}" ]] && nvidia-cuda-mps-control <<<get_server_list >/dev/null 2>&1; then
    echo "rank mps-on $CUDA_MPS_PIPE_DIRECTORY" >>"$FAKE_LOG"
else
    echo "rank mps-off" >>"$FAKE_LOG"
fi
[[ -z "$stats" || "${OMPI_COMM_WORLD_LOCAL_RANK:-0}" != 0 ]] ||
    echo "{\"ranks\": $OMPI_COMM_WORLD_LOCAL_SIZE, \"width\": $w, \"height\": $h, \"generations\": 1, \"wall_s\": 1.0}" >"$stats"
exit "${FAKE_RANK_RC:-0}"
EOF2
# nsys profile ... golmpi ...: the rank itself
cat >"$TMP/nompsbin/nsys" <<'EOF2'
#!/bin/bash
while (($#)) && [[ "$1" != golmpi ]]; do shift; done
exec "$@"
EOF2
# mpirun: its -n ranks here, each with Open MPI's local rank and size
cat >"$TMP/nompsbin/mpirun" <<'EOF2'
#!/bin/bash
p=1
while (($#)); do
    case "$1" in
    -n | -x | --map-by | --bind-to) [[ $1 == -n ]] && p=$2; shift 2 ;;
    -*) shift ;;
    *) break ;;
    esac
done
pids=()
for ((i = 0; i < p; i++)); do OMPI_COMM_WORLD_LOCAL_RANK=$i OMPI_COMM_WORLD_LOCAL_SIZE=$p "$@" & pids+=($!); done
rc=0
for pid in "${pids[@]}"; do wait "$pid" || rc=$?; done
exit "$rc"
EOF2
chmod +x "$TMP/nompsbin/"*
for tool in mpirun nvidia-smi golmpi nsys; do ln -s "$TMP/nompsbin/$tool" "$TMP/bin/$tool"; done

# run_case NAME SCRIPT RANKS GPUS PATHDIR [VAR=VALUE...] -- [golmpi options]: RC= the script's
# exit code; $TMP/NAME/log: the ranks' lines and the daemon's starts and quits; $TMP/NAME.out
run_case() {
    local name=$1 script=$2 ranks=$3 gpus=$4 bin=$5 dir=$TMP/$1
    shift 5
    local vars=()
    while (($#)) && [[ "$1" != -- ]]; do vars+=("$1"); shift; done
    shift
    mkdir -p "$dir/tmp"
    : >"$dir/log"
    RC=0
    env -u CUDA_VISIBLE_DEVICES -u SLURM_JOB_ID -u SLURM_NTASKS -u SLURM_JOB_NUM_NODES \
        -u CUDA_MPS_PIPE_DIRECTORY -u GOLMPI_MPS \
        PATH="$bin:$PATH" FAKE_GPUS="$gpus" FAKE_LOG="$dir/log" MPS_STANDIN_LOG="$dir/log" \
        TMPDIR="$dir/tmp" GOLMPI_LAUNCHER=mpirun GOLMPI_RANKS="$ranks" GOLMPI_SCALING_RANKS="$ranks" \
        GOLMPI_SCALING_MODES=strong GOLMPI_SCALING_REPEAT=1 GOLMPI_REQUEUE=0 GOLMPI_BIN=golmpi \
        GOLMPI_NSYS=nsys GOLMPI_MPS_WAIT=10 \
        GOLMPI_OUTPUT="$dir/out/life.h5" GOLMPI_OUTDIR="$dir/out" ${vars[@]+"${vars[@]}"} \
        timeout 150 bash "$script" "$@" >"$TMP/$name.out" 2>&1 || RC=$?
    awk '$1 == "start" { print $2 }' "$dir/log" >>"$TMP/pids"
}
count() { grep -c "$1" "$TMP/$2/log"; }
# launches NAME: the launches of golmpi the case's script made (its "+ ... golmpi ..." lines:
# scaling.sbatch launches a point's --tune run before it); 1 where it printed none
launches() {
    local n
    n=$(grep -c '^+ .* golmpi ' "$TMP/$1.out" 2>/dev/null) || n=0
    ((n > 0)) || n=1
    echo "$n"
}
# want_mps NAME RANKS: one daemon a launch started and quit, in the launch's own directory under
# the case's TMPDIR; every rank found its launch's answering; each daemon's process and directory
# gone after
want_mps() {
    local log=$TMP/$1/log pid n
    n=$(launches "$1")
    [[ $(count '^start ' "$1") == "$n" && $(count '^quit ' "$1") == "$n" ]] ||
        fail "$1: want $n daemon(s) started and stopped, one a launch; the log: $(cat "$log"; tail -n 20 "$TMP/$1.out")"
    [[ $(count "^rank mps-on $TMP/$1/tmp/golmpi-mps\.[^ ]*/pipe$" "$1") == $(($2 * n)) ]] ||
        fail "$1: want $2 ranks a launch served by the launch's own daemon; the log: $(cat "$log")"
    for pid in $(awk '$1 == "start" { print $2 }' "$log"); do
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done # it answers, then ends
        ! kill -0 "$pid" 2>/dev/null || fail "$1: the daemon ($pid) still runs after the job"
    done
    [[ -z "$(ls "$TMP/$1/tmp" | grep golmpi-mps)" ]] || fail "$1: its directory left behind"
}
want_none() { # want_none NAME RANKS: no daemon started, every rank of every launch without one
    [[ $(count '^start ' "$1") == 0 && $(count '^rank mps-off$' "$1") == $(($2 * $(launches "$1"))) ]] ||
        fail "$1: want no MPS; exit $RC; the log: $(cat "$TMP/$1/log"; tail -n 20 "$TMP/$1.out")"
}

first=1
for script in "$@"; do
    s=$(basename "$script")
    run_case "$s-start" "$script" 4 1 "$TMP/bin" --
    [[ $RC == 0 ]] || fail "$s: 4 ranks on 1 GPU: exit $RC: $(tail -n 20 "$TMP/$s-start.out")"
    want_mps "$s-start" 4
    echo "test_jobs_mps: ok: $s: 4 ranks on 1 GPU: a daemon of the launch's own, on for every rank, gone after"

    run_case "$s-off" "$script" 4 1 "$TMP/bin" GOLMPI_MPS=0 --
    [[ $RC == 0 ]] || fail "$s: GOLMPI_MPS=0: exit $RC"
    want_none "$s-off" 4
    echo "test_jobs_mps: ok: $s: GOLMPI_MPS=0: no MPS"

    run_case "$s-failed" "$script" 4 1 "$TMP/bin" FAKE_RANK_RC=3 --
    [[ $RC == 3 ]] || fail "$s: ranks that exit 3: the script exits $RC"
    want_mps "$s-failed" 4
    echo "test_jobs_mps: ok: $s: ranks that fail (exit 3): the daemon stopped, exit 3"

    ((first)) || continue
    first=0
    run_case "$s-cpu" "$script" 4 1 "$TMP/bin" -- --backend cpu
    [[ $RC == 0 ]] || fail "$s: --backend cpu: exit $RC"
    want_none "$s-cpu" 4
    grep -q golmpi_mps_node "$TMP/$s-cpu.out" && fail "$s: --backend cpu: ranks wrapped for MPS"
    echo "test_jobs_mps: ok: $s: --backend cpu: no MPS"

    run_case "$s-enough" "$script" 2 2 "$TMP/bin" --
    [[ $RC == 0 ]] || fail "$s: 2 ranks on 2 GPUs: exit $RC"
    want_none "$s-enough" 2
    run_case "$s-forced" "$script" 2 2 "$TMP/bin" GOLMPI_MPS=1 --
    [[ $RC == 0 ]] || fail "$s: GOLMPI_MPS=1: exit $RC"
    want_mps "$s-forced" 2
    echo "test_jobs_mps: ok: $s: a GPU a rank: no MPS (auto), MPS with GOLMPI_MPS=1"

    run_case "$s-nomps" "$script" 4 1 "$TMP/nompsbin" --
    [[ $RC == 0 ]] || fail "$s: no nvidia-cuda-mps-control: exit $RC: $(tail -n 20 "$TMP/$s-nomps.out")"
    want_none "$s-nomps" 4
    echo "test_jobs_mps: ok: $s: without nvidia-cuda-mps-control the run goes on"

    run_case "$s-nostart" "$script" 4 1 "$TMP/bin" MPS_STANDIN_FAIL=1 --
    [[ $RC == 0 ]] || fail "$s: a daemon that does not start: exit $RC"
    want_none "$s-nostart" 4
    [[ $(grep -c "did not start" "$TMP/$s-nostart.out") == 1 ]] ||
        fail "$s: a daemon that does not start: want one line saying so: $(cat "$TMP/$s-nostart.out")"
    echo "test_jobs_mps: ok: $s: a daemon that does not start: one line, the run goes on without MPS"

    # a daemon the user points to with CUDA_MPS_PIPE_DIRECTORY, answering: used and left running
    mkdir -p "$TMP/user/pipe"
    CUDA_MPS_PIPE_DIRECTORY=$TMP/user/pipe MPS_STANDIN_LOG=$TMP/user.log "$TMP/bin/nvidia-cuda-mps-control" -d
    # (-d returns before the daemon listens and logs its start: its id, for the exit, once logged)
    for _ in $(seq 100); do [[ -s "$TMP/user.log" ]] && break; sleep 0.1; done
    awk '{ print $2 }' "$TMP/user.log" >>"$TMP/pids"
    run_case "$s-user" "$script" 4 1 "$TMP/bin" CUDA_MPS_PIPE_DIRECTORY="$TMP/user/pipe" --
    [[ $RC == 0 && $(count '^start ' "$s-user") == 0 &&
        $(count "^rank mps-on $TMP/user/pipe$" "$s-user") == $((4 * $(launches "$s-user"))) ]] ||
        fail "$s: the user's daemon: exit $RC, the log: $(cat "$TMP/$s-user/log")"
    CUDA_MPS_PIPE_DIRECTORY=$TMP/user/pipe "$TMP/bin/nvidia-cuda-mps-control" <<<get_server_list >/dev/null ||
        fail "$s: the user's daemon was stopped"
    echo "test_jobs_mps: ok: $s: a daemon on the user's CUDA_MPS_PIPE_DIRECTORY: used, left running"
done

# The wrapper alone, under srun's variables: 3 ranks on node nB, the second node of "3(x2)"
mkdir -p "$TMP/srun/tmp"
: >"$TMP/srun/log"
for i in 0 1 2; do
    env -u CUDA_VISIBLE_DEVICES -u CUDA_MPS_PIPE_DIRECTORY -u OMPI_COMM_WORLD_LOCAL_RANK \
        PATH="$TMP/bin:$PATH" FAKE_GPUS=1 FAKE_LOG="$TMP/srun/log" MPS_STANDIN_LOG="$TMP/srun/log" \
        TMPDIR="$TMP/srun/tmp" SLURM_JOB_ID=7 SLURM_STEP_ID=0 SLURM_LOCALID=$i SLURMD_NODENAME=nB \
        SLURM_STEP_TASKS_PER_NODE="3(x2)" SLURM_NODEID=1 GOLMPI_MPS=auto GOLMPI_MPS_WAIT=10 \
        "$wrapper" golmpi >>"$TMP/srun.out" 2>&1 &
done
wait
awk '$1 == "start" { print $2 }' "$TMP/srun/log" >>"$TMP/pids"
want_mps srun 3
grep -q "golmpi-mps\.[0-9]*\.7\.0\.nB/pipe" "$TMP/srun/log" || fail "srun: the directory names not the job, step and node"
echo "test_jobs_mps: ok: srun's local ranks: one daemon for the node's 3 ranks, named by job, step and node"
# Slurm's own MPS serves the job (gres/mps sets CUDA_MPS_ACTIVE_THREAD_PERCENTAGE): none of ours
mkdir -p "$TMP/gres/tmp"
: >"$TMP/gres/log"
env -u CUDA_VISIBLE_DEVICES -u CUDA_MPS_PIPE_DIRECTORY PATH="$TMP/bin:$PATH" FAKE_GPUS=1 \
    FAKE_LOG="$TMP/gres/log" MPS_STANDIN_LOG="$TMP/gres/log" TMPDIR="$TMP/gres/tmp" SLURM_JOB_ID=8 \
    CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25 OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=4 \
    GOLMPI_MPS=auto "$wrapper" golmpi >"$TMP/gres.out" 2>&1 || fail "gres/mps: exit $?"
want_none gres 1
echo "test_jobs_mps: ok: Slurm's own MPS (--gres=mps): no daemon of ours"
echo "test_jobs_mps: PASS"
