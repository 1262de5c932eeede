# Command line, rules and pattern files: unit tests of the parsers, and an end-to-end table of
# bad inputs that must each give one message, one exit code and no files.
foreach(t rule pattern config options_readme)
  add_executable(test_${t} ${GOLMPI_TEST_DIR}/test_${t}.c)
  target_link_libraries(test_${t} PRIVATE golmpi_core)
endforeach()

add_test(NAME rule COMMAND test_rule)
add_test(NAME pattern COMMAND test_pattern ${GOLMPI_TEST_DIR}/patterns
                                           ${CMAKE_CURRENT_BINARY_DIR}/pattern_scratch)
add_test(NAME config COMMAND test_config WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
# README.md's Command line table against the option table: same options, same defaults
add_test(NAME options_readme COMMAND test_options_readme ${PROJECT_SOURCE_DIR}/README.md)

if(Python3_EXECUTABLE)
  add_test(NAME bad_inputs
    COMMAND ${Python3_EXECUTABLE} ${GOLMPI_TEST_DIR}/bad_inputs.py
            --golmpi $<TARGET_FILE:golmpi> --patterns ${GOLMPI_TEST_DIR}/patterns
            --mpiexec ${MPIEXEC_EXECUTABLE} ${GOLMPI_MPIEXEC_FLAGS})
  set_tests_properties(bad_inputs PROPERTIES PROCESSORS 2 TIMEOUT 300
    ENVIRONMENT "OMP_NUM_THREADS=1")
endif()

if(Python3_EXECUTABLE)
  # progress lines in a batch log (stderr to a file under mpiexec)
  add_test(NAME progress_batch_log
    COMMAND ${Python3_EXECUTABLE} ${GOLMPI_TEST_DIR}/test_progress.py --golmpi $<TARGET_FILE:golmpi>
            --mpiexec ${MPIEXEC_EXECUTABLE} ${GOLMPI_MPIEXEC_FLAGS})
  set_tests_properties(progress_batch_log PROPERTIES PROCESSORS 2 TIMEOUT 120
    ENVIRONMENT "OMP_NUM_THREADS=1")
endif()

if(Python3_EXECUTABLE)
  # a SIGSTOPped rank of 3 makes every rank exit with a message within --timeout (CPU backend)
  add_test(NAME stalled_rank
    COMMAND ${Python3_EXECUTABLE} ${GOLMPI_TEST_DIR}/test_stalled_rank.py
            --golmpi $<TARGET_FILE:golmpi> --mpiexec ${MPIEXEC_EXECUTABLE} ${GOLMPI_MPIEXEC_FLAGS})
  set_tests_properties(stalled_rank PROPERTIES PROCESSORS 3 TIMEOUT 300 SKIP_RETURN_CODE 77
    ENVIRONMENT "OMP_NUM_THREADS=1")
endif()
