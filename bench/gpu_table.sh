# shellcheck shell=bash disable=SC2154  # golmpi and work are gpu_bench.sh's, which sources this
# Sourced by bench/gpu_bench.sh: its table section (`table`), one Markdown table of the rates users
# see, a row per size or shape (gpu_bench.sh's header says which rows and columns). Reads
# gpu_bench.sh's settings (golmpi, work, TARGET, CALIB_STEPS, TABLE_SIZES, SLAB_WIDTH, SLAB_HEIGHTS,
# SHARED_SIZE, SHARED_RANKS, SHARED_DEVICE, MODEL_CMD, MPIEXEC) and stats.sh's stats_fields.

# launch P: the launcher for P ranks, in the array `launch`
table_launch() {
  launch=("${MPIEXEC:-mpiexec}" --oversubscribe -n "$1")
  [[ $(id -u) == 0 ]] && launch=("${MPIEXEC:-mpiexec}" --allow-run-as-root --oversubscribe -n "$1")
  return 0
}

# table_row NAME P ARGS...: one row's run, calibrated to about TARGET seconds, its --stats in
# $work/table_NAME.json and its line in $work/table.rows ("NAME<TAB>P<TAB>ARGS<TAB>JSON or why not").
# A grid golmpi's own --dry-run refuses (too big for this GPU: exit 2, or no second GPU for NCCL
# ...) is a row "not run" with golmpi's message, so the table shows every size asked for.
table_row() {
  local name=$1 p=$2 json=$work/table_$1.json rate steps why
  shift 2
  table_launch "$p"
  if ! "${launch[@]}" "$golmpi" --backend cuda --quiet --no-output --dry-run "$@" \
      >"$work/table_$name.dry" 2>&1; then
    why=$(grep -m1 "error" "$work/table_$name.dry" || tail -1 "$work/table_$name.dry")
    printf '%s\t%s\t%s\tnot run: %s\n' "$name" "$p" "$*" "${why#golmpi: error: }" >>"$work/table.rows"
    echo "  $name: not run: $why" >&2
    return 0
  fi
  "${launch[@]}" "$golmpi" --backend cuda --quiet --force --no-output --steps "$CALIB_STEPS" \
    --stats "$json" "$@"
  rate=$(stats_fields "$json" whole_run_cell_updates_per_s)
  steps=$(python3 -c "import json, sys; s = json.load(open(sys.argv[1]))
print(max(${CALIB_STEPS}, int($TARGET * $rate / (s['width'] * s['height']))))" "$json")
  "${launch[@]}" "$golmpi" --backend cuda --quiet --force --no-output --steps "$steps" \
    --stats "$json" "$@"
  printf '%s\t%s\t%s\t%s\n' "$name" "$p" "$*" "$json" >>"$work/table.rows"
  echo "  $name: $(stats_fields "$json" whole_run_cell_updates_per_s) cell updates/s" >&2
}

# The shared rows' MPS: a daemon in a directory of its own (the job library's mps_host_up), stopped
# after; gpu_bench.sh's EXIT trap stops it too.
# shellcheck source=jobs/golmpi_job.sh
source "$(dirname "${BASH_SOURCE[0]}")/../jobs/golmpi_job.sh"
table_mps_start() { mps_host_up && echo "  MPS started (pipe $CUDA_MPS_PIPE_DIRECTORY)" >&2 || true; }
table_mps_stop() { mps_host_down; }

table() {
  local n h p halo
  : >"$work/table.rows"
  echo "== the table: the size curve, one rank's slabs, ranks sharing a GPU ($TARGET s a row)" >&2
  for n in $TABLE_SIZES; do table_row "size_$n" 1 --size "$n"; done
  for h in $SLAB_HEIGHTS; do table_row "slab_${SLAB_WIDTH}x$h" 1 --width "$SLAB_WIDTH" --height "$h"; done
  table_mps_start # gpu_bench.sh's EXIT trap stops it too, if the script ends in between
  for p in $SHARED_RANKS; do
    for halo in nccl mpi; do
      # every rank on one GPU; NCCL 2.30 or later lets several ranks share it when asked
      CUDA_VISIBLE_DEVICES=$SHARED_DEVICE NCCL_MULTI_RANK_GPU_ENABLE=1 \
        table_row "shared_${p}_$halo" "$p" --size "$SHARED_SIZE" --halo "$halo"
    done
  done
  table_mps_stop
  python3 - "$work/table.rows" "$SLAB_WIDTH" "$SHARED_SIZE" "${MODEL_CMD:-}" <<'PY'
import json, shlex, subprocess, sys
rows_file, slab_width, shared_size, model = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
rows = [l.rstrip("\n").split("\t") for l in open(rows_file) if l.strip()]
stats = {name: json.load(open(res)) for name, _, _, res in rows if not res.startswith("not run")}
one = {s["width"]: s["whole_run_cell_updates_per_s"] for n, s in stats.items()
       if n.startswith("size_") and s["width"] == s["height"]}
print("| row | grid | ranks | halo | MPS | generations | cell updates/s | of one rank | "
      "model cell updates/s |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for name, p, args, res in rows:
    if name not in stats:
        print(f"| {name} | `{args}` | {p} | | | | {res} | | |")
        continue
    s = stats[name]
    rate = s["whole_run_cell_updates_per_s"]
    # the slabs are one rank's share of a run at slab_width^2; the shared rows share that of one
    ref = one.get(slab_width if name.startswith("slab_") else shared_size)
    of_one = f"{rate / ref * 100:.0f}%" if ref and not name.startswith("size_") else ""
    predicted = ""
    if model:
        out = subprocess.run(shlex.split(model) + [str(s["width"]), str(s["height"]), p, s["halo"]],
                             capture_output=True, text=True)
        predicted = out.stdout.strip() if out.returncode == 0 else f"model failed ({out.returncode})"
    mps = "" if s.get("mps") is None else ("yes" if s["mps"] else "no")
    print(f"| {name} | {s['width']} x {s['height']} | {p} | {s['halo']} | {mps} | "
          f"{s['generations']} | {rate:.3e} | {of_one} | {predicted} |")
PY
}
