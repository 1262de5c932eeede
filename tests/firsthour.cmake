# A new user's first hour: the README as written on a fresh clone, the job scripts'
# own command lines, the apt lock, I/O errors, --stats, the man page, ParaView. Included from
# tests/CMakeLists.txt.

# scripts/deps.sh waits for apt's lock, saying so (root only, else 77; about 10 s plus apt-get
# update). RUN_SERIAL: it holds apt's locks for 6 s.
add_test(NAME firsthour_deps_lock
  COMMAND bash ${GOLMPI_TEST_DIR}/test_deps_lock.sh ${PROJECT_SOURCE_DIR})
set_tests_properties(firsthour_deps_lock PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 400 RUN_SERIAL TRUE)

# The README as a new user runs it: a copy of the tracked tree, its quick start literally (a
# small main job, no tests built, CPU only), the `source` line it prints, a second run, then every
# README and docs block from that clone with the installed golmpi on PATH (a few minutes: it
# builds golmpi and golmpi-render once more).
if(GOLMPI_JOBS_PYTHON AND PNG_FOUND)
  add_test(NAME firsthour_readme_fresh_clone
    COMMAND ${GOLMPI_JOBS_PYTHON} ${GOLMPI_TEST_DIR}/test_readme.py --fresh-clone
            --readme ${PROJECT_SOURCE_DIR}/README.md)
  set_tests_properties(firsthour_readme_fresh_clone PROPERTIES PROCESSORS 2 TIMEOUT 1500)
endif()

# Every command line of jobs/README.md as written (sbatch through a stand-in that starts the
# script dry; run_local.sh, golmpi-render and plot_population.py for real): a user's option wins
# over the script's setting for it. 5 s on an idle machine, 200 s on a loaded one. The real
# one-node Slurm runs
# `sbatch jobs/slurm_cpu.sbatch --steps 30 --size 128` in jobs_slurm.
if(GOLMPI_JOBS_PYTHON AND PNG_FOUND)
  add_test(NAME firsthour_jobs_readme
    COMMAND ${GOLMPI_JOBS_PYTHON} ${GOLMPI_TEST_DIR}/test_jobs_readme.py --src ${PROJECT_SOURCE_DIR}
            --golmpi $<TARGET_FILE:golmpi> --render $<TARGET_FILE:golmpi-render>)
  set_tests_properties(firsthour_jobs_readme PROPERTIES PROCESSORS 2 TIMEOUT 600)
endif()

# --stats tells the story: status after a signal (exit 4) and after the resume, and both
# segments of the series. About 5 s.
if(GOLMPI_JOBS_PYTHON)
  add_test(NAME firsthour_stats_story
    COMMAND ${GOLMPI_JOBS_PYTHON} ${GOLMPI_TEST_DIR}/test_stats_story.py --golmpi $<TARGET_FILE:golmpi>
            --mpiexec ${MPIEXEC_EXECUTABLE} ${GOLMPI_MPIEXEC_FLAGS})
  set_tests_properties(firsthour_stats_story PROPERTIES PROCESSORS 2 TIMEOUT 300
    ENVIRONMENT "OMP_NUM_THREADS=1")
endif()

# One message on a full disk: a 3 MiB tmpfs filled 20 times at 2 ranks and 20 at 4; no line from
# HDF5's or Open MPI's error paths, exit 5 on every rank. Root only (77 otherwise); about 20 s.
if(GOLMPI_JOBS_PYTHON)
  add_test(NAME firsthour_disk_full_quiet
    COMMAND ${GOLMPI_JOBS_PYTHON} ${GOLMPI_TEST_DIR}/test_disk_full_quiet.py --golmpi $<TARGET_FILE:golmpi>
            --mpiexec ${MPIEXEC_EXECUTABLE} ${GOLMPI_MPIEXEC_FLAGS})
  set_tests_properties(firsthour_disk_full_quiet PROPERTIES PROCESSORS 4 TIMEOUT 600
    SKIP_RETURN_CODE 77 ENVIRONMENT "OMP_NUM_THREADS=1")
endif()

# The man page (built from the option table) and the exit codes in --help, golmpi.1 and README.md;
# installed where `man golmpi` finds it after env.sh. About 5 s.
add_test(NAME firsthour_man_page
  COMMAND bash ${GOLMPI_TEST_DIR}/test_man.sh $<TARGET_FILE:golmpi> ${PROJECT_BINARY_DIR}
          ${PROJECT_SOURCE_DIR} ${CMAKE_COMMAND})
set_tests_properties(firsthour_man_page PROPERTIES TIMEOUT 120)

# A warning when two ranks of a host are bound to the same core (taskset-pinned ranks). 3 s.
add_test(NAME firsthour_binding_warning
  COMMAND bash ${GOLMPI_TEST_DIR}/test_binding.sh $<TARGET_FILE:golmpi> ${MPIEXEC_EXECUTABLE}
          ${GOLMPI_MPIEXEC_FLAGS})
set_tests_properties(firsthour_binding_warning PROPERTIES PROCESSORS 2 TIMEOUT 120
  SKIP_RETURN_CODE 77 ENVIRONMENT "OMP_NUM_THREADS=1")

# ParaView at any size: tools/golmpi-view on a bare 'life.xmf' at 512^2 and 16384^2 under
# xvfb-run -a pvpython, the screenshots compared with the frames. About 90 s and 3 GB; 77 (skip)
# without pvpython or xvfb-run.
if(GOLMPI_JOBS_PYTHON)
  add_test(NAME firsthour_golmpi_view
    COMMAND ${GOLMPI_JOBS_PYTHON} ${GOLMPI_TEST_DIR}/test_golmpi_view.py --golmpi $<TARGET_FILE:golmpi>
            --view ${PROJECT_SOURCE_DIR}/tools/golmpi-view --mpiexec ${MPIEXEC_EXECUTABLE}
            ${GOLMPI_MPIEXEC_FLAGS})
  set_tests_properties(firsthour_golmpi_view PROPERTIES PROCESSORS 2 TIMEOUT 900
    SKIP_RETURN_CODE 77 RUN_SERIAL TRUE ENVIRONMENT "OMP_NUM_THREADS=1")
endif()

# One message when the output's directory is renamed or removed while the next chunk computes:
# exit 5 on every rank, no library stacks, no abort banner; the index written before stays whole.
# About 10 s.
if(GOLMPI_JOBS_PYTHON)
  add_test(NAME firsthour_dir_removed
    COMMAND ${GOLMPI_JOBS_PYTHON} ${GOLMPI_TEST_DIR}/test_dir_removed.py --golmpi $<TARGET_FILE:golmpi>
            --mpiexec ${MPIEXEC_EXECUTABLE} ${GOLMPI_MPIEXEC_FLAGS})
  set_tests_properties(firsthour_dir_removed PROPERTIES PROCESSORS 2 TIMEOUT 600
    ENVIRONMENT "OMP_NUM_THREADS=1")
endif()
