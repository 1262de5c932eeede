# Tests of jobs/, tools/ and the NVTX ranges. Included from tests/CMakeLists.txt.

# The Python tests here need h5py and numpy: without them (GOLMPI_H5PY_PYTHON empty,
# tests/helpers.cmake warned) they are not registered.

# NVTX injection library: logs the ranges golmpi opens, so a test can check them without nsys.
if(NVTX3_INCLUDE_DIR)
  find_package(Threads REQUIRED)
  add_library(nvtx_inject SHARED ${GOLMPI_TEST_DIR}/nvtx_inject.c)
  target_include_directories(nvtx_inject PRIVATE ${NVTX3_INCLUDE_DIR})
  target_compile_options(nvtx_inject PRIVATE -Wall -Wextra)
  target_compile_definitions(nvtx_inject PRIVATE _GNU_SOURCE)
  target_link_libraries(nvtx_inject PRIVATE Threads::Threads)
  if(GOLMPI_H5PY_PYTHON)
    set(nvtx_args --golmpi $<TARGET_FILE:golmpi> --inject $<TARGET_FILE:nvtx_inject>
                  --launcher "${GOLMPI_MPIEXEC_LINE} ${MPIEXEC_PREFLAGS}" --ranks 2)
    golmpi_test(jobs_nvtx_ranges PYTHON PROCESSORS 2 TIMEOUT 300
      COMMAND ${GOLMPI_TEST_DIR}/test_nvtx.py ${nvtx_args})
    if(GOLMPI_CUDA_BACKEND)
      # stream names and d2h ranges; 77 (skip) where golmpi finds no GPU
      golmpi_test(jobs_nvtx_ranges_cuda PYTHON SKIP PROCESSORS 2 TIMEOUT 300
        COMMAND ${GOLMPI_TEST_DIR}/test_nvtx.py --backend cuda ${nvtx_args})
    endif()
  endif()
endif()

# golmpi-render (tools/) is built only where libpng is found; the same test decides here.
find_package(PNG QUIET)
if(PNG_FOUND AND GOLMPI_H5PY_PYTHON)
  golmpi_test(jobs_render PYTHON PROCESSORS 2 TIMEOUT 300
    COMMAND ${GOLMPI_TEST_DIR}/test_render.py
            --render $<TARGET_FILE:golmpi-render> --golmpi $<TARGET_FILE:golmpi>
            --launcher "${GOLMPI_MPIEXEC_LINE} 2 ${MPIEXEC_PREFLAGS}")
endif()

# The README's code blocks, run as a user would (tests/test_readme.py lists which blocks run and
# why the others are skipped); the render blocks need golmpi-render.
if(GOLMPI_H5PY_PYTHON)
  set(golmpi_readme_args --readme ${PROJECT_SOURCE_DIR}/README.md --golmpi $<TARGET_FILE:golmpi>)
  if(PNG_FOUND)
    list(APPEND golmpi_readme_args --render $<TARGET_FILE:golmpi-render>)
  endif()
  golmpi_test(jobs_readme PYTHON PROCESSORS 2 TIMEOUT 600
    COMMAND ${GOLMPI_TEST_DIR}/test_readme.py ${golmpi_readme_args})
endif()

# The job scripts: shell syntax, and a real local run through jobs/run_local.sh.
add_test(NAME jobs_scripts_syntax
  COMMAND bash -c "for f in \"$0\"/jobs/*.sh \"$0\"/jobs/*.sbatch \"$0\"/tests/test_slurm.sh \"$0\"/tests/test_cluster.sh \"$0\"/tests/test_cluster_faults.sh \"$0\"/tests/cluster/cluster.sh \"$0\"/tests/cluster/uncut.sh \"$0\"/tests/test_launcher_watch.sh \"$0\"/tests/test_jobs_mps.sh; do bash -n \"$f\" || exit 1; done"
          ${PROJECT_SOURCE_DIR})
# The Slurm scripts end a launcher that outlives its ranks, with the code from the output's log
# when the launcher does not report it (a stand-in mpirun; neither MPI nor Slurm needed).
add_test(NAME jobs_launcher_watch
  COMMAND bash ${GOLMPI_TEST_DIR}/test_launcher_watch.sh ${PROJECT_SOURCE_DIR}/jobs/slurm_cpu.sbatch
          ${PROJECT_SOURCE_DIR}/jobs/slurm_multinode.sbatch ${PROJECT_SOURCE_DIR}/jobs/slurm_node_4gpu.sbatch)
set_tests_properties(jobs_launcher_watch PROPERTIES TIMEOUT 300)
# MPS on the nodes of a job: each rank under jobs/golmpi_mps_node.sh, a daemon of the launch's own
# where a node's ranks outnumber its GPUs, GOLMPI_MPS=0|1|auto, a failed start, the exit codes
# (stand-ins for nvidia-cuda-mps-control, in python3, and nvidia-smi, mpirun, nsys, golmpi).
if(Python3_EXECUTABLE)
  add_test(NAME jobs_mps
    COMMAND bash ${GOLMPI_TEST_DIR}/test_jobs_mps.sh ${PROJECT_SOURCE_DIR}/jobs/run_local.sh
            ${PROJECT_SOURCE_DIR}/jobs/slurm_node_4gpu.sbatch ${PROJECT_SOURCE_DIR}/jobs/slurm_multinode.sbatch
            ${PROJECT_SOURCE_DIR}/jobs/scaling.sbatch ${PROJECT_SOURCE_DIR}/jobs/nsys_profile.sh)
  set_tests_properties(jobs_mps PROPERTIES TIMEOUT 300 ENVIRONMENT "GOLMPI_PYTHON=${Python3_EXECUTABLE}")
endif()
if(GOLMPI_H5PY_PYTHON)
  add_test(NAME jobs_run_local
    COMMAND bash ${GOLMPI_TEST_DIR}/slurm/run_local_check.sh)
  set_tests_properties(jobs_run_local PROPERTIES PROCESSORS 2 TIMEOUT 300
    ENVIRONMENT "GOLMPI_BIN=$<TARGET_FILE:golmpi>;GOLMPI_SRC=${PROJECT_SOURCE_DIR};GOLMPI_PYTHON=${GOLMPI_PYTHON}")

  # The scaling study at a tiny size on 1 and 2 ranks: the CSV (jobs_scaling), then the plot
  # drawn from that CSV (jobs_scaling_plot; 77, skip, when python3 lacks matplotlib).
  set(golmpi_scaling_env "GOLMPI_BIN=$<TARGET_FILE:golmpi>;GOLMPI_SRC=${PROJECT_SOURCE_DIR}")
  golmpi_python_with(GOLMPI_PLOT_PYTHON "matplotlib")
  add_test(NAME jobs_scaling
    COMMAND bash ${GOLMPI_TEST_DIR}/test_scaling.sh csv ${CMAKE_CURRENT_BINARY_DIR}/jobs_scaling)
  set_tests_properties(jobs_scaling PROPERTIES PROCESSORS 2 TIMEOUT 300
    FIXTURES_SETUP golmpi_scaling_csv
    ENVIRONMENT "${golmpi_scaling_env};GOLMPI_PYTHON=${GOLMPI_PYTHON}")
  if(NOT GOLMPI_PLOT_PYTHON)
    set(GOLMPI_PLOT_PYTHON ${GOLMPI_PYTHON})
  endif()
  add_test(NAME jobs_scaling_plot
    COMMAND bash ${GOLMPI_TEST_DIR}/test_scaling.sh plot ${CMAKE_CURRENT_BINARY_DIR}/jobs_scaling)
  set_tests_properties(jobs_scaling_plot PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77
    FIXTURES_REQUIRED golmpi_scaling_csv
    ENVIRONMENT "${golmpi_scaling_env};GOLMPI_PYTHON=${GOLMPI_PLOT_PYTHON}")

  # A real one-node Slurm (munge, slurmctld, slurmd) started by the test, jobs submitted with
  # sbatch --wait. 77 (skip) only when slurm-wlm or munge are missing and cannot be installed.
  add_test(NAME jobs_slurm COMMAND bash ${GOLMPI_TEST_DIR}/test_slurm.sh)
  set_tests_properties(jobs_slurm PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900 RUN_SERIAL TRUE
    ENVIRONMENT "GOLMPI_BIN=$<TARGET_FILE:golmpi>;GOLMPI_SRC=${PROJECT_SOURCE_DIR};GOLMPI_PYTHON=${GOLMPI_PYTHON}")
endif()

# Checkpoint on a signal and resume into the same series, without Slurm: SIGTERM to one rank of 3,
# SIGUSR1 to mpiexec, resumed with --restart life.h5 --output life.h5, against a run that never
# stopped (h5py, exactly).
if(GOLMPI_H5PY_PYTHON)
  golmpi_driver_test(checkpoint_resume test_checkpoint.py PROCESSORS 3 TIMEOUT 300)
endif()

# cmake --install into a temporary prefix: golmpi, golmpi-render and the job scripts, executable;
# the README, LICENSE, example patterns and Python tools beside them.
set(golmpi_install_check [=[
set -e
prefix=$(mktemp -d /tmp/golmpi-install.XXXXXX)
trap 'rm -rf "$prefix"' EXIT
"$1" --install "$2" --prefix "$prefix" >/dev/null
want="bin/golmpi share/golmpi/jobs/README.md share/golmpi/jobs/golmpi_job.sh share/golmpi/env.sh share/doc/golmpi/README.md share/doc/golmpi/LICENSE"
[ "$3" = 1 ] && want="$want bin/golmpi-render"
for s in slurm_node_4gpu.sbatch slurm_multinode.sbatch slurm_cpu.sbatch nsys_profile.sh run_local.sh \
         scaling.sbatch scaling_local.sh submit.sh golmpi_mps_node.sh; do
  want="$want share/golmpi/jobs/$s"
  [ -x "$prefix/share/golmpi/jobs/$s" ] || { echo "FAIL: $s not installed executable"; exit 1; }
done
for s in frame_to_rle.py plot_scaling.py plot_population.py; do
  want="$want share/golmpi/bench/$s"
  [ -x "$prefix/share/golmpi/bench/$s" ] || { echo "FAIL: $s not installed executable"; exit 1; }
done
for p in gosper.rle glider.rle glider.cells; do want="$want share/golmpi/patterns/$p"; done
for f in $want; do [ -f "$prefix/$f" ] || { echo "FAIL: $f not installed"; exit 1; }; done
# the bad-input fixtures of the tests are not examples
[ ! -e "$prefix/share/golmpi/patterns/malformed.rle" ] || { echo "FAIL: malformed.rle installed"; exit 1; }
cmp -s "$prefix/share/doc/golmpi/LICENSE" "$4/LICENSE" || { echo "FAIL: LICENSE differs"; exit 1; }
# the installed patterns run with the installed golmpi
"$prefix/bin/golmpi" --pattern "$prefix/share/golmpi/patterns/gosper.rle" --size 64 --boundary dead \
  --steps 30 --no-output --quiet || { echo "FAIL: installed golmpi on the installed gosper.rle"; exit 1; }
"$prefix/bin/golmpi" --help >/dev/null || { echo "FAIL: installed golmpi --help"; exit 1; }
[ "$3" = 1 ] && { "$prefix/bin/golmpi-render" --help >/dev/null || { echo "FAIL: installed golmpi-render --help"; exit 1; }; }
# a job script run from elsewhere, as sbatch runs its copy, finds the installed library through
# the installed env.sh's GOLMPI_SHARE; without it, it says so and exits 2
mkdir "$prefix/spool" && cp "$prefix/share/golmpi/jobs/slurm_cpu.sbatch" "$prefix/spool/slurm_script"
(source "$prefix/share/golmpi/env.sh" && GOLMPI_DRY_RUN=1 GOLMPI_BACKEND=cpu GOLMPI_LAUNCHER=mpirun \
  bash "$prefix/spool/slurm_script" >/dev/null) || { echo "FAIL: a job script with the installed env.sh"; exit 1; }
rc=0; out=$(env -u GOLMPI_SHARE bash "$prefix/spool/slurm_script" 2>&1) || rc=$?
[ "$rc" = 2 ] && [ -z "${out##*set GOLMPI_SHARE*}" ] || { echo "FAIL: without GOLMPI_SHARE: exit $rc: $out"; exit 1; }
rm -r "$prefix/spool"
(cd "$prefix" && find . -type f | sort)
echo PASS
]=])
if(PNG_FOUND)
  set(golmpi_have_render 1)
else()
  set(golmpi_have_render 0)
endif()
add_test(NAME jobs_install
  COMMAND bash -c "${golmpi_install_check}" install-check ${CMAKE_COMMAND} ${PROJECT_BINARY_DIR} ${golmpi_have_render}
          ${PROJECT_SOURCE_DIR})
set_tests_properties(jobs_install PROPERTIES TIMEOUT 120)
