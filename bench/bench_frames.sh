#!/bin/bash
# Frames at disk speed: golmpi's frame writes beside two references on the same file
# system, and how well the writes hide behind the compute. Everything runs interleaved in one go,
# so a loaded machine loads every contender alike; each figure is printed per repeat and as the
# median, and the verdicts are ratios to a peer from the same repeat.
#
# Part 1, write rate: FRAMES u8 frames of SIZE^2, CHUNK frames a file, written by
#   - golmpi at each rank count of RANKS (--steps FRAMES-1 --save-every 1): bytes_written over
#     io_write_s, the slowest rank's writer time (every HDF5 call, the population count, the
#     read-back check, the index and .xmf, and the fsync before each rename);
#   - h5py, serially, the same bytes in the same chunk files and layout, each file fsync'ed
#     (bench/frames_ref.py): the time from the first create to the last fsync;
#   - dd, the same file sizes of random 0/1 bytes from the page cache, a frame a block,
#     conv=fdatasync: the time of the dd runs together;
#   - dd again with oflag=direct (O_DIRECT, no page cache; where a frame is whole 4 KiB pages),
#     as golmpi's direct transfer writes (io/tuning.h).
#   Verdict: golmpi / the fastest reference of the same repeat, goal >= 0.90.
# Part 2, overlap, at each rank count of OVERLAP_RANKS: GENS generations of SIZE^2,
#   - compute alone: --no-output;
#   - writing alone: the same frame count written with no generations between them
#     (--steps F-1 --save-every 1, F = the frames of the run below);
#   - both: --steps GENS --save-every K.
#   Each is golmpi's wall_s (the generation loop and every write, start-up excluded). Verdicts:
#   both / max(compute alone, writing alone), goal <= 1.1 where the writer has a core of its
#   own; and the compute rate (compute_cell_updates_per_s) with frames / without, goal >= 0.9.
#
#   bench/bench_frames.sh [GOLMPI [GOLMPI2]]   (default: build/golmpi of this checkout)
#   GOLMPI, GOLMPI2: a binary, or a git revision built here (Release, no CUDA) in a worktree under
#   /tmp removed on exit; with two, both run in every repeat, one after the other (before/after).
#   env: SIZE (16384), FRAMES (9), CHUNK (3), RANKS ("1 2 4"), GENS (2000), K (250),
#        OVERLAP_RANKS ("1 2"), REPEAT (3), DIR (the file system to test: ${TMPDIR:-/tmp}),
#        OMP_NUM_THREADS (1), PART ("rate overlap": either or both)
# Needs about 3 x SIZE^2 x CHUNK bytes of memory and SIZE^2 x FRAMES x 2 bytes free in DIR. At the
# defaults on a 2-core machine a repeat takes about 1.5 minutes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(git -C "$here" rev-parse --show-toplevel)
SIZE=${SIZE:-16384} FRAMES=${FRAMES:-9} CHUNK=${CHUNK:-3} RANKS=${RANKS:-1 2 4}
GENS=${GENS:-2000} K=${K:-250} OVERLAP_RANKS=${OVERLAP_RANKS:-1 2} REPEAT=${REPEAT:-3}
PART=${PART:-rate overlap}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
source "$here/stats.sh"
mpiexec=(mpiexec --oversubscribe)
[[ $(id -u) == 0 ]] && mpiexec+=(--allow-run-as-root)
work=$(mktemp -d "${DIR:-${TMPDIR:-/tmp}}/golmpi-frames.XXXXXX")
source "$here/revisions.sh" # its EXIT trap removes $work and the worktrees
add_binary "${1:-$repo/build/golmpi}"
[[ $# -ge 2 ]] && add_binary "$2"
# h5py comes with the system python (python3-h5py), which a pyenv or venv python3 may hide
py=python3
python3 -c 'import h5py' 2>/dev/null || py=/usr/bin/python3
"$py" -c 'import h5py, numpy' || { echo "bench_frames: needs h5py and numpy" >&2; exit 2; }

# golmpi_run B RANKS ARGS...: one run of binary B into a fresh directory; its --stats file is
# $work/run/s.json
golmpi_run() {
  local golmpi=${bins[$1]} n=$2
  shift 2
  rm -rf "$work/run" && mkdir "$work/run"
  local out=(--chunk "$CHUNK" --output "$work/run/life.h5")
  [[ " $* " == *" --no-output "* ]] && out=()
  "${mpiexec[@]}" -n "$n" "$golmpi" --backend cpu --size "$SIZE" --seed 1 --density 0.5 \
    "${out[@]}" --stats "$work/run/s.json" --quiet "$@" >/dev/null
}

median() { "$py" -c 'import statistics, sys; print(f"{statistics.median(map(float, sys.argv[1:])):.3g}")' "$@"; }
ratio() { "$py" -c "print(f'{$1 / $2:.3f}')"; }

declare -A fig
add() { fig[$1]+=" $2"; }

rate_repeat() {
  local b n bytes t
  for n in $RANKS; do
    for b in "${!bins[@]}"; do
      golmpi_run "$b" "$n" --steps $((FRAMES - 1)) --save-every 1
      read -r bytes t < <(stats_fields "$work/run/s.json" bytes_written io_write_s)
      add "golmpi$b,$n" "$("$py" -c "print(f'{$bytes / $t:.4g}')")"
    done
  done
  rm -rf "$work/run" && mkdir "$work/run"
  read -r bytes t < <("$py" "$here/frames_ref.py" "$work/run" "$SIZE" "$FRAMES" "$CHUNK")
  add h5py "$("$py" -c "print(f'{$bytes / $t:.4g}')")"
  add dd "$(dd_rate conv=fdatasync)"
  ((SIZE * SIZE % 4096 == 0)) && add dd_direct "$(dd_rate oflag=direct conv=fdatasync)"
  rm -f "$work/src"
  rm -rf "$work/run"
}

# dd_rate FLAGS...: bytes/s of dd writing the chunk files' sizes, a frame a block, with FLAGS
dd_rate() {
  rm -rf "$work/run" && mkdir "$work/run"
  local f n_f t0 t1 bytes
  # dd copies frame-like bytes (0 or 1 at random, as the frames are), not /dev/zero: a virtual
  # disk may take runs of zeros as holes. The source is read once first, so it comes from the
  # page cache as golmpi's and h5py's frames come from memory.
  [[ -f $work/src ]] || "$py" -c "import numpy as np, sys; np.random.default_rng(2).integers(0, 2, $CHUNK * $SIZE * $SIZE, dtype=np.uint8).tofile(sys.argv[1])" "$work/src"
  cat "$work/src" >/dev/null
  bytes=0
  t0=$(date +%s.%N)
  for ((f = 0; f < FRAMES; f += CHUNK)); do
    n_f=$((FRAMES - f < CHUNK ? FRAMES - f : CHUNK))
    dd if="$work/src" of="$work/run/dd_$f" bs=$((SIZE * SIZE)) count="$n_f" "$@" status=none
    bytes=$((bytes + n_f * SIZE * SIZE))
  done
  t1=$(date +%s.%N)
  "$py" -c "print(f'{$bytes / ($t1 - $t0):.4g}')"
}

overlap_repeat() {
  local b n frames wc ww wb rc rb
  frames=$((GENS / K + 1 + (GENS % K ? 1 : 0)))
  for n in $OVERLAP_RANKS; do
    for b in "${!bins[@]}"; do
      golmpi_run "$b" "$n" --steps "$GENS" --no-output
      read -r wc rc < <(stats_fields "$work/run/s.json" wall_s compute_cell_updates_per_s)
      golmpi_run "$b" "$n" --steps $((frames - 1)) --save-every 1
      ww=$(stats_fields "$work/run/s.json" wall_s)
      golmpi_run "$b" "$n" --steps "$GENS" --save-every "$K"
      read -r wb rb < <(stats_fields "$work/run/s.json" wall_s compute_cell_updates_per_s)
      add "compute$b,$n" "$(printf %.3f "$wc")"
      add "writing$b,$n" "$(printf %.3f "$ww")"
      add "both$b,$n" "$(printf %.3f "$wb")"
      add "over$b,$n" "$("$py" -c "print(f'{$wb / max($wc, $ww):.3f}')")"
      add "crate$b,$n" "$(ratio "$rb" "$rc")"
    done
  done
}

for b in "${!bins[@]}"; do echo "bench_frames: golmpi $b: ${bins[b]}"; done
echo "  file system: $(df -hT "$work" | awk 'NR == 2 {print $1, $2, $3 " total"}') ($work)"
echo "  machine: $(nproc --all) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"
echo "  ${SIZE}^2 u8, OMP_NUM_THREADS=$OMP_NUM_THREADS, $REPEAT repeats, interleaved"
for ((i = 0; i < REPEAT; i++)); do
  [[ $PART == *rate* ]] && rate_repeat
  [[ $PART == *overlap* ]] && overlap_repeat
done

if [[ $PART == *rate* ]]; then
  echo
  echo "write rate, bytes/s: $FRAMES frames, $CHUNK a file, sync included (per repeat; median)"
  refs=(h5py dd)
  [[ -n ${fig[dd_direct]:-} ]] && refs+=(dd_direct)
  ref_figs=()
  for k in "${refs[@]}"; do
    ref_figs+=("${fig[$k]}")
    printf '  %-16s%s  median %s\n' "$k" "${fig[$k]}" "$(median ${fig[$k]})"
  done
  for n in $RANKS; do
    for b in "${!bins[@]}"; do
      printf '  %-16s%s  median %s\n' "golmpi $b, $n rank(s)" "${fig[golmpi$b,$n]}" \
        "$(median ${fig[golmpi$b,$n]})"
      # golmpi over the fastest reference, repeat by repeat
      r=$("$py" -c "
import sys
g, *refs = (list(map(float, s.split())) for s in sys.argv[1:])
print(' '.join(f'{a / max(rs):.2f}' for a, *rs in zip(g, *refs)))" \
        "${fig[golmpi$b,$n]}" "${ref_figs[@]}")
      printf '  %-16s %s  median %s  (goal >= 0.90)\n' "  / fastest ref" "$r" "$(median $r)"
    done
  done
fi
if [[ $PART == *overlap* ]]; then
  echo
  echo "overlap: $GENS generations, a frame every $K, $CHUNK a file; wall_s (per repeat; median)"
  for n in $OVERLAP_RANKS; do
    for b in "${!bins[@]}"; do
      echo "  golmpi $b, $n rank(s)"
      for k in compute writing both; do
        printf '    %-28s%s  median %s\n' "$k$([[ $k == both ]] && echo ' (frames every K)')" \
          "${fig[$k$b,$n]}" "$(median ${fig[$k$b,$n]})"
      done
      printf '    %-28s%s  median %s  (goal <= 1.1)\n' "both / max(compute, writing)" \
        "${fig[over$b,$n]}" "$(median ${fig[over$b,$n]})"
      printf '    %-28s%s  median %s  (goal >= 0.9)\n' "compute rate with / without" \
        "${fig[crate$b,$n]}" "$(median ${fig[crate$b,$n]})"
    done
  done
fi
