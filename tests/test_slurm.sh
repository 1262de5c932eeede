#!/bin/bash
# The Slurm batch scripts, run for real: a private one-node Slurm (munge, slurmctld, slurmd) in a
# temporary directory, jobs submitted with sbatch --wait, their golmpi output checked, and every
# daemon this script started stopped again by its PID.
#
# Environment: GOLMPI_BIN (the golmpi to run), GOLMPI_SRC (the source tree, for jobs/),
# GOLMPI_PYTHON (a python3 with h5py and numpy), GOLMPI_SLURM_KEEP=1 keeps the temp dir,
# GOLMPI_SLURM_ONLY=checkpoint runs the checkpoint-and-requeue job alone; =user-args the job whose
# sbatch line overrides the script's settings with golmpi options.
# Exit 77 (skip) only when slurm-wlm or munge are missing and cannot be installed.
set -uo pipefail

SRC=${GOLMPI_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
# the job scripts find their library (jobs/golmpi_job.sh) through it; sbatch passes it on
export GOLMPI_SHARE=$SRC
BIN=${GOLMPI_BIN:-$SRC/build/golmpi}
PY=${GOLMPI_PYTHON:-python3}
HERE=$(cd "$(dirname "$0")" && pwd)

say() { echo "test_slurm: $*"; }
die() {
    echo "test_slurm: FAIL: $*" >&2
    exit 1
}

# ---- packages: slurmctld, slurmd, sbatch and munged; install them when we can ----------------
have_all() {
    local c
    for c in slurmctld slurmd sbatch srun sinfo scontrol munged; do
        command -v "$c" >/dev/null || [[ -x "/usr/sbin/$c" ]] || return 1
    done
}
if ! have_all; then
    if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
        say "installing slurm-wlm and munge"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge >/dev/null 2>&1 ||
            { apt-get update -q >/dev/null 2>&1 &&
              DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge >/dev/null 2>&1; }
    fi
    have_all || { say "SKIP: slurm-wlm / munge are not installed and cannot be installed"; exit 77; }
fi
export PATH="$PATH:/usr/sbin:/sbin"
[[ -x "$BIN" ]] || die "golmpi not found at '$BIN' (set GOLMPI_BIN)"
"$PY" -c "import h5py, numpy" 2>/dev/null || die "'$PY' lacks h5py/numpy (set GOLMPI_PYTHON)"

# ---- a private cluster in a temp dir ---------------------------------------------------------
TMP=$(mktemp -d /tmp/golmpi-slurm.XXXXXX)
chmod 755 "$TMP"
PIDS=() # daemons we started, stopped in reverse order

stop_all() {
    local rc=$? i pid
    if [[ -n "${SLURM_CONF:-}" && -f "${SLURM_CONF}" ]]; then
        scancel --quiet --full -u "$(id -un)" >/dev/null 2>&1 || true
    fi
    for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
        pid=${PIDS[i]}
        kill -TERM "$pid" 2>/dev/null || continue
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    if [[ $rc != 0 && $rc != 77 ]]; then
        for f in "$TMP"/*.log "$TMP"/*.out; do
            [[ -f "$f" ]] || continue
            echo "---- $f (last 40 lines)"
            tail -n 40 "$f"
        done
    fi
    if [[ "${GOLMPI_SLURM_KEEP:-0}" == 1 ]]; then say "kept $TMP"; else rm -rf "$TMP"; fi
    exit "$rc"
}
trap stop_all EXIT
trap 'exit 1' INT TERM

# Two free TCP ports, so a system Slurm (or another test run) is never disturbed. They are taken
# below the kernel's ephemeral range (ip_local_port_range), where no other process's outgoing
# connection can hold one, and only if no socket is on them in any state (TIME_WAIT included:
# slurmctld's bind fails on those, which the tests before this one leave by the hundred).
EPH_LO=32768
read -r EPH_LO _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
((EPH_LO > 11000)) || EPH_LO=32768
port_busy() {
    if command -v ss >/dev/null; then
        [[ -n $(ss -Htan "( sport = :$1 )" 2>/dev/null) ]]
        return
    fi
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}
free_port() {
    local p
    for _ in $(seq 100); do
        p=$((10000 + RANDOM % (EPH_LO - 10000)))
        if ! port_busy "$p"; then echo "$p"; return; fi
    done
    die "no free TCP port"
}

# munge: our own key, socket, pid and seed files.
mkdir -p "$TMP/munge" "$TMP/state" "$TMP/spool"
chmod 700 "$TMP/munge"
if command -v mungekey >/dev/null || [[ -x /usr/sbin/mungekey ]]; then
    mungekey --create --keyfile="$TMP/munge/munge.key" >/dev/null 2>&1 ||
        dd if=/dev/urandom of="$TMP/munge/munge.key" bs=1024 count=1 status=none
else
    dd if=/dev/urandom of="$TMP/munge/munge.key" bs=1024 count=1 status=none
fi
chmod 400 "$TMP/munge/munge.key"
MUNGE_SOCKET=$TMP/munge/munge.socket
munged --foreground --force --socket="$MUNGE_SOCKET" --key-file="$TMP/munge/munge.key" \
    --pid-file="$TMP/munge/munged.pid" --seed-file="$TMP/munge/munged.seed" \
    --log-file="$TMP/munged.log" >"$TMP/munged.out.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do [[ -S "$MUNGE_SOCKET" ]] && break; sleep 0.1; done
[[ -S "$MUNGE_SOCKET" ]] || die "munged did not start"

HOST=$(hostname -s)
CPUS=$(nproc)
MEM_MB=$(free -m | awk '/^Mem:/ {print $2}')
MEM_MB=$((MEM_MB > 1024 ? MEM_MB - 512 : MEM_MB / 2))
USER_NAME=$(id -un)
export SLURM_CONF=$TMP/slurm.conf
write_conf() {
cat >"$SLURM_CONF" <<EOF
# generated by tests/test_slurm.sh: a private one-node cluster
ClusterName=golmpitest
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=$USER_NAME
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCKET
StateSaveLocation=$TMP/state
SlurmdSpoolDir=$TMP/spool
SlurmctldPidFile=$TMP/slurmctld.pid
SlurmdPidFile=$TMP/slurmd.pid
SlurmctldLogFile=$TMP/slurmctld.log
SlurmdLogFile=$TMP/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
SchedulerType=sched/backfill
ReturnToService=2
MaxJobCount=1000
InactiveLimit=0
KillWait=5
Waittime=0
PlugStackConfig=$TMP/plugstack.conf
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$MEM_MB State=UNKNOWN
PartitionName=debug Nodes=$HOST Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
: >"$TMP/plugstack.conf" # the system's spank plugins are not ours to load
}

# Starts slurmctld and slurmd on two free ports and waits for the node to be idle: 0 when it is,
# 1 when a daemon exited because its port was taken after all (the caller tries new ports).
start_daemons() {
    CTLD_PORT=$(free_port)
    SLURMD_PORT=$(free_port)
    while [[ "$SLURMD_PORT" == "$CTLD_PORT" ]]; do SLURMD_PORT=$(free_port); done
    write_conf
    rm -f "$TMP"/slurmctld*.log "$TMP"/slurmd*.log
    slurmctld -D -c -f "$SLURM_CONF" >"$TMP/slurmctld.out.log" 2>&1 &
    PIDS+=($!)
    slurmd -D -f "$SLURM_CONF" >"$TMP/slurmd.out.log" 2>&1 &
    PIDS+=($!)
    local state="" pid
    for _ in $(seq 120); do
        state=$(sinfo -h -n "$HOST" -o %T 2>/dev/null | head -n1)
        [[ "$state" == idle ]] && return 0
        for pid in "${PIDS[@]}"; do
            kill -0 "$pid" 2>/dev/null && continue
            grep -qs "Address already in use" "$TMP"/slurm*.log && return 1
            die "a Slurm daemon exited (pid $pid)"
        done
        sleep 0.5
    done
    die "node $HOST not idle after 60 s (state '$state')"
}

stop_daemons() { # the two started last, before another try
    local pid
    for pid in "${PIDS[@]: -2}"; do
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    PIDS=("${PIDS[@]:0:${#PIDS[@]}-2}")
}

for try in 1 2 3; do
    start_daemons && break
    [[ $try == 3 ]] && die "the Slurm daemons' ports were taken three times"
    say "a port was taken after all (try $try); starting again on others"
    stop_daemons
done
say "cluster up: $HOST, $CPUS CPUs, ${MEM_MB} MB, ports $CTLD_PORT/$SLURMD_PORT, $TMP"
srun --mpi=list 2>&1 | sed 's/^/test_slurm: srun --mpi=list: /'

# ---- which srun MPI plugin starts Open MPI ranks here? ---------------------------------------
# Debian's Slurm has pmix (v4) and pmi2 plugins; whether Open MPI wires up through them depends
# on how both were built. The scripts' srun path is tested with the first that works; the
# mpirun path (GOLMPI_LAUNCHER=mpirun, inside the allocation) is always tested.
SRUN_MPI=""
for plugin in pmix pmi2; do
    if timeout 60 srun --mpi="$plugin" -n 2 -c 1 -t 2 "$BIN" --backend cpu --size 32 --steps 2 --no-output \
        --quiet >"$TMP/probe-$plugin.out.log" 2>&1; then
        SRUN_MPI=$plugin
        break
    fi
done
if [[ -n "$SRUN_MPI" ]]; then
    say "srun --mpi=$SRUN_MPI starts golmpi's MPI ranks"
else
    say "no srun MPI plugin starts golmpi's ranks here; the srun path is not tested (see probe logs)"
    tail -n 5 "$TMP"/probe-*.out.log
fi

SIZE=256 STEPS=20 SAVE=5 CHUNK=2
export GOLMPI_BIN="$BIN" GOLMPI_SIZE=$SIZE GOLMPI_STEPS=$STEPS GOLMPI_SAVE_EVERY=$SAVE \
    GOLMPI_CHUNK=$CHUNK GOLMPI_BACKEND=cpu GOLMPI_ARGS="--seed 11"
NJOBS=0

# submit NAME LAUNCHER SCRIPT [sbatch options...]: sbatch --wait, then check exit and output.
submit() {
    local name=$1 launcher=$2 script=$3
    shift 3
    local out=$TMP/out-$name
    local -a envs=(GOLMPI_OUTDIR="$out" GOLMPI_LAUNCHER="$launcher" GOLMPI_SRUN_MPI="${SRUN_MPI:-pmix}")
    say "job $name: sbatch --wait $* $(basename "$script")  ($launcher)"
    local rc=0
    env "${envs[@]}" sbatch --wait --job-name="golmpi-$name" -o "$TMP/job-$name.out" -t 5 "$@" \
        "$script" ${SCRIPT_ARGS:-} >"$TMP/sbatch-$name.out.log" 2>&1 || rc=$?
    cat "$TMP/sbatch-$name.out.log"
    sed "s/^/    [$name] /" "$TMP/job-$name.out" 2>/dev/null
    [[ $rc == 0 ]] || die "job $name: sbatch --wait exited with $rc"
    grep -q "^+ .*$launcher" "$TMP/job-$name.out" || die "job $name: the script did not print its $launcher command"
    "$PY" "$HERE/slurm/check_output.py" "$out/life.h5" --size "$SIZE" --steps "$STEPS" \
        --save-every "$SAVE" --chunk "$CHUNK" || die "job $name: output check failed"
    NJOBS=$((NJOBS + 1))
}

J=$SRC/jobs
# The user's golmpi options on the sbatch line win over the script's own (GOLMPI_SIZE, _STEPS):
# jobs/README.md's `sbatch jobs/slurm_cpu.sbatch --steps 50`, once "--steps given twice".
if [[ "${GOLMPI_SLURM_ONLY:-}" != checkpoint ]]; then
    SCRIPT_ARGS="--steps 30 --size 128" SIZE=128 STEPS=30 submit user-args mpirun \
        "$J/slurm_cpu.sbatch" -N 1 -n 2 -c 1
fi
[[ "${GOLMPI_SLURM_ONLY:-}" != user-args ]] || { say "PASS: the user's options won"; exit 0; }
if [[ "${GOLMPI_SLURM_ONLY:-}" != checkpoint ]]; then
# The CPU script, all CPUs of the node in one rank's OpenMP threads.
if [[ -n "$SRUN_MPI" ]]; then
    submit cpu srun "$J/slurm_cpu.sbatch" -N 1 -n 1 --ntasks-per-node=1 -c "$CPUS"
else
    submit cpu mpirun "$J/slurm_cpu.sbatch" -N 1 -n 1 --ntasks-per-node=1 -c "$CPUS"
fi
# The multi-node script in CPU mode: 2 ranks (here on the one node), no GPUs asked for.
submit multi-mpirun mpirun "$J/slurm_multinode.sbatch" -N 1 --ntasks-per-node=2 -c 1 --gpus-per-node=0
if [[ -n "$SRUN_MPI" ]]; then
    submit multi-srun srun "$J/slurm_multinode.sbatch" -N 1 --ntasks-per-node=2 -c 1 --gpus-per-node=0
fi
# The CPU script, 2 ranks: the same seed gives the same frames whatever the rank count.
submit cpu2 mpirun "$J/slurm_cpu.sbatch" -N 1 -n 2 -c 1

"$PY" "$HERE/slurm/check_output.py" "$TMP/out-cpu/life.h5" --same-as "$TMP/out-multi-mpirun/life.h5" \
    --same-as "$TMP/out-cpu2/life.h5" || die "runs with 1 and 2 ranks differ"

# The scaling study as a batch job: 1 and 2 ranks started inside the allocation (srun when a
# plugin works, else mpirun); the script itself checks that golmpi ran on the ranks it asked for.
SCALING_LAUNCHER=mpirun
[[ -n "$SRUN_MPI" ]] && SCALING_LAUNCHER=srun
say "job scaling: sbatch --wait scaling.sbatch ($SCALING_LAUNCHER)"
rc=0
env GOLMPI_OUTDIR="$TMP/out-scaling" GOLMPI_LAUNCHER=$SCALING_LAUNCHER GOLMPI_SRUN_MPI="${SRUN_MPI:-pmix}" \
    GOLMPI_STRONG_SIZE=256 GOLMPI_STRONG_STEPS=10 GOLMPI_WEAK_SIZE=128 GOLMPI_WEAK_STEPS=10 \
    GOLMPI_SCALING_REPEAT=1 GOLMPI_PYTHON="$PY" \
    sbatch --wait --job-name=golmpi-scaling -o "$TMP/job-scaling.out" -t 5 -N 1 --ntasks-per-node=2 \
    -c 1 --gpus-per-node=0 "$J/scaling.sbatch" >"$TMP/sbatch-scaling.out.log" 2>&1 || rc=$?
cat "$TMP/sbatch-scaling.out.log"
sed "s/^/    [scaling] /" "$TMP/job-scaling.out" 2>/dev/null
[[ $rc == 0 ]] || die "job scaling: sbatch --wait exited with $rc"
grep -q "^+ $SCALING_LAUNCHER .*-n 2 " "$TMP/job-scaling.out" || die "job scaling: no 2-rank $SCALING_LAUNCHER command"
rows=$(grep -cE '^(strong|weak),[12],' "$TMP/out-scaling/scaling.csv")
[[ $rows == 4 ]] || die "job scaling: $rows rows in scaling.csv, expected 4"
NJOBS=$((NJOBS + 1))
fi # GOLMPI_SLURM_ONLY

# ---- a time limit that ends mid-run: checkpoint, requeue, resume -----------------------------
# A 1-minute job asked for USR1 45 s before its end (Slurm checks every ~30 s, so it comes 15 to
# 45 s in, never while the batch script's shell starts) runs a series that needs longer. The script
# forwards USR1 to mpirun, golmpi checkpoints and exits 4, the script requeues the job (scontrol
# requeue: Slurm itself requeues only on node failure or preemption, never on a time limit), and
# the requeued job, same job id, same output directory, resumes the series; again if it too is
# signalled. The final frame must equal a run that never stopped, and the index must list every
# chunk file once.
# The first run must still be running when its signal comes, whatever golmpi's speed: a timing
# run cannot promise that (under load it can be 100 times slower than the job it sized), so the
# first chunk's write is held 10 s (GOLMPI_DEBUG_WRITE_DELAY, as a slow disk), which holds the
# ranks at their next frame's hand-over, and the test signals the first run at once. The timing run
# (--stats wall_s) sizes the series to about 20 s of work, so a slower machine needs more runs,
# not a longer one.
CKPT_SIZE=1024
MPIRUN_CKPT=(mpirun --oversubscribe -n 2)
[[ "$(id -u)" == 0 ]] && MPIRUN_CKPT+=(--allow-run-as-root)
OMP_NUM_THREADS=1 "${MPIRUN_CKPT[@]}" "$BIN" --backend cpu --size $CKPT_SIZE --steps 20000 --no-output \
    --quiet --stats "$TMP/calibrate.json" >"$TMP/calibrate.out.log" 2>&1 || die "the timing run failed"
CKPT_SAVE=$("$PY" -c "import json, sys; t = max(json.load(open(sys.argv[1]))['wall_s'], 0.01)
print(max(1000, int(20000 * 20 / t / 9) // 1000 * 1000))" "$TMP/calibrate.json")
CKPT_STEPS=$((CKPT_SAVE * 9))
ckpt=(GOLMPI_OUTDIR="$TMP/out-ckpt" GOLMPI_LAUNCHER=mpirun GOLMPI_SIZE=$CKPT_SIZE GOLMPI_STEPS=$CKPT_STEPS
      GOLMPI_SAVE_EVERY=$CKPT_SAVE GOLMPI_CHUNK=2 GOLMPI_ARGS="--seed 12 --progress 2"
      GOLMPI_DEBUG_WRITE_DELAY=0:10)
say "job checkpoint: sbatch -t 1 --signal=B:USR1@45 slurm_cpu.sbatch (mpirun), --steps $CKPT_STEPS, requeued until done"
rc=0
env "${ckpt[@]}" sbatch --parsable --job-name=golmpi-ckpt -o "$TMP/job-ckpt.out" --open-mode=append \
    -t 1 --signal=B:USR1@45 -N 1 -n 2 -c 1 "$J/slurm_cpu.sbatch" >"$TMP/sbatch-ckpt.out.log" 2>&1 || rc=$?
[[ $rc == 0 ]] || { cat "$TMP/sbatch-ckpt.out.log"; die "job checkpoint: sbatch exited with $rc"; }
CKPT_JOB=$(tail -n1 "$TMP/sbatch-ckpt.out.log")
# sbatch --wait would return at the first requeue: poll the job until it has left the queue for
# good. Slurm makes a requeued job wait about 2 minutes (Reason=BeginTime); the test, not the
# script, moves that to now, to keep the test short, but only once the job has been pending for
# 10 s: slurmd refuses a relaunch that comes while it still cleans up the killed one ("Job
# already killed, do not launch batch job") and the job fails. Slurm checks signal times about
# every 30 s, so USR1@45 comes 15 to 45 s into the job; should a busy slurmctld be later than a
# fast run, the test sends the same USR1 to the batch script itself after 15 s (scancel --batch),
# in every run of the job that has not had one: under load the first run gets less done and more
# runs are needed, and a fallback for the first run alone left a later one to its time limit
# (TIMEOUT) whenever Slurm's own USR1 did not come in time.
pending=0 running=0 sent_for=0
for _ in $(seq 900); do
    info=$(scontrol show job "$CKPT_JOB" 2>/dev/null)
    st=$(grep -o 'JobState=[A-Z_]*' <<<"$info" | cut -d= -f2)
    [[ "$st" == COMPLETED || "$st" == FAILED || "$st" == CANCELLED || "$st" == TIMEOUT || -z "$st" ]] && break
    if [[ "$st" == PENDING ]] && grep -q 'Reason=BeginTime' <<<"$info"; then
        pending=$((pending + 1))
        ((pending < 10)) || scontrol update JobId="$CKPT_JOB" StartTime=now >/dev/null 2>&1 || true
    else
        pending=0
    fi
    if [[ "$st" == RUNNING ]]; then running=$((running + 1)); else running=0; fi
    # this run of the job: the script's start line; a signal: its "signal received" line
    runs=$(grep -c '^golmpi job [0-9]* on ' "$TMP/job-ckpt.out" 2>/dev/null)
    signals=$(grep -c 'signal received' "$TMP/job-ckpt.out" 2>/dev/null)
    # the first run at once (the script forwards it once golmpi's ranks are up, which the first
    # chunk's held write keeps at work): a run sized by a timing run under another load may be
    # far shorter than 15 s
    if ((running >= (${runs:-0} == 1 ? 1 : 15) && ${runs:-0} > ${signals:-0} && ${runs:-0} > sent_for)); then
        say "job checkpoint: run ${runs} of the job: no USR1 from Slurm after $running s; sending it with scancel --batch"
        scancel --batch --signal=USR1 "$CKPT_JOB" || true
        sent_for=$runs
    fi
    sleep 1
done
sed "s/^/    [ckpt] /" "$TMP/job-ckpt.out" 2>/dev/null | grep -v '^    \[ckpt\]   '
[[ "$st" == COMPLETED ]] || die "job checkpoint: ended in state '$st', not COMPLETED"
grep -q "requeueing job $CKPT_JOB" "$TMP/job-ckpt.out" ||
    die "job checkpoint: never checkpointed and requeued (the run ended before the signal?)"
grep -q "resuming its series" "$TMP/job-ckpt.out" || die "job checkpoint: the requeued job did not resume"
grep -q "golmpi: stopped by a signal at generation" "$TMP/job-ckpt.out" ||
    die "job checkpoint: golmpi never checkpointed (no 'stopped by a signal' line)"
say "job checkpoint: $(grep -c 'requeueing job' "$TMP/job-ckpt.out") requeue(s); the uninterrupted run for comparison"
OMP_NUM_THREADS=1 "${MPIRUN_CKPT[@]}" "$BIN" --backend cpu --size $CKPT_SIZE --steps $CKPT_STEPS \
    --save-every $CKPT_SAVE --chunk 2 --seed 12 --quiet --output "$TMP/ref-ckpt.h5" >"$TMP/ref-ckpt.out.log" 2>&1 || die "the uninterrupted run failed"
"$PY" - "$TMP/out-ckpt" "$TMP/ref-ckpt.h5" <<'PYEOF' || die "job checkpoint: the series differs"
import glob, os, sys
import h5py, numpy as np
out, ref = sys.argv[1], sys.argv[2]
with h5py.File(os.path.join(out, "life.h5"), "r") as f, h5py.File(ref, "r") as r:
    gens, rgens = list(f["generations"][:]), list(r["generations"][:])
    names = [s.file_name for s in f["frames"].virtual_sources()]
    on_disk = sorted(os.path.basename(p) for p in glob.glob(os.path.join(out, "life_*.h5")))
    problems = []
    if gens[-1] != rgens[-1] or not np.array_equal(f["frames"][-1], r["frames"][-1]):
        problems.append("the last frame differs from the uninterrupted run's")
    if not set(rgens) <= set(gens) or gens != sorted(set(gens)):
        problems.append("generations %s do not hold the uninterrupted run's %s" % (gens, rgens))
    for i, g in enumerate(rgens):
        if g in gens and not np.array_equal(f["frames"][gens.index(g)], r["frames"][i]):
            problems.append("frame at generation %d differs" % g)
    if sorted(names) != on_disk or len(set(names)) != len(names):
        problems.append("the index lists %s, the directory holds %s" % (names, on_disk))
    for p in problems:
        print("check: FAIL: " + p)
    print("check: %d frames, generations %s; %d chunk files, each once in the index" % (len(gens), gens, len(names)))
    sys.exit(1 if problems else 0)
PYEOF
NJOBS=$((NJOBS + 1))
say "PASS: $NJOBS jobs ran through sbatch --wait and wrote valid output"
