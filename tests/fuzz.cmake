# Fuzzing: libFuzzer targets for the pattern readers (src/pattern.c) and the rule parser
# (core/rule.c), built with clang by the test itself (tests/fuzz_run.sh), whatever compiler builds
# the project, so the normal build does not wait for them. Without clang they report skipped.
find_program(GOLMPI_FUZZ_CLANG NAMES clang clang-19 clang-18 clang-17 clang-16 clang-15 clang-14
             DOC "clang with libFuzzer (-fsanitize=fuzzer) for the fuzz_* tests")
set(GOLMPI_FUZZ_SECONDS 45 CACHE STRING
    "Seconds of fuzzing for the pattern readers in ctest (the rule parser gets a third)")

# What clang needs to compile the sources beside the fuzz targets: their headers include mpi.h,
# and core/check.c calls MPI and HDF5.
set(fuzz_cflags -I${PROJECT_SOURCE_DIR} -D_GNU_SOURCE
    # a smaller cap on pattern sizes, so that an input within it stays under libFuzzer's 2 GiB
    "-DPATTERN_MAX_WORDS=(INT64_C(1) << 22)")
foreach(d ${MPI_C_INCLUDE_DIRS} ${HDF5_C_INCLUDE_DIRS})
  list(APPEND fuzz_cflags -I${d})
endforeach()
list(APPEND fuzz_cflags ${HDF5_C_DEFINITIONS})
set(fuzz_env "clang='${GOLMPI_FUZZ_CLANG}'\nwork='${CMAKE_CURRENT_BINARY_DIR}/fuzz'\ncflags=(")
foreach(f ${fuzz_cflags})
  string(APPEND fuzz_env " '${f}'")
endforeach()
string(APPEND fuzz_env ")\nlibs=(")
foreach(l ${MPI_C_LIBRARIES} ${HDF5_C_LIBRARIES} m)
  if(NOT l MATCHES "^-|/")
    set(l -l${l})
  endif()
  string(APPEND fuzz_env " '${l}'")
endforeach()
string(APPEND fuzz_env ")\n")
if(NOT GOLMPI_FUZZ_CLANG)
  set(fuzz_env "clang=''\nwork='${CMAKE_CURRENT_BINARY_DIR}/fuzz'\n")
endif()
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/fuzz/fuzz_env.sh "${fuzz_env}")

set(fuzz_common --env ${CMAKE_CURRENT_BINARY_DIR}/fuzz/fuzz_env.sh
    --src ${PROJECT_SOURCE_DIR}/core/rule.c --src ${PROJECT_SOURCE_DIR}/core/status.c
    --src ${PROJECT_SOURCE_DIR}/core/check.c --src ${PROJECT_SOURCE_DIR}/core/ending.c
    --src ${PROJECT_SOURCE_DIR}/core/quote.c)
add_test(NAME fuzz_pattern
  COMMAND bash ${GOLMPI_TEST_DIR}/fuzz_run.sh ${fuzz_common} --name pattern
          --seconds ${GOLMPI_FUZZ_SECONDS}
          --src ${GOLMPI_TEST_DIR}/fuzz_pattern.c --src ${PROJECT_SOURCE_DIR}/src/pattern.c
          --seed ${GOLMPI_TEST_DIR}/patterns --seed ${GOLMPI_TEST_DIR}/data
          --seed-text "x = 2, y = 2, rule = HighLife:P4,3\\n2o$bo!\\n"
          --seed-text "#N cut\\nx = 70, y = 1\\n66b3o"
          --seed-text "!Name: blinker\\n\\n.*.\\n.*.\\r\\n.O."
          --dict-text "x = " --dict-text ", y = " --dict-text ", rule = " --dict-text "B3/S23"
          --dict-text ":T" --dict-text ":P" --dict-text "2147483647" --dict-text "#C")
math(EXPR fuzz_rule_seconds "(${GOLMPI_FUZZ_SECONDS} + 2) / 3")
add_test(NAME fuzz_rule
  COMMAND bash ${GOLMPI_TEST_DIR}/fuzz_run.sh ${fuzz_common} --name rule
          --seconds ${fuzz_rule_seconds} --src ${GOLMPI_TEST_DIR}/fuzz_rule.c
          --seed-text B3/S23 --seed-text b36/s23 --seed-text S23/B3 --seed-text 23/3
          --seed-text /3 --seed-text B2/S --seed-text "Day & Night" --seed-text highlife
          --dict-text Life --dict-text Day --dict-text Night)
# The time limit adds room for the clang build of each target and LSan's check at its end.
math(EXPR fuzz_timeout "${GOLMPI_FUZZ_SECONDS} + 240")
set_tests_properties(fuzz_pattern fuzz_rule PROPERTIES SKIP_RETURN_CODE 77 LABELS fuzz
  TIMEOUT ${fuzz_timeout} ENVIRONMENT "OMP_NUM_THREADS=1")
