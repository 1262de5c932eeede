#!/bin/bash
# golmpi on several nodes under a real Slurm: three nodes made of network namespaces on this
# machine (tests/cluster/cluster.sh: own host names n1..n3, own addresses on a private subnet,
# one slurmd each, slurmctld, munge), jobs/slurm_multinode.sbatch submitted with sbatch -N 2 and
# -N 3 (CPU backend, 2 ranks a node), the frames checked against the reference and against a
# one-node run, the start-up table's hosts and local ranks checked, and the halo traffic between
# nodes shown to go over Open MPI's TCP BTL between the namespaces. Then MPS on every node of two
# jobs at once on the same nodes (a stand-in daemon: each job's own, alive while its ranks run, gone
# after). Then the same nodes without
# Slurm (mpirun --host n1:2,n2:2, its launch agent entering the namespaces); then the faults: a
# node lost mid-run under mpirun (every other rank exits with a message naming it; the series
# resumes on the nodes left, bit-identical to a run never interrupted), a node lost mid-run in a
# Slurm job (sbatch -N 2 on n1 and n2: the same, and the job is requeued and resumes on n1 and
# n3), and a link cut for longer than --timeout (the run ends and resumes). A cut shorter than
# --timeout, which the run must ride out, is the fault matrix's (cluster_cut_short_2nodes_mpirun,
# cluster_cut_short_3nodes_srun: tests/test_cluster_faults.sh), through the job script's mpirun and
# srun. Everything it makes is removed on exit, also on failure.
#
# The -N 2 and -N 3 jobs run twice: through the script's mpirun launcher (whose daemons srun
# starts) and through its srun --mpi=pmix (each node its own TmpFS: Slurm's PMIx plugin makes a
# directory per step there, which on a shared /tmp the second node found made already).
#
# Environment: GOLMPI_BIN, GOLMPI_SRC, GOLMPI_PYTHON (a python3 with h5py and numpy),
# GOLMPI_CLUSTER_KEEP=1 keeps the temp dir (the cluster itself is always taken down),
# GOLMPI_CLUSTER_ONLY=slurm|mps|mpirun|lose|requeue|cut runs one part (after the cluster is up),
# GOLMPI_CLUSTER_FAULTS=0 leaves out the fault parts (lose, requeue, cut; about 4 minutes).
# Exit 77 (skip) only where network namespaces cannot be made (not root, no permission); a missing
# ip, nsenter or unshare fails.
set -uo pipefail
export PATH="$PATH:/usr/sbin:/sbin"

SRC=${GOLMPI_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
# the job scripts find their library (jobs/golmpi_job.sh) through it; sbatch passes it on
export GOLMPI_SHARE=$SRC
BIN=${GOLMPI_BIN:-$SRC/build/golmpi}
PY=${GOLMPI_PYTHON:-python3}
HERE=$(cd "$(dirname "$0")" && pwd)
CLUSTER=$HERE/cluster/cluster.sh
T_START=$(date +%s)

say() { echo "test_cluster: [$(($(date +%s) - T_START)) s] $*"; }
die() {
    echo "test_cluster: FAIL: $*" >&2
    exit 1
}
skip() {
    echo "test_cluster: SKIP: $*"
    exit 77
}

# ---- can this machine make the nodes? --------------------------------------------------------
[[ "$(id -u)" == 0 ]] || skip "network namespaces and Slurm daemons need root"
# a missing command is a missing package (scripts/deps.txt), which fails; only a machine that
# cannot make namespaces skips
for c in ip nsenter unshare; do
    command -v "$c" >/dev/null || die "'$c' not found (iproute2, util-linux: scripts/deps.sh --test installs them)"
done
probe=gcprobe$$
ip netns add "$probe" 2>/tmp/golmpi-netns-probe.$$ || {
    reason=$(cat /tmp/golmpi-netns-probe.$$)
    rm -f /tmp/golmpi-netns-probe.$$
    skip "cannot make a network namespace here: $reason"
}
rm -f /tmp/golmpi-netns-probe.$$
if ! ip -n "$probe" link add veth0 type veth peer name veth1 2>/dev/null; then
    ip netns del "$probe"
    skip "cannot make veth links in a network namespace here"
fi
ip netns del "$probe"
unshare --uts true 2>/dev/null || skip "cannot make UTS namespaces here (host names)"

have_slurm() {
    local c
    for c in slurmctld slurmd sbatch scontrol sinfo munged; do command -v "$c" >/dev/null || return 1; done
}
if ! have_slurm && command -v apt-get >/dev/null; then
    say "installing slurm-wlm and munge"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge >/dev/null 2>&1 ||
        { apt-get update -q >/dev/null 2>&1 &&
          DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge >/dev/null 2>&1; }
fi
have_slurm || die "slurm-wlm / munge are not installed and could not be installed"
[[ -x "$BIN" ]] || die "golmpi not found at '$BIN' (set GOLMPI_BIN)"
"$PY" -c "import h5py, numpy" 2>/dev/null || die "'$PY' lacks h5py/numpy (set GOLMPI_PYTHON)"

# ---- the cluster: up now, down on any exit ----------------------------------------------------
TMP=$(mktemp -d /tmp/golmpi-cluster.XXXXXX)
chmod 755 "$TMP"
export GOLMPI_CLUSTER_DIR=$TMP/cluster GOLMPI_CLUSTER_PREFIX=gc$$ GOLMPI_CLUSTER_NODES=3
SUBNET=10.21.0
export GOLMPI_CLUSTER_SUBNET=$SUBNET GOLMPI_CLUSTER_SLURMD_TIMEOUT=40
BG=() # background processes of this script

finish() {
    local rc=$? pid
    for pid in "${BG[@]}"; do kill -KILL "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
    if [[ $rc != 0 && $rc != 77 ]]; then
        for f in "$TMP"/*.out "$TMP"/cluster/slurmctld.log; do
            [[ -f "$f" ]] || continue
            echo "---- $f (last 30 lines)"
            tail -n 30 "$f"
        done
    fi
    [[ "${GOLMPI_CLUSTER_KEEP:-0}" == 1 ]] && cp "$TMP"/cluster/*.log "$TMP/" 2>/dev/null
    # the MPS directories of a part that failed (the jobs' ranks remove their own)
    [[ ! -f "$TMP/mps-daemons.log" ]] || awk '{ print $3 }' "$TMP/mps-daemons.log" | sed 's,/pipe$,,' |
        grep '/golmpi-mps\.' | while read -r d; do rm -rf "$d"; done
    bash "$CLUSTER" down 2>&1 | grep -v '^cluster: down$' >&2
    [[ ${PIPESTATUS[0]} == 0 ]] || rc=1 # a namespace of the cluster left
    if [[ "${GOLMPI_CLUSTER_KEEP:-0}" == 1 ]]; then say "kept $TMP"; else rm -rf "$TMP"; fi
    say "took $(($(date +%s) - T_START)) s; exit $rc"
    exit "$rc"
}
trap finish EXIT
trap 'exit 1' INT TERM

on() { bash "$CLUSTER" run "$@"; }
bash "$CLUSTER" up || die "the cluster did not come up"
on ctl sinfo -N -o '%N %T %c %o' | sed 's/^/test_cluster:   /'

# Every part by default; GOLMPI_CLUSTER_FAULTS=0 leaves out the faults, GOLMPI_CLUSTER_ONLY runs one.
ONLY=${GOLMPI_CLUSTER_ONLY:-}
part() {
    case "$1" in
    lose | requeue | cut) [[ "$ONLY" == "$1" || (-z "$ONLY" && "${GOLMPI_CLUSTER_FAULTS:-1}" != 0) ]] ;;
    *) [[ -z "$ONLY" || "$ONLY" == "$1" ]] ;;
    esac
}

# Open MPI between the nodes: TCP on the cluster's subnet (the BTL and interface), shared memory
# inside a node, IPv4 only; btl_base_verbose 1 prints which BTL each rank uses for each peer.
# (cluster.sh run adds mpi_yield_when_idle=1 to every command: the nodes share this machine's
# cores, and without it jobs across them stall, spinning; see its on().)
MPI_ENV=(OMPI_MCA_btl=tcp,self,vader OMPI_MCA_btl_tcp_if_include=$SUBNET.0/24
         OMPI_MCA_oob_tcp_if_include=$SUBNET.0/24 OMPI_MCA_btl_tcp_disable_family=6
         OMPI_MCA_btl_base_verbose=1 OMPI_MCA_mpi_preconnect_mpi=1
         OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)

SIZE=192 STEPS=40 SAVE=20 CHUNK=3 SEED=21
BIND=${GOLMPI_CLUSTER_BIND:-core} # mpirun --bind-to outside Slurm (the job script binds to cores)
JOB_ENV=(GOLMPI_BIN="$BIN" GOLMPI_BACKEND=cpu GOLMPI_LAUNCHER=mpirun GOLMPI_SIZE=$SIZE
         GOLMPI_STEPS=$STEPS GOLMPI_SAVE_EVERY=$SAVE GOLMPI_CHUNK=$CHUNK)

# job_wait JOBID SECONDS: polls until the job has left the queue for good, prints its state.
# A requeued job waits about 2 minutes (BeginTime); the test moves its start to now (only the
# wait; Slurm still picks the nodes), once node $hold_down, if set, has been declared DOWN.
hold_down=""
job_wait() {
    local job=$1 limit=$2 info st="" t0=$SECONDS
    while ((SECONDS - t0 < limit)); do
        info=$(on ctl scontrol show job "$job" 2>/dev/null)
        st=$(grep -o 'JobState=[A-Z_]*' <<<"$info" | cut -d= -f2)
        case "$st" in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | "") break ;; esac
        if [[ "$st" == PENDING ]] && grep -q 'Reason=BeginTime' <<<"$info" &&
            { [[ -z "$hold_down" ]] || on ctl sinfo -h -n "$hold_down" -o '%T' | grep -q '^down'; }; then
            on ctl scontrol update JobId="$job" StartTime=now >/dev/null 2>&1 || true
        fi
        sleep 0.5
    done
    echo "${st:-GONE}"
}

# submit NAME SECONDS [sbatch options...] -- [env...]: the multinode script, as a user submits it
# from the login node (ctl); waits for the end; 0 when it COMPLETED.
submit() {
    local name=$1 limit=$2
    shift 2
    local -a opts=() envs=()
    while [[ $# -gt 0 && "$1" != -- ]]; do opts+=("$1"); shift; done
    [[ $# -gt 0 ]] && shift
    envs=("$@")
    local job
    job=$(on ctl env "${JOB_ENV[@]}" "${MPI_ENV[@]}" GOLMPI_OUTDIR="$TMP/out-$name" "${envs[@]}" \
        sbatch --parsable --job-name="golmpi-$name" -o "$TMP/job-$name.out" --open-mode=append \
        -t 5 "${opts[@]}" "$SRC/jobs/slurm_multinode.sbatch") || die "job $name: sbatch failed: $job"
    echo "$job" >"$TMP/jobid-$name"
    say "job $name ($job): sbatch ${opts[*]} jobs/slurm_multinode.sbatch"
}

# ---- 1. sbatch -N 2 and -N 3: the frames, the start-up table, the BTL ---------------------------
if part slurm; then
    # the one-node run: the same series on n1 alone, 2 ranks
    say "the one-node run (mpirun -n 2 on n1)"
    mkdir -p "$TMP/one"
    on n1 env "${MPI_ENV[@]}" OMP_NUM_THREADS=1 timeout 120 mpirun -n 2 "$BIN" --backend cpu --size $SIZE \
        --steps $STEPS --save-every $SAVE --chunk $CHUNK --seed $SEED --quiet --output "$TMP/one/life.h5" --stats "$TMP/one/life.stats.json" \
        >"$TMP/one.out" 2>&1 || die "the one-node run failed: $(tail -n 5 "$TMP/one.out")"
    "$PY" "$HERE/slurm/check_output.py" "$TMP/one/life.h5" --size $SIZE --steps $STEPS \
        --save-every $SAVE --chunk $CHUNK | sed 's/^/test_cluster:   /'
    [[ ${PIPESTATUS[0]} == 0 ]] || die "the one-node run's output"
    "$PY" "$HERE/cluster/check_cluster.py" start "$TMP/one/life.h5" --seed $SEED --size $SIZE ||
        die "the one-node run's first frame is not the reference's"

    for launcher in mpirun srun; do
        for n in 2 3; do
            j=$launcher-n$n
            submit "$j" 300 -N "$n" --ntasks-per-node=2 -c 1 --gpus-per-node=0 -- GOLMPI_ARGS="--seed $SEED" \
                GOLMPI_LAUNCHER=$launcher
            st=$(job_wait "$(cat "$TMP/jobid-$j")" 240)
            [[ "$st" == COMPLETED ]] || die "job $j ended $st: $(tail -n 20 "$TMP/job-$j.out")"
            grep -E '^(golmpi|\+|  rank)' "$TMP/job-$j.out" | sed "s/^/test_cluster:   [$j] /"
            grep -q "^+ $launcher " "$TMP/job-$j.out" || die "job $j: no $launcher command"
            "$PY" "$HERE/slurm/check_output.py" "$TMP/out-$j/life.h5" --size $SIZE --steps $STEPS \
                --save-every $SAVE --chunk $CHUNK --same-as "$TMP/one/life.h5" | sed 's/^/test_cluster:   /'
            [[ ${PIPESTATUS[0]} == 0 ]] || die "job $j: output check"
            "$PY" "$HERE/cluster/check_cluster.py" table "$TMP/job-$j.out" --nodes "$n" --per-node 2 ||
                die "job $j: start-up table or BTL"
        done
    done
fi

# ---- 1b. MPS on every node of a job: two jobs at once on n1 and n2, one stand-in GPU a node: the
# first with 2 ranks a node (sbatch -N 2 --overcommit, on one core a node), the second with one
# rank a node and GOLMPI_MPS=1 (on the other core). Stand-ins play the
# GPU's tools: tests/mps/nvidia-cuda-mps-control (it forks a daemon into the background that
# answers on its pipe and quits on `quit`), nvidia-smi (one GPU), and a rank that notes whether a
# daemon answers on its CUDA_MPS_PIPE_DIRECTORY when it starts and again when it ends, holding in
# between until the test has looked. While the ranks run, each node has a live daemon of each job,
# in the node's namespace, in a directory of the job's own (mode 700, never /tmp/nvidia-mps), and
# every rank finds its own job's daemon answering at its start and its end (a daemon that Slurm
# ended with some step before the ranks' own would fail here); after the jobs, every daemon has
# quit and its directory is gone. -----------------------------------------------------------------
if part mps; then
    MB=$TMP/mpsbin
    mkdir -p "$MB"
    printf '#!/bin/sh\nexec %q %q "$@"\n' "$PY" "$HERE/mps/nvidia-cuda-mps-control" >"$MB/nvidia-cuda-mps-control"
    printf '#!/bin/sh\n[ "$1" = -L ] && echo "GPU 0: Stand-in GPU (UUID: GPU-0)"\n' >"$MB/nvidia-smi"
    cat >"$MB/golmpi" <<'EOF'
#!/bin/bash
me="$(hostname -s) $SLURM_JOB_ID $SLURM_LOCALID $SLURM_STEP_ID"
answers() {
    if [[ -n "${CUDA_MPS_PIPE_DIRECTORY:-}" ]] && nvidia-cuda-mps-control <<<get_server_list >/dev/null 2>&1; then
        echo "on $CUDA_MPS_PIPE_DIRECTORY"
    else
        echo "off ${CUDA_MPS_PIPE_DIRECTORY:-none}"
    fi
}
echo "start $me $(answers)" >>"$MPS_RANKS_LOG"
for _ in $(seq 600); do [[ -e "$MPS_HOLD" ]] && break; sleep 0.2; done
echo "end $me $(answers)" >>"$MPS_RANKS_LOG"
EOF
    chmod +x "$MB"/*
    MPS_ENV=(PATH="$MB:$PATH" GOLMPI_BIN="$MB/golmpi" GOLMPI_BACKEND=cuda GOLMPI_LAUNCHER=srun
             MPS_RANKS_LOG="$TMP/mps-ranks.log" MPS_HOLD="$TMP/mps-hold" MPS_STANDIN_LOG="$TMP/mps-daemons.log")
    : >"$TMP/mps-ranks.log"
    : >"$TMP/mps-daemons.log"
    # (the second job's one rank a node uses the node's other core; a pending job of 2 ranks a
    # node waits for 2 free cores here, --overcommit or not)
    submit mps-a 120 -N 2 -w n1,n2 --ntasks-per-node=2 -c 1 --overcommit --oversubscribe --gpus-per-node=0 -- "${MPS_ENV[@]}"
    submit mps-b 120 -N 2 -w n1,n2 --ntasks-per-node=1 -c 1 --oversubscribe --gpus-per-node=0 -- "${MPS_ENV[@]}" GOLMPI_MPS=1
    for _ in $(seq 600); do (($(grep -c '^start ' "$TMP/mps-ranks.log") >= 6)) && break; sleep 0.2; done
    (($(grep -c '^start ' "$TMP/mps-ranks.log") == 6)) ||
        die "mps: not 6 ranks started in 120 s: $(cat "$TMP/mps-ranks.log"; tail -n 20 "$TMP"/job-mps-*.out)"
    sed 's/^/test_cluster:   [mps] rank /' "$TMP/mps-ranks.log"
    sed 's/^/test_cluster:   [mps] daemon /' "$TMP/mps-daemons.log"
    # the daemons now, as the ranks run: one a job a node, alive in that node's namespace
    declare -A dir_of # "node job" -> pipe directory of that job's daemon on that node
    while read -r what pid pipe; do
        [[ $what == start ]] || continue
        kill -0 "$pid" 2>/dev/null || die "mps: daemon $pid ($pipe) is gone while the ranks run"
        node=$(ip netns identify "$pid") node=${node#gc$$-}
        job=""
        for j in mps-a mps-b; do
            [[ $pipe == */golmpi-mps.$(id -u).$(cat "$TMP/jobid-$j").*".$node/pipe" ]] && job=$(cat "$TMP/jobid-$j")
        done
        [[ -n "$job" ]] || die "mps: daemon $pid on $node: its pipe $pipe is not in a directory of either job on that node"
        # started inside the ranks' own step, where Slurm's process tracking (proctrack/cgroup)
        # keeps it until the ranks end; a daemon of a step of its own would be ended with that step
        step=$(awk -v j="$job" '$1 == "start" && $3 == j { print $5; exit }' "$TMP/mps-ranks.log")
        [[ "$(tr '\0' '\n' <"/proc/$pid/environ" | grep -E '^SLURM_(JOB|STEP)_ID=' | sort | paste -sd' ')" == \
            "SLURM_JOB_ID=$job SLURM_STEP_ID=$step" ]] ||
            die "mps: daemon $pid on $node is not of job $job's step $step, where its ranks run"
        [[ "$(stat -c '%a %U' "$(dirname "$pipe")")" == "700 $(id -un)" ]] ||
            die "mps: $(dirname "$pipe") is not private: $(stat -c '%a %U' "$(dirname "$pipe")")"
        [[ -z "${dir_of[$node $job]:-}" ]] || die "mps: two daemons of job $job on $node"
        dir_of[$node $job]=$pipe
    done <"$TMP/mps-daemons.log"
    ((${#dir_of[@]} == 4)) || die "mps: ${#dir_of[@]} daemons, not one for each of 2 jobs on each of 2 nodes"
    : >"$TMP/mps-hold"
    for j in mps-a mps-b; do
        st=$(job_wait "$(cat "$TMP/jobid-$j")" 120)
        [[ "$st" == COMPLETED ]] || die "mps: job $j ended $st: $(tail -n 20 "$TMP/job-$j.out")"
        grep '^golmpi job: ' "$TMP/job-$j.out" | sed "s/^/test_cluster:   [$j] /"
    done
    # every rank, at its start and at its end, found its own job's daemon on its node answering
    (($(grep -c '^end ' "$TMP/mps-ranks.log") == 6)) || die "mps: not every rank ended: $(cat "$TMP/mps-ranks.log")"
    while read -r when node job _ _ state pipe; do
        [[ $state == on && $pipe == "${dir_of[$node $job]:-?}" ]] ||
            die "mps: a rank of job $job on $node at its $when: MPS $state on $pipe, not its job's daemon ${dir_of[$node $job]:-(none)}"
    done <"$TMP/mps-ranks.log"
    # after the jobs: every daemon quit, by the last rank of its node, and its directory removed
    while read -r what pid pipe; do
        [[ $what == start ]] || continue
        grep -q "^quit $pid " "$TMP/mps-daemons.log" || die "mps: daemon $pid ($pipe) was not told to quit"
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done # it is exiting
        ! kill -0 "$pid" 2>/dev/null || die "mps: daemon $pid ($pipe) outlives its job by 5 s"
        [[ ! -e "$(dirname "$pipe")" ]] || die "mps: $(dirname "$pipe") left after the job"
    done <"$TMP/mps-daemons.log"
    say "mps: 2 jobs on n1 and n2, each with a daemon of its own on each node while its ranks ran, all gone after"
fi

# mpirun across the namespace nodes: from n1, its daemons started on the other nodes by the
# cluster's launch agent (as ssh would), as users without a scheduler run.
mpirun_nodes() { # mpirun_nodes HOSTS NRANKS golmpi-args...: on n1, output to stdout and stderr
    local hosts=$1 n=$2
    shift 2
    # bound as the job script binds, so that a run here takes as long as one in a job
    on n1 env "${MPI_ENV[@]}" OMP_NUM_THREADS=1 mpirun --mca plm_rsh_agent "$CLUSTER agent" \
        --host "$hosts" -n "$n" --map-by slot:PE=1 --bind-to "${BIND:-core}" "$BIN" --backend cpu "$@"
}

# ---- 2. without Slurm: mpirun --host n1:2,n2:2 ---------------------------------------------------
if part mpirun; then
    say "mpirun --host n1:2,n2:2 from n1 (launch agent: cluster.sh agent)"
    mkdir -p "$TMP/out-ssh"
    timeout 180 bash -c "$(declare -f on mpirun_nodes); $(declare -p MPI_ENV CLUSTER BIN BIND); \
        mpirun_nodes n1:2,n2:2 4 --size $SIZE --steps $STEPS --save-every $SAVE --chunk $CHUNK \
        --seed $SEED --output $TMP/out-ssh/life.h5 --stats $TMP/out-ssh/life.stats.json" \
        >"$TMP/ssh.out" 2>&1 || die "mpirun --host n1:2,n2:2 failed: $(tail -n 20 "$TMP/ssh.out")"
    [[ -f "$TMP/one/life.h5" ]] && same=(--same-as "$TMP/one/life.h5") || same=()
    "$PY" "$HERE/slurm/check_output.py" "$TMP/out-ssh/life.h5" --size $SIZE --steps $STEPS \
        --save-every $SAVE --chunk $CHUNK "${same[@]}" | sed 's/^/test_cluster:   /'
    [[ ${PIPESTATUS[0]} == 0 ]] || die "mpirun --host n1:2,n2:2: output check"
    "$PY" "$HERE/cluster/check_cluster.py" table "$TMP/ssh.out" --nodes 2 --per-node 2 ||
        die "mpirun --host n1:2,n2:2: start-up table or BTL"

    # The halo rows between n1 and n2 cross n2's link: counted on the switch's side of it, a wide
    # grid sends at least 2 rows each way over each of the 2 node boundaries every generation.
    WIDE=4096 WSTEPS=200
    before=$(bash "$CLUSTER" bytes n2)
    timeout 180 bash -c "$(declare -f on mpirun_nodes); $(declare -p MPI_ENV CLUSTER BIN BIND); \
        mpirun_nodes n1:2,n2:2 4 --size $WIDE --steps $WSTEPS --no-output --halo-depth 1 --quiet" \
        >"$TMP/ssh-wide.out" 2>&1 || die "the wide run failed: $(tail -n 20 "$TMP/ssh-wide.out")"
    after=$(bash "$CLUSTER" bytes n2)
    want=$((2 * 2 * WSTEPS * WIDE / 8))
    say "n2's link carried $((after - before)) bytes in the wide run; its halo rows alone are $want"
    ((after - before >= want)) || die "fewer bytes over n2's link than the halo rows between the nodes"
fi

# golmpi processes still alive on these nodes (in their namespaces)
ranks_on() {
    local node pid
    for node in "$@"; do
        for pid in $(ip netns pids "gc$$-$node" 2>/dev/null); do
            [[ "$(cat "/proc/$pid/comm" 2>/dev/null)" == golmpi ]] && echo "$pid"
        done
    done
}
# chunk_files DIR: finished chunk files there
chunk_files() { find "$1" -maxdepth 1 -name 'life_*.h5' 2>/dev/null | wc -l; }
# wait_chunks DIR N SECONDS: until N chunks are finished (0) or the time is up (1)
wait_chunks() {
    local t0=$SECONDS
    while ((SECONDS - t0 < $3)); do
        (($(chunk_files "$1") >= $2)) && return 0
        sleep 0.2
    done
    return 1
}
# wait_gone SECONDS NODES...: seconds (0.1 s steps) until no golmpi is left on the nodes
wait_gone() {
    local limit=$1 t0
    shift
    t0=$(date +%s.%N)
    while [[ -n "$(ranks_on "$@")" ]]; do
        (($(date +%s) - ${t0%.*} > limit)) && break
        sleep 0.1
    done
    echo "$(date +%s.%N) - $t0" | bc
}

# The fault runs need a series long enough to be cut mid-run: 6 ranks' speed here is measured
# first (generations a second, across the 3 nodes over TCP) and the series made about 25 s long.
FT=30 BOUND=15 FSIZE=192 FSEED=23
calibrate() {
    mkdir -p "$TMP/calibrate"
    timeout 180 bash -c "$(declare -f on mpirun_nodes); $(declare -p MPI_ENV CLUSTER BIN BIND); \
        mpirun_nodes n1:2,n2:2,n3:2 6 --size $FSIZE --steps 2000 --save-every 1000 --chunk 2 \
        --output $TMP/calibrate/life.h5 --quiet --stats $TMP/calibrate.json" >"$TMP/calibrate.out" 2>&1 || die "the timing run failed"
    read -r FSTEPS secs < <("$PY" -c "import json, sys; t = max(json.load(open(sys.argv[1]))['wall_s'], 0.01)
print(min(600000, max(1200, int(2000 * 25 / t) // 1200 * 1200)), round(t, 2))" "$TMP/calibrate.json")
    FSAVE=$((FSTEPS / 6))
    say "6 ranks over 3 nodes: 2000 generations in $secs s; fault runs of $FSTEPS generations"
}
# the uninterrupted run of a fault series, on one node
# shellcheck source=cluster/uncut.sh
source "$HERE/cluster/uncut.sh"
reference_run() { uncut_run "$1" $FSIZE "$FSTEPS" "$FSAVE" $FSEED; } # reference_run DIR

# wait_bounded PID SECONDS: RC is the exit code of a background process of this script, or 124
# when it is still running after SECONDS
wait_bounded() {
    local t0=$SECONDS
    RC=0
    while kill -0 "$1" 2>/dev/null && ((SECONDS - t0 < $2)); do sleep 0.2; done
    if kill -0 "$1" 2>/dev/null; then RC=124; else wait "$1" || RC=$?; fi
}
# fault_run NAME HOSTS N [golmpi args...]: the fault series with mpirun --host HOSTS -n N, in the
# background (its log appended to NAME.out), its pid in FAULT_PID
fault_run() {
    local name=$1 hosts=$2 n=$3
    shift 3
    mkdir -p "$TMP/out-$name"
    timeout 300 bash -c "$(declare -f on mpirun_nodes); $(declare -p MPI_ENV CLUSTER BIN BIND); \
        mpirun_nodes $hosts $n --size $FSIZE --steps $FSTEPS --save-every $FSAVE --chunk 2 \
        --seed $FSEED --timeout $FT --progress 1 --output $TMP/out-$name/life.h5 $*" \
        >>"$TMP/$name.out" 2>&1 &
    FAULT_PID=$!
    BG+=("$FAULT_PID")
}

# ---- 3. a node lost mid-run: every other rank goes within --timeout plus a bound, with a message
# naming the lost rank and host and exit code 6; the chunks finished stay valid and the series
# resumes on the nodes left, bit-identical to a run never interrupted ------------------------------
if part lose; then
    calibrate
    reference_run "$TMP/ref-lose"
    fault_run lose n1:2,n2:2,n3:2 6
    wait_chunks "$TMP/out-lose" 2 240 || die "lose: no 2 chunks written in 240 s: $(tail -n 20 "$TMP/lose.out")"
    kill -0 "$FAULT_PID" 2>/dev/null || die "lose: the run ended before the node could be lost"
    say "lose: $(chunk_files "$TMP/out-lose") chunk files written; losing n2 (its link down, its processes killed)"
    bash "$CLUSTER" lose n2
    took=$(wait_gone $((FT + BOUND + 30)) n1 n3)
    say "lose: every rank on n1 and n3 gone $took s after n2 was lost (--timeout $FT)"
    [[ -z "$(ranks_on n1 n3)" ]] || die "lose: ranks left on n1/n3 after $took s"
    (($(echo "$took <= $FT + $BOUND" | bc))) || die "lose: the ranks took $took s to go (> $FT + $BOUND)"
    # mpirun itself still waits for the lost node's daemon, as it would over ssh: the node comes
    # back (empty, as after a reboot), its link up, and mpirun ends
    wait_bounded "$FAULT_PID" 10
    if [[ $RC == 124 ]]; then
        say "lose: mpirun waits for n2's daemon; n2's link up again"
        bash "$CLUSTER" heal n2
        wait_bounded "$FAULT_PID" 30
    fi
    rc=$RC
    msgs=$(grep -E '^golmpi: rank [0-9]+ on host n[13]: no halo row' "$TMP/lose.out")
    sed 's/^/test_cluster:   [lose] /' <<<"$msgs"
    [[ $rc == 6 ]] || die "lose: mpirun exited $rc, not 6 (a peer lost): $(tail -n 20 "$TMP/lose.out")"
    [[ -n "$msgs" ]] || die "lose: no rank said which peer stopped answering"
    # the neighbours of n2's ranks name them; a rank whose own neighbour had already left for the
    # same reason may say so too, later
    grep -qE '\b[23] \(host n2, ' <<<"$msgs" || die "lose: no message names rank 2 or 3 on host n2"
    say "lose: resuming with --restart on the nodes left, n1 and n3"
    fault_run lose n1:2,n3:2 4 --restart "$TMP/out-lose/life.h5"
    rc=0
    wait "$FAULT_PID" || rc=$?
    [[ $rc == 0 ]] || die "lose: the resumed run exited $rc: $(tail -n 20 "$TMP/lose.out")"
    "$PY" "$HERE/cluster/check_cluster.py" table "$TMP/lose.out" --hosts n1,n3 --per-node 2 --last ||
        die "lose: the resumed run's start-up table"
    "$PY" "$HERE/cluster/check_cluster.py" series "$TMP/out-lose/life.h5" --same-as "$TMP/ref-lose/life.h5" ||
        die "lose: the resumed series"
    bash "$CLUSTER" revive n2
fi

# ---- 3b. a node lost under Slurm: an sbatch -N 2 job on n1 and n2, n2 lost mid-run; the ranks on
# n1 go within --timeout plus a bound, naming a rank on n2; the job is requeued (by Slurm on the
# node's failure, or by the script on exit 6, whichever comes first), runs again on the nodes left
# (n1, n3) and resumes the series from its output, bit-identical to a run never interrupted. Then
# the same with the batch node n1 lost (resumed on n2 and n3). (Not -N 2-3 on all three: Slurm
# keeps a requeued job's task count, 6, which 2 nodes cannot hold.) ----------------------------
# slurm_lose NAME LOST: the job on n1 and n2, LOST (n1 or n2) lost mid-run; the other of the two
# and n3 get the requeued job
slurm_lose() {
    local name=$1 lost=$2 kept ranks job st msgs restarts
    if [[ $lost == n1 ]]; then kept=n2 ranks=01; else kept=n1 ranks=23; fi
    # all three nodes up (one may be back from a loss before): the job gets n1 and n2
    for _ in $(seq 120); do [[ "$(on ctl sinfo -h -o '%T %D')" == "idle 3" ]] && break; sleep 0.5; done
    submit "$name" 300 -N 2 --ntasks-per-node=2 -c 1 --gpus-per-node=0 -- GOLMPI_SIZE=$FSIZE \
        GOLMPI_STEPS="$FSTEPS" GOLMPI_SAVE_EVERY="$FSAVE" GOLMPI_CHUNK=2 \
        GOLMPI_ARGS="--seed $FSEED --timeout $FT --progress 1"
    job=$(cat "$TMP/jobid-$name")
    local out=$TMP/job-$name.out
    wait_chunks "$TMP/out-$name" 2 240 || die "$name: no 2 chunks written in 240 s: $(tail -n 20 "$out")"
    [[ -n "$(ranks_on "$lost")" ]] || die "$name: no rank on $lost to lose: $(tail -n 20 "$out")"
    [[ -z "$(ranks_on n3)" ]] || die "$name: the job runs on n3 too; n3 was to be left for its requeue"
    say "$name: $(chunk_files "$TMP/out-$name") chunk files written; losing $lost (its link down, its processes and slurmd killed)"
    bash "$CLUSTER" lose "$lost"
    took=$(wait_gone $((FT + BOUND + 30)) "$kept")
    say "$name: every rank on $kept gone $took s after $lost was lost (--timeout $FT)"
    [[ -z "$(ranks_on "$kept")" ]] || die "$name: ranks left on $kept after $took s"
    (($(echo "$took <= $FT + $BOUND" | bc))) || die "$name: the ranks took $took s to go (> $FT + $BOUND)"
    # the requeued job waits for the lost node to be declared DOWN (Slurm would give it that node
    # again otherwise), then starts at once instead of after Slurm's two-minute requeue delay
    hold_down=$lost
    st=$(job_wait "$job" 300)
    hold_down=""
    [[ "$st" == COMPLETED ]] || die "$name: job ended $st: $(tail -n 30 "$out")"
    msgs=$(grep -E "^golmpi: rank [0-9]+ on host $kept: no halo row" "$out")
    sed "s/^/test_cluster:   [$name] /" <<<"$msgs"
    # (the batch node lost, mpirun went with it, and the ranks' stderr, which mpirun forwards,
    # with it: the surviving ranks' messages reach no log; their exit time is checked above)
    if [[ $lost != n1 ]]; then
        grep -qE "\\b[$ranks] \\(host $lost, " <<<"$msgs" || die "$name: no message names rank ${ranks:0:1} or ${ranks:1:1} on host $lost"
    fi
    grep -E '^golmpi job: (a peer|.*requeue|.*resuming)|^golmpi job [0-9]+ on |took over the output lock' "$out" |
        sed "s/^/test_cluster:   [$name] /"
    restarts=$(on ctl scontrol show job "$job" | grep -o 'Restarts=[0-9]*' | cut -d= -f2)
    ((${restarts:-0} >= 1)) || die "$name: the job was not requeued (Restarts=${restarts:-?})"
    if grep -q 'scontrol requeue failed' "$out"; then die "$name: the script reports a failed requeue"; fi
    grep -q 'golmpi job: .* exists: resuming its series' "$out" ||
        die "$name: the requeued job did not resume the series: $(tail -n 20 "$out")"
    "$PY" "$HERE/cluster/check_cluster.py" table "$out" --hosts "$(echo -e "$kept\nn3" | sort | paste -sd,)" --per-node 2 --last ||
        die "$name: the requeued job's start-up table"
    "$PY" "$HERE/cluster/check_cluster.py" series "$TMP/out-$name/life.h5" --same-as "$TMP/ref-lose/life.h5" ||
        die "$name: the resumed series"
    bash "$CLUSTER" revive "$lost"
    for _ in $(seq 120); do on ctl sinfo -h -n "$lost" -o '%T' | grep -q '^idle' && break; sleep 0.5; done
    on ctl sinfo -h -n "$lost" -o '%T' | grep -q '^idle' || die "$name: $lost not back after its revival"
}
if part requeue; then
    [[ -n "${FSTEPS:-}" ]] || calibrate
    [[ -f "$TMP/ref-lose/life.h5" ]] || reference_run "$TMP/ref-lose"
    slurm_lose requeue n2
    # the batch node, where mpirun and rank 0 (which holds the output's lock) ran: Slurm requeues
    # the job once it declares n1 down; rank 0 of the requeued job, on n2, takes over the lock of
    # the job's earlier instance
    slurm_lose requeue-batch n1
    grep -q 'took over the output lock' "$TMP/job-requeue-batch.out" ||
        die "requeue-batch: the requeued job did not take over its earlier instance's lock"
fi

# ---- 4. a link cut, without Slurm, longer than --timeout: the run ends as on a node lost, and
# resumes ----------------------------------------------------------------------------------------
if part cut; then
    [[ -n "${FSTEPS:-}" ]] || calibrate
    [[ -f "$TMP/ref-lose/life.h5" ]] || reference_run "$TMP/ref-lose"

    fault_run cut-long n1:2,n3:2 4
    wait_chunks "$TMP/out-cut-long" 2 240 || die "cut-long: no 2 chunks written in 240 s: $(tail -n 20 "$TMP/cut-long.out")"
    kill -0 "$FAULT_PID" 2>/dev/null || die "cut-long: the run ended before the link was cut"
    say "cut-long: $(chunk_files "$TMP/out-cut-long") chunk files written; n3's link cut until every rank is gone"
    bash "$CLUSTER" cut n3
    took=$(wait_gone $((FT + BOUND + 30)) n1 n3)
    sleep 2 # longer than --timeout, and past the ranks' end
    bash "$CLUSTER" heal n3
    say "cut-long: every rank gone $took s after the cut (--timeout $FT)"
    [[ -z "$(ranks_on n1 n3)" ]] || die "cut-long: ranks left after $took s"
    (($(echo "$took <= $FT + $BOUND" | bc))) || die "cut-long: the ranks took $took s to go (> $FT + $BOUND)"
    wait_bounded "$FAULT_PID" 30
    rc=$RC
    grep -E '^golmpi: rank [0-9]+ on host n[13]: no halo row' "$TMP/cut-long.out" | sed 's/^/test_cluster:   [cut-long] /'
    [[ $rc == 6 ]] || die "cut-long: mpirun exited $rc, not 6 (a peer lost): $(tail -n 20 "$TMP/cut-long.out")"
    grep -qE '^golmpi: rank [01] on host n1: no halo row .*\b[23] \(host n3, ' "$TMP/cut-long.out" ||
        die "cut-long: no rank on n1 named rank 2 or 3 on host n3 as silent"
    say "cut-long: resuming with --restart on n1 and n3"
    fault_run cut-long n1:2,n3:2 4 --restart "$TMP/out-cut-long/life.h5"
    rc=0
    wait "$FAULT_PID" || rc=$?
    [[ $rc == 0 ]] || die "cut-long: the resumed run exited $rc: $(tail -n 20 "$TMP/cut-long.out")"
    "$PY" "$HERE/cluster/check_cluster.py" series "$TMP/out-cut-long/life.h5" --same-as "$TMP/ref-lose/life.h5" ||
        die "cut-long: the resumed series"
fi
say "PASS"
