# Faults and inputs nobody had tried (issue 20), one ctest per part of tests/faults2.py; each part
# says how long it takes. Uses io.cmake's golmpi_io_check and Python with h5py.
set(GOLMPI_FAULTS2_PARTS slow_index quote names pipe_hup chunk_gone extremes stop_in_io)
foreach(part ${GOLMPI_FAULTS2_PARTS})
  golmpi_io_check(faults2_${part} "${GOLMPI_IO_PYTHON}" ${GOLMPI_TEST_DIR}/faults2.py
    --golmpi $<TARGET_FILE:golmpi> --work ${CMAKE_CURRENT_BINARY_DIR}/faults2_${part}
    --part ${part} --mpiexec ${MPIEXEC_EXECUTABLE} ${GOLMPI_MPIEXEC_FLAGS})
  set_tests_properties(faults2_${part} PROPERTIES PROCESSORS 4 TIMEOUT 600
    ENVIRONMENT "OMP_NUM_THREADS=1")
endforeach()

# Every numeric option of the table refuses white space around its number as it refuses a leading
# space (issue 20); under a second.
add_executable(test_numbers ${GOLMPI_TEST_DIR}/test_numbers.c)
target_link_libraries(test_numbers PRIVATE golmpi_core)
add_test(NAME numbers_whitespace COMMAND test_numbers)
