#!/bin/bash
# The CPU step's builds against each other (cpu/cpu_strip.c, once per instruction set): one
# rank of one thread, so the figure is one core's rate, for each set this CPU runs (GOLMPI_CPU_ISA)
# and each size, the sets interleaved (base, avx2, avx512, base, ...) so that load from other
# users of the machine falls on all alike, the best of REPEAT. The --stats 'kernel' field must
# name the set asked for, and every set must end with the same population, or it fails.
#
#   bench/bench_cpu_isa.sh [GOLMPI]        (default build/golmpi)
#   env: SIZES ("4096 16384"), STEPS ("4000 300", one per size), ISAS ("base avx2 avx512"),
#        REPEAT (3), RULE (B3/S23)
set -euo pipefail
# shellcheck source=bench/stats.sh
source "$(dirname "$0")/stats.sh"
SIZES=${SIZES:-"4096 16384"} STEPS=${STEPS:-"4000 300"} ISAS=${ISAS:-"base avx2 avx512"}
REPEAT=${REPEAT:-3} RULE=${RULE:-B3/S23}
bin=$(realpath "${1:-build/golmpi}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# one run: prints "rate population kernel", or nothing when golmpi refuses the set (exit 2)
run() {
  local isa=$1 size=$2 steps=$3 json="$work/stats.json"
  rm -f "$json"
  if ! GOLMPI_CPU_ISA=$isa OMP_NUM_THREADS=1 "$bin" --backend cpu --size "$size" --steps "$steps" \
    --rule "$RULE" --seed 1 --density 0.5 --no-output --quiet --stats "$json" 2>"$work/err"; then
    grep -q "GOLMPI_CPU_ISA=$isa" "$work/err" || { cat "$work/err" >&2; exit 1; }
    return 0
  fi
  stats_fields "$json" whole_run_cell_updates_per_s population kernel
}

echo "golmpi: $bin"
echo "$RULE, torus, density 0.5, seed 1, 1 rank of 1 thread, no output; best of $REPEAT interleaved runs"
read -r -a isas <<<"$ISAS"
status=0
for size in $SIZES; do
  steps=$(steps_for "$size")
  declare -A best=() pop=()
  for ((k = 0; k < REPEAT; k++)); do
    for isa in "${isas[@]}"; do
      read -r rate p kernel < <(run "$isa" "$size" "$steps") || true
      [[ -z ${rate:-} ]] && continue
      if [[ $kernel != "$isa" ]]; then
        echo "GOLMPI_CPU_ISA=$isa ran the $kernel kernel" >&2
        status=1
      fi
      best[$isa]=$(python3 -c "print(max(${best[$isa]:-0}, $rate))")
      pop[$isa]=$p
      rate=''
    done
  done
  echo
  echo "$size^2 x $steps generations"
  printf '%8s %14s %10s\n' isa cells/s "/ base"
  for isa in "${isas[@]}"; do
    if [[ -z ${best[$isa]:-} ]]; then
      printf '%8s %s\n' "$isa" "  (refused: not on this CPU or build)"
      continue
    fi
    python3 -c "import sys; r, b = float(sys.argv[2]), float(sys.argv[3] or 0); print(f'{sys.argv[1]:>8} {r:14.3e} {r / b if b else float(\"nan\"):9.2f}x')" \
      "$isa" "${best[$isa]}" "${best[base]:-}"
  done
  if [[ $(printf '%s\n' "${pop[@]}" | sort -u | wc -l) -gt 1 ]]; then
    echo "MISMATCH at $size^2: populations ${pop[*]}" >&2
    status=1
  fi
  unset best pop
done
exit $status
