#!/bin/bash
# Build golmpi, install it into ./install (GOLMPI_PREFIX), and run the main job:
# mpirun -n 4 golmpi --size 16384 (1000 generations, a frame every 250) into a run directory of
# its own, runs/<date-time>/ (ignored by git), so a second run never meets the first one's files.
#   scripts/run.sh                 the main job; GOLMPI_SIZE, GOLMPI_STEPS, GOLMPI_RANKS change it
#   scripts/run.sh ARGS...         golmpi ARGS... instead, in the current directory
# It installs golmpi, golmpi-render, golmpi-view and the man page, and stops naming any of them
# that is missing. At the end it prints the one line that puts them on PATH and MANPATH (and sets
# GOLMPI_SHARE, the installed patterns, job scripts and plotting tools):
#   source install/share/golmpi/env.sh
set -euo pipefail
# one line naming the command that stopped the script
trap 'echo "run.sh: FAILED: $BASH_COMMAND (exit $?)" >&2' ERR
caller=$PWD
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/deps.sh
source scripts/env.sh
prefix=${GOLMPI_PREFIX:-$root/install}
cmake -S . -B build "$cuda_flag" ${GOLMPI_CMAKE_ARGS:-}
cmake --build build -j "$(nproc)"
cmake --install build --prefix "$prefix" >/dev/null
# what the README promises after `source .../env.sh`
for f in bin/golmpi bin/golmpi-render bin/golmpi-view share/man/man1/golmpi.1 share/golmpi/env.sh; do
  [[ -e $prefix/$f ]] && continue
  echo "run.sh: $prefix/$f was not installed" >&2
  [[ $f == bin/golmpi-render ]] &&
    echo "run.sh: configuring found no libpng (scripts/deps.sh installs libpng-dev)" >&2
  exit 1
done
command -v man >/dev/null || { echo "run.sh: no man command (scripts/deps.sh installs man-db)" >&2; exit 1; }
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
