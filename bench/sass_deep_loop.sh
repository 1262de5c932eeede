#!/bin/bash
# The deep kernel's row loop in sm_90 SASS, counted by opcode (bench/sass_loops.py): what the
# instruction-bound estimate in docs/PERFORMANCE.md ("GPU: the multi-generation kernel") is built
# from, without a GPU. Compiles cuda/life_cuda.cu for sm_90 with the build's flags and reads
# the cubin with cuobjdump (the CUDA toolkit's, or the PyPI wheel nvidia-cuda-cuobjdump's:
# CUOBJDUMP=path). Also prints ptxas' registers per thread for each instantiation.
#
#   bench/sass_deep_loop.sh [REV]        (default: the working tree; REV: that commit's kernel)
#   env: K (8), CONWAY (1), RAGGED (0), LOOPS (4), ARCH (sm_90), CUOBJDUMP
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
K=${K:-8} CONWAY=${CONWAY:-1} RAGGED=${RAGGED:-0} LOOPS=${LOOPS:-4} ARCH=${ARCH:-sm_90}
CUOBJDUMP=${CUOBJDUMP:-$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[[ -x $CUOBJDUMP ]] || { echo "no cuobjdump: set CUOBJDUMP (pip download nvidia-cuda-cuobjdump)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
src="$repo/cuda/life_cuda.cu"
if [[ $# -ge 1 ]]; then
  # the kernel of another commit, compiled inside the tree so its includes resolve
  src="$repo/cuda/.sass_deep_loop_$$.cu"
  git -C "$repo" show "$1:cuda/life_cuda.cu" >"$src"
  trap 'rm -rf "$work" "$src"' EXIT
fi
mkdir -p "$work/generated"
echo '#define GOLMPI_GIT_COMMIT "sass"' >"$work/generated/golmpi_git.h"
"$NVCC" -arch="$ARCH" -cubin -O3 -std=c++17 -DGOLMPI_HAVE_CUDA -I"$repo" -I"$work/generated" \
  $(mpicc --showme:compile) --resource-usage "$src" -o "$work/k.cubin" 2>"$work/ptxas.txt"
"$CUOBJDUMP" -sass "$work/k.cubin" >"$work/k.sass"
name="deep_kernelILi${K}ELb${CONWAY}ELb${RAGGED}E"
echo "kernel: deep_kernel<K=$K, Conway=$CONWAY, Ragged=$RAGGED>, $ARCH, ${1:-working tree}"
awk -v n="$name" '/Compiling entry function/ { on = index($0, n) > 0 } on && /Used [0-9]+ registers/ { match($0, /Used [0-9]+ registers/); print "ptxas: " substr($0, RSTART, RLENGTH) " a thread"; on = 0 }' "$work/ptxas.txt"
echo "loops, largest first (instructions, then by opcode):"
python3 "$here/sass_loops.py" "$work/k.sass" "$name" "$LOOPS"
