#!/bin/bash
# Build golmpi and run every test with ctest. GPU tests report "skipped" without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh --test
source scripts/env.sh
cmake -S . -B build "$cuda_flag" ${GOLMPI_CMAKE_ARGS:-}
cmake --build build -j "$(nproc)"
ctest --test-dir build --output-on-failure -j "$(nproc)" "$@"
