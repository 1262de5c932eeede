# Corner cases of faults and inputs, one ctest per part of tests/test_corner_cases.py; each part
# says how long it takes. Uses io.cmake's golmpi_io_check and Python with h5py.
set(GOLMPI_CORNER_CASES_PARTS slow_index quote names pipe_hup chunk_gone extremes stop_in_io)
foreach(part ${GOLMPI_CORNER_CASES_PARTS})
  golmpi_io_check(corner_cases_${part} "${GOLMPI_IO_PYTHON}" ${GOLMPI_TEST_DIR}/test_corner_cases.py
    --golmpi $<TARGET_FILE:golmpi> --work ${CMAKE_CURRENT_BINARY_DIR}/corner_cases_${part}
    --part ${part} --mpiexec ${MPIEXEC_EXECUTABLE} ${GOLMPI_MPIEXEC_FLAGS})
  if(TEST corner_cases_${part}) # not registered without a Python (tests/helpers.cmake)
    set_tests_properties(corner_cases_${part} PROPERTIES PROCESSORS 4 TIMEOUT 600
      ENVIRONMENT "OMP_NUM_THREADS=1")
  endif()
endforeach()

# Every numeric option of the table refuses white space around its number as it refuses a leading
# space; under a second.
add_executable(test_numbers ${GOLMPI_TEST_DIR}/test_numbers.c)
target_link_libraries(test_numbers PRIVATE golmpi_core)
add_test(NAME numbers_whitespace COMMAND test_numbers)
