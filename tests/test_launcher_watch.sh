#!/bin/bash
# The job scripts end a launcher that outlives its ranks, learning the ranks' exit code from the
# output's log when the launcher does not report it (mpirun can lose the ranks' abort messages).
# A stand-in mpirun (first in PATH) plays the launcher; no MPI, no Slurm:
#   1. it appends a rank's fatal line, "(exit 6)" at its end, to the output's log, says nothing,
#      and never exits: the script ends it GOLMPI_LAUNCHER_GRACE s later and exits 6;
#   2. the log already holds such a line from an earlier attempt, and the launcher exits 0 after
#      a few seconds: the old line is no reason to end it, and the job's code is 0.
# Usage: test_launcher_watch.sh SCRIPT... (jobs/slurm_cpu.sbatch, slurm_multinode.sbatch, ...)
set -uo pipefail
TMP=$(mktemp -d /tmp/golmpi-watch.XXXXXX)
trap 'rm -rf "$TMP"' EXIT # a stand-in left by a failed run ends by itself (sleep 120)
fail() {
    echo "test_launcher_watch: FAIL: $*" >&2
    exit 1
}
mkdir -p "$TMP/bin"
# the stand-in: FAKE_MODE=hang (a fatal line, then silence) or FAKE_MODE=done (exit 0 in 6 s, three times the grace)
cat >"$TMP/bin/mpirun" <<'EOF'
#!/bin/bash
out=""
while (($#)); do [[ $1 == --output ]] && out=$2; shift; done
if [[ $FAKE_MODE == hang ]]; then
    echo "$(date -u +%FT%TZ) golmpi: rank 1 on host stand-in: no halo row arrived from rank 2; aborting every rank (exit 6)" >>"${out%.h5}.log"
    exec sleep 120
fi
sleep 6
EOF
chmod +x "$TMP/bin/mpirun"

# run_script SCRIPT MODE DIR: the script's exit code in RC, its seconds in TOOK, its output in DIR.out
run_script() {
    local t0=$SECONDS
    RC=0
    env PATH="$TMP/bin:$PATH" FAKE_MODE="$2" GOLMPI_LAUNCHER=mpirun GOLMPI_LAUNCHER_GRACE=2 \
        GOLMPI_REQUEUE=0 GOLMPI_PEER_REQUEUES=0 GOLMPI_BIN=true GOLMPI_OUTPUT="$3/life.h5" \
        timeout 60 bash "$1" >"$3.out" 2>&1 || RC=$?
    TOOK=$((SECONDS - t0))
}

for script in "$@"; do
    name=$(basename "$script")
    run_script "$script" hang "$TMP/$name-hang"
    [[ $RC == 6 ]] || fail "$name: the launcher that lost its ranks' messages: exit $RC, not 6 ($TOOK s): $(tail -n 15 "$TMP/$name-hang.out")"
    grep -q "the ranks ended with exit 6; mpirun still runs 2 s later" "$TMP/$name-hang.out" ||
        fail "$name: no word that the script ended mpirun: $(tail -n 15 "$TMP/$name-hang.out")"
    echo "test_launcher_watch: ok: $name ended the silent launcher ${TOOK} s in, exit 6"

    mkdir -p "$TMP/$name-done"
    echo "2026-01-01T00:00:00Z golmpi: rank 3 on host old: an earlier attempt (exit 6)" >"$TMP/$name-done/life.log"
    run_script "$script" done "$TMP/$name-done"
    [[ $RC == 0 ]] || fail "$name: an earlier attempt's line in the log: exit $RC, not 0: $(tail -n 15 "$TMP/$name-done.out")"
    if grep -q "still runs" "$TMP/$name-done.out"; then
        fail "$name: an earlier attempt's line in the log ended this launcher"
    fi
    echo "test_launcher_watch: ok: $name left a launcher alone for an earlier attempt's line (exit 0)"
done
