#!/bin/bash
# Build golmpi and run the main job: mpirun -n 4 golmpi --size 16384 (1000 generations, a frame
# every 250, into ./life.h5 and its chunk files). Arguments replace the golmpi options.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
source scripts/env.sh
cmake -S . -B build "$cuda_flag" ${GOLMPI_CMAKE_ARGS:-}
cmake --build build -j "$(nproc)"
args=("$@")
((${#args[@]})) || args=(--size 16384 --force)
set -x
"${MPIRUN[@]}" -n "${GOLMPI_RANKS:-4}" build/golmpi "${args[@]}"
