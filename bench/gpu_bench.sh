#!/bin/bash
# golmpi's CUDA backend on one node. PARTS ("table detail") says which of the two sections run:
#
# table: one Markdown table of the rates users see, a row each (docs/PERFORMANCE.md holds it per
#   card): the size curve (TABLE_SIZES, 4096^2 .. 131072^2, each size where golmpi's own --dry-run
#   admits it on this GPU, else "not run" with its message), one rank's share of a multi-GPU run
#   (--width SLAB_WIDTH and each of SLAB_HEIGHTS: 16384 x 4096 and 16384 x 1024), and ranks sharing
#   one GPU (SHARED_RANKS "2 4" ranks at SHARED_SIZE^2, --halo nccl and --halo mpi) under MPS: the
#   script starts the MPS control daemon for those rows when nvidia-cuda-mps-control exists and
#   none runs, and stops it after only if it started it; the MPS column is golmpi's own --stats
#   `mps`. Columns: the whole-run rate, the rate against one rank at that width (the slabs against
#   SLAB_WIDTH^2, the shared rows against SHARED_SIZE^2, when the curve has them), and the model's
#   prediction: MODEL_CMD, when set, is run as `MODEL_CMD WIDTH HEIGHT RANKS HALO` and prints a
#   rate; the column stays empty without one. Each row is calibrated (CALIB_STEPS generations)
#   to take about TARGET seconds. On the simulated GPU (a -DGOLMPI_CUDA_SIM=ON build), a dry check
#   of the table with tiny sizes (docs/PERFORMANCE.md gives the command): GOLMPI_SIM_DEVICES=1
#   there puts the shared rows' ranks on one simulated device.
#
# detail: time per generation at 16384^2 and 65536^2
#   - compute only (--no-output) with the NCCL halo, with and without CUDA graphs (the default
#     halo depth, auto: 16 on these slabs)
#   - the one-generation kernel (--halo-depth 1) against the multi-generation kernel at each depth
#     of DEPTHS, with the NCCL self-exchange and without an exchange, against this GPU's own
#     bounds, measured first by tools/golmpi-bounds (device-to-device copy bandwidth; SM count and
#     peak clock from the device): the copy bound of one generation a pass (0.25 byte moved a
#     cell update) and the instruction bound of the deep kernel (its SASS per word-generation,
#     docs/PERFORMANCE.md and bench/sass_deep_loop.sh)
#   - the same with --halo none, the halo mode that skips the exchange (a benchmarking aid,
#     hidden from --help: the grid it computes is then wrong), so the difference is the halo
#     cost that the interior did not hide
#   - frames every K generations (K and K/4), against compute only (issue 8's target: at most 5%
#     more when the disk keeps up) and against write only (the same frames with one generation
#     between them): how much of the output the GPU pipeline hides
# then compute-sanitizer memcheck, racecheck and synccheck on small runs.
# Steps are calibrated per size so that each timed run takes about TARGET seconds.
#
#   bench/gpu_bench.sh [build/golmpi]
#   env: RANKS (1: one rank per GPU), SIZES ("16384 65536"), TARGET (15 s), FRAMES (8 frames per
#        output run), OUTDIR (a temporary directory on the fastest local disk), SANITIZE (1),
#        MPIEXEC (the launcher: mpiexec on PATH; scripts/gpu_check.sh passes the one it found),
#        DEPTHS ("1 16": the --halo-depth values compared), BOUNDS (golmpi-bounds: default
#        tools/golmpi-bounds beside golmpi), BOUNDS_JSON (its output from earlier in the same run,
#        as scripts/gpu_check.sh passes it: not measured again), SASS_PER_WORD ("50 30": the deep
#        kernel's SASS instructions a 64-cell word and generation, all integer ones and the ALU's
#        alone, the two readings of docs/PERFORMANCE.md); for the table: PARTS, TABLE_SIZES,
#        SLAB_WIDTH, SLAB_HEIGHTS, SHARED_SIZE, SHARED_RANKS, SHARED_DEVICE (the GPU the shared
#        rows' ranks share: 0), CALIB_STEPS (200), MODEL_CMD
set -euo pipefail
golmpi=$(realpath "${1:-build/golmpi}")
RANKS=${RANKS:-1} SIZES=${SIZES:-"16384 65536"} TARGET=${TARGET:-15} FRAMES=${FRAMES:-8}
SANITIZE=${SANITIZE:-1} DEPTHS=${DEPTHS:-"1 16"} SASS_PER_WORD=${SASS_PER_WORD:-"50 30"}
PARTS=${PARTS:-"table detail"} TABLE_SIZES=${TABLE_SIZES:-"4096 8192 16384 32768 65536 131072"}
SLAB_WIDTH=${SLAB_WIDTH:-16384} SLAB_HEIGHTS=${SLAB_HEIGHTS:-"4096 1024"}
SHARED_SIZE=${SHARED_SIZE:-16384} SHARED_RANKS=${SHARED_RANKS:-"2 4"} SHARED_DEVICE=${SHARED_DEVICE:-0}
CALIB_STEPS=${CALIB_STEPS:-200}
# the table's model column: the model of a pass (bench/gpu_model.sh); MODEL_CMD= turns it off
MODEL_CMD=${MODEL_CMD-"env GOLMPI_MODEL=$(dirname "$golmpi")/tools/golmpi-model $(cd "$(dirname "$0")" && pwd)/gpu_model.sh --hook"}
for part in $PARTS; do
  [[ $part == table || $part == detail ]] || { echo "PARTS: '$part' is not table or detail" >&2; exit 2; }
done
mpiexec=("${MPIEXEC:-mpiexec}" --oversubscribe -n "$RANKS")
[[ $(id -u) == 0 ]] && mpiexec=("${MPIEXEC:-mpiexec}" --allow-run-as-root --oversubscribe -n "$RANKS")
work=${OUTDIR:-$(mktemp -d)}
mkdir -p "$work"
# shellcheck source=bench/stats.sh
source "$(dirname "$0")/stats.sh"
# shellcheck source=bench/gpu_table.sh
source "$(dirname "$0")/gpu_table.sh"
# at any exit: an MPS daemon the table started stopped; a work directory of our own removed
on_exit() {
  table_mps_stop
  [[ -n ${OUTDIR:-} ]] || rm -rf "$work"
}
trap on_exit EXIT

"${mpiexec[@]}" "$golmpi" --backend cuda --size 64 --steps 1 --no-output --quiet || {
  rc=$?; echo "golmpi --backend cuda failed (exit $rc): no GPU on some rank?" >&2; exit "$rc"; }
[[ " $PARTS " == *" table "* ]] && table
[[ " $PARTS " == *" detail "* ]] || exit 0

# This GPU's bounds, from the device itself: what every rate below is rated against
bounds=$work/bounds.json
if [[ -n ${BOUNDS_JSON:-} ]]; then
  cp "$BOUNDS_JSON" "$bounds"
else
  tool=${BOUNDS:-$(dirname "$golmpi")/tools/golmpi-bounds}
  [[ -x $tool ]] || { echo "no $tool (built with golmpi when CUDA is on; or set BOUNDS)" >&2; exit 2; }
  "$tool" >"$bounds" || { rc=$?; echo "$tool failed (exit $rc)" >&2; exit "$rc"; }
fi
python3 - "$bounds" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
print(f"device {b['device']}: {b['name']} (compute capability {b['compute_capability']}), "
      f"{b['sm_count']} SMs at up to {b['sm_clock_hz'] / 1e9:.2f} GHz, "
      f"{b['memory_bytes'] / 2**30:.0f} GiB; device-to-device copy {b['copy_bytes_per_s']:.3e} B/s "
      f"measured ({b['memory_peak_bytes_per_s']:.3e} B/s peak from its memory clock and bus)")
PY

# run NAME ARGS...: one golmpi run with --stats, then a line of its figures
run() {
  local name=$1; shift
  "${mpiexec[@]}" "$golmpi" --backend cuda --quiet --force --stats "$work/$name.json" "$@"
  local gens wall halo frame io
  gens=$(stats_fields "$work/$name.json" generations)
  wall=$(stats_fields "$work/$name.json" wall_s)
  halo=$(stats_fields "$work/$name.json" halo_s)
  frame=$(stats_fields "$work/$name.json" frame_s)
  io=$(stats_fields "$work/$name.json" io_write_s)
  python3 - "$name" "$gens" "$wall" "$halo" "$frame" "$io" "$size" <<'PY'
import sys
name, gens, wall, halo, frame, io, size = sys.argv[1], int(sys.argv[2]), *map(float, sys.argv[3:7]), int(sys.argv[7])
per = wall / max(gens, 1)
print(f"  {name:<28} {gens:>8} gens {wall:8.2f} s {per * 1e3:9.4f} ms/gen "
      f"{size * size * gens / wall:10.3e} cells/s  halo {halo:6.2f} s  frames {frame:6.2f} s  "
      f"hdf5 {io:6.2f} s")
PY
}

for size in $SIZES; do
  # calibration: a short run gives the rate, and the rate the steps for TARGET seconds
  "${mpiexec[@]}" "$golmpi" --backend cuda --size "$size" --steps 200 --no-output --quiet \
    --stats "$work/calib.json"
  rate=$(stats_fields "$work/calib.json" whole_run_cell_updates_per_s)
  steps=$(python3 -c "print(max(100, int($TARGET * $rate / ($size * $size))))")
  every=$(( steps / FRAMES > 0 ? steps / FRAMES : 1 ))
  # u8 frames of 65536^2 are 4 GiB each: packed keeps the disk and the D2H reasonable there
  fmt=u8; (( size > 16384 )) && fmt=packed
  echo "== ${size}x${size} torus B3/S23, $RANKS rank(s), $steps generations, frames every $every ($fmt)"
  run "nccl_graphs_$size" --size "$size" --steps "$steps" --no-output --halo nccl
  run "nccl_nographs_$size" --size "$size" --steps "$steps" --no-output --halo nccl --no-graphs
  run "halo_off_$size" --size "$size" --steps "$steps" --no-output --halo none
  run "mpi_halo_$size" --size "$size" --steps "$steps" --no-output --halo mpi
  for d in $DEPTHS; do
    run "depth${d}_nccl_$size" --size "$size" --steps "$steps" --no-output --halo nccl \
      --halo-depth "$d"
    run "depth${d}_off_$size" --size "$size" --steps "$steps" --no-output --halo none \
      --halo-depth "$d"
  done
  python3 - "$work" "$size" "$bounds" "$SASS_PER_WORD" $DEPTHS <<'PY'
import json, sys
w, n, bounds, sass, depths = *sys.argv[1:5], sys.argv[5:]
b = json.load(open(bounds))
rate = lambda k: json.load(open(f"{w}/{k}_{n}.json"))["whole_run_cell_updates_per_s"]
# One generation a pass reads and writes each cell's bit: 0.25 byte a cell update, at the copy
# bandwidth measured above. The deep kernel is bound by instructions instead: 64 32-bit integer
# operations a clock an SM (the CUDA guide's throughput table, cc 8.x-9.x), 64 cells a word,
# x 0.91 for the strips' margin and the wavefront's ends (docs/PERFORMANCE.md), at the peak clock
copy_bound = b["copy_bytes_per_s"] / 0.25
ops = b["sm_count"] * b["sm_clock_hz"] * 64
instr = [ops / float(k) * 64 * 0.91 for k in sass.split()]
print(f"  bounds of this GPU: one generation a pass {copy_bound:.3e} cells/s (copy bandwidth); "
      f"deep kernel {' to '.join(f'{x:.3e}' for x in instr)} cells/s ({sass.replace(' ', ' or ')} "
      f"SASS instructions a word-generation, {b['sm_count']} SMs x {b['sm_clock_hz'] / 1e9:.2f} GHz)")
base = rate(f"depth{depths[0]}_nccl")
for d in depths:
    r, off = rate(f"depth{d}_nccl"), rate(f"depth{d}_off")
    against = (f"{r / copy_bound * 100:.0f}% of the copy bound" if d == "1" else
               f"{' to '.join(f'{r / x * 100:.0f}%' for x in instr)} of the instruction bound, "
               f"{r / copy_bound * 100:.0f}% of the one-generation copy bound")
    print(f"  --halo-depth {d}: {r:.3e} cells/s with the NCCL self-exchange, {off:.3e} without "
          f"({r / off * 100:.0f}%); {r / base:.2f}x depth {depths[0]}; {against}")
PY
  run "frames_$size" --size "$size" --steps "$steps" --halo nccl --save-every "$every" \
    --chunk 2 --frame-format "$fmt" --output "$work/out_frames_$size.h5"
  rm -f "$work"/out_frames_"$size"* # the frames and chunks, not the run's stats
  # frames four times as often: what each frame costs the GPU beyond compute only
  every4=$(( every / 4 > 0 ? every / 4 : 1 ))
  run "frames_dense_$size" --size "$size" --steps "$steps" --halo nccl --save-every "$every4" \
    --chunk 2 --frame-format "$fmt" --output "$work/out_frames_dense_$size.h5"
  rm -f "$work"/out_frames_dense_"$size"*
  # write only: the same number of frames, one generation apart
  run "write_only_$size" --size "$size" --steps "$FRAMES" --halo nccl --save-every 1 \
    --chunk 2 --frame-format "$fmt" --output "$work/write_$size.h5"
  rm -f "$work"/write_"$size"*
  python3 - "$work" "$size" <<'PY'
import json, sys
w, n = sys.argv[1], sys.argv[2]
j = lambda k: json.load(open(f"{w}/{k}_{n}.json"))
c, off, f, wo = j("nccl_graphs"), j("halo_off"), j("frames"), j("write_only")
g = c["generations"]
print(f"  halo cost not hidden: {(c['wall_s'] - off['wall_s']) / g * 1e6:.2f} us/gen "
      f"(NCCL {c['wall_s'] / g * 1e6:.2f} vs no exchange {off['wall_s'] / g * 1e6:.2f})")
us = lambda r: r["wall_s"] / r["generations"] * 1e6
ng, mpi = j("nccl_nographs"), j("mpi_halo")
print(f"  CUDA graphs: {us(c):.2f} us/gen with, {us(ng):.2f} without ({us(ng) / us(c):.2f}x)")
print(f"  MPI halo: {us(mpi):.2f} us/gen vs NCCL {us(c):.2f} ({us(mpi) / us(c):.2f}x)")
hidden = c["wall_s"] + wo["wall_s"] - f["wall_s"]
print(f"  output overlap: frames run {f['wall_s']:.2f} s vs compute {c['wall_s']:.2f} s + "
      f"write-only {wo['wall_s']:.2f} s; {max(hidden, 0):.2f} s of output hidden")
# issue 8: frames every K generations should cost at most 5% over compute only, when the disk
# keeps up (the hdf5 column of the frames runs says whether it did)
for name in ("frames", "frames_dense"):
    r = j(name)
    k = g // max(r["frames"] - 1, 1)
    print(f"  frames every ~{k} generations ({r['frames']} frames): "
          f"{(r['wall_s'] / c['wall_s'] - 1) * 100:+.1f}% wall over compute only "
          f"(target: at most +5%)")
PY
done

if [[ $SANITIZE == 1 ]]; then
  san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  echo "== compute-sanitizer (256x200, frames u8 and packed, graphs on and off, both halos)"
  for tool in memcheck racecheck synccheck; do
    for extra in "--halo nccl" "--halo nccl --no-graphs" "--halo mpi --frame-format packed" \
      "--halo nccl --halo-depth 4" "--halo mpi --halo-depth 12"; do
      # shellcheck disable=SC2086
      "${mpiexec[@]}" "$san" --tool "$tool" --error-exitcode 9 --print-limit 20 \
        "$golmpi" --backend cuda --width 256 --height 200 --steps 40 --save-every 7 --chunk 2 \
        --quiet --force --output "$work/san.h5" $extra >"$work/san.log" 2>&1 ||
        { echo "  $tool $extra: FAILED"; tail -40 "$work/san.log"; exit 1; }
      echo "  $tool $extra: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$work/san.log" | head -1)"
      rm -f "$work"/san*.h5 "$work"/san*.xmf
    done
  done
fi
