#!/bin/bash
# Checks of the CUDA build's run-time linking (registered by tests/build.cmake).
#   test_build.sh rpath GOLMPI   RUNPATH of the built and of an installed golmpi names every
#                                directory of GOLMPI_RUNTIME_DIRS; no static CUDA runtime linked
#   test_build.sh nccl           configure against NCCL prefixes that hold only libnccl.so.2
#   test_build.sh gpu_check GOLMPI  scripts/gpu_check.sh's arguments, --dry-run, no-GPU exit
# Environment (from ctest): GOLMPI_CUDA (0: exit 77), GOLMPI_RUNTIME_DIRS (colon-separated),
# CMAKE, GOLMPI_SRC, GOLMPI_BUILD, NCCL_LIBRARY, NCCL_INCLUDE_DIR, CUDA_COMPILER.
set -euo pipefail
[[ ${GOLMPI_CUDA:-0} == 1 ]] || { echo "SKIP: CPU-only build (GOLMPI_ENABLE_CUDA=OFF)"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d /tmp/golmpi-build-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# runpath_has BINARY: every directory of GOLMPI_RUNTIME_DIRS is in its RUNPATH (or RPATH), and
# the loader takes libcudart and libnccl from there
runpath_has() {
  local bin=$1 path dir lib got
  path=$(readelf -d "$bin" | sed -n 's/.*(\(RUNPATH\|RPATH\)).*\[\(.*\)\]/\2/p')
  echo "$bin: RUNPATH [$path]"
  IFS=: read -ra dirs <<<"$GOLMPI_RUNTIME_DIRS"
  ((${#dirs[@]})) || fail "GOLMPI_RUNTIME_DIRS is empty"
  for dir in "${dirs[@]}"; do
    [[ ":$path:" == *":$dir:"* ]] || fail "$bin: RUNPATH [$path] lacks $dir"
  done
  for lib in libcudart.so libnccl.so.2; do
    got=$(env -u LD_LIBRARY_PATH ldd "$bin" | awk -v l="$lib" 'index($1, l) == 1 { print $3 }')
    [[ -n $got && $got != not ]] || fail "$bin: the loader finds no $lib"
    local ok=0
    for dir in "${dirs[@]}"; do
      [[ $(realpath "$(dirname "$got")") == $(realpath "$dir") ]] && ok=1
    done
    ((ok)) || fail "$bin: $lib comes from $got, not from the RUNPATH directories"
  done
}

case $1 in
rpath)
  golmpi=$2
  runpath_has "$golmpi"
  "$CMAKE" --install "$GOLMPI_BUILD" --prefix "$tmp/prefix" >/dev/null
  runpath_has "$tmp/prefix/bin/golmpi"
  # one CUDA runtime: the link line (Makefiles or Ninja) names no libcudart_static
  if grep -rqs cudart_static "$GOLMPI_BUILD/CMakeFiles/golmpi.dir" "$GOLMPI_BUILD/build.ninja"; then
    fail "golmpi is linked with -lcudart_static as well as libcudart.so"
  fi
  ;;
nccl)
  # the real NCCL, as pip ships it: libnccl.so.2 (no libnccl.so link) and nccl.h
  so2=$(dirname "$NCCL_LIBRARY")/libnccl.so.2
  [[ -e $so2 ]] || so2=$(realpath "$NCCL_LIBRARY")
  # configure NAME ARGS...: a CUDA configure of the project into $tmp/build-NAME, its output in
  # $tmp/NAME.log
  configure() {
    local name=$1; shift
    env -u NCCL_HOME "$CMAKE" -S "$GOLMPI_SRC" -B "$tmp/build-$name" -G "Unix Makefiles" \
      -DGOLMPI_ENABLE_CUDA=ON -DBUILD_TESTING=OFF -DCMAKE_CUDA_COMPILER="$CUDA_COMPILER" \
      "$@" >"$tmp/$name.log" 2>&1
  }
  # found_in NAME DIR: the configure NAME took NCCL from DIR and links golmpi with it
  found_in() {
    local b=$tmp/build-$1
    grep -qF "NCCL_LIBRARY:FILEPATH=$2/libnccl.so.2" "$b/CMakeCache.txt" ||
      fail "$1: $(grep ^NCCL_LIBRARY: "$b/CMakeCache.txt"), not $2/libnccl.so.2"
    grep -rqsF "$2/libnccl.so.2" "$b/CMakeFiles/golmpi.dir" ||
      fail "$1: golmpi's link line does not name $2/libnccl.so.2"
    grep -rqsE -- "-rpath,([^ ]*:)?$2(:| )" "$b/CMakeFiles/golmpi.dir" ||
      fail "$1: golmpi's build RPATH does not name $2"
    grep "NCCL [0-9]" "$tmp/$1.log"
  }

  mkdir -p "$tmp/home/lib" "$tmp/home/include"
  ln -s "$so2" "$tmp/home/lib/libnccl.so.2"
  ln -s "$NCCL_INCLUDE_DIR/nccl.h" "$tmp/home/include/nccl.h"
  configure home -DNCCL_HOME="$tmp/home" || { cat "$tmp/home.log"; fail "configure with NCCL_HOME"; }
  found_in home "$tmp/home/lib"

  # pip's wheel: site-packages/nvidia/nccl/{lib,include}, found through python3 (a namespace
  # package here, as in the wheel), with NCCL_HOME unset
  wheel=$tmp/site/nvidia/nccl
  mkdir -p "$wheel/lib" "$wheel/include"
  ln -s "$so2" "$wheel/lib/libnccl.so.2"
  ln -s "$NCCL_INCLUDE_DIR/nccl.h" "$wheel/include/nccl.h"
  PYTHONPATH=$tmp/site configure wheel || { cat "$tmp/wheel.log"; fail "configure with the wheel"; }
  found_in wheel "$wheel/lib"

  # an NCCL older than the code needs: configuring stops and says which version it needs
  mkdir -p "$tmp/old/lib" "$tmp/old/include"
  ln -s "$so2" "$tmp/old/lib/libnccl.so.2"
  sed 's/^#define NCCL_MINOR .*/#define NCCL_MINOR 17/' "$NCCL_INCLUDE_DIR/nccl.h" \
    >"$tmp/old/include/nccl.h"
  if configure old -DNCCL_HOME="$tmp/old"; then fail "configure accepted NCCL 2.17"; fi
  grep -q "needs NCCL 2.18 or newer" "$tmp/old.log" ||
    { cat "$tmp/old.log"; fail "no clear message for NCCL 2.17"; }
  grep -A2 "needs NCCL" "$tmp/old.log"
  ;;
gpu_check)
  unset GPU_CHECK_NO_PROBE
  check=$GOLMPI_SRC/scripts/gpu_check.sh
  bash -n "$check" || fail "bash -n $check"
  if command -v shellcheck >/dev/null; then shellcheck "$check" || fail "shellcheck $check"; fi
  "$GOLMPI_PYTHON" -c "import h5py, numpy" 2>/dev/null ||
    { echo "SKIP: no python3 with h5py and numpy (gpu_check.sh needs one)"; exit 77; }
  # bad arguments: exit 2 with a message
  for args in "--bogus" "--parts env,nope" "--build /nonexistent" "a.md b.md"; do
    # each string is several arguments
    rc=0
    # shellcheck disable=SC2086
    "$check" $args >"$tmp/out" 2>&1 || rc=$?
    ((rc == 2)) || fail "gpu_check.sh $args: exit $rc, expected 2: $(cat "$tmp/out")"
    grep -q "^gpu_check: " "$tmp/out" || fail "gpu_check.sh $args: no message"
  done
  # every missing prerequisite named, one message each, before anything runs: exit 2
  rc=0
  MPIEXEC=/nonexistent/mpiexec COMPUTE_SANITIZER=/nonexistent/compute-sanitizer \
    "$check" --build "$(dirname "$2")" >"$tmp/out" 2>&1 || rc=$?
  ((rc == 2)) || fail "gpu_check.sh without mpiexec and compute-sanitizer: exit $rc, expected 2"
  grep -q "^gpu_check: no mpiexec" "$tmp/out" || fail "no message for the missing mpiexec: $(cat "$tmp/out")"
  grep -q "^gpu_check: no compute-sanitizer" "$tmp/out" ||
    fail "no message for the missing compute-sanitizer: $(cat "$tmp/out")"
  grep -q "no GPU" "$tmp/out" && fail "gpu_check.sh probed the GPU before its prerequisites"
  # --dry-run: every part's commands, from the build's own ctest list, and a report
  build=$(dirname "$2")
  "$check" --build "$build" --dry-run "$tmp/dry.md" 2>"$tmp/dry.err" ||
    { cat "$tmp/dry.err"; fail "gpu_check.sh --dry-run"; }
  for want in "ctest --test-dir .* -R .*cuda_kernels.*cuda_vs_cpu_np4" \
              "mpi_across_nographs: .*integration.py" "nccl_131x37_p1_torus_B36S23_packed: " \
              "--tool racecheck .* --halo nccl" "gpu_bench.sh $build/golmpi"; do
    grep -Eq -- "$want" "$tmp/dry.err" || fail "gpu_check.sh --dry-run printed no '$want'"
  done
  for not in cuda_kernels_emulated unit_cuda_choices build_gpu_check; do
    grep -q "$not" "$tmp/dry.err" && fail "$not (no GPU needed) is among the GPU cases"
  done
  grep -q "^\*\*Dry run\*\*" "$tmp/dry.md" || fail "no dry-run report in $tmp/dry.md"
  grep -q "NCCL (golmpi's) | [0-9]" "$tmp/dry.md" || fail "the report names no NCCL version"
  # the real thing where golmpi finds no GPU: says so, exits non-zero, runs nothing else
  if "$2" --backend cuda --size 8 --steps 0 --no-output --quiet >/dev/null 2>&1; then
    echo "a GPU is present: the no-GPU path is not checked here (scripts/gpu_check.sh is the proof)"
  else
    # (not the sanitize part: this machine may have no compute-sanitizer, a missing prerequisite)
    rc=0; GPU_CHECK_PROBE_S=120 "$check" --build "$build" --parts env,ctest,frames "$tmp/nogpu.md" 2>"$tmp/nogpu.err" || rc=$?
    ((rc == 3)) || fail "gpu_check.sh without a GPU: exit $rc, expected 3: $(cat "$tmp/nogpu.err")"
    grep -q "no GPU: nothing to prove" "$tmp/nogpu.err" "$tmp/nogpu.md" || fail "no 'no GPU' message"
  fi
  ;;
*) echo "usage: test_build.sh rpath GOLMPI | nccl | gpu_check GOLMPI" >&2; exit 2 ;;
esac
echo PASS
