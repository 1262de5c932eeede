#!/bin/bash
# Start-up of a random-start run on the CPU: an old golmpi against a new one, in the same run.
# golmpi reports no setup time, so this times the whole command (mpiexec, MPI_Init, allocation,
# the random start, no generations, no output) at SIZE^2 and at FLOOR^2; the difference is the
# cost that grows with the grid, which is almost all the building of the random start.
# Runs alternate old/new; each figure is the best of REPEAT. Both must build the same start
# (checked on a small odd grid through h5diff when h5diff is installed).
#
#   bench/bench_startup.sh NEW [OLD]
#   NEW, OLD: a golmpi binary, or a git revision, which is built here (Release, no CUDA) in a git
#             worktree under /tmp that is removed on exit.
#   env: SIZE (16384), FLOOR (64), RANKS (2), REPEAT (3), OMP_NUM_THREADS (1)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(git -C "$here" rev-parse --show-toplevel)
SIZE=${SIZE:-16384} FLOOR=${FLOOR:-64} RANKS=${RANKS:-2} REPEAT=${REPEAT:-3}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
mpiexec=(mpiexec --oversubscribe)
[[ $(id -u) == 0 ]] && mpiexec+=(--allow-run-as-root)
work=$(mktemp -d /tmp/golmpi-startup.XXXXXX)
source "$here/revisions.sh"

start() { "${mpiexec[@]}" -n "$RANKS" "$1" --backend cpu --size "$2" --seed 1 --density 0.5 --steps 0 --no-output --quiet; }
seconds() {
  local t0 t1
  t0=$(date +%s.%N); start "$@" >/dev/null; t1=$(date +%s.%N)
  python3 -c "print(f'{$t1 - $t0:.3f}')"
}
minimum() { python3 -c "import sys; print(f'{min(map(float, sys.argv[1:])):.3f}')" "$@"; }

new_and_old "$@"
echo "start-up: ${SIZE}^2 and ${FLOOR}^2 random torus (seed 1, density 0.5), --steps 0 --no-output, $RANKS ranks x $OMP_NUM_THREADS thread(s), best of $REPEAT"
declare -A runs
for ((i = 0; i < REPEAT; i++)); do
  for ((b = ${#bins[@]} - 1; b >= 0; b--)); do
    runs[$b,big]+=" $(seconds "${bins[b]}" "$SIZE")"
    runs[$b,floor]+=" $(seconds "${bins[b]}" "$FLOOR")"
  done
done
declare -A grow
for ((b = 0; b < ${#bins[@]}; b++)); do
  big=$(minimum ${runs[$b,big]}) floor=$(minimum ${runs[$b,floor]})
  grow[$b]=$(python3 -c "print(f'{$big - $floor:.3f}')")
  echo "${names[b]}: ${bins[b]}"
  echo "  whole command ${SIZE}^2: $big s  (runs:${runs[$b,big]})"
  echo "  whole command ${FLOOR}^2: $floor s  (runs:${runs[$b,floor]})"
  echo "  ${SIZE}^2 minus ${FLOOR}^2: ${grow[$b]} s  ($(python3 -c "print(f'{$SIZE**2 / max($big - $floor, 1e-3):.2e}')") cells/s)"
done
if [[ ${#bins[@]} -eq 2 ]]; then
  python3 -c "print(f'old/new, {$SIZE}^2 minus {$FLOOR}^2: {${grow[1]} / max(${grow[0]}, 1e-3):.1f}x')"
  if command -v h5diff >/dev/null; then
    for b in 0 1; do
      (cd "$work" && "${mpiexec[@]}" -n 3 "${bins[b]}" --backend cpu --width 1001 --height 77 --seed 7 \
        --density 0.3 --steps 0 --frame-format packed --output "s$b.h5" --quiet)
    done
    h5diff "$work/s0_000000.h5" "$work/s1_000000.h5" /frames && echo "old and new build the same start (1001x77, 3 ranks)"
  fi
fi
