#!/bin/bash
# The model of a pass (cuda/shape_model.h, docs/PERFORMANCE.md "The model of a pass"): the
# predicted rate of every kernel shape on one rank's slab, from the build's tables and a GPU's
# constants; no GPU needed. Runs tools/golmpi-model of a build (GOLMPI_MODEL, else the first of
# build/, build-model/ and build-cuda/ that has it).
#
#   bench/gpu_model.sh --gpu h200|h100 --width W --height H [--depth K] [--boundary torus|dead]
#                      [--rule R] [--ranks N] [--kernel NAME|auto]
#       `NAME RATE` a line per candidate shape (cell updates/s), the one auto takes first.
#   bench/gpu_model.sh --hook WIDTH HEIGHT RANKS HALO
#       bench/gpu_bench.sh's MODEL_CMD: the whole run's rate auto's shape would give WIDTH x HEIGHT
#       on RANKS ranks sharing one GPU under MPS (torus, golmpi's default; each rank HEIGHT/RANKS
#       rows, the ranks side by side), on
#       the GPU nvidia-smi names (GOLMPI_MODEL_GPU overrides; h200 when neither says).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
tool=${GOLMPI_MODEL:-}
if [[ -z $tool ]]; then
  for b in build build-model build-cuda; do
    [[ -x $repo/$b/tools/golmpi-model ]] && { tool=$repo/$b/tools/golmpi-model; break; }
  done
fi
[[ -n $tool && -x $tool ]] || { echo "gpu_model.sh: no golmpi-model: build golmpi, or set GOLMPI_MODEL" >&2; exit 2; }
if [[ ${1:-} == --hook ]]; then
  [[ $# == 5 ]] || { echo "gpu_model.sh --hook WIDTH HEIGHT RANKS HALO" >&2; exit 2; }
  width=$2 height=$3 ranks=$4
  gpu=${GOLMPI_MODEL_GPU:-}
  if [[ -z $gpu ]] && command -v nvidia-smi >/dev/null; then
    name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || true)
    case $name in *H100*) gpu=h100 ;; *H200*) gpu=h200 ;; esac
  fi
  line=$("$tool" --gpu "${gpu:-h200}" --width "$width" --height $((height / ranks)) \
    --boundary torus --ranks "$ranks" | head -1)
  # the ranks run side by side, each at its slab's rate: the run's rate is their sum
  awk -v r="${line#* }" -v n="$ranks" 'BEGIN { printf "%.3e\n", r * n }'
  exit 0
fi
exec "$tool" "$@"
