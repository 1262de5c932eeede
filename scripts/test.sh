#!/bin/bash
# Build golmpi and run every test with ctest, in stages, and end with one summary of every stage,
# every failed and every skipped test with its reason (scripts/test_summary.py, from the JUnit
# files ctest writes into build/test-results). Exit 0 only when nothing failed and every skip is
# for a reason no package can fix (no GPU, a CPU-only build, no root); a skip for a missing
# command or module fails the run (scripts/deps.sh --test installs all of scripts/deps.txt).
#   main      the build in build/ (CUDA when nvcc is found), every test but the rehearsals; ARGS
#             go to this ctest
#   rehearsal the rehearsals of machines (tests/rehearsal.sh: Debian roots, packages, the README
#             on a fresh machine) in build/, in the background beside the sim and sanitize
#             stages, at a lower priority (nice 10): most of their time is spent installing
#             packages and copying trees; their output comes after them. Not beside main's
#             tests: there they stalled MPI cases (likely because an oversubscribed job's
#             waiting ranks yield their cores to whatever else is runnable, niced or not):
#             io_roundtrip_3 took 209 s, four cpu_* restart and reference cases 137-204 s,
#             against 1-20 s
#   sim       the CUDA backend on the simulated GPU (build-sim: -DGOLMPI_CUDA_SIM=ON, no CUDA
#             toolkit needed; docs/GPU.md): every CUDA test, the simulator's own, its faults and
#             the mutation tests, each under a schedule seed. GOLMPI_TEST_SIM=0 leaves it out.
#   sanitize  a second build (build-san: CPU only, -DGOLMPI_SANITIZE=address,undefined) runs the
#             tests that exercise golmpi's C code under AddressSanitizer, LeakSanitizer and UBSan.
#             The sanitizers write their reports to files (build-san/sanitizer-reports), read at
#             the end of the stage: any report fails the run and is printed in full, so a test
#             driver that swallows a child's stderr cannot hide one. GOLMPI_TEST_SANITIZERS=0
#             leaves this stage out.
# A stage that cannot build stops the script there, naming the command that failed; a failed
# test does not: every stage runs, and the summary comes last.
# GOLMPI_TEST_QUICK=1: the lighter run the README names (a few minutes): the same packages, the
# same build of build/ with the tests configured (a test left unregistered still fails it), and
# of its tests only the quick ones below; the sim and sanitize stages left out, said so in the
# summary. The new-user rehearsal runs the README's quick start so (tests/rehearsal.sh fresh).
#   scripts/test.sh [CTEST_ARGS...]
set -euo pipefail
# one line naming the command that stopped the script (a stage's own failures: stage below)
on_err() { echo "test.sh: FAILED: $BASH_COMMAND (exit $?)" >&2; }
trap on_err ERR
cd "$(dirname "$0")/.."
root=$PWD
bash scripts/deps.sh --test
source scripts/env.sh
results=$root/build/test-results
rm -rf "$results"
mkdir -p "$results"
: >"$results/stages"

summary() { python3 "$root/scripts/test_summary.py" "$results"; }

# stage NAME FUNCTION [ARGS...]: run one stage (FUNCTION ARGS in a subshell that stops at its
# first failing command) and record it for the summary; its tests' results are in the JUnit files
# it wrote through run_ctest, its other failures in $findings. A stage that stops ends the script.
stage() {
  local name=$1 rc=0
  shift
  echo "==== test.sh: stage $name"
  # the subshell stops at its first failure (errexit would be off in a condition); its exit is
  # recorded here, not reported by the script's ERR trap
  trap - ERR
  set +e
  (
    set -eE
    findings=$results/$name.findings stage_name=$name
    trap 'echo "failed: $BASH_COMMAND (exit $?)" >"$results/$stage_name.stopped"' ERR
    "$@"
  )
  rc=$?
  set -e
  trap on_err ERR
  if ((rc == 0)); then
    printf '%s\tran\n' "$name" >>"$results/stages"
    return 0
  fi
  printf '%s\tstopped: %s\n' "$name" "$(cat "$results/$name.stopped" 2>/dev/null || echo "exit $rc")" \
    >>"$results/stages"
  echo "test.sh: stage $name stopped: $(cat "$results/$name.stopped" 2>/dev/null || echo "exit $rc")" >&2
  # a stage in the background ends before the summary, which has its results
  if [[ -n ${rehearsal_pid:-} ]]; then
    wait "$rehearsal_pid" || true
    cat "$results/rehearsal.out"
  fi
  summary || true
  exit 1
}

# left_out NAME WHY: a stage not run, said in the summary
left_out() { printf '%s\tleft out (%s)\n' "$1" "$2" >>"$results/stages"; }

# build_tree DIR CMAKE_ARGS...: configure and build one tree
build_tree() {
  local dir=$1
  shift
  cmake -S . -B "$dir" "$@"
  # a test left unregistered for want of a package (tests/helpers.cmake) fails the run, as a skip
  # for one does
  if [[ -s $dir/tests_not_registered.txt ]]; then
    sed "s|^|$dir: |" "$dir/tests_not_registered.txt" >>"$findings"
  fi
  cmake --build "$dir" -j "$(nproc)"
}

# run_ctest RUN DIR CTEST_ARGS...: ctest in DIR; its results go to $stage_name.RUN.xml, and what
# it prints (each test's status: Failed, Timeout...) to $stage_name.RUN.log. A failed test is a
# result, not an error of the stage: only a ctest that writes no results is.
run_ctest() {
  local out=$results/$stage_name.$1 dir=$2
  shift 2
  ctest --test-dir "$dir" --output-on-failure -j "$(nproc)" --no-tests=error \
    --output-junit "$out.xml" "$@" 2>&1 | tee "$out.log" || grep -q "<testcase" "$out.xml"
}

# GOLMPI_TEST_QUICK=1's tests: the unit tests, the parsers and the command line, every command
# and module of scripts/deps.txt found, and golmpi against the reference (2 ranks, a restart, a
# pattern); about a minute on 2 cores, none of them needs root or the network
quick_tests='^(unit_.*|rule|pattern|config|options_readme|deps_list_installed'
quick_tests+='|cpu_ref_77x23_p2_dead_B3S23|cpu_restart|cpu_pattern)$'

stage_main() {
  build_tree build "$cuda_flag" ${GOLMPI_CMAKE_ARGS:-}
  if [[ ${GOLMPI_TEST_QUICK:-0} == 1 ]]; then
    run_ctest quick build -R "$quick_tests" "$@"
  else
    run_ctest all build -LE '^rehearsal$' "$@"
  fi
}

# nice 10: a test beside it gets about ten times its share of a core it wants too
stage_rehearsal() {
  renice -n 10 -p "$BASHPID" >/dev/null
  run_ctest all build -L '^rehearsal$' "$@"
}

# Every test of the CUDA path, on the simulated GPU: those named cuda (the CUDA backend's own, the
# integration cases at every depth, chunks, NVTX, checkpoint), cudasim_* (the simulator, faults,
# mutations, more seeds and depths), and those that run the CUDA backend in a CUDA build (the
# random start's, --stats). RelWithDebInfo: a race report names file and line.
# cuda_kernels_emulated (the kernels' thread bodies on the host, no GPU) only where the main
# stage did not pass it: the same source, and cuda_kernels runs those bodies here on the simulated
# GPU (about 110 s saved in a CUDA build)
stage_sim() {
  local again=()
  build_tree build-sim ${GOLMPI_CMAKE_ARGS:-} -DGOLMPI_CUDA_SIM=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
  if grep -q '<testcase name="cuda_kernels_emulated"[^>]*status="run"' "$results"/main.*.xml \
    2>/dev/null; then
    again=(-E '^cuda_kernels_emulated$')
  fi
  run_ctest cuda build-sim -R 'cuda|init_random|stats_population|halo_modes' "${again[@]}"
}

# The C code's tests, not those that add only time (Slurm, scaling, installing, ParaView, the
# build checks, the fuzzers, which are sanitized builds of their own, a SIGSTOPped rank, which
# LeakSanitizer's ptrace cannot stop): unit tests, the parsers, the CPU integration cases against
# the reference (all halo depths, restart, patterns), bad inputs, the I/O round trip, --stats,
# progress, the renderer. LeakSanitizer's check at exit costs about 2 s a process under Open MPI,
# so leaks are looked for in the first group only (the unit tests, the I/O round trip, and golmpi
# with a pattern, a restart and a plain run), the rest runs with detect_leaks=0.
stage_sanitize() {
  local san_leaks san_rest reports asan found f
  san_leaks='^(unit_.*|rule|pattern|config|options_readme|io_roundtrip_.*|io_check_output_.*'
  san_leaks+='|cpu_pattern|cpu_restart|cpu_ref_77x23_p2_dead_B3S23)$'
  san_rest='^(cpu_.*|bad_inputs|backend_auto|stats_population|progress_batch_log|jobs_render|chunks_sums|chunks_slow)$'
  build_tree build-san ${GOLMPI_CMAKE_ARGS:-} -DGOLMPI_ENABLE_CUDA=OFF \
    -DGOLMPI_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=RelWithDebInfo
  reports=$root/build-san/sanitizer-reports
  rm -rf "$reports"
  mkdir -p "$reports"
  # allocator_may_return_null: golmpi turns a failed allocation into a message, which tests check.
  # fast_unwind_on_malloc=0: Open MPI and HDF5 are built without frame pointers; the full stack
  # reaches their frames, which tests/sanitizer.supp names (memory they hold until exit).
  asan="log_path=$reports/asan:log_exe_name=1:allocator_may_return_null=1"
  export LSAN_OPTIONS="suppressions=$root/tests/sanitizer.supp:print_suppressions=0"
  export UBSAN_OPTIONS="log_path=$reports/ubsan:log_exe_name=1:print_stacktrace=1:halt_on_error=1"
  ASAN_OPTIONS="$asan:detect_leaks=1:fast_unwind_on_malloc=0" run_ctest leaks build-san -R "$san_leaks"
  ASAN_OPTIONS="$asan:detect_leaks=0" run_ctest rest build-san -R "$san_rest" -E "$san_leaks"
  found=("$reports"/*)
  if [[ -e ${found[0]} ]]; then
    for f in "${found[@]}"; do
      echo "==== sanitizer report $f"
      cat "$f"
    done
    echo "${#found[@]} sanitizer report(s) in $reports (printed above)" >>"$findings"
  else
    echo "sanitizer pass: no reports"
  fi
}

stage main stage_main "$@"
rehearsal_pid=""
if [[ ${GOLMPI_TEST_QUICK:-0} == 1 ]]; then
  left_out rehearsal "GOLMPI_TEST_QUICK=1"
elif [[ $(ctest --test-dir build -N -L '^rehearsal$' "$@" 2>/dev/null) != *"Total Tests: 0"* ]]; then
  echo "==== test.sh: stage rehearsal, in the background (its output after the sanitize stage)"
  stage rehearsal stage_rehearsal "$@" >"$results/rehearsal.out" 2>&1 &
  rehearsal_pid=$!
else
  left_out rehearsal "no rehearsal among the tests asked for"
fi
if [[ ${GOLMPI_TEST_QUICK:-0} == 1 ]]; then
  left_out sim "GOLMPI_TEST_QUICK=1"
elif [[ ${GOLMPI_TEST_SIM:-1} == 0 ]]; then
  left_out sim "GOLMPI_TEST_SIM=0"
else
  stage sim stage_sim
fi
if [[ ${GOLMPI_TEST_QUICK:-0} == 1 ]]; then
  left_out sanitize "GOLMPI_TEST_QUICK=1"
elif [[ ${GOLMPI_TEST_SANITIZERS:-1} == 0 ]]; then
  left_out sanitize "GOLMPI_TEST_SANITIZERS=0"
else
  stage sanitize stage_sanitize
fi
if [[ -n $rehearsal_pid ]]; then
  wait "$rehearsal_pid" || true
  echo "==== test.sh: stage rehearsal (it ran beside the stages above)"
  cat "$results/rehearsal.out"
fi
summary
