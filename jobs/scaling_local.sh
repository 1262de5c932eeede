#!/bin/bash
# The scaling study of jobs/scaling.sbatch on this machine with mpirun, CPU backend by default,
# then the efficiency plot (bench/plot_scaling.py, when python3 has matplotlib).
#
#   jobs/scaling_local.sh [extra golmpi options]
#   GOLMPI_BIN=build/golmpi GOLMPI_OUTDIR=runs/scaling jobs/scaling_local.sh
#   GOLMPI_BACKEND=cuda GOLMPI_SCALING_RANKS="1 2 4" GOLMPI_STRONG_SIZE=32768 jobs/scaling_local.sh
#
# Defaults (a few seconds per run on one core of a 2020s CPU): ranks 1 and 2 (GOLMPI_RANKS sets
# the largest), strong 8192 x 8192 for 2000 generations, weak 4096 x 4096 per rank for 8000
# generations, one OpenMP thread per rank, best of 3. Every GOLMPI_* setting of
# jobs/scaling.sbatch applies; GOLMPI_SCALING_PLOT=0 skips the plot, 1 requires it.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

export GOLMPI_BACKEND="${GOLMPI_BACKEND:-cpu}"
export GOLMPI_LAUNCHER="${GOLMPI_LAUNCHER:-mpirun}"
export GOLMPI_THREADS="${GOLMPI_THREADS:-1}"
export GOLMPI_STRONG_SIZE="${GOLMPI_STRONG_SIZE:-8192}" GOLMPI_STRONG_STEPS="${GOLMPI_STRONG_STEPS:-2000}"
export GOLMPI_WEAK_SIZE="${GOLMPI_WEAK_SIZE:-4096}" GOLMPI_WEAK_STEPS="${GOLMPI_WEAK_STEPS:-8000}"
export GOLMPI_OUTDIR="${GOLMPI_OUTDIR:-$PWD/golmpi-runs/scaling-local-$(date +%Y%m%d-%H%M%S)-$$}"
export GOLMPI_SCALING_CSV="${GOLMPI_SCALING_CSV:-$GOLMPI_OUTDIR/scaling.csv}"
: "${GOLMPI_SCALING_PLOT:=auto}"       # auto: plot when matplotlib is there; 0: never; 1: must
: "${GOLMPI_PYTHON:=python3}"
export GOLMPI_PYTHON

# The study itself: the same script that runs under Slurm (here it picks mpirun).
bash "$here/scaling.sbatch" "$@"
[[ "${GOLMPI_DRY_RUN:-0}" == 1 || "$GOLMPI_SCALING_PLOT" == 0 ]] && exit 0

# bench/ beside jobs/: in the source tree, and under <prefix>/share/golmpi once installed.
plot=$here/../bench/plot_scaling.py
[[ -f "$plot" ]] || plot=""
png=${GOLMPI_SCALING_CSV%.csv}.png
if [[ -n "$plot" ]] && "$GOLMPI_PYTHON" -c "import matplotlib" 2>/dev/null; then
    "$GOLMPI_PYTHON" "$plot" "$GOLMPI_SCALING_CSV" -o "$png"
    echo "plot: $png"
elif [[ "$GOLMPI_SCALING_PLOT" == 1 ]]; then
    echo "error: cannot plot: ${plot:-plot_scaling.py not found}; matplotlib for $GOLMPI_PYTHON?" \
         "(Debian: apt-get install python3-matplotlib)" >&2
    exit 1
else
    echo "no plot: $GOLMPI_PYTHON lacks matplotlib (Debian: apt-get install python3-matplotlib)"
fi
