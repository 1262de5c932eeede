# I/O: the output API at 1..4 ranks, then the files it wrote checked from Python (h5py, numpy).
add_executable(test_io_roundtrip ${CMAKE_CURRENT_SOURCE_DIR}/test_io_roundtrip.c)
target_link_libraries(test_io_roundtrip PRIVATE golmpi_core)

# The checkers are registered whatever Python there is: without the modules they need they exit
# 77 and ctest reports them skipped, so a missing h5py or vtk shows in every test summary.

# VTK's XDMF reader (ParaView's) as a second judge of the .xmf files, when some Python has vtk.
set(GOLMPI_VTK_PYTHON "" CACHE FILEPATH "A Python with the vtk package, for the XDMF-through-VTK checks")
set(GOLMPI_VTK_CHECK_PYTHON "${GOLMPI_VTK_PYTHON}")
if(NOT GOLMPI_VTK_CHECK_PYTHON)
  golmpi_python_with(GOLMPI_VTK_CHECK_PYTHON "vtk, numpy")
endif()
if(NOT GOLMPI_VTK_CHECK_PYTHON) # golmpi_test then runs them with GOLMPI_PYTHON
  message(STATUS "no Python with vtk and numpy: the XDMF-through-VTK checks will report skipped")
endif()

# io_*_<n>: the writer thread at n ranks; io_*_sync<n>: MPI below MPI_THREAD_MULTIPLE, so the
# chunks are written on the main thread.
foreach(n 1 2 3 4 sync2)
  string(REGEX REPLACE "^sync" "" ranks ${n})
  set(mode "")
  if(n MATCHES "^sync")
    set(mode sync)
  endif()
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/io_out_${n})
  # a fresh directory each time, so output_check never sees an earlier run
  # (test_io_roundtrip creates it again)
  add_test(NAME io_clean_${n} COMMAND ${CMAKE_COMMAND} -E rm -rf ${dir})
  set_tests_properties(io_clean_${n} PROPERTIES FIXTURES_SETUP io_clean_${n})
  golmpi_mpi_test(NAME io_roundtrip_${n} RANKS ${ranks}
    COMMAND $<TARGET_FILE:test_io_roundtrip> ${dir} ${mode})
  # TIMEOUT: over twice the longest measured, 127 s (4 ranks in test.sh's sanitize stage, 2 cores,
  # the rehearsals beside it at the same priority, under LeakSanitizer's check at each rank's exit;
  # under 1 s unsanitized)
  set_tests_properties(io_roundtrip_${n} PROPERTIES FIXTURES_REQUIRED io_clean_${n}
    FIXTURES_SETUP io_files_${n} TIMEOUT 300)
  set(check SKIP PYTHON TIMEOUT 120 FIXTURES_REQUIRED io_clean_${n} io_files_${n})
  golmpi_test(io_check_output_${n} ${check} COMMAND ${GOLMPI_TEST_DIR}/check_output.py ${dir})
  golmpi_test(io_check_xdmf_${n} ${check} COMMAND ${GOLMPI_TEST_DIR}/check_xdmf.py ${dir})
  golmpi_test(io_check_xdmf_vtk_${n} ${check} PYTHON_EXE "${GOLMPI_VTK_CHECK_PYTHON}"
    COMMAND ${GOLMPI_TEST_DIR}/check_xdmf.py --vtk ${dir})
endforeach()

# ParaView as a user opens the run: OpenDataFile (File > Open's reader) on the .xmf from another
# working directory, under xvfb-run; skipped (77) only when pvpython or xvfb-run is absent.
golmpi_driver_test(io_paraview test_paraview.py SKIP PROCESSORS 2 TIMEOUT 180
  ARGS --work ${CMAKE_CURRENT_BINARY_DIR}/io_paraview)

# --stats fields, /population against the frames (u8, packed, 1-3 ranks, restart), the start-up
# table (one line a rank, none with --quiet) and --version (tests/test_stats.py)
golmpi_driver_test(stats_population test_stats.py SKIP PROCESSORS 3 TIMEOUT 300
  ARGS --cuda ${GOLMPI_CUDA_BACKEND})

# Output that survives faults, one ctest per part of tests/test_faults.py: a full disk
# (a small tmpfs, so root only: skipped otherwise), one writer per output (the lock), stale .part
# files and locks of killed runs, '%' and long paths in --output, and the read-back before a
# rename against damaged chunks (test_verify).
add_executable(test_verify ${CMAKE_CURRENT_SOURCE_DIR}/test_verify.c)
target_link_libraries(test_verify PRIVATE golmpi_core)
foreach(part disk_full lock stale names verify)
  golmpi_driver_test(io_faults_${part} test_faults.py SKIP PROCESSORS 3 TIMEOUT 300
    ARGS --verify-helper $<TARGET_FILE:test_verify>
         --work ${CMAKE_CURRENT_BINARY_DIR}/io_faults_${part} --part ${part})
endforeach()
