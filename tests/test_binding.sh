#!/bin/bash
# A warning at start-up when two ranks of one host are bound to the same core: two
# ranks pinned with taskset to CPU 0 must get it, ranks on CPUs 0 and 1 and unbound ranks must
# not. Needs 2 CPUs (77 otherwise). About 3 s.
#   test_binding.sh GOLMPI MPIEXEC [MPIEXEC FLAGS...]
set -euo pipefail
golmpi=$1
shift
[[ $(nproc --all) -ge 2 ]] || { echo "skip: one CPU"; exit 77; }
run() {
    "$@" --bind-to none -n 2 sh -c "$wrap" "$golmpi" --backend cpu --size 64 --steps 2 --no-output 2>&1
}
fail() { echo "FAIL: $*"; exit 1; }
wrap='taskset -c 0 "$0" "$@"'
out=$(run "$@")
grep -q "^golmpi: warning: ranks 0 and 1 on host .* are bound to the same core(s) (0 and 0" <<<"$out" ||
    fail "two ranks on CPU 0: no warning:"$'\n'"$out"
wrap='taskset -c $OMPI_COMM_WORLD_RANK "$0" "$@"'
out=$(run "$@")
! grep -q "warning: ranks" <<<"$out" || fail "ranks on CPUs 0 and 1 were warned:"$'\n'"$out"
wrap='"$0" "$@"'
out=$(run "$@")
! grep -q "warning: ranks" <<<"$out" || fail "unbound ranks were warned:"$'\n'"$out"
echo "PASS: shared cores warned of, separate and unbound ones not"
