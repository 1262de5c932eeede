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

golmpi_driver_test(bad_inputs bad_inputs.py PROCESSORS 2 TIMEOUT 300
  ARGS --patterns ${GOLMPI_TEST_DIR}/patterns)
# progress lines in a batch log (stderr to a file under mpiexec)
golmpi_driver_test(progress_batch_log test_progress.py PROCESSORS 2 TIMEOUT 120)
# a SIGSTOPped rank of 3 makes every rank exit with a message within --timeout (CPU backend)
golmpi_driver_test(stalled_rank test_stalled_rank.py SKIP PROCESSORS 3 TIMEOUT 300)
