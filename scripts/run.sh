#!/bin/bash
# Build golmpi, install it into ./install (GOLMPI_PREFIX), and run the main job:
# mpirun -n 4 golmpi --size 16384 (1000 generations, a frame every 250) into a run directory of
# its own, runs/<date-time>/ (ignored by git), so a second run never meets the first one's files.
#   scripts/run.sh                 the main job; GOLMPI_SIZE, GOLMPI_STEPS, GOLMPI_RANKS change it
#   scripts/run.sh ARGS...         golmpi ARGS... instead, in the current directory
# At the end it prints the one line that puts golmpi and golmpi-render on PATH (and its man page
# on MANPATH): source install/share/golmpi/env.sh
set -euo pipefail
caller=$PWD
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/deps.sh
source scripts/env.sh
prefix=${GOLMPI_PREFIX:-$root/install}
cmake -S . -B build "$cuda_flag" ${GOLMPI_CMAKE_ARGS:-}
cmake --build build -j "$(nproc)"
cmake --install build --prefix "$prefix" >/dev/null
export PATH="$prefix/bin:$PATH"
# the line to source, as short as it can be written from where the user stands
env_sh="$prefix/share/golmpi/env.sh"
[[ $env_sh == "$caller"/* ]] && env_sh=${env_sh#"$caller"/}
use_line="source $env_sh"

args=("$@")
rundir=""
if ((${#args[@]} == 0)); then
  rundir="$root/runs/$(date +%Y%m%d-%H%M%S)"
  n=1
  while [[ -e $rundir ]]; do rundir="$root/runs/$(date +%Y%m%d-%H%M%S)-$((n++))"; done
  mkdir -p "$rundir"
  args=(--size "${GOLMPI_SIZE:-16384}" --steps "${GOLMPI_STEPS:-1000}"
        --output "$rundir/life.h5" --stats "$rundir/life.stats.json")
  echo "golmpi: writing this run into $rundir"
fi
cd "$caller"
cmd=("${MPIRUN[@]}" -n "${GOLMPI_RANKS:-4}" golmpi "${args[@]}")
echo "+ ${cmd[*]}"
rc=0
"${cmd[@]}" || rc=$?
if [[ -n $rundir ]]; then
  echo "golmpi: this run's files, $(du -sh "$rundir" | cut -f1) in all, are in $rundir"
fi
echo "golmpi is installed in $prefix; to put golmpi and golmpi-render on your PATH:"
echo "  $use_line"
exit "$rc"
