#!/bin/bash
# gpu_check.sh: the whole GPU proof in one command, on a machine with one GPU, from a tree that is
# already built (with -DGOLMPI_ENABLE_CUDA=ON). Writes a Markdown report to REPORT.md, or to
# stdout; progress goes to stderr. Exit 0 only when every part passed; 3 when there is no usable
# GPU ("no GPU: nothing to prove"); 2 on bad arguments or a missing run-time piece; 1 otherwise.
#
#   scripts/gpu_check.sh [--build DIR] [--parts LIST] [--dry-run] [--keep] [REPORT.md]
#
#   --build DIR    the build tree (default: $GOLMPI_BUILD, else ./build beside scripts/); it may have
#                  been built elsewhere and copied here: the paths in its ctest files are rewritten
#   --parts LIST   comma-separated subset of: env,ctest,frames,nccl_multi,bench,sanitize,shapes
#                  (default all but shapes)
#   --dry-run      print the command of every part and run none (no GPU needed)
#   --keep         keep the work directory (logs, bench output) and say where it is
#
# Every prerequisite is checked first (one message each; exit 2). Then golmpi's probe (exit 3: no
# GPU), this GPU's own bounds (tools/golmpi-bounds: name, SMs, clock, measured copy bandwidth), and
# the parts, each under a time limit sized from the work it runs, the whole within the budget:
#   env         device and its bounds, driver, CUDA runtime and NCCL versions (of the libraries
#               golmpi loads)
#   ctest       the GPU ctest cases (name or label cuda/gpu, exit 77 = skip); a skip is a FAILURE
#   frames      frames bit-identical to the reference (tests/integration.py, which also checks the
#               CPU backend): 1 rank with NCCL (periodic self-exchange), 1-4 ranks with --halo mpi
#               on the one GPU, odd sizes, both boundaries, two rules, u8 and packed, graphs on/off
#   nccl_multi  2-4 ranks with NCCL on the one GPU when NCCL >= 2.30 (NCCL_MULTI_RANK_GPU_ENABLE=1)
#               found: golmpi's, or GPU_CHECK_NCCL's
#   bench       bench/gpu_bench.sh: its table (BENCH_SIZES, the two slabs, 2 and 4 ranks sharing the
#               GPU under MPS), then cell updates/s at 16384^2 and 65536^2 (BENCH_SIZES), rated
#               against the bounds measured above
#   sanitize    compute-sanitizer memcheck, racecheck and synccheck on small runs
#   shapes      bench/gpu_shapes.sh at SHAPES_SIZES, at the default depth and at depth 8 (passes of
#               another length, which set a warp's pace and a pass's fixed cost apart): every
#               kernel shape, beside GPU_CHECK_PREV (a previous build's golmpi) and GPU_CHECK_PEER
#               (a peer's command, gpu_shapes.sh's PEER_CMD) when given; the rates also as rows of
#               bench/data's format (shape_rates.tsv, kept with --keep), with golmpi-model's check
#               of them and its fit of all its constants on them (`--fit-lone`)
#
# Environment: MPIEXEC (launcher; default mpiexec, else mpirun, on PATH), GOLMPI_PYTHON (a python3
# with h5py and numpy; default the first of python3 on PATH and /usr/bin/python3 that has them),
# COMPUTE_SANITIZER, BENCH_SIZES ("16384 65536"), BENCH_TARGET (s per timed run, 1.5), SHAPES_SIZES
# ("4096 8192 16384 16384x1024"), SHAPES_CELLS (cell updates a run, 3e12), JOBS (the
# cores, at most 16); GPU_CHECK_NCCL (a directory holding the libnccl.so.2 golmpi is to load, or
# whose lib/ does: put first on LD_LIBRARY_PATH, which golmpi's RUNPATH yields to; an NCCL 2.30 or
# later there runs nccl_multi); GPU_CHECK_BUDGET (540 s: the bound of the whole run, which the parts' limits
# share); GPU_CHECK_PROBE_S (30: golmpi's probe); GPU_CHECK_NO_PROBE=1 runs the parts even where
# golmpi finds no GPU (to test this script: every GPU part must then fail).
# The parts whose ranks share the GPU (frames, nccl_multi, bench) run under MPS, the way a user
# should run them (docs/GPU.md): the check starts an MPS control daemon of its own (pipe and log
# in a directory of its own, jobs/golmpi_job.sh) before the first of them when
# nvidia-cuda-mps-control exists, and stops it after the last (and on any exit); ctest and sanitize
# run without MPS, ranks taking turns on the GPU.
# On a machine with only the driver: carry the source and build trees and the packages of
# `scripts/carry.sh download DIR build/golmpi build/tools/golmpi-render` (made on the Debian 12
# machine that built them), run `DIR/carry.sh install DIR` as root, then this script.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ARGS_TEXT=$(printf '%q ' "$@")
src=$(dirname "$here")

ALL_PARTS=(env ctest frames nccl_multi bench sanitize shapes)
DEFAULT_PARTS=(env ctest frames nccl_multi bench sanitize)
declare -A LIMIT=() WORK=()
# seconds: the whole run; golmpi's probe; the bounds tool; set-up and the report; a part's kill
BUDGET=${GPU_CHECK_BUDGET:-540} PROBE_S=${GPU_CHECK_PROBE_S:-30} BOUNDS_S=20 SETUP_S=10 KILL_S=5

usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit "${1:-2}"; }
die() { echo "gpu_check: $*" >&2; exit 2; }
say() { echo "gpu_check: $*" >&2; }

build=${GOLMPI_BUILD:-$src/build} parts_arg="" dry=0 keep=0 report=""
while (($#)); do
  case $1 in
  --build) [[ $# -ge 2 ]] || die "--build needs a directory"; build=$2; shift ;;
  --build=*) build=${1#*=} ;;
  --parts) [[ $# -ge 2 ]] || die "--parts needs a list"; parts_arg=$2; shift ;;
  --parts=*) parts_arg=${1#*=} ;;
  --dry-run) dry=1 ;;
  --keep) keep=1 ;;
  -h | --help) usage 0 ;;
  -*) die "unknown option $1 (see --help)" ;;
  *) [[ -z $report ]] || die "one report path only (got '$report' and '$1')"; report=$1 ;;
  esac
  shift
done
PARTS=("${DEFAULT_PARTS[@]}")
if [[ -n $parts_arg ]]; then
  IFS=, read -ra PARTS <<<"$parts_arg"
  for p in "${PARTS[@]}"; do
    [[ " ${ALL_PARTS[*]} " == *" $p "* ]] || die "unknown part '$p' (${ALL_PARTS[*]})"
  done
fi
[[ -d $build ]] ||
  die "no build tree at $build (build first: cmake -S . -B build && cmake --build build; or --build DIR)"
build=$(cd "$build" && pwd)
golmpi=$build/golmpi
[[ -x $golmpi && -f $build/CMakeCache.txt ]] ||
  die "$build has no golmpi or CMakeCache.txt: not a built tree"
if [[ -n $report ]]; then
  touch "$report" 2>/dev/null || die "cannot write the report $report"
  report=$(cd "$(dirname "$report")" && pwd)/$(basename "$report")
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/gpu_check.XXXXXX")
# at any exit: the MPS daemon this script started (mps_stop, below) stopped, the work removed
on_exit() {
  ((${MPS_STARTED:-0} == 0)) || mps_stop
  ((keep)) || rm -rf "$work"
}
trap on_exit EXIT
[[ $(id -u) == 0 ]] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Several mpiexec jobs run at once (ctest -j, the frames cases): Open MPI would bind each job's
# ranks to the same first cores.
export OMPI_MCA_hwloc_base_binding_policy=${OMPI_MCA_hwloc_base_binding_policy:-none}

cache() { sed -n "s|^$1:[A-Z]*=||p" "$build/CMakeCache.txt" | head -1; }

# The run-time pieces ----------------------------------------------------------------------------

# Libraries golmpi does not find through its RUNPATH or the loader's cache: NCCL and the CUDA
# runtime from a pip wheel or a CUDA toolkit go on LD_LIBRARY_PATH (mpiexec passes it on). Says,
# in one message, which libraries are still missing and where each kind comes from.
# GPU_CHECK_NCCL=DIR: the NCCL in DIR (or DIR/lib) first on LD_LIBRARY_PATH, and golmpi must load
# it from there (a directory without libnccl.so.2, or one golmpi's loader passes over, is a problem)
use_nccl_dir() {
  local dir=${GPU_CHECK_NCCL:-} got
  [[ -n $dir ]] || return 0
  [[ -e $dir/libnccl.so.2 ]] || { [[ -e $dir/lib/libnccl.so.2 ]] && dir=$dir/lib; }
  if [[ ! -e $dir/libnccl.so.2 ]]; then
    PROBLEMS+=("GPU_CHECK_NCCL=$GPU_CHECK_NCCL: no libnccl.so.2 there or in its lib/")
    return 0
  fi
  dir=$(cd "$dir" && pwd)
  export LD_LIBRARY_PATH=$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  got=$(ldd "$golmpi" 2>/dev/null | awk '$1 ~ /^libnccl/ { print $3 }')
  [[ $(dirname "$got") == "$dir" ]] ||
    PROBLEMS+=("GPU_CHECK_NCCL=$GPU_CHECK_NCCL: golmpi still loads NCCL from ${got:-nowhere}, not $dir")
  say "NCCL from $dir (GPU_CHECK_NCCL)"
}

find_libs() {
  local missing lib dir found from_debs=() from_cuda=() msg
  missing=$(ldd "$golmpi" 2>/dev/null | awk '$3 == "not" { print $1 }')
  for lib in $missing; do
    found=""
    for dir in $(wheel_lib_dirs) /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda-*/lib* \
               /usr/local/cuda-*/targets/*/lib /usr/lib/x86_64-linux-gnu; do
      [[ -e $dir/$lib ]] && { found=$dir; break; }
    done
    if [[ -n $found ]]; then
      export LD_LIBRARY_PATH=$found${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
      say "$lib from $found (not on golmpi's RUNPATH; added to LD_LIBRARY_PATH)"
    fi
  done
  for lib in $(ldd "$golmpi" 2>/dev/null | awk '$3 == "not" { print $1 }'); do
    case $lib in libnccl* | libcu*) from_cuda+=("$lib") ;; *) from_debs+=("$lib") ;; esac
  done
  ((${#from_debs[@]} + ${#from_cuda[@]})) || return 0
  msg="golmpi cannot load $(printf '%s ' "${from_debs[@]}" "${from_cuda[@]}")"
  msg=${msg% }.
  ((${#from_debs[@]})) && msg+=" ${from_debs[*]}: in the carried Debian packages (scripts/carry.sh \
download DIR build/golmpi where golmpi was built; here, as root, DIR/carry.sh install DIR)."
  ((${#from_cuda[@]})) && msg+=" ${from_cuda[*]}: pip install nvidia-nccl-cu13 (NCCL), a CUDA 13 \
toolkit, or LD_LIBRARY_PATH."
  PROBLEMS+=("$msg")
}

# lib/ directories of pip's nvidia-* wheels (nccl, cuda_runtime) that some python3 here has
wheel_lib_dirs() {
  local py
  for py in ${GOLMPI_PYTHON:-} python3 /usr/bin/python3; do
    command -v "$py" >/dev/null || continue
    "$py" - 2>/dev/null <<'PY'
import importlib
for name in ("nvidia.nccl", "nvidia.cuda_runtime", "nvidia.cu13", "nvidia.cu12"):
    try:
        for p in importlib.import_module(name).__path__:
            print(p + "/lib")
    except Exception:
        pass
PY
  done | awk '!seen[$0]++'
}

find_mpiexec() {
  local m=${MPIEXEC:-}
  [[ -n $m ]] || m=$(command -v mpiexec || command -v mpirun || true)
  [[ -n $m && -x $(command -v "$m" 2>/dev/null) ]] || return 1
  MPIEXEC=$(command -v "$m")
  MPI_LAUNCH="$MPIEXEC --oversubscribe -n"
  [[ $(id -u) == 0 ]] && MPI_LAUNCH="$MPIEXEC --allow-run-as-root --oversubscribe -n"
  return 0
}

find_python() {
  local py
  for py in ${GOLMPI_PYTHON:-} python3 /usr/bin/python3; do
    command -v "$py" >/dev/null || continue
    if "$py" -c "import h5py, numpy" 2>/dev/null; then PY=$(command -v "$py"); return 0; fi
  done
  return 1
}

# The build's ctest files with this machine's paths (build tree, sources, mpiexec, python), in
# $work/ctest, so that ctest runs a tree that was configured elsewhere.
make_shadow() {
  SHADOW=$work/ctest
  "$PY" - "$build" "$SHADOW" "$(cache CMAKE_CACHEFILE_DIR)" "$(cache CMAKE_HOME_DIRECTORY)" "$src" \
    "$(cache MPIEXEC_EXECUTABLE)" "${MPIEXEC:-}" "$PY" <<'PY'
import os, re, sys
build, shadow, old_bin, old_src, new_src, old_mpi, new_mpi, py = sys.argv[1:]
paths = {k: v for k, v in ((old_bin, build), (old_src, new_src)) if k}
# one pass, longest first: a new path that contains an old one is never replaced again
by_len = re.compile("|".join(re.escape(k) for k in sorted(paths, key=len, reverse=True)))
python = re.compile(r'(?<=["=;])/[^";= ]*/python3(\.[0-9]+)?(?=["; ])')
for root, _, files in os.walk(build):
    if "CTestTestfile.cmake" not in files:
        continue
    with open(os.path.join(root, "CTestTestfile.cmake")) as f:
        text = f.read()
    text = by_len.sub(lambda m: paths[m.group(0)], text) if paths else text
    if old_mpi and new_mpi:
        text = re.sub(re.escape(old_mpi) + r'(?=[" ])', lambda m: new_mpi, text)
    text = python.sub(lambda m: py, text)
    out = os.path.join(shadow, os.path.relpath(root, build))
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "CTestTestfile.cmake"), "w") as f:
        f.write(text)
PY
}

# The GPU ctest cases: a label gpu or cuda, or cuda as a word of the name (cuda_*, *_cuda), and a
# skip code (77: no GPU), so cuda_kernels_emulated and the other host-only checks of the CUDA code
# are left out, and so is build_gpu_check (this script's own test).
gpu_tests() {
  "$CTEST" --test-dir "$SHADOW" --show-only=json-v1 | "$PY" -c '
import json, re, sys
for t in json.load(sys.stdin)["tests"]:
    p = {x["name"]: x["value"] for x in t.get("properties", [])}
    labelled = {"gpu", "cuda"} & {s.lower() for s in p.get("LABELS", [])}
    if "SKIP_RETURN_CODE" in p and (labelled or re.search("(^|_)cuda(_|$)", t["name"])):
        print(t["name"], p.get("PROCESSORS", 1), sep="\t")'
}

# Versions of the libraries golmpi loads (ldd's choice), without a GPU: NCCL_CODE for later parts.
probe_versions() {
  "$PY" - "$golmpi" >"$work/versions" <<'PY'
import ctypes, subprocess, sys
libs = {}
for line in subprocess.run(["ldd", sys.argv[1]], capture_output=True, text=True).stdout.splitlines():
    parts = line.split()
    if len(parts) >= 3 and parts[1] == "=>":
        libs[parts[0]] = parts[2]
def lib(prefix):
    return next((p for n, p in libs.items() if n.startswith(prefix)), None)
def call(path, fn):
    v = ctypes.c_int(0)
    try:
        rc = getattr(ctypes.CDLL(path), fn)(ctypes.byref(v))
    except (OSError, AttributeError):
        return None, -1
    return v.value, rc
cudart, nccl = lib("libcudart.so"), lib("libnccl.so")
rt, _ = call(cudart, "cudaRuntimeGetVersion") if cudart else (None, -1)
drv, _ = call(cudart, "cudaDriverGetVersion") if cudart else (None, -1)
code, _ = call(nccl, "ncclGetVersion") if nccl else (None, -1)
cuda = lambda v: f"{v // 1000}.{v % 1000 // 10}" if v else "none"
ncclv = (f"{code // 10000}.{code % 10000 // 100}.{code % 100}" if code and code >= 20900
         else f"{code // 1000}.{code % 1000 // 100}.{code % 100}" if code else "not loaded")
print(f"CUDA_RUNTIME='{cuda(rt)} ({cudart})'")
print(f"CUDA_DRIVER_API='{cuda(drv)}'")
print(f"NCCL_VERSION='{ncclv} ({nccl})'")
print(f"NCCL_CODE={code or 0}")
PY
  # shellcheck disable=SC1091
  source "$work/versions"
}

# runner.py CASES JOBS LIMIT LOGDIR DETAIL_REGEX: runs each "name<TAB>command" line of CASES with
# bash, JOBS at a time, each in a directory of its own under LOGDIR; whatever still runs LIMIT s
# after the start is killed (its whole process group), and what has not started by then is not
# run. Prints a Markdown table row per case; exit 0 when each case exited 0.
write_runner() {
  cat >"$work/runner.py" <<'PY'
import concurrent.futures as cf, os, re, signal, subprocess, sys, time
cases_file, jobs, limit, logdir, detail = sys.argv[1:6]
jobs, limit = int(jobs), float(limit)
deadline = time.time() + limit
cases = [l.rstrip("\n").split("\t", 1) for l in open(cases_file) if l.strip()]
def run(case):
    name, cmd = case
    d = os.path.join(logdir, name)
    os.makedirs(d, exist_ok=True)
    t0 = time.time()
    if t0 >= deadline - 1:
        return name, "FAIL (not run: part time limit)", 0.0, "", None
    with open(os.path.join(d, "log"), "w") as log:
        p = subprocess.Popen(["bash", "-c", cmd], cwd=d, stdout=log, stderr=subprocess.STDOUT,
                             start_new_session=True)
        try:
            rc = p.wait(timeout=deadline - t0)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            rc = "timeout"
    lines = [l.strip() for l in open(os.path.join(d, "log"), errors="replace") if l.strip()]
    hits = [l for l in lines if re.search(detail, l)]
    text = (hits or lines or [""])[-1][:160].replace("|", "\\|")
    if rc == 0:
        verdict = "PASS"
    elif rc == 77:
        verdict = "FAIL (skipped: no usable GPU)"
    elif rc == "timeout":
        verdict = f"FAIL (killed at the part's {limit:.0f} s limit)"
    else:
        verdict = f"FAIL (exit {rc})"
    return name, verdict, time.time() - t0, text, os.path.join(d, "log")
with cf.ThreadPoolExecutor(max(1, jobs)) as ex:
    results = list(ex.map(run, cases))
failed = 0
for name, verdict, secs, text, log in results:
    print(f"| {name} | {verdict} | {secs:.1f} | {text} |")
    failed += verdict != "PASS"
# the output of the first few failures (all of them are under the work directory, --keep)
for name, verdict, secs, text, log in [r for r in results if r[1] != "PASS" and r[4]][:4]:
    tail = open(log, errors="replace").read().splitlines()[-25:]
    print(f"\n{name}: last lines of its output\n\n```\n" + "\n".join(tail) + "\n```")
sys.exit(1 if failed else 0)
PY
}

# case NAME COMMAND...: one line of a cases file (the command quoted for bash)
case_line() {
  local name=$1; shift
  printf '%s\t%s\n' "$name" "$(printf '%q ' "$@")"
}

# run_cases PART CASES JOBS TIMEOUT DETAIL_REGEX: the runner, or the commands under --dry-run
run_cases() {
  local part=$1 cases=$2 jobs=$3 limit=$4 detail=$5
  if ((dry)); then
    sed 's/\t/: /' "$cases" >&2
    return 0
  fi
  echo "| case | result | s | last line |"
  echo "| --- | --- | --- | --- |"
  timeout -k 2 $((limit + KILL_S - 2)) "$PY" "$work/runner.py" "$cases" "$jobs" "$limit" "$work/logs/$part" \
    "$detail"
}

# The parts -------------------------------------------------------------------------------------
# Each prints its section of the report (Markdown) and returns 0 (passed), 10 (not applicable
# here, said why) or anything else (failed). Under --dry-run they print their commands to stderr.

row() { printf '| %s | %s |\n' "$1" "$(printf '%s' "$2" | sed ':a;N;$!ba;s/\n/<br>/g; s/|/\\|/g')"; }

part_env() {
  local gpu="nvidia-smi not found"
  command -v nvidia-smi >/dev/null &&
    gpu=$(timeout 15 nvidia-smi --query-gpu=index,name,memory.total,driver_version,compute_cap \
          --format=csv,noheader 2>&1)
  echo "| what | value |"
  echo "| --- | --- |"
  row "host" "$(hostname) ($(uname -r))"
  row "GPU: index, name, memory, driver, compute capability" "$gpu"
  row "GPU's own bounds (tools/golmpi-bounds, measured now)" "$BOUNDS_TEXT"
  row "CUDA version the driver supports" "$CUDA_DRIVER_API"
  row "CUDA runtime (golmpi's)" "$CUDA_RUNTIME"
  row "NCCL (golmpi's)" "$NCCL_VERSION"
  row "MPI launcher" "$MPI_LAUNCH N ($("$MPIEXEC" --version 2>&1 | head -1))"
  row "python (h5py, numpy)" "$PY"
  row "golmpi" "$("$golmpi" --version 2>&1)"
  local where
  where="configured in $(cache CMAKE_CACHEFILE_DIR) from $(cache CMAKE_HOME_DIRECTORY)"
  row "build" "$build: CMAKE_CUDA_ARCHITECTURES=$(cache CMAKE_CUDA_ARCHITECTURES), $where"
  row "LD_LIBRARY_PATH" "${LD_LIBRARY_PATH:-(unset)}"
}

part_ctest() {
  local names regex log=$work/ctest.log rc
  mapfile -t names < <(gpu_tests | cut -f1)
  if ((${#names[@]} == 0)); then
    echo "No GPU ctest cases in $build: was it configured with -DGOLMPI_ENABLE_CUDA=ON?"
    return 1
  fi
  regex="^($(IFS='|'; echo "${names[*]}"))\$"
  local cmd=("$CTEST" --test-dir "$SHADOW" -R "$regex" -j "$JOBS" --output-on-failure)
  echo "${#names[@]} cases (label gpu or cuda, or cuda in the name; and a skip code), run by ctest from"
  echo "a copy of the build's ctest files with this machine's paths. A skip is a failure here."
  echo
  if ((dry)); then printf '%q ' "${cmd[@]}" >&2; echo >&2; return 0; fi
  timeout -k 5 "${LIMIT[ctest]}" "${cmd[@]}" >"$log" 2>&1
  rc=$?
  "$PY" - "$log" "${names[@]}" <<'PY' || rc=1
import re, sys
log, names = sys.argv[1], sys.argv[2:]
res = {}
for line in open(log, errors="replace"):
    m = re.search(r"Test\s+#\d+: (\S+) \.*\s*(?:\*\*\*)?(Passed|Failed|Skipped|Timeout|Not Run|"
                  r"Exception|\S+)\s+([\d.]+) sec", line)
    if m:
        res[m.group(1)] = (m.group(2), m.group(3))
print("| test | result | s |\n| --- | --- | --- |")
bad = 0
for n in names:
    r, s = res.get(n, ("not run: ctest stopped at the part's time limit", ""))
    bad += r != "Passed"
    print(f"| {n} | {'PASS' if r == 'Passed' else 'FAIL: ' + r} | {s} |")
sys.exit(1 if bad else 0)
PY
  if ((rc)); then
    # shellcheck disable=SC2016  # the backticks are Markdown
    printf '\nctest exit %s; the end of its output:\n\n```\n%s\n```\n' "$rc" "$(tail -80 "$log")"
    return 1
  fi
}

# integration_case NAME EXTRA CASE [ENV...]: tests/integration.py CASE with golmpi --backend cuda
# EXTRA; it compares every frame with tests/reference.py, exact to the cell
integration_case() {
  local name=$1 extra=$2 c=$3; shift 3
  case_line "$name" env OMP_NUM_THREADS=1 "$@" "$PY" "$src/tests/integration.py" \
    --mpiexec "$MPI_LAUNCH" --golmpi "$golmpi" --backend cuda --extra "$extra" "$c"
}

# cases_PART: each part's cases file, written before any part runs (their number sizes the limits)
cases_frames() {
  local cases=$work/frames.cases g c
  : >"$cases"
  for g in "" --no-graphs; do
    # one rank, NCCL: the periodic boundary exchanges with itself
    for c in ref_77x23_p1_torus_B3S23 ref_77x23_p1_dead_B36S23 ref_131x37_p1_torus_B36S23_packed \
             ref_65x29_p1_dead_B3S23_packed; do
      integration_case "nccl_${c#ref_}${g:+_nographs}" "--halo nccl${g:+ $g}" "$c" >>"$cases"
    done
    # 1-4 ranks on the one GPU over MPI (host-staged halos); across: P = 1..4, u8 and packed
    for c in ref_77x23_p1_torus_B36S23 ref_77x23_p2_dead_B3S23 ref_130x67_p3_torus_B36S23_packed \
             ref_131x37_p4_dead_B3S23_packed ref_65x29_p4_torus_B3S23 ref_99x41_p3_dead_B36S23 across; do
      integration_case "mpi_${c#ref_}${g:+_nographs}" "--halo mpi${g:+ $g}" "$c" >>"$cases"
    done
  done
}

part_frames() {
  echo "Every frame of each run against tests/reference.py (numpy, cell by cell), as the CPU"
  echo "backend's integration tests are; u8 and packed frames, torus and dead, B3/S23 and B36/S23."
  echo
  run_cases frames "$work/frames.cases" "$JOBS" "${LIMIT[frames]}" '^(PASS|FAIL|SKIP)'
}

cases_nccl_multi() {
  local cases=$work/nccl_multi.cases g c
  : >"$cases"
  for g in "" --no-graphs; do
    for c in ref_77x23_p2_torus_B3S23 ref_131x37_p3_dead_B36S23_packed ref_130x67_p4_torus_B36S23; do
      integration_case "nccl_${c#ref_}${g:+_nographs}" "--halo nccl${g:+ $g}" "$c" \
        NCCL_MULTI_RANK_GPU_ENABLE=1 >>"$cases"
    done
  done
  # rank 0's advance calls cut unlike the others': eager and graph exchanges must still pair up
  integration_case nccl_pieces "--halo nccl" pieces NCCL_MULTI_RANK_GPU_ENABLE=1 >>"$cases"
}

part_nccl_multi() {
  local cases=$work/nccl_multi.cases rc t0=$SECONDS
  local probe=(env NCCL_MULTI_RANK_GPU_ENABLE=1 timeout "$NCCL_PROBE_S" "${MPI_ARGS[@]}" 2 "$golmpi"
               --backend cuda --halo nccl --size 64 --steps 4 --no-output --quiet)
  if ((NCCL_CODE < 23000)); then
    echo "Not run: NCCL $NCCL_VERSION; several ranks on one GPU need NCCL 2.30 or later."
    ((dry)) && run_cases nccl_multi "$cases" 2 "${LIMIT[nccl_multi]}" .
    return 10
  fi
  if ((dry)); then printf '%q ' "${probe[@]}" >&2; echo >&2; else
    "${probe[@]}" >"$work/nccl_multi.probe" 2>&1
    rc=$?
    if ((rc == 2)) && grep -q "share a GPU" "$work/nccl_multi.probe"; then
      echo "Not run: NCCL $NCCL_VERSION accepts several ranks on one GPU, but golmpi refuses"
      echo "\`--halo nccl\` for ranks that share one: $(tail -1 "$work/nccl_multi.probe")"
      return 10
    fi
  fi
  echo "NCCL_MULTI_RANK_GPU_ENABLE=1, NCCL $NCCL_VERSION: 2-4 ranks exchange over NCCL on one GPU."
  echo
  # the probe's time is the part's too
  run_cases nccl_multi "$cases" 2 $((LIMIT[nccl_multi] - (SECONDS - t0))) '^(PASS|FAIL|SKIP)'
}

part_bench() {
  local rc cmd=(env MPIEXEC="$MPIEXEC" SIZES="$BENCH_SIZES" TABLE_SIZES="$BENCH_SIZES"
                TARGET="$BENCH_TARGET" FRAMES="$BENCH_FRAMES" SANITIZE=0 OUTDIR="$work/bench"
                BOUNDS="$BOUNDS_TOOL")
  # the bounds measured before the parts: the rates are rated against the same figures
  [[ -s $work/bounds.json ]] && cmd+=(BOUNDS_JSON="$work/bounds.json")
  cmd+=(bash "$src/bench/gpu_bench.sh" "$golmpi")
  if ((dry)); then printf '%q ' "${cmd[@]}" >&2; echo >&2; return 0; fi
  echo "\`bench/gpu_bench.sh\`: its table (sizes $BENCH_SIZES, the slabs, 2 and 4 ranks sharing the GPU),"
  echo "then its detail on 1 rank, about $BENCH_TARGET s per timed run (figures are indicative;"
  echo "for docs/PERFORMANCE.md run it alone with its default TARGET), rated against this GPU's own"
  echo "bounds (tools/golmpi-bounds, measured in this run):"
  echo
  echo '```'
  timeout -k 5 "${LIMIT[bench]}" "${cmd[@]}" 2>&1
  rc=$?
  echo '```'
  ((rc == 124)) && echo "Stopped at the part's ${LIMIT[bench]} s limit."
  return "$rc"
}

# Two rounds of gpu_shapes.sh (the default depth, then --halo-depth 8), their rows in one file, and
# what the model makes of them.
part_shapes() {
  local rc=0 round depth_args tsv=$work/shapes/shape_rates.tsv t0=$SECONDS
  local model=$build/tools/golmpi-model
  local cmd=(env MPIEXEC="$MPIEXEC" SIZES="$SHAPES_SIZES" TARGET_CELLS="$SHAPES_CELLS"
             PEER_CMD="${GPU_CHECK_PEER:-}" GPU_KEY="${GPU_KEY:-}")
  if ((dry)); then
    printf '%q ' "${cmd[@]}" OUT="$work/shapes/16" TSV="$tsv.16" bash "$src/bench/gpu_shapes.sh" \
      "$golmpi" ${GPU_CHECK_PREV:+"$GPU_CHECK_PREV"} >&2
    echo "(and ARGS='--halo-depth 8'); $model --check $tsv; $model --fit $tsv --fit-lone" >&2
    return 0
  fi
  mkdir -p "$work/shapes"
  echo "\`bench/gpu_shapes.sh\` at $SHAPES_SIZES, one rank, dead edges, about $SHAPES_CELLS cell"
  echo "updates a run${GPU_CHECK_PREV:+, beside $GPU_CHECK_PREV}${GPU_CHECK_PEER:+ and the peer}:"
  for round in 16 8; do
    depth_args=""
    ((round == 8)) && depth_args="--halo-depth 8"
    echo
    echo "Halo depth ${depth_args:+8}${depth_args:-the default}:"
    echo
    timeout -k 5 $((LIMIT[shapes] * (round == 16 ? 1 : 2) / 2 - (SECONDS - t0))) \
      "${cmd[@]}" OUT="$work/shapes/$round" TSV="$tsv.$round" ARGS="$depth_args" \
      bash "$src/bench/gpu_shapes.sh" "$golmpi" ${GPU_CHECK_PREV:+"$GPU_CHECK_PREV"} 2>&1 || rc=$?
  done
  { cat "$tsv.16"; grep -v '^#' "$tsv.8"; } >"$tsv" 2>/dev/null
  echo
  echo "The model against these rates (\`golmpi-model --check\`), and its constants fitted on them:"
  echo
  echo '```'
  "$model" --check "$tsv" --bound 100 2>&1
  "$model" --fit "$tsv" --fit-lone 2>&1
  echo '```'
  ((rc == 124)) && echo "Stopped at the part's ${LIMIT[shapes]} s limit."
  return "$rc"
}

find_sanitizer() {
  local d
  SAN=${COMPUTE_SANITIZER:-}
  [[ -n $SAN ]] || SAN=$(command -v compute-sanitizer || true)
  for d in "$(dirname "$(cache CMAKE_CUDA_COMPILER)")" /usr/local/cuda/bin /usr/local/cuda-*/bin; do
    [[ -z $SAN && -x $d/compute-sanitizer ]] && SAN=$d/compute-sanitizer
  done
  [[ -n $SAN && -x $(command -v "$SAN" 2>/dev/null) ]]
}

cases_sanitize() {
  local san=${SAN:-compute-sanitizer} tool cases=$work/sanitize.cases
  local small=(--width 256 --height 200 --steps 40 --save-every 7 --chunk 2 --quiet --force
               --output san.h5)
  : >"$cases"
  # memcheck leaves API errors out: NCCL's own probe of its kernels (cudaFuncGetAttributes) ends
  # in "no kernel image" for the architectures its library was not built for, which it handles
  # (seen on an H100 with NCCL 2.28.3); golmpi's own calls stop the run on any error (core/check.h)
  local api=()
  for tool in memcheck racecheck synccheck; do
    [[ $tool == memcheck ]] && api=(--report-api-errors no) || api=()
    local run=(env OMP_NUM_THREADS=1 "$san" --tool "$tool" "${api[@]}" --error-exitcode 9
               --print-limit 20 "$golmpi" --backend cuda)
    case_line "${tool}_p1_nccl_graphs_u8" "${MPI_ARGS[@]}" 1 "${run[@]}" --halo nccl "${small[@]}" \
      >>"$cases"
    case_line "${tool}_p2_mpi_nographs_packed_dead" "${MPI_ARGS[@]}" 2 "${run[@]}" --halo mpi \
      --no-graphs --frame-format packed --boundary dead "${small[@]}" >>"$cases"
  done
}

part_sanitize() {
  echo "256x200, 40 generations, frames every 7; exit 9 on any error the tool reports."
  echo
  run_cases sanitize "$work/sanitize.cases" 3 "${LIMIT[sanitize]}" 'SUMMARY'
}

# MPS ------------------------------------------------------------------------------------------
# The parts in MPS_PARTS run with the MPS control daemon up (several ranks share the one GPU):
# started before the first of them unless nvidia-cuda-mps-control is missing, stopped before any
# other part and at exit. MPS_TEXT: what happened.
MPS_PARTS=" frames nccl_multi bench " MPS_STARTED=0 MPS_DECIDED=0
MPS_TEXT="not needed by the parts run"

# MPS itself (a daemon in a directory of this check's own): the job library's mps_host_up/down
# shellcheck disable=SC1091
source "$(dirname "${BASH_SOURCE[0]}")/../jobs/golmpi_job.sh" || die "no jobs/golmpi_job.sh beside scripts/"

mps_for_part() { # mps_for_part PART: MPS up for the parts that share the GPU, down for the rest
  if [[ $MPS_PARTS != *" $1 "* ]]; then
    mps_stop
    MPS_DECIDED=0
    return 0
  fi
  ((MPS_DECIDED)) && return 0
  MPS_DECIDED=1
  if ! command -v nvidia-cuda-mps-control >/dev/null; then
    MPS_TEXT="not available (no nvidia-cuda-mps-control): ranks on the GPU took turns"
  elif ((dry)); then
    echo "nvidia-cuda-mps-control -d   (pipe and log in a directory of its own; echo quit | nvidia-cuda-mps-control after)" >&2
    MPS_TEXT="dry run: started in a directory of its own, stopped after"
  elif mps_host_up; then
    MPS_STARTED=1 MPS_TEXT="started by this check (pipe $CUDA_MPS_PIPE_DIRECTORY), stopped after"
    say "MPS started (nvidia-cuda-mps-control -d, pipe $CUDA_MPS_PIPE_DIRECTORY)"
  else
    MPS_TEXT="nvidia-cuda-mps-control -d failed: ranks on the GPU took turns"
  fi
}

mps_stop() {
  ((MPS_STARTED)) || return 0
  MPS_STARTED=0
  mps_host_down
  say "MPS stopped (echo quit | nvidia-cuda-mps-control)"
}

# Main ------------------------------------------------------------------------------------------

declare -A TITLE=([env]="Machine and libraries" [ctest]="GPU ctest cases"
  [frames]="Frames identical to the reference: NCCL on 1 rank, MPI halo on 1-4 ranks"
  [nccl_multi]="NCCL with 2-4 ranks on one GPU" [bench]="Benchmark (bench/gpu_bench.sh)"
  [sanitize]="compute-sanitizer" [shapes]="Kernel shapes (bench/gpu_shapes.sh) and the model")
SUMMARY=() FAILED=()

run_part() {
  local part=$1 t0=$SECONDS rc verdict
  say "$part (limit ${LIMIT[$part]} s)"
  mps_for_part "$part"
  "part_$part" >"$work/section_$part.md"
  rc=$?
  case $rc in 0) verdict=PASS ;; 10) verdict="not run (see below)" ;; *) verdict=FAIL ;; esac
  ((dry)) && verdict="dry run"
  [[ $verdict == FAIL ]] && FAILED+=("$part")
  SUMMARY+=("| $part | $verdict | $((SECONDS - t0)) | ${LIMIT[$part]} | ${WORK[$part]} |")
  say "$part: $verdict ($((SECONDS - t0)) s)"
}

write_report() {
  local part
  echo "# golmpi GPU check"
  echo
  echo "$(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname), $DEVICE:" \
    "\`scripts/gpu_check.sh ${ARGS_TEXT}\`"
  echo
  if ((dry)); then
    echo "**Dry run**: commands printed, nothing run on a GPU."
  elif ((${#FAILED[@]})); then
    echo "**FAIL**: ${FAILED[*]}."
  else
    echo "**PASS**: every part that ran passed, in $SECONDS s."
  fi
  echo
  echo "Limits: each part's estimated work (s) x $((MARGIN / 100)).$((MARGIN % 100 / 10)), the whole" \
    "within $BUDGET s."
  echo
  echo "| part | result | s | limit s | work estimated s |"
  echo "| --- | --- | --- | --- | --- |"
  printf '%s\n' "${SUMMARY[@]}"
  echo
  echo "MPS for the parts whose ranks share the GPU (frames, nccl_multi, bench): $MPS_TEXT."
  for part in "${PARTS[@]}"; do
    printf '\n## %s\n\n' "${TITLE[$part]}"
    cat "$work/section_$part.md"
  done
}

# Sizing ----------------------------------------------------------------------------------------
# The work of each part in seconds on one GPU, from what it runs; the limits share the budget in
# proportion to it, so each part has the same margin. The report puts each part's time beside its
# limit and estimate: a session with a GPU corrects the per-case figures here from it.

waves() { echo $((($1 + $2 - 1) / $2)); }

estimate_work() {
  local n
  # nvidia-smi, golmpi --version, the versions (the bounds are measured before the parts)
  WORK[env]=10
  # a GPU ctest case starts golmpi 1 to 5 times under mpiexec (MPI, a CUDA context and NCCL: about
  # 1 s each) on grids of a few thousand cells; ctest -j JOBS runs cases of JOBS ranks (their
  # PROCESSORS) at a time. Measured on an H100 (2026-11-26, 16 cores): 4 to 30 s a case,
  # ~68 of 78 cases in 67 s, so 12 s a wave
  n=$(gpu_tests | awk -F'\t' '{ p += $2 } END { print p + 0 }')
  WORK[ctest]=$(($(waves "$n" "$JOBS") * 12))
  # an integration case: 2 to 5 golmpi runs of small grids, 6 s a case, JOBS at a time; and the
  # `across` cases (11 runs at 1 to 4 ranks: 25-30 s on an H100) as the tail
  WORK[frames]=$(($(waves "$(wc -l <"$work/frames.cases")" "$JOBS") * 6 + 30))
  # the probe, then 6 s a case, 2 at a time
  WORK[nccl_multi]=$((NCCL_PROBE_S / 2 + $(waves "$(wc -l <"$work/nccl_multi.cases")" 2) * 6))
  # compute-sanitizer's start-up and racecheck's instrumentation of 40 small generations: 20 s a
  # case, 3 at a time
  WORK[sanitize]=$(($(waves "$(wc -l <"$work/sanitize.cases")" 3) * 20))
  # gpu_shapes.sh, two rounds: each size, every shape and the previous build, 3 s of start-up and
  # SHAPES_CELLS cell updates at about 5e12 a second (the H200's smallest sizes)
  WORK[shapes]=$(awk -v n="$(wc -w <<<"$SHAPES_SIZES")" -v c="$SHAPES_CELLS" -v shapes="$(
    "$golmpi" --help | sed -n 's/.*kernel.s shape: auto | \(.*\)/\1/p' | tr -d '|' | wc -w)" \
    'BEGIN { printf "%d\n", 2 * n * (shapes + 1) * (3 + c / 5e12) + 0.999 }')
  # gpu_bench.sh, each size: 12 runs (calibration, 11 timed) of BENCH_TARGET s and 3 s of start-up
  # (MPI, CUDA, the random start of up to 65536^2), and 6 FRAMES + 3 frames written at 1 GB/s
  # (u8 up to 16384^2, packed above); its table: a row a size, 2 slabs and 4 shared rows, each a
  # dry run, a calibration and a timed run (2 runs of start-up and TARGET s)
  WORK[bench]=$(awk -v sizes="$BENCH_SIZES" -v t="$BENCH_TARGET" -v f="$BENCH_FRAMES" 'BEGIN {
    n = split(sizes, s, " ")
    for (i = 1; i <= n; i++) {
      cell = s[i] > 16384 ? 1 / 8 : 1
      w += 12 * (t + 3) + (6 * f + 3) * s[i] * s[i] * cell / 1e9
    }
    w += (n + 6) * 2 * (t + 3)
    printf "%d\n", w + 0.999 }')
}

# LIMIT of each part: its share of what the budget leaves after the probe, the bounds, the set-up
# and each part's kill; MARGIN: limit over estimated work, in hundredths
size_limits() {
  local p total=0 budget
  for p in "${PARTS[@]}"; do total=$((total + WORK[$p])); done
  budget=$((BUDGET - PROBE_S - BOUNDS_S - SETUP_S - KILL_S * ${#PARTS[@]}))
  ((budget > 0)) || die "GPU_CHECK_BUDGET=$BUDGET s leaves no time for the parts"
  for p in "${PARTS[@]}"; do LIMIT[$p]=$((WORK[$p] * budget / total)); done
  MARGIN=$((budget * 100 / total))
  ((MARGIN >= 150)) || say "warning: the budget ($BUDGET s) is only $((MARGIN))% of the work" \
    "estimated ($total s): a part may be killed at its limit (fewer BENCH_SIZES, a smaller BENCH_TARGET)"
}

# Prerequisites -----------------------------------------------------------------------------------
# Every one is checked before anything runs; PROBLEMS gets one message for each that is missing.

check_prerequisites() {
  local want
  case ${GOLMPI_ENABLE_CUDA:-$(cache GOLMPI_ENABLE_CUDA)} in
  ON | on | 1 | TRUE | true | YES | yes) ;;
  *) PROBLEMS+=("$build was configured without CUDA (GOLMPI_ENABLE_CUDA in its CMakeCache.txt): \
configure it where nvcc is on PATH") ;;
  esac
  find_python || PROBLEMS+=("no python3 with h5py and numpy (integration.py reads the frames): \
pip install h5py numpy, or set GOLMPI_PYTHON")
  find_mpiexec || PROBLEMS+=("no mpiexec or mpirun on PATH (set MPIEXEC; on a bare GPU machine: \
DIR/carry.sh install DIR with the packages of scripts/carry.sh download)")
  CTEST=$(cache CMAKE_CTEST_COMMAND)
  [[ -x $CTEST ]] || CTEST=$(command -v ctest) ||
    PROBLEMS+=("no ctest on PATH (pip install cmake gives one)")
  use_nccl_dir
  find_libs
  if [[ " ${PARTS[*]} " == *" env "* || " ${PARTS[*]} " == *" bench "* ]]; then
    if [[ ! -x $BOUNDS_TOOL ]]; then
      PROBLEMS+=("no $BOUNDS_TOOL, which measures the GPU's bounds (built with golmpi when CUDA is \
on: cmake --build $build)")
    elif ldd "$BOUNDS_TOOL" | grep -q "not found"; then
      PROBLEMS+=("$BOUNDS_TOOL cannot load $(ldd "$BOUNDS_TOOL" | awk '$3 == "not" { printf "%s ", $1 }')")
    fi
  fi
  [[ " ${PARTS[*]} " == *" sanitize "* ]] && ! find_sanitizer &&
    PROBLEMS+=("no compute-sanitizer (PATH, the CUDA toolkit; or set COMPUTE_SANITIZER)")
  if [[ " ${PARTS[*]} " == *" bench "* ]]; then
    # the densest frames run of gpu_bench.sh: 4 FRAMES + 1 frames of the largest size, and 1 GB
    want=$(awk -v sizes="$BENCH_SIZES" -v f="$BENCH_FRAMES" 'BEGIN { n = split(sizes, s, " ")
      for (i = 1; i <= n; i++) { b = s[i] * s[i] * (s[i] > 16384 ? 1 / 8 : 1); if (b > m) m = b }
      printf "%d\n", ((4 * f + 1) * m + 1e9) / 1e9 + 1 }')
    local free_gb
    free_gb=$(df -Pk "$work" | awk 'NR == 2 { printf "%d\n", $4 / 1e6 }')
    ((free_gb >= want)) || PROBLEMS+=("the benchmark writes up to $want GB of frames under $work, \
which has $free_gb GB free: set TMPDIR to a larger local disk")
  fi
}

# This GPU's bounds (tools/golmpi-bounds), for the report and the benchmark: BOUNDS_TEXT, DEVICE
measure_bounds() {
  local rc
  DEVICE="GPU not measured" BOUNDS_TEXT="not measured"
  ((dry)) && { printf '%q\n' "$BOUNDS_TOOL" >&2; return 0; }
  timeout -k 2 "$BOUNDS_S" "$BOUNDS_TOOL" >"$work/bounds.json" 2>"$work/bounds.err"
  rc=$?
  if ((rc != 0)); then
    BOUNDS_TEXT="not measured: golmpi-bounds exit $rc ($(tail -1 "$work/bounds.err"))"
    : >"$work/bounds.json"
    return 0
  fi
  eval "$("$PY" - "$work/bounds.json" <<'PY'
import json, shlex, sys
b = json.load(open(sys.argv[1]))
name = f"{b['name']} (device {b['device']}, compute capability {b['compute_capability']})"
text = (f"{name}: {b['sm_count']} SMs at up to {b['sm_clock_hz'] / 1e9:.2f} GHz, "
        f"{b['memory_bytes'] / 2**30:.0f} GiB; device-to-device copy {b['copy_bytes_per_s']:.3e} "
        f"B/s measured ({b['memory_peak_bytes_per_s']:.3e} B/s peak from its memory clock and bus)")
print(f"DEVICE={shlex.quote(name)} BOUNDS_TEXT={shlex.quote(text)}")
PY
)"
  say "$BOUNDS_TEXT"
}

# Main ------------------------------------------------------------------------------------------

JOBS=${JOBS:-$(($(nproc) < 16 ? $(nproc) : 16))} BENCH_SIZES=${BENCH_SIZES:-"16384 65536"}
BENCH_TARGET=${BENCH_TARGET:-1.5} BENCH_FRAMES=4 NCCL_PROBE_S=20
SHAPES_SIZES=${SHAPES_SIZES:-"4096 8192 16384 16384x1024"} SHAPES_CELLS=${SHAPES_CELLS:-3e12}
BOUNDS_TOOL=$build/tools/golmpi-bounds
PROBLEMS=()
check_prerequisites
if ((${#PROBLEMS[@]})); then
  for m in "${PROBLEMS[@]}"; do say "$m"; done
  [[ -n ${PY:-} ]] || exit 2
  ((dry)) || exit 2
  say "dry run: a real run would stop here (exit 2); the commands follow"
fi
[[ -n ${MPIEXEC:-} ]] || MPIEXEC=mpiexec MPI_LAUNCH="mpiexec --oversubscribe -n"
CTEST=${CTEST:-ctest}
read -ra MPI_ARGS <<<"$MPI_LAUNCH"
probe_versions
write_runner
make_shadow
mkdir -p "$work/logs"
cases_frames
cases_nccl_multi
cases_sanitize
estimate_work
size_limits
say "parts and limits (s): $(for p in "${PARTS[@]}"; do printf '%s %s, ' "$p" "${LIMIT[$p]}"; done)\
work estimated x $((MARGIN / 100)).$((MARGIN % 100 / 10)), within $BUDGET s"

if ((!dry)) && [[ ${GPU_CHECK_NO_PROBE:-0} != 1 ]]; then
  # The one check that decides whether there is anything to prove: golmpi's own (exit 3: no GPU)
  timeout -k 2 "$PROBE_S" "${MPI_ARGS[@]}" 1 "$golmpi" --backend cuda --size 64 --steps 1 \
    --no-output --quiet >"$work/probe.log" 2>&1
  rc=$?
  if ((rc == 3)); then
    msg="no GPU: nothing to prove ($(grep -m1 'error' "$work/probe.log" || tail -1 "$work/probe.log"))"
    echo "gpu_check: $msg" >&2
    [[ -n $report ]] &&
      printf '# golmpi GPU check\n\n%s: %s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')" "$msg" >"$report"
    exit 3
  elif ((rc != 0)); then
    echo "gpu_check: golmpi --backend cuda fails on this machine (exit $rc):" >&2
    cat "$work/probe.log" >&2
    exit 1
  fi
fi
measure_bounds

for part in "${PARTS[@]}"; do run_part "$part"; done
mps_stop
if [[ -n $report ]]; then write_report >"$report"; say "report: $report"; else write_report; fi
((keep)) && say "work directory kept: $work"
((${#FAILED[@]} == 0))
