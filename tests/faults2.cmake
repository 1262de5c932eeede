# Faults and inputs nobody had tried (issue 20), one ctest per part of tests/faults2.py; each part
# says how long it takes. Uses io.cmake's golmpi_io_check and Python with h5py.
set(GOLMPI_FAULTS2_PARTS slow_index)
foreach(part ${GOLMPI_FAULTS2_PARTS})
  golmpi_io_check(faults2_${part} "${GOLMPI_IO_PYTHON}" ${GOLMPI_TEST_DIR}/faults2.py
    --golmpi $<TARGET_FILE:golmpi> --work ${CMAKE_CURRENT_BINARY_DIR}/faults2_${part}
    --part ${part} --mpiexec ${MPIEXEC_EXECUTABLE} ${GOLMPI_MPIEXEC_FLAGS})
  set_tests_properties(faults2_${part} PROPERTIES PROCESSORS 4 TIMEOUT 600
    ENVIRONMENT "OMP_NUM_THREADS=1")
endforeach()
