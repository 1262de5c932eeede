#!/bin/bash
# Build golmpi and run every test with ctest. GPU tests report "skipped" without a GPU.
# Then the sanitizer pass: a second build (build-san: CPU only, -DGOLMPI_SANITIZE=address,undefined)
# runs the tests that exercise golmpi's C code under AddressSanitizer, LeakSanitizer and UBSan.
# The sanitizers write their reports to files (build-san/sanitizer-reports), which are read at the
# end: any report fails the run and is printed in full, so a test driver that swallows a child's
# stderr cannot hide one. GOLMPI_TEST_SANITIZERS=0 leaves the sanitizer pass out.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh --test
source scripts/env.sh
cmake -S . -B build "$cuda_flag" ${GOLMPI_CMAKE_ARGS:-}
cmake --build build -j "$(nproc)"
rc=0
ctest --test-dir build --output-on-failure -j "$(nproc)" "$@" || rc=$?
[[ ${GOLMPI_TEST_SANITIZERS:-1} == 0 ]] && exit "$rc"

# The C code's tests, not those that add only time (Slurm, scaling, installing, ParaView, the
# build checks, the fuzzers, which are sanitized builds of their own, a SIGSTOPped rank, which
# LeakSanitizer's ptrace cannot stop): unit tests, the parsers, the CPU integration cases against
# the reference (all halo depths, restart, patterns), bad inputs, the I/O round trip, --stats,
# progress, the renderer. LeakSanitizer's check at exit costs about 2 s a process under Open MPI,
# so leaks are looked for in the first group only (the unit tests, the I/O round trip, and golmpi
# with a pattern, a restart and a plain run), the rest runs with detect_leaks=0.
san_leaks='^(unit_.*|rule|pattern|config|options_readme|io_roundtrip_.*|io_check_output_.*'
san_leaks+='|cpu_pattern|cpu_restart|cpu_ref_77x23_p2_dead_B3S23)$'
san_rest='^(cpu_.*|bad_inputs|backend_auto|stats_population|progress_batch_log|jobs_render|chunks_sums|chunks_slow)$'
cmake -S . -B build-san ${GOLMPI_CMAKE_ARGS:-} -DGOLMPI_ENABLE_CUDA=OFF \
  -DGOLMPI_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build-san -j "$(nproc)"
reports=$PWD/build-san/sanitizer-reports
rm -rf "$reports"
mkdir -p "$reports"
# allocator_may_return_null: golmpi turns a failed allocation into a message, which tests check.
# fast_unwind_on_malloc=0: Open MPI and HDF5 are built without frame pointers; the full stack
# reaches their frames, which tests/sanitizer.supp names (memory they hold until exit).
asan="log_path=$reports/asan:log_exe_name=1:allocator_may_return_null=1"
export LSAN_OPTIONS="suppressions=$PWD/tests/sanitizer.supp:print_suppressions=0"
export UBSAN_OPTIONS="log_path=$reports/ubsan:log_exe_name=1:print_stacktrace=1:halt_on_error=1"
san_rc=0
ASAN_OPTIONS="$asan:detect_leaks=1:fast_unwind_on_malloc=0" \
  ctest --test-dir build-san --output-on-failure -j "$(nproc)" -R "$san_leaks" || san_rc=$?
ASAN_OPTIONS="$asan:detect_leaks=0" \
  ctest --test-dir build-san --output-on-failure -j "$(nproc)" -R "$san_rest" -E "$san_leaks" ||
  san_rc=$?
unset LSAN_OPTIONS UBSAN_OPTIONS

found=("$reports"/*)
if [[ -e ${found[0]} ]]; then
  for f in "${found[@]}"; do
    echo "==== sanitizer report $f"
    cat "$f"
  done
  echo "FAILED: ${#found[@]} sanitizer report(s) in $reports (printed above)"
  san_rc=1
elif ((san_rc == 0)); then
  echo "sanitizer pass: no reports"
fi
((rc != 0)) && exit "$rc"
exit "$san_rc"
