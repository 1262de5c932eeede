#!/bin/bash
# Halo messages and halo time against --halo-depth, on the CPU backend: for each size and depth,
# one run (best of REPEAT by rate) with --stats, giving golmpi's own count of the messages every
# rank sent (halo_messages, counted where the halo is posted: one per neighbour per exchange), the
# messages per generation, the time in the halo (max over ranks: posting, and waiting for what the
# interior did not hide) per generation, and the rate. Depth 1 is the exchange pattern of the code
# before deep halos (one row each way every generation). The final populations must agree across
# depths, and messages per generation must fall as 1/k (2 x RANKS / k on a torus), or it fails.
#
#   bench/bench_halo_depth.sh [GOLMPI]        (default build/golmpi)
#   env: SIZES ("4096 16384"), STEPS ("1024 128", one per size), DEPTHS ("1 2 4 8 16 auto"),
#        RANKS (2), REPEAT (3), RULE (B3/S23)
set -euo pipefail
# shellcheck source=bench/stats.sh
source "$(dirname "$0")/stats.sh"
SIZES=${SIZES:-"4096 16384"} STEPS=${STEPS:-"1024 128"} DEPTHS=${DEPTHS:-"1 2 4 8 16 auto"}
RANKS=${RANKS:-2} REPEAT=${REPEAT:-3} RULE=${RULE:-B3/S23}
bin=$(realpath "${1:-build/golmpi}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpiexec=(mpiexec --oversubscribe -n "$RANKS")
[[ $(id -u) == 0 ]] && mpiexec=(mpiexec --allow-run-as-root --oversubscribe -n "$RANKS")

# one run: prints "rate depth messages halo_s population"
run() {
  local size=$1 steps=$2 depth=$3 json="$work/stats.json"
  "${mpiexec[@]}" "$bin" --backend cpu --size "$size" --steps "$steps" --rule "$RULE" --seed 1 \
    --density 0.5 --halo-depth "$depth" --no-output --quiet --stats "$json"
  stats_fields "$json" whole_run_cell_updates_per_s halo_depth halo_messages halo_s population
}

echo "golmpi: $bin"
echo "$RULE, torus, density 0.5, seed 1, $RANKS ranks, ${OMP_NUM_THREADS:-default} threads/rank, no output; best of $REPEAT runs"
status=0
for size in $SIZES; do
  steps=$(steps_for "$size")
  printf '\n%s^2 x %s generations\n' "$size" "$steps"
  printf '%6s %6s %10s %12s %12s %14s %12s\n' depth k messages "msgs/gen" "halo s" "halo us/gen" "cells/s"
  pop_first=
  for depth in $DEPTHS; do
    best=0 line=
    for ((r = 0; r < REPEAT; r++)); do
      read -r rate k msgs halo pop < <(run "$size" "$steps" "$depth")
      if python3 -c "import sys; sys.exit(0 if $rate > $best else 1)"; then
        best=$rate line="$k $msgs $halo $pop"
      fi
    done
    read -r k msgs halo pop <<<"$line"
    python3 - "$depth" "$k" "$msgs" "$halo" "$best" "$steps" "$RANKS" <<'PY' || status=1
import sys
depth, k, msgs, halo, rate, steps, ranks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
    float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
per_gen = msgs / steps
print(f"{depth:>6} {k:>6} {msgs:>10} {per_gen:>12.3f} {halo:>12.4f} {halo / steps * 1e6:>14.1f} {rate:>12.3e}")
want = 2 * ranks * -(-steps // k) / steps  # one exchange per k generations, rounded up
if abs(per_gen - want) > 1e-9:
    print(f"  MISMATCH: {per_gen} messages a generation, expected {want}", file=sys.stderr)
    sys.exit(1)
PY
    if [[ -z $pop_first ]]; then pop_first=$pop; fi
    if [[ $pop != "$pop_first" ]]; then
      echo "MISMATCH at $size^2 depth $depth: population $pop, depth ${DEPTHS%% *} gave $pop_first" >&2
      status=1
    fi
  done
done
exit $status
