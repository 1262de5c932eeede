#!/usr/bin/env bash
# The README's two pictures, made again from the tree (docs/BUILD.md, "The README's pictures"):
#   docs/gun.png    the last frame of the README's gun example (examples-gun), cropped to the gun
#                   and its glider stream, rendered by golmpi-render
#   docs/speed.png  the recorded speed figures: one H200's rate by grid size beside a peer
#                   kernel, and the CPU backend's scaling (scripts/make_pictures.py, bench/data/)
# usage: bash scripts/make_pictures.sh [BUILD_DIR]   (default build/: golmpi, tools/golmpi-render)
# Needs mpirun, and a python3 with matplotlib. A 2-rank 512^2 run: about a second.
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# the README's gun example, as printed there (examples-gun's first command)
(cd "$work" && mpirun -n 2 "$build/golmpi" --pattern "$src/tests/patterns/gosper.rle" --size 512 \
    --boundary dead --steps 300 --save-every 30 --output gun.h5 --quiet)
"$build/tools/golmpi-render" --crop 222,238,130,100 --zoom 3 --alive ffd24a --dead 101820 \
    -o "$src/docs/gun.png" "$work/gun.h5"

python3 "$src/scripts/make_pictures.py" speed "$src/docs/speed.png"
ls -l "$src/docs/gun.png" "$src/docs/speed.png"
