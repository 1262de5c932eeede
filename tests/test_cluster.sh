#!/bin/bash
# golmpi on several nodes under a real Slurm: three nodes made of network namespaces on this
# machine (tests/cluster/cluster.sh: own host names n1..n3, own addresses on a private subnet,
# one slurmd each, slurmctld, munge), jobs/slurm_multinode.sbatch submitted with sbatch -N 2 and
# -N 3 (CPU backend, 2 ranks a node), the frames checked against the reference and against a
# one-node run, the start-up table's hosts and local ranks checked, and the halo traffic between
# nodes shown to go over Open MPI's TCP BTL between the namespaces. Then the same nodes without
# Slurm (mpirun --host n1:2,n2:2, its launch agent entering the namespaces), a node lost mid-run
# (every other rank exits with a message naming it, the job requeues and resumes on the nodes
# left, bit-identical to a run never interrupted), and links cut for longer and shorter than
# --timeout. Everything it makes is removed on exit, also on failure.
#
# Environment: GOLMPI_BIN, GOLMPI_SRC, GOLMPI_PYTHON (a python3 with h5py and numpy),
# GOLMPI_CLUSTER_KEEP=1 keeps the temp dir (the cluster itself is always taken down),
# GOLMPI_CLUSTER_ONLY=slurm|mpirun|lose|cut runs one part (after the cluster is up).
# Exit 77 (skip) only where network namespaces cannot be made (not root, no ip netns, no unshare).
set -uo pipefail
export PATH="$PATH:/usr/sbin:/sbin"

SRC=${GOLMPI_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
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
for c in ip nsenter unshare; do command -v "$c" >/dev/null || skip "'$c' not found: no namespaces"; done
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
export GOLMPI_CLUSTER_SUBNET=$SUBNET GOLMPI_CLUSTER_SLURMD_TIMEOUT=30
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
    bash "$CLUSTER" down >/dev/null 2>&1 || true
    # nothing of the cluster may stay: its namespaces are gone
    if ip netns list 2>/dev/null | grep -q "^gc$$-"; then
        echo "test_cluster: FAIL: namespaces left: $(ip netns list | grep "^gc$$-" | tr '\n' ' ')" >&2
        rc=1
    fi
    if [[ "${GOLMPI_CLUSTER_KEEP:-0}" == 1 ]]; then say "kept $TMP"; else rm -rf "$TMP"; fi
    say "took $(($(date +%s) - T_START)) s; exit $rc"
    exit "$rc"
}
trap finish EXIT
trap 'exit 1' INT TERM

on() { bash "$CLUSTER" run "$@"; }
bash "$CLUSTER" up || die "the cluster did not come up"
on ctl sinfo -N -o '%N %T %c %o' | sed 's/^/test_cluster:   /'

ONLY=${GOLMPI_CLUSTER_ONLY:-}
part() { [[ -z "$ONLY" || "$ONLY" == "$1" ]]; }

# Open MPI between the nodes: TCP on the cluster's subnet (the BTL and interface), shared memory
# inside a node, IPv4 only; btl_base_verbose 1 prints which BTL each rank uses for each peer.
MPI_ENV=(OMPI_MCA_btl=tcp,self,vader OMPI_MCA_btl_tcp_if_include=$SUBNET.0/24
         OMPI_MCA_oob_tcp_if_include=$SUBNET.0/24 OMPI_MCA_btl_tcp_disable_family=6
         OMPI_MCA_btl_base_verbose=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)

SIZE=192 STEPS=40 SAVE=20 CHUNK=3 SEED=21
JOB_ENV=(GOLMPI_BIN="$BIN" GOLMPI_BACKEND=cpu GOLMPI_LAUNCHER=mpirun GOLMPI_SIZE=$SIZE
         GOLMPI_STEPS=$STEPS GOLMPI_SAVE_EVERY=$SAVE GOLMPI_CHUNK=$CHUNK)

# job_wait JOBID SECONDS: polls until the job has left the queue for good, prints its state.
# A requeued job waits about 2 minutes (BeginTime); once no node of the cluster is still to be
# declared down, the test moves its start to now (only the wait; Slurm still picks the nodes).
job_wait() {
    local job=$1 limit=$2 info st="" t0=$SECONDS
    while ((SECONDS - t0 < limit)); do
        info=$(on ctl scontrol show job "$job" 2>/dev/null)
        st=$(grep -o 'JobState=[A-Z_]*' <<<"$info" | cut -d= -f2)
        case "$st" in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | "") break ;; esac
        if [[ "$st" == PENDING ]] && grep -q 'Reason=BeginTime' <<<"$info" &&
            ! on ctl sinfo -h -o '%T' | grep -q '\*'; then
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

    for n in 2 3; do
        submit "n$n" 300 -N "$n" --ntasks-per-node=2 -c 1 --gpus-per-node=0 -- GOLMPI_ARGS="--seed $SEED"
        st=$(job_wait "$(cat "$TMP/jobid-n$n")" 240)
        [[ "$st" == COMPLETED ]] || die "job n$n ended $st: $(tail -n 20 "$TMP/job-n$n.out")"
        grep -E '^(golmpi|\+|  rank)' "$TMP/job-n$n.out" | sed "s/^/test_cluster:   [n$n] /"
        "$PY" "$HERE/slurm/check_output.py" "$TMP/out-n$n/life.h5" --size $SIZE --steps $STEPS \
            --save-every $SAVE --chunk $CHUNK --same-as "$TMP/one/life.h5" | sed 's/^/test_cluster:   /'
        [[ ${PIPESTATUS[0]} == 0 ]] || die "job n$n: output check"
        "$PY" "$HERE/cluster/check_cluster.py" table "$TMP/job-n$n.out" --nodes "$n" --per-node 2 ||
            die "job n$n: start-up table or BTL"
    done
fi
say "PASS so far"

# mpirun across the namespace nodes: from n1, its daemons started on the other nodes by the
# cluster's launch agent (as ssh would), as users without a scheduler run.
mpirun_nodes() { # mpirun_nodes HOSTS NRANKS golmpi-args...: on n1, output to stdout and stderr
    local hosts=$1 n=$2
    shift 2
    on n1 env "${MPI_ENV[@]}" OMP_NUM_THREADS=1 mpirun --mca plm_rsh_agent "$CLUSTER agent" \
        --host "$hosts" -n "$n" "$BIN" --backend cpu "$@"
}

# ---- 2. without Slurm: mpirun --host n1:2,n2:2 ---------------------------------------------------
if part mpirun; then
    say "mpirun --host n1:2,n2:2 from n1 (launch agent: cluster.sh agent)"
    mkdir -p "$TMP/out-ssh"
    timeout 180 bash -c "$(declare -f on mpirun_nodes); $(declare -p MPI_ENV CLUSTER BIN); \
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
    timeout 180 bash -c "$(declare -f on mpirun_nodes); $(declare -p MPI_ENV CLUSTER BIN); \
        mpirun_nodes n1:2,n2:2 4 --size $WIDE --steps $WSTEPS --no-output --halo-depth 1 --quiet" \
        >"$TMP/ssh-wide.out" 2>&1 || die "the wide run failed: $(tail -n 20 "$TMP/ssh-wide.out")"
    after=$(bash "$CLUSTER" bytes n2)
    want=$((2 * 2 * WSTEPS * WIDE / 8))
    say "n2's link carried $((after - before)) bytes in the wide run; its halo rows alone are $want"
    ((after - before >= want)) || die "fewer bytes over n2's link than the halo rows between the nodes"
fi
say "PASS so far"
