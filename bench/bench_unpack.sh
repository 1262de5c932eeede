#!/bin/bash
# The CPU backend's unpack of frames to u8 (packed row words -> one byte per cell): an old golmpi
# against a new one, in the same run. golmpi's --stats gives frame_s, the time each rank spent
# producing frames (on the CPU backend, the unpack alone; the writes run on the writer thread and
# are not in it; the maximum over ranks). Each binary runs two lengths at SIZE^2, u8 frames every
# generation, CHUNK frames a file: LONG frames and 2*CHUNK frames. The difference is the unpack's
# steady state: both frame slots have had their pages touched in the short run's frames, so
# neither page faults nor process start-up count. Runs alternate new/old; each figure is the best
# of REPEAT. Both must write the same frames (checked on an odd grid on 3 ranks with h5diff).
#
#   bench/bench_unpack.sh NEW [OLD]
#   NEW, OLD: a golmpi binary, or a git revision, which is built here (Release, no CUDA) in a git
#             worktree under /tmp that is removed on exit.
#   env: SIZE (8192), CHUNK (2), LONG (12), RANKS (1), REPEAT (3), OMP_NUM_THREADS (1), TMPDIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(git -C "$here" rev-parse --show-toplevel)
SIZE=${SIZE:-8192} CHUNK=${CHUNK:-2} LONG=${LONG:-12} RANKS=${RANKS:-1} REPEAT=${REPEAT:-3}
SHORT=$((2 * CHUNK))
((LONG > SHORT)) || { echo "LONG ($LONG) must exceed 2*CHUNK ($SHORT)" >&2; exit 2; }
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
mpiexec=(mpiexec --oversubscribe)
[[ $(id -u) == 0 ]] && mpiexec+=(--allow-run-as-root)
work=$(mktemp -d "${TMPDIR:-/tmp}/golmpi-unpack.XXXXXX")
source "$here/revisions.sh"

# frame_s of one run of $2 frames (generations 0..$2-1) by binary $1
frame_seconds() {
  rm -rf "$work/run" && mkdir "$work/run"
  "${mpiexec[@]}" -n "$RANKS" "$1" --backend cpu --size "$SIZE" --seed 1 --density 0.5 \
    --steps $(($2 - 1)) --save-every 1 --chunk "$CHUNK" --frame-format u8 \
    --output "$work/run/life.h5" --stats "$work/run/stats.json" --quiet >/dev/null
  python3 -c "import json, sys; s = json.load(open(sys.argv[1])); assert s['frames'] == $2, s['frames']; print(f\"{s['frame_s']:.6f}\")" "$work/run/stats.json"
}
minimum() { python3 -c "import sys; print(f'{min(map(float, sys.argv[1:])):.6f}')" "$@"; }

new_and_old "$@"
echo "unpack to u8: ${SIZE}^2 random torus, frames every generation, chunk $CHUNK, $LONG and $SHORT frames, $RANKS rank(s) x $OMP_NUM_THREADS thread(s), best of $REPEAT"
declare -A runs
for ((i = 0; i < REPEAT; i++)); do
  for ((b = 0; b < ${#bins[@]}; b++)); do
    runs[$b,long]+=" $(frame_seconds "${bins[b]}" "$LONG")"
    runs[$b,short]+=" $(frame_seconds "${bins[b]}" "$SHORT")"
  done
done
declare -A rate
for ((b = 0; b < ${#bins[@]}; b++)); do
  long=$(minimum ${runs[$b,long]}) short=$(minimum ${runs[$b,short]})
  rate[$b]=$(python3 -c "print(f'{($LONG - $SHORT) * $SIZE**2 / $RANKS / max($long - $short, 1e-6):.3e}')")
  echo "${names[b]}: ${bins[b]}"
  echo "  frame_s, $LONG frames: $long s  (runs:${runs[$b,long]})"
  echo "  frame_s, $SHORT frames: $short s  (runs:${runs[$b,short]})"
  echo "  unpack, steady state: ${rate[$b]} cells/s per rank"
done
if [[ ${#bins[@]} -eq 2 ]]; then
  python3 -c "print(f'new/old: {${rate[0]} / ${rate[1]}:.1f}x')"
  if command -v h5diff >/dev/null; then
    for b in 0 1; do
      mkdir "$work/same$b"
      (cd "$work/same$b" && "${mpiexec[@]}" -n 3 "${bins[b]}" --backend cpu --width 1001 \
        --height 77 --seed 7 --density 0.3 --steps 5 --chunk 6 --frame-format u8 \
        --output s.h5 --quiet)
    done
    h5diff "$work/same0/s_000000-000005.h5" "$work/same1/s_000000-000005.h5" /frames &&
      echo "old and new write the same u8 frames (1001x77, 3 ranks, generations 0-5)"
  fi
fi
