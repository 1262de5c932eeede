#!/bin/bash
# Every kernel shape of golmpi at every size of the GPU table, beside the previous build and a
# peer, in one call on one GPU: the figures that rank the shapes (cuda/life_geometry.h's
# GOL_SHAPES) and calibrate bench/gpu_model.sh.
#
#   bench/gpu_shapes.sh BIN [PREV_BIN]
#
# A row a grid (SIZES: "W" for W x W, "WxH" for a slab), one rank, B3/S23, dead edges, the default
# halo depth, --halo nccl, no output. Columns: PREV_BIN as it runs by default (the previous
# commit's build: the reference every shape must not fall below), then BIN with each --kernel
# SHAPE (SHAPES: every shape BIN's --help lists), then PEER_CMD when set, run as
# `PEER_CMD W H STEPS` and expected to print a line "... X cell-updates/s" per timed repetition
# (the best is taken). Each golmpi figure is --stats' compute_cell_updates_per_s: the generations'
# GPU time from events on the compute stream, so the start-up is left out as the peer's own event
# timing leaves it out. Steps: about TARGET_CELLS cell updates a run (a multiple of 16). Every run
# of a row starts from the same random grid and ends at the same generation, so their final
# populations must agree: the last column says so, or names the runs that differ.
# Prints a Markdown table; OUT (a directory) keeps each run's JSON and log. ARGS: more golmpi
# options for every golmpi run, the previous build's too (`--halo-depth 8`, `--no-graphs`: the
# same shapes at another pass count or enqueued from the host, which tell a pass's fixed cost from
# a warp's pace). TSV (a file): each shape's rate also as a row of bench/data's format, `gpu kind
# width height depth edges rate`, for `golmpi-model --check TSV` and `--fit TSV` (gpu: GPU_KEY, or
# h200/h100 from nvidia-smi's name; depth: the run's own, from --stats).
#   env: SIZES, SHAPES, TARGET_CELLS (1e13), HALO (nccl), MPIEXEC (mpiexec), PEER_CMD, OUT, ARGS,
#        TSV, GPU_KEY
set -euo pipefail
bin=$(realpath "${1:?usage: bench/gpu_shapes.sh BIN [PREV_BIN]}")
prev=${2:+$(realpath "$2")}
SIZES=${SIZES:-"4096 8192 16384 32768 65536 131072 16384x4096 16384x1024"}
SHAPES=${SHAPES:-$("$bin" --help | sed -n 's/.*kernel.s shape: auto | \(.*\)/\1/p' | tr -d '|')}
TARGET_CELLS=${TARGET_CELLS:-1e13}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
mpiexec=("${MPIEXEC:-mpiexec}" -n 1)
read -r -a extra <<<"${ARGS:-}"
if [[ -n ${TSV:-} ]]; then
  gpu_key=${GPU_KEY:-$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 |
    sed -n 's/.*\(H200\|H100\).*/\1/p' | tr 'A-Z' 'a-z')}
  [[ -n $gpu_key ]] || { echo "gpu_shapes.sh: TSV needs GPU_KEY (h200 or h100): no such GPU found" >&2; exit 2; }
  printf '# bench/gpu_shapes.sh %s, %s UTC, ARGS="%s"\n# gpu kind width height depth edges rate\n' \
    "$bin" "$(date -u '+%Y-%m-%d %H:%M')" "${ARGS:-}" >"$TSV"
fi
[[ $(id -u) == 0 ]] && mpiexec=("${MPIEXEC:-mpiexec}" --allow-run-as-root -n 1)

# golmpi_rate NAME BIN W H STEPS ARGS...: the compute rate, or "failed" (the log says why)
golmpi_rate() {
  local name=$1 b=$2 w=$3 h=$4 steps=$5
  shift 5
  if "${mpiexec[@]}" "$b" --width "$w" --height "$h" --steps "$steps" --boundary dead \
      --halo "${HALO:-nccl}" --no-output --quiet --stats "$OUT/$name.json" "${extra[@]}" "$@" \
      >"$OUT/$name.log" 2>&1; then
    python3 -c 'import json,sys; print("%.3e" % json.load(open(sys.argv[1]))["compute_cell_updates_per_s"])' \
      "$OUT/$name.json"
  else
    echo failed
  fi
}

header="| grid |"
rule="| --- |"
[[ -n $prev ]] && { header+=" previous |"; rule+=" --- |"; }
for s in $SHAPES; do header+=" $s |"; rule+=" --- |"; done
[[ -n ${PEER_CMD:-} ]] && { header+=" peer | best / peer |"; rule+=" --- | --- |"; }
header+=" populations |"
rule+=" --- |"
echo "$header"
echo "$rule"
for size in $SIZES; do
  w=${size%x*} h=${size#*x}
  steps=$(python3 -c "import sys; s=int(float(sys.argv[1])/(int(sys.argv[2])*int(sys.argv[3]))); print(max(64, s//16*16))" \
    "$TARGET_CELLS" "$w" "$h")
  row="| ${w}x${h} |"
  [[ -n $prev ]] && row+=" $(golmpi_rate "prev-$size" "$prev" "$w" "$h" "$steps") |"
  best=0
  for s in $SHAPES; do
    r=$(golmpi_rate "$s-$size" "$bin" "$w" "$h" "$steps" --kernel "$s")
    row+=" $r |"
    [[ $r != failed ]] && best=$(python3 -c "print(max(float('$best'), float('$r')))")
    if [[ -n ${TSV:-} && $r != failed ]]; then
      depth=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["halo_depth"])' "$OUT/$s-$size.json")
      echo "$gpu_key $s $w $h $depth dead $r" >>"$TSV"
    fi
  done
  if [[ -n ${PEER_CMD:-} ]]; then
    peer=$($PEER_CMD "$w" "$h" "$steps" 2>&1 | tee "$OUT/peer-$size.log" |
      sed -n 's/.* \([0-9.e+]*\) cell-updates\/s.*/\1/p' | sort -g | tail -1)
    ratio=$(python3 -c "p='$peer'; print('%.2f' % ($best / float(p)) if p else '')")
    row+=" ${peer:-failed} | $ratio |"
  fi
  row+=" $(python3 - "$OUT" "$size" <<'PY'
import glob, json, os, sys
pops = {}
for f in glob.glob(os.path.join(sys.argv[1], "*-%s.json" % sys.argv[2])):
    pops[os.path.basename(f)[:-len(sys.argv[2]) - 6]] = json.load(open(f))["population"]
values = set(pops.values())
print("agree" if len(values) == 1 else "DIFFER: " + ", ".join("%s %s" % kv for kv in sorted(pops.items())))
PY
) |"
  echo "$row"
done
