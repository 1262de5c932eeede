# golmpi's job library: sourced by every job script (jobs/*.sbatch, jobs/*.sh), and by
# scripts/gpu_check.sh and bench/gpu_table.sh for MPS. It holds what the scripts share: the command
# echo, the user's options over the script's defaults, MPS on each node, the checkpoint signals,
# the launcher watch and the requeue. A script finds it through GOLMPI_SHARE (scripts/env.sh, or the
# installed <prefix>/share/golmpi/env.sh, exports it; sbatch passes it on to the job), else beside
# itself. jobs/golmpi_mps_node.sh runs it around each rank.
# shellcheck shell=bash disable=SC2154  # cmd, golmpi, child, ...: the sourcing script's
golmpi_job_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

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
# without it they take turns on the GPU, 4-17x slower (docs/GPU.md, "Ranks sharing a GPU"). The
# daemon lives inside the launch that runs the ranks: jobs/golmpi_mps_node.sh wraps each rank, and
# on each node where the ranks outnumber the GPUs they see, the first local rank starts a daemon in
# a directory private to the launch (pipe and log under TMPDIR, mode 700), the others wait for it,
# and the last to leave stops it. A daemon outside the ranks' step would be ended by Slurm when its
# own step ends, and one in the default /tmp/nvidia-mps would serve every user's CUDA processes.
# GOLMPI_MPS: auto (the default) as said; 1 on every GPU node even with a GPU a rank; 0 never.
: "${GOLMPI_MPS:=auto}"
: "${GOLMPI_MPS_WAIT:=30}" # seconds the daemon may take to answer, and the ranks to wait for it
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
wait_until() { # wait_until SECONDS COMMAND...: 0 once COMMAND succeeds, 1 when SECONDS pass first
    local end=$((SECONDS + $1))
    shift
    until "$@"; do
        ((SECONDS < end)) || return 1
        sleep 0.2
    done
}
mps_answers() { # mps_answers PIPE_DIR: a control daemon answers on that pipe directory
    [[ -S "$1/control" ]] &&
        CUDA_MPS_PIPE_DIRECTORY=$1 timeout 5 nvidia-cuda-mps-control <<<get_server_list >/dev/null 2>&1
}
mps_daemon_start() { # mps_daemon_start DIR: a daemon with pipe and log in DIR, answering (or 1)
    mkdir -m 700 "$1" "$1/pipe" "$1/log" && # a directory already there (not ours?) is refused
        CUDA_MPS_PIPE_DIRECTORY=$1/pipe CUDA_MPS_LOG_DIRECTORY=$1/log nvidia-cuda-mps-control -d &&
        wait_until "$GOLMPI_MPS_WAIT" mps_answers "$1/pipe"
}
mps_daemon_stop() { # mps_daemon_stop DIR: the daemon of DIR told to quit, DIR removed
    CUDA_MPS_PIPE_DIRECTORY=$1/pipe timeout 10 nvidia-cuda-mps-control <<<quit >/dev/null 2>&1 ||
        echo "golmpi job: stopping the MPS control daemon in $1 failed" >&2
    rm -rf "$1"
}
# A daemon for the runs of one script on this machine (scripts/gpu_check.sh, bench/gpu_table.sh),
# in a directory of its own, exported to the ranks it starts.
mps_host_dir=""
mps_host_up() { # mps_host_up: a daemon up and CUDA_MPS_PIPE_DIRECTORY exported, or 1 (a line why)
    mps_host_dir=${TMPDIR:-/tmp}/golmpi-mps.$(id -u).$$.$(hostname -s)
    if ! command -v nvidia-cuda-mps-control >/dev/null; then
        echo "golmpi: no nvidia-cuda-mps-control: the ranks sharing a GPU run without MPS" >&2
    elif mps_daemon_start "$mps_host_dir"; then
        export CUDA_MPS_PIPE_DIRECTORY=$mps_host_dir/pipe CUDA_MPS_LOG_DIRECTORY=$mps_host_dir/log
        return 0
    else
        echo "golmpi: the MPS control daemon did not start (see $mps_host_dir/log); the ranks sharing a GPU run without MPS" >&2
    fi
    mps_host_dir=""
    return 1
}
mps_host_down() { # mps_host_down: the daemon mps_host_up started, stopped; no other
    [[ -n "$mps_host_dir" ]] || return 0
    mps_daemon_stop "$mps_host_dir"
    mps_host_dir=""
    unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
}
mps_wrapper() { # mps_wrapper BACKEND: mps_wrap= the per-rank wrapper, empty where no MPS can help
    mps_wrap=()
    [[ "$GOLMPI_MPS" != 0 && "$1" != cpu ]] || return 0
    if ! command -v nvidia-cuda-mps-control >/dev/null; then
        [[ "$GOLMPI_MPS" != 1 ]] ||
            echo "golmpi job: GOLMPI_MPS=1, but nvidia-cuda-mps-control is not on PATH: no MPS" >&2
        return 0
    fi
    mps_wrap=("$golmpi_job_dir/golmpi_mps_node.sh")
    # the wrapped ranks' settings; one directory name a launch, so a rerun never meets a stale one
    export GOLMPI_MPS GOLMPI_MPS_WAIT
    export GOLMPI_MPS_RUN="${SLURM_JOB_ID:-local}.${SLURM_RESTART_COUNT:-0}.$$.$SECONDS.$RANDOM"
    local where="each node whose ranks outnumber its GPUs"
    [[ "$GOLMPI_MPS" != 1 ]] || where="each GPU node"
    echo "golmpi job: MPS (GOLMPI_MPS=$GOLMPI_MPS): on $where, the first rank starts a daemon of this launch's own, the last stops it"
}
mps_local_rank() { # local_rank= this rank's index on its node, local_size= the node's ranks (or 1)
    if [[ -n "${OMPI_COMM_WORLD_LOCAL_RANK:-}" ]]; then # Open MPI's mpirun, under Slurm too
        local_rank=$OMPI_COMM_WORLD_LOCAL_RANK local_size=${OMPI_COMM_WORLD_LOCAL_SIZE:-1}
    elif [[ -n "${MPI_LOCALRANKID:-}" ]]; then # MPICH's hydra
        local_rank=$MPI_LOCALRANKID local_size=${MPI_LOCALNRANKS:-1}
    elif [[ -n "${SLURM_LOCALID:-}" && -n "${SLURM_STEP_TASKS_PER_NODE:-}" ]]; then # srun
        local_rank=$SLURM_LOCALID
        local_size=$(tasks_on_node "$SLURM_STEP_TASKS_PER_NODE" "${SLURM_NODEID:-0}") || return 1
    else
        return 1
    fi
}
tasks_on_node() { # tasks_on_node "2(x3),1" I: the I-th node's count in Slurm's compressed list
    local item n=0 count times
    for item in ${1//,/ }; do
        count=${item%%(*} times=1
        [[ "$item" == *"(x"* ]] && times=${item#*(x} times=${times%)}
        if (($2 < n + times)); then echo "$count"; return 0; fi
        n=$((n + times))
    done
    return 1
}
mps_node_run() { # mps_node_run COMMAND...: one rank's COMMAND, under this node's MPS as needed
    local local_rank local_size gpus node dir child rc
    node=${SLURMD_NODENAME:-$(hostname -s)}
    mps_local_rank || exec "$@"
    # Slurm's own MPS (sbatch --gres=mps) serves the job: it sets the ranks' share of the GPU
    [[ -z "${CUDA_MPS_ACTIVE_THREAD_PERCENTAGE:-}" || -z "${SLURM_JOB_ID:-}" ]] || exec "$@"
    # a daemon the user or the site points to, answering
    [[ -z "${CUDA_MPS_PIPE_DIRECTORY:-}" ]] || ! mps_answers "$CUDA_MPS_PIPE_DIRECTORY" || exec "$@"
    gpus=$(gpus_seen)
    case "$GOLMPI_MPS" in
    1) ((gpus > 0)) || exec "$@" ;;
    auto) ((gpus > 0 && local_size > gpus)) || exec "$@" ;;
    *) exec "$@" ;;
    esac
    dir=${TMPDIR:-/tmp}/golmpi-mps.$(id -u).${GOLMPI_MPS_RUN:-${SLURM_JOB_ID:-0}.${SLURM_STEP_ID:-0}}.$node
    if ((local_rank == 0)); then
        echo "golmpi job: $node: $local_size ranks on $gpus GPU(s): starting MPS (nvidia-cuda-mps-control -d, pipe and log in $dir)"
        if mps_daemon_start "$dir"; then : >"$dir/up"; else
            mkdir -p "$dir" && : >"$dir/failed"
            echo "golmpi job: $node: the MPS control daemon did not start (see $dir/log); the ranks on $node run without MPS" >&2
        fi
    elif ! wait_until "$GOLMPI_MPS_WAIT" eval '[[ -e "$dir/up" || -e "$dir/failed" ]]'; then
        echo "golmpi job: $node: local rank $local_rank: no MPS control daemon after $GOLMPI_MPS_WAIT s; this rank runs without MPS" >&2
    fi
    if [[ -e "$dir/up" ]]; then
        export CUDA_MPS_PIPE_DIRECTORY=$dir/pipe CUDA_MPS_LOG_DIRECTORY=$dir/log
    else
        unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
    fi
    # the rank itself: the launcher's signals passed on (USR1 asks golmpi to checkpoint)
    local signalled=0
    "$@" &
    child=$!
    trap 'signalled=1; kill -USR1 $child 2>/dev/null' USR1
    trap 'signalled=1; kill -TERM $child 2>/dev/null' TERM INT HUP
    while :; do
        signalled=0
        wait "$child" && rc=0 || rc=$?
        ((signalled == 1)) || break
    done
    mps_node_leave
    return "$rc"
}
mps_node_leave() { # the node's last rank to leave stops the daemon (under a lock: one is last)
    mkdir -p "$dir"
    (
        flock 9
        echo "$local_rank" >>"$dir/left"
        (($(wc -l <"$dir/left") >= local_size)) || exit 0
        if [[ -e "$dir/up" ]]; then
            echo "golmpi job: $node: stopping the MPS control daemon (echo quit | nvidia-cuda-mps-control)"
            mps_daemon_stop "$dir"
        fi
    ) 9>>"$dir/lock"
}

# ---- Checkpoint: stop in time, requeue, resume --------------------------------------------
# Slurm sends USR1 to this script (#SBATCH --signal=B:USR1@120; a time limit or scancel sends
# TERM). The trap passes USR1 to the launcher, which forwards it to every rank (srun and mpirun
# both do; mpirun kills its ranks 1 s after a TERM, so it is never sent TERM): golmpi writes the
# generation it reached as the last frame and exits 4. The job then requeues itself
# (GOLMPI_REQUEUE=0: it does not), and the requeued job, with the same job id and so the same
# GOLMPI_OUTDIR, finds the index and continues its series: --restart OUT --output OUT, with the
# same --steps, ends where a run that never stopped ends (README, Checkpoint and resume).
: "${GOLMPI_REQUEUE:=1}"
child="" signalled=0 stop_asked=0 repeater=""
forward_stop() {
    signalled=1 stop_asked=1
    echo "golmpi job: signal received at $(date -Is); asking golmpi to checkpoint"
    ! ranks_up || kill -USR1 "$child" 2>/dev/null || true
    # Ask again every 5 s until the launcher is gone, golmpi taking a repeated USR1 as the same
    # request; and not before golmpi's ranks are up: a USR1 that reaches mpirun before it has
    # started them kills it (exit 138), and the run with it (seen under load, where Slurm's USR1
    # came as the script started).
    if [[ -n "$child" && -z "$repeater" ]]; then
        repeat_stop &
        repeater=$!
    fi
}
repeat_stop() {
    while kill -0 "$child" 2>/dev/null; do
        if ranks_up; then kill -USR1 "$child" 2>/dev/null || true; sleep 5; else sleep 0.5; fi
    done
}
ranks_up() { # golmpi's ranks have started: its output's lock is this launch's (no output: assume so)
    [[ -n "$child" ]] || return 1
    user_gives --no-output && return 0
    [[ "${GOLMPI_OUTPUT%.h5}.lock" -nt "$watch_dir/launch" ]]
}

# ---- The ranks' fatal messages: golmpi also writes each one to the output's log (one line: UTC
# time, rank, host, message, exit code), beside the lock, which outlives the node whose launcher
# carried the rank's stderr. The script shows the log's lines it has not shown before: those of an
# earlier attempt whose batch node was lost (at the start), and those of this attempt (at the end).
run_log_open() { # run_log_open: the log of GOLMPI_OUTPUT; its lines of an earlier attempt shown
    run_log=${GOLMPI_OUTPUT%.h5}.log
    run_log_shown=$(dirname "$run_log")/.$(basename "$run_log").shown # bytes of it shown so far
    show_run_log "the ranks' messages of an earlier attempt"
}
show_run_log() { # show_run_log WHAT: the log's lines not shown yet, headed "WHAT (the log):"
    [[ -f "$run_log" ]] || return 0
    local from=0 size
    [[ -f "$run_log_shown" ]] && from=$(<"$run_log_shown")
    size=$(stat -c %s "$run_log") || return 0
    ((size >= from)) || from=0 # a new log in its place
    ((size > from)) || return 0
    echo "golmpi job: $1 ($run_log):"
    tail -c "+$((from + 1))" "$run_log" | head -c "$((size - from))" | sed 's/^/  /'
    echo "$size" >"$run_log_shown"
}

# ---- The launcher ends when its ranks have: after a node is lost, the ranks left exit (golmpi's
# --timeout), but mpirun waits for the lost node's daemon, as it would over ssh, until Slurm
# declares the node down (Open MPI 4.1's TCP keepalive does not end that wait: it is suspended
# while mpirun's order to kill the ranks sits unacknowledged on the lost daemon's socket; jobs/
# README.md). So the launcher's stderr passes through this script: once the launcher reports that
# the ranks ended with an exit code other than 0 or 4 (mpirun's "MPI_ABORT was invoked ... with
# errorcode N" or "Exit code: N", srun's "task N: Exited with exit code N"), or a rank's line in
# the output's log says it (" (exit N)": mpirun can lose the ranks' messages, as "ORTE_ERROR_LOG:
# Data unpack had inadequate space" when two ranks abort at once), it has GOLMPI_LAUNCHER_GRACE
# seconds (15) to exit on its own; then the script ends it (TERM, KILL 5 s later) and takes the
# ranks' code as its own.
watch_start() { # watch_start: the watch directory (removed at exit) and the watcher on its fifo
    : "${GOLMPI_LAUNCHER_GRACE:=15}"
    watch_dir=$(mktemp -d "${TMPDIR:-/tmp}/golmpi-job.XXXXXX")
    trap 'rm -rf "$watch_dir"' EXIT
    mkfifo "$watch_dir/stderr"
    log_at_launch=$(stat -c %s "$run_log" 2>/dev/null || echo 0)
    watch_launcher <"$watch_dir/stderr" &
    watcher=$!
}
ranks_code() { # code= the ranks' exit code in a line of the launcher's stderr, if it reports one
    [[ "$1" =~ with\ errorcode\ ([0-9]+)|^\ *Exit\ code:\ +([0-9]+)|task\ [0-9]+:\ Exited\ with\ exit\ code\ ([0-9]+) ]] || return 1
    code=${BASH_REMATCH[1]}${BASH_REMATCH[2]}${BASH_REMATCH[3]}
}
log_code() { # code= the exit code of a line the ranks added to the output's log since the launch
    local size
    size=$(stat -c %s "$run_log" 2>/dev/null) && ((size > log_at_launch)) || return 1
    [[ "$(tail -c "+$((log_at_launch + 1))" "$run_log")" =~ \(exit\ ([0-9]+)\) ]] || return 1
    code=${BASH_REMATCH[1]}
}
watch_launcher() { # passes the launcher's stderr on; ends the launcher GRACE s after the ranks
    # it must outlive the launcher: a launcher whose stderr reader has gone dies of SIGPIPE
    set +e
    trap '' TERM USR1 INT HUP
    local line code="" since=0 ended=0 pid r
    while :; do
        line=""
        if IFS= read -r -t 1 line; then
            printf '%s\n' "$line" >&2
        else
            r=$?
            printf '%s' "$line" >&2 # a line cut by the 1 s timeout: its rest comes next
            ((r > 128)) || return 0 # the end: every writer has gone
        fi
        if [[ -z "$code" ]] && { ranks_code "$line" || log_code; } && [[ $code != 0 && $code != 4 ]]; then
            since=$SECONDS
            echo "$code" >"$watch_dir/ranks_rc"
        elif [[ "${code:-0}" == 0 || $code == 4 ]]; then
            code=""
        fi
        [[ -n "$code" ]] && ((SECONDS - since >= GOLMPI_LAUNCHER_GRACE + 5 * ended)) || continue
        pid=$(cat "$watch_dir/launcher.pid" 2>/dev/null) && kill -0 "$pid" 2>/dev/null || continue
        if ((ended == 0)); then
            echo "golmpi job: the ranks ended with exit $code; ${cmd[0]} still runs $GOLMPI_LAUNCHER_GRACE s later (a lost node's daemon?): ending it" >&2
            : >"$watch_dir/ended"
            kill -TERM "$pid" 2>/dev/null
        else
            kill -KILL "$pid" 2>/dev/null
        fi
        ended=$((ended + 1))
    done
}

job_launch() { # job_launch: runs cmd with its stderr watched; rc= its exit code (or the ranks')
    [[ ${#resume[@]} == 0 ]] || echo "golmpi job: $GOLMPI_OUTPUT exists: resuming its series"
    rc=0
    : >"$watch_dir/launch" # older than golmpi's lock once its ranks are up
    "${cmd[@]}" 2>"$watch_dir/stderr" &
    child=$!
    echo "$child" >"$watch_dir/launcher.pid"
    [[ $signalled == 0 ]] || forward_stop # a signal came before the launch
    # A trapped signal ends `wait` early; wait again until the launcher itself has exited.
    while :; do
        signalled=0
        wait "$child" && rc=0 || rc=$?
        [[ $signalled == 1 ]] || break
    done
    [[ -z "$repeater" ]] || kill "$repeater" 2>/dev/null || true
    # the rest of the launcher's stderr; a daemon of a launcher that was ended may hold it open
    for _ in $(seq 20); do kill -0 "$watcher" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$watcher" 2>/dev/null || true # it ignores TERM
    if [[ -e "$watch_dir/ended" ]]; then
        echo "golmpi job: ${cmd[0]} ended by this script (exit $rc); the ranks' exit code $(<"$watch_dir/ranks_rc") is the job's"
        rc=$(<"$watch_dir/ranks_rc")
    fi
}

# A node that fails is requeued by Slurm itself (--requeue), which may come first: then the job is
# pending again already, and scontrol refuses.
requeue_job() {
    local err
    # The requeue ends this instance of the job: Slurm sends TERM to every process of it, scontrol
    # too, which without TERM ignored could die before its answer and read as a failure.
    err=$(trap '' TERM; scontrol requeue "$SLURM_JOB_ID" 2>&1) && return 0
    if [[ "$err" == *"pending execution"* ]]; then
        echo "golmpi job: Slurm has requeued job $SLURM_JOB_ID already"
    else
        echo "golmpi job: scontrol requeue failed ($err); resubmit to resume" >&2
    fi
}
job_requeue_on_stop() { # job_requeue_on_stop: requeue when golmpi checkpointed (exit 4)
    echo "golmpi exited with $rc; output: $GOLMPI_OUTPUT"
    # 4: checkpointed. Above 128 after a stop was asked: the launcher died of the signal before it
    # could forward it (it had just started); the output, if any, is whole up to its index.
    if [[ ($rc == 4 || ($stop_asked == 1 && $rc -gt 128)) && "$GOLMPI_REQUEUE" == 1 &&
          -n "${SLURM_JOB_ID:-}" ]]; then
        echo "golmpi job: stopped (exit $rc); requeueing job $SLURM_JOB_ID to resume the series"
        requeue_job
    fi
}

# ---- settings: environment variables, with defaults (each script sets its own size, steps, ...
# and backend first; jobs/README.md, "Settings", lists them all)
job_settings() { # job_settings NAME=VALUE...: GOLMPI_NAME=VALUE where the user left it unset
    local kv
    for kv in "$@"; do
        [[ -n "$(eval "echo \${GOLMPI_${kv%%=*}:-}")" ]] || printf -v "GOLMPI_${kv%%=*}" %s "${kv#*=}"
    done
}
job_defaults() { # job_defaults: the settings every script shares, where the user left them unset
    : "${GOLMPI_BIN:=golmpi}"              # the golmpi executable (path or name in PATH)
    : "${GOLMPI_OUTDIR:=${SLURM_SUBMIT_DIR:-$PWD}/golmpi-runs/${SLURM_JOB_ID:-local-$$}}"
    : "${GOLMPI_OUTPUT:=$GOLMPI_OUTDIR/life.h5}"       # --output: the index; chunks beside it
    : "${GOLMPI_STATS:=${GOLMPI_OUTPUT%.h5}.stats.json}" # --stats
    : "${GOLMPI_ARGS:=}"                   # more golmpi options, split on blanks
    : "${GOLMPI_SRUN_MPI:=pmix}"           # srun --mpi=...; see `srun --mpi=list`
    : "${GOLMPI_CPU_BIND:=cores}"          # srun --cpu-bind=...
    : "${GOLMPI_GPU_BIND:=none}"           # srun --gpu-bind=...: none keeps NCCL's P2P (jobs/README.md)
    : "${GOLMPI_MPIRUN:=mpirun}"           # the mpirun executable
    : "${GOLMPI_MPIRUN_FLAGS:=}"           # more mpirun options, split on blanks
    : "${GOLMPI_OVERSUBSCRIBE:=0}"         # mpirun: 1 allows more ranks than cores, unbound
    : "${GOLMPI_DRY_RUN:=0}"               # 1: print the command, do not run it
    # srun inside a Slurm job, mpirun elsewhere, unless the script or the user says.
    if [[ -z "${GOLMPI_LAUNCHER:-}" ]]; then
        if [[ -n "${SLURM_JOB_ID:-}" ]]; then GOLMPI_LAUNCHER=srun; else GOLMPI_LAUNCHER=mpirun; fi
    fi
    # OpenMP threads: one per core given to the task (the CUDA backend uses few host threads)
    export OMP_NUM_THREADS="${OMP_NUM_THREADS:-${SLURM_CPUS_PER_TASK:-1}}"
    export OMP_PLACES="${OMP_PLACES:-cores}" OMP_PROC_BIND="${OMP_PROC_BIND:-close}"
}

# ---- the launcher: srun (PMIx) by default, mpirun inside the same allocation otherwise --------
job_launcher() { # job_launcher RANKS [P]: launcher= GOLMPI_LAUNCHER's, for P ranks if given, else
    # the job's tasks (RANKS outside Slurm); each rank gets GOLMPI_THREADS cores (--cpus-per-task)
    local v threads=${GOLMPI_THREADS:-${SLURM_CPUS_PER_TASK:-}}
    case "$GOLMPI_LAUNCHER" in
    srun)
        launcher=(srun "--mpi=$GOLMPI_SRUN_MPI" "--cpu-bind=$GOLMPI_CPU_BIND")
        [[ -z "${2:-}" ]] || launcher+=(-n "$2")
        # srun (22.05+) no longer inherits --cpus-per-task from the batch job: pass it on.
        [[ -z "$threads" ]] || launcher+=("--cpus-per-task=$threads")
        # Every rank sees every GPU of its node and picks node-local rank % GPUs (cuda/device.c),
        # so NCCL keeps P2P/NVLink; per-task GPU binding would hide the peers (jobs/README.md).
        if [[ -n "${SLURM_GPUS_PER_NODE:-}" && "${SLURM_GPUS_PER_NODE##*:}" != 0 ]]; then
            launcher+=("--gpus-per-node=$SLURM_GPUS_PER_NODE" "--gpu-bind=$GOLMPI_GPU_BIND")
        fi
        ;;
    mpirun)
        # Open MPI's mpirun reads the Slurm allocation itself; ranks pick GPU (local rank % GPUs).
        launcher=("$GOLMPI_MPIRUN" -n "${2:-${SLURM_NTASKS:-$1}}")
        for v in OMP_NUM_THREADS OMP_PLACES OMP_PROC_BIND; do launcher+=(-x "$v"); done
        if [[ "$GOLMPI_OVERSUBSCRIBE" == 1 ]]; then
            launcher+=(--oversubscribe --bind-to none)
        else
            launcher+=(--map-by "slot:PE=${threads:-1}" --bind-to core)
        fi
        [[ "$(id -u)" != 0 ]] || launcher+=(--allow-run-as-root)
        launcher+=($GOLMPI_MPIRUN_FLAGS)
        ;;
    *)
        echo "error: GOLMPI_LAUNCHER must be srun or mpirun, not '$GOLMPI_LAUNCHER'" >&2
        exit 2
        ;;
    esac
}

# ---- The command: the user's options over the script's defaults, resumed where the job's output
# exists, each rank under jobs/golmpi_mps_node.sh where MPS may help; printed, then checked.
job_prepare() { # job_prepare ARGS...: golmpi= its command and cmd= the launch (launcher, then
    # the MPS wrapper, then job_tool if set, as nsys), resumed where job_resumes=1
    user_args=($GOLMPI_ARGS "$@")
    # the user's --output is where this job writes (and, requeued, resumes from)
    if user_output=$(user_value --output); then GOLMPI_OUTPUT=$user_output; fi
    resume=()
    [[ ${job_resumes:-0} == 1 && -f "$GOLMPI_OUTPUT" ]] && ! user_gives --restart --no-output &&
        resume=(--restart "$GOLMPI_OUTPUT")
    golmpi=("$GOLMPI_BIN")
    with_defaults --backend "$GOLMPI_BACKEND" --size "$GOLMPI_SIZE" --steps "$GOLMPI_STEPS" \
        --save-every "$GOLMPI_SAVE_EVERY" --chunk "$GOLMPI_CHUNK" --output "$GOLMPI_OUTPUT" \
        ${resume[@]+"${resume[@]}"} --stats "$GOLMPI_STATS" --
    echo "golmpi job ${SLURM_JOB_ID:-(no job)} on ${SLURM_JOB_NODELIST:-$(hostname -s)}: ${SLURM_NTASKS:-?} ranks, $(date -Is)"
    mps_wrapper "$(user_value --backend || echo "$GOLMPI_BACKEND")"
    cmd=("${launcher[@]}" ${mps_wrap[@]+"${mps_wrap[@]}"} ${job_tool[@]+"${job_tool[@]}"} "${golmpi[@]}")
    show_cmd "${cmd[@]}"
    [[ "$GOLMPI_DRY_RUN" != 1 ]] || exit 0
    if ! command -v "$GOLMPI_BIN" >/dev/null; then
        echo "error: golmpi not found: '$GOLMPI_BIN' (set GOLMPI_BIN)" >&2
        exit 2
    fi
    mkdir -p "$(dirname "$GOLMPI_OUTPUT")"
}

# ---- A Slurm job from start to end: the launch watched, stopped in time and requeued, then the
# script's exit with golmpi's code. The script sets its settings and the early stop's trap first.
job_slurm_run() { # job_slurm_run ARGS...: the job's golmpi with ARGS (its options); exits
    job_defaults
    job_launcher "${GOLMPI_RANKS:-2}"
    trap forward_stop USR1 TERM
    ((early_stop == 0)) || forward_stop
    job_resumes=1
    job_prepare "$@"
    run_log_open
    watch_start
    job_launch
    show_run_log "the ranks' messages"
    job_requeue_on_stop
    job_requeue_on_peer_lost
    exit "$rc"
}
# 6: a peer stopped answering for --timeout seconds (a node lost, a link cut) and every rank left;
# the output holds every finished chunk. Requeued, the job resumes the series on the nodes Slurm
# gives it then (sbatch -N 2-4 lets it run on fewer), at most GOLMPI_PEER_REQUEUES times (0, the
# default of the one-node scripts: never).
job_requeue_on_peer_lost() {
    if [[ $rc == 6 && "$GOLMPI_REQUEUE" == 1 && -n "${SLURM_JOB_ID:-}" ]] && ((${GOLMPI_PEER_REQUEUES:-0} > 0)); then
        if ((${SLURM_RESTART_COUNT:-0} < GOLMPI_PEER_REQUEUES)); then
            echo "golmpi job: a peer stopped answering (exit 6); requeueing job $SLURM_JOB_ID to resume the series"
            requeue_job
        else
            echo "golmpi job: a peer stopped answering (exit 6) after $SLURM_RESTART_COUNT requeues; not requeued again" >&2
        fi
    fi
}
