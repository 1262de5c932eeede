#!/bin/bash
# golmpi's CPU backend (2 ranks) against Golly's QuickLife (bgolly) on the same random torus soup.
# Each rate comes from the difference of two run lengths, so start-up and loading cancel out:
#   rate = cells * (N2 - N1) / (t(N2) - t(N1))
# golmpi is much faster, so it runs longer (G1, G2) for the difference to dwarf start-up noise.
# Both programs also run N2 generations to a final pattern, which must agree cell for cell.
#
#   bench/bench_cpu_vs_bgolly.sh [build/golmpi]
#   env: SIZE (4096), N1 (200), N2 (1000) for bgolly, G1 (1000), G2 (9000) for golmpi,
#        RANKS (2), REPEAT (3: the best of REPEAT timings)
set -euo pipefail
golmpi=$(realpath "${1:-build/golmpi}")
here=$(cd "$(dirname "$0")" && pwd)
SIZE=${SIZE:-4096} N1=${N1:-200} N2=${N2:-1000} G1=${G1:-1000} G2=${G2:-9000} RANKS=${RANKS:-2} REPEAT=${REPEAT:-3}
PY=python3; $PY -c "import h5py" 2>/dev/null || PY=/usr/bin/python3
command -v bgolly >/dev/null || { echo "bgolly not found: apt-get install golly" >&2; exit 2; }
mpiexec=(mpiexec --oversubscribe -n "$RANKS")
[[ $(id -u) == 0 ]] && mpiexec=(mpiexec --allow-run-as-root --oversubscribe -n "$RANKS")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# best wall time of REPEAT runs of a command, in seconds
best() {
  local b=
  for ((i = 0; i < REPEAT; i++)); do
    local t0 t1
    t0=$(date +%s.%N); "$@" >/dev/null; t1=$(date +%s.%N)
    b=$(python3 -c "t=$t1-$t0; b='$b'; print(t if not b or t < float(b) else b)")
  done
  echo "$b"
}

echo "soup: ${SIZE}x${SIZE} torus, B3/S23, density 0.5, seed 1; golmpi $G1 and $G2 generations on $RANKS ranks, bgolly $N1 and $N2"
"${mpiexec[@]}" "$golmpi" --backend cpu --size "$SIZE" --steps 0 --seed 1 --density 0.5 \
  --output soup.h5 --quiet
$PY "$here/frame_to_rle.py" soup.h5 soup.rle

g() { "${mpiexec[@]}" "$golmpi" --backend cpu --size "$SIZE" --seed 1 --density 0.5 --no-output --quiet --steps "$1"; }
b() { bgolly -a QuickLife -q -q -m "$1" soup.rle; }
tg1=$(best g "$G1"); tg2=$(best g "$G2")
tb1=$(best b "$N1"); tb2=$(best b "$N2")

# the same answer: both final grids, cell for cell
"${mpiexec[@]}" "$golmpi" --backend cpu --size "$SIZE" --seed 1 --density 0.5 --steps "$N2" \
  --save-every "$N2" --chunk 1 --output final.h5 --quiet
$PY "$here/frame_to_rle.py" final.h5 golmpi_final.rle
bgolly -a QuickLife -q -q -m "$N2" -o bgolly_final.rle soup.rle
$PY - "$SIZE" <<'PY'
import sys, h5py, numpy as np
n = int(sys.argv[1])
def read_rle(path):
    grid = np.zeros((n, n), np.uint8); x = y = 0; num = ""
    lines = [l for l in open(path) if not l.startswith("#") and not l.startswith("x")]
    for ch in "".join(lines):
        if ch.isspace(): continue
        if ch.isdigit(): num += ch; continue
        k = int(num or 1); num = ""
        if ch == "o": grid[y, x:x + k] = 1; x += k
        elif ch == "b": x += k
        elif ch == "$": y += k; x = 0
        elif ch == "!": break
    return grid
a, b = read_rle("golmpi_final.rle"), read_rle("bgolly_final.rle")
# bgolly writes the pattern's bounding box: align by the live cells' extent is not needed on a
# torus soup, whose live cells span the whole grid
if a.sum() != b.sum() or not np.array_equal(a, b):
    print(f"MISMATCH: golmpi {a.sum()} live cells, bgolly {b.sum()}"); sys.exit(1)
print(f"final grids agree: {int(a.sum())} live cells at the last generation")
PY

$PY - "$SIZE" "$N1" "$N2" "$G1" "$G2" "$tg1" "$tg2" "$tb1" "$tb2" <<'PY'
import sys
size, n1, n2, g1, g2 = map(int, sys.argv[1:6]); tg1, tg2, tb1, tb2 = map(float, sys.argv[6:10])
rg = size * size * (g2 - g1) / (tg2 - tg1)
rb = size * size * (n2 - n1) / (tb2 - tb1)
print(f"golmpi cpu : {tg1:8.3f} s / {tg2:8.3f} s  -> {rg:.3e} cell updates/s")
print(f"bgolly     : {tb1:8.3f} s / {tb2:8.3f} s  -> {rb:.3e} cell updates/s")
print(f"ratio golmpi/bgolly: {rg / rb:.1f}x")
PY
