#!/bin/bash
# golmpi's CPU backend against an earlier build of itself, in the same run: the rate (wall-clock
# cell updates/s from --stats) at each size, old and new runs interleaved (old, new, old, new, ...)
# so that load from other users of the machine falls on both alike, the best of REPEAT of each.
# Both runs must end with the same population, or the script fails.
#
#   bench/bench_cpu_vs_prev.sh NEW_GOLMPI OLD_GOLMPI   two binaries
#   bench/bench_cpu_vs_prev.sh [NEW_GOLMPI]            OLD is built from REV (default HEAD~1) in a
#                                                      temporary git worktree, removed at exit
#   env: SIZES ("4096 16384"), STEPS ("10000 1000", one per size: about a second each),
#        RANKS (2), REPEAT (3),
#        RULE (B3/S23), REV (HEAD~1), JOBS (2: build parallelism)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/stats.sh
source "$here/stats.sh"
repo=$(cd "$here/.." && pwd)
SIZES=${SIZES:-"4096 16384"} STEPS=${STEPS:-"10000 1000"} RANKS=${RANKS:-2} REPEAT=${REPEAT:-3}
RULE=${RULE:-B3/S23} REV=${REV:-HEAD~1} JOBS=${JOBS:-2}
new=$(realpath "${1:-build/golmpi}")
work=$(mktemp -d)
tree=
cleanup() {
  if [[ -n $tree ]]; then git -C "$repo" worktree remove --force "$tree" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

if [[ $# -ge 2 ]]; then
  old=$(realpath "$2")
else
  # the CPU code does not depend on CUDA, so the old build leaves it out to build faster
  tree="$work/old-src"
  git -C "$repo" worktree add --quiet --detach "$tree" "$REV"
  cmake -S "$tree" -B "$work/old-build" -DGOLMPI_ENABLE_CUDA=OFF >/dev/null
  cmake --build "$work/old-build" -j"$JOBS" --target golmpi >/dev/null
  old="$work/old-build/golmpi"
  echo "old: $REV = $(git -C "$repo" rev-parse --short "$REV"), built in a temporary worktree"
fi
mpiexec=(mpiexec --oversubscribe -n "$RANKS")
[[ $(id -u) == 0 ]] && mpiexec=(mpiexec --allow-run-as-root --oversubscribe -n "$RANKS")

# one run: prints "rate population"
run() {
  local bin=$1 size=$2 steps=$3 json="$work/stats.json"
  "${mpiexec[@]}" "$bin" --backend cpu --size "$size" --steps "$steps" --rule "$RULE" --seed 1 \
    --density 0.5 --no-output --quiet --stats "$json"
  stats_fields "$json" whole_run_cell_updates_per_s population
}

echo "old: $old"
echo "new: $new"
echo "$RULE, torus, density 0.5, seed 1, $RANKS ranks, no output; best of $REPEAT interleaved runs each"
status=0
for size in $SIZES; do
  steps=$(steps_for "$size")
  best_old=0 best_new=0 pop_old='' pop_new=''
  for ((k = 0; k < REPEAT; k++)); do
    read -r r pop_old < <(run "$old" "$size" "$steps")
    best_old=$(python3 -c "print(max($best_old, $r))")
    read -r r pop_new < <(run "$new" "$size" "$steps")
    best_new=$(python3 -c "print(max($best_new, $r))")
  done
  python3 - "$size" "$steps" "$best_old" "$best_new" <<'PY'
import sys
size, steps = int(sys.argv[1]), int(sys.argv[2]); old, new = map(float, sys.argv[3:5])
print(f"{size}^2 x {steps} gens: old {old:.3e}  new {new:.3e} cell updates/s  new/old {new / old:.2f}x")
PY
  if [[ $pop_old != "$pop_new" ]]; then
    echo "MISMATCH at $size^2: population old $pop_old, new $pop_new" >&2
    status=1
  fi
done
exit $status
