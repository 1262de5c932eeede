# What every tests/*.cmake may use: the MPI launcher, the Python, and the helpers that register a
# test. tests/CMakeLists.txt includes this file before the areas; a plain add_test keeps working
# beside the helpers.

# The launcher: ctest runs MPI for real, mpiexec -n N, oversubscribed, as root when needed.
#   GOLMPI_MPIEXEC_FLAGS  the flags after ${MPIEXEC_EXECUTABLE}, a list
#   GOLMPI_MPIEXEC_LINE   "mpiexec --oversubscribe [--allow-run-as-root] -n", one string, for the
#                         drivers that take the launcher as one argument and add the rank count
set(GOLMPI_MPIEXEC_FLAGS --oversubscribe)
execute_process(COMMAND id -u OUTPUT_VARIABLE GOLMPI_UID OUTPUT_STRIP_TRAILING_WHITESPACE)
if(GOLMPI_UID STREQUAL "0")
  list(APPEND GOLMPI_MPIEXEC_FLAGS --allow-run-as-root)
endif()
string(JOIN " " GOLMPI_MPIEXEC_LINE
  ${MPIEXEC_EXECUTABLE} ${GOLMPI_MPIEXEC_FLAGS} ${MPIEXEC_NUMPROC_FLAG})

# golmpi_python_with(<var> "<modules>"): the first Python that imports them, or "". Debian's
# python3-h5py lives in /usr/bin/python3, which a pyenv or venv python3 on PATH may hide.
function(golmpi_python_with var modules)
  set(found "")
  foreach(py /usr/bin/python3 ${Python3_EXECUTABLE})
    execute_process(COMMAND ${py} -c "import ${modules}" RESULT_VARIABLE rc
                    OUTPUT_QUIET ERROR_QUIET)
    if(rc EQUAL 0)
      set(found ${py})
      break()
    endif()
  endforeach()
  set(${var} "${found}" PARENT_SCOPE)
endfunction()

# The Python of the tests, which read HDF5 with h5py and numpy:
#   GOLMPI_H5PY_PYTHON  the first Python with h5py and numpy, or "" (the tests that cannot run
#                       without them are then not registered)
#   GOLMPI_PYTHON       that Python, or any Python 3 found, or "" (golmpi_test PYTHON: the test
#                       is not registered, golmpi_not_registered)
#   Python3_EXECUTABLE  the same as GOLMPI_PYTHON, for a plain add_test
find_package(Python3 COMPONENTS Interpreter)
golmpi_python_with(GOLMPI_H5PY_PYTHON "h5py, numpy")
if(GOLMPI_H5PY_PYTHON)
  set(Python3_EXECUTABLE ${GOLMPI_H5PY_PYTHON})
elseif(Python3_EXECUTABLE)
  # one line, like golmpi_not_registered's; without any Python 3 that line says it all
  message(STATUS "no Python with h5py and numpy (packages python3-h5py, python3-numpy: "
    "scripts/deps.sh --test installs them): the integration tests will fail, the I/O file checks "
    "will report skipped and the jobs tests are not registered")
endif()
set(GOLMPI_PYTHON "${Python3_EXECUTABLE}")
set(GOLMPI_TEST_DIR ${CMAKE_CURRENT_LIST_DIR})

# What the tests need beyond golmpi's own build is decided in one place, scripts/deps.txt: each
# find_package and find_program of the test tree (tests/*.cmake, tests/**/CMakeLists.txt) is a
# word cmake:NAME of one of its lines, the package that brings it (tests/test_deps_list.py
# checks). A missing `test` dependency never stops the configure or the build of golmpi (a new
# user's scripts/run.sh configures with the tests on before scripts/test.sh installs them): the
# tests that need it are not registered (golmpi_not_registered), and at the end of the configure
# one line for each such dependency says which tests and why (golmpi_report_not_registered), also
# written to tests_not_registered.txt in the build tree, which scripts/test.sh counts as a failure.
file(STRINGS ${PROJECT_SOURCE_DIR}/scripts/deps.txt golmpi_deps_lines REGEX "cmake:")
set_property(GLOBAL PROPERTY GOLMPI_NOT_REGISTERED_DEPS "")

# golmpi_not_registered(<name> <tests...>): these tests are not registered for want of cmake:<name>
function(golmpi_not_registered name)
  get_property(deps GLOBAL PROPERTY GOLMPI_NOT_REGISTERED_DEPS)
  if(NOT name IN_LIST deps)
    set_property(GLOBAL APPEND PROPERTY GOLMPI_NOT_REGISTERED_DEPS ${name})
  endif()
  set_property(GLOBAL APPEND PROPERTY GOLMPI_NOT_REGISTERED_${name} ${ARGN})
endfunction()

# golmpi_report_not_registered(): a line for each dependency missing, naming its package from
# scripts/deps.txt and the tests left out; tests/CMakeLists.txt calls it last
function(golmpi_report_not_registered)
  set(report "")
  get_property(deps GLOBAL PROPERTY GOLMPI_NOT_REGISTERED_DEPS)
  foreach(name ${deps})
    set(pkg "no line of scripts/deps.txt names cmake:${name}")
    foreach(line ${golmpi_deps_lines})
      if(line MATCHES "^([^ #]+) +([a-z]+) .*cmake:${name}( |$)")
        string(CONCAT pkg "package ${CMAKE_MATCH_1}, a ${CMAKE_MATCH_2} line of "
          "scripts/deps.txt: scripts/deps.sh --test installs it")
        break()
      endif()
    endforeach()
    get_property(tests GLOBAL PROPERTY GOLMPI_NOT_REGISTERED_${name})
    list(LENGTH tests n)
    list(JOIN tests " " names)
    set(line "tests not registered for want of ${name} (${pkg}): ${n}: ${names}")
    message(STATUS "${line}")
    string(APPEND report "${line}\n")
  endforeach()
  file(WRITE ${PROJECT_BINARY_DIR}/tests_not_registered.txt "${report}")
endfunction()

# golmpi_test(<name> [PYTHON] [PYTHON_EXE py] [SKIP] [ONE_THREAD] [PROCESSORS n] [TIMEOUT s]
#             [ENV var=value...] [LABELS l...] [FIXTURES_SETUP f...] [FIXTURES_REQUIRED f...]
#             COMMAND <cmd...>)
# One ctest case with the properties given and no others. PYTHON: COMMAND is a script and its
# arguments, run by GOLMPI_PYTHON (PYTHON_EXE: by that Python, e.g. one with vtk); without any
# Python the case is not registered, and the configure's line for Python3 names it. SKIP: exit
# code 77 means skipped (the tests say when they use it).
# ONE_THREAD: OMP_NUM_THREADS=1 first in ENV, unless ENV sets it (MPI cases: one core a rank).
function(golmpi_test name)
  cmake_parse_arguments(T "PYTHON;SKIP;ONE_THREAD" "PYTHON_EXE;PROCESSORS;TIMEOUT"
    "ENV;LABELS;FIXTURES_SETUP;FIXTURES_REQUIRED;COMMAND" ${ARGN})
  set(cmd ${T_COMMAND})
  if(NOT T_PYTHON_EXE)
    set(T_PYTHON_EXE "${GOLMPI_PYTHON}")
  else()
    set(T_PYTHON TRUE)
  endif()
  if(T_PYTHON AND T_PYTHON_EXE)
    set(cmd ${T_PYTHON_EXE} ${T_COMMAND})
  elseif(T_PYTHON)
    golmpi_not_registered(Python3 ${name})
    return()
  endif()
  if(T_ONE_THREAD AND NOT T_ENV MATCHES "(^|;)OMP_NUM_THREADS=")
    list(PREPEND T_ENV "OMP_NUM_THREADS=1")
  endif()
  # On the simulated GPU every test runs under an adversarial schedule of its own (1..16, from
  # its name), unless it sets one: the CUDA path is checked under many schedules in each run.
  if(GOLMPI_CUDA_SIM AND NOT T_ENV MATCHES "(^|;)GOLMPI_SIM_SEED=")
    string(MD5 digest "${name}")
    string(SUBSTRING "${digest}" 0 1 nibble)
    math(EXPR seed "0x${nibble} + 1")
    list(APPEND T_ENV "GOLMPI_SIM_SEED=${seed}")
  endif()
  add_test(NAME ${name} COMMAND ${cmd})
  if(T_SKIP)
    set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77)
  endif()
  set(T_ENVIRONMENT ${T_ENV})
  # one property a call: a value may be a list (ENVIRONMENT, FIXTURES_*, LABELS)
  foreach(p PROCESSORS TIMEOUT LABELS FIXTURES_SETUP FIXTURES_REQUIRED ENVIRONMENT)
    if(DEFINED T_${p})
      set_tests_properties(${name} PROPERTIES ${p} "${T_${p}}")
    endif()
  endforeach()
endfunction()

# golmpi_mpi_test(NAME <name> RANKS <n> COMMAND <cmd...>): one program under mpiexec -n <n>, on
# one OpenMP thread a rank; 77 is skipped (a GPU test without a GPU).
function(golmpi_mpi_test)
  cmake_parse_arguments(T "" "NAME;RANKS" "COMMAND" ${ARGN})
  golmpi_test(${T_NAME} SKIP ONE_THREAD PROCESSORS ${T_RANKS}
    COMMAND ${MPIEXEC_EXECUTABLE} ${GOLMPI_MPIEXEC_FLAGS} ${MPIEXEC_NUMPROC_FLAG} ${T_RANKS}
            ${MPIEXEC_PREFLAGS} ${T_COMMAND} ${MPIEXEC_POSTFLAGS})
endfunction()

# golmpi_driver_test(<name> <script> [golmpi_test options] [ARGS <args...>]): a Python driver in
# tests/ that starts golmpi under mpiexec itself, on one OpenMP thread a rank (ONE_THREAD), as
#   <script> --golmpi <golmpi> <args...> --mpiexec <mpiexec> <flags...>
# (the launcher last: some drivers take the rest of the line as it). ARGS, like COMMAND, last.
function(golmpi_driver_test name script)
  cmake_parse_arguments(T "" "" "ARGS" ${ARGN})
  golmpi_test(${name} PYTHON ONE_THREAD ${T_UNPARSED_ARGUMENTS}
    COMMAND ${GOLMPI_TEST_DIR}/${script} --golmpi $<TARGET_FILE:golmpi> ${T_ARGS}
            --mpiexec ${MPIEXEC_EXECUTABLE} ${GOLMPI_MPIEXEC_FLAGS})
endfunction()

# golmpi_integration_test(<name> <backend> <case> [DEPTH k] [golmpi_test options]): one case of
# tests/integration.py (every frame against tests/reference.py) on 2 processors and one OpenMP
# thread a rank (ONE_THREAD), with --halo-depth k when given.
function(golmpi_integration_test name backend case)
  cmake_parse_arguments(T "" "DEPTH" "" ${ARGN})
  set(depth "")
  if(DEFINED T_DEPTH)
    set(depth --halo-depth ${T_DEPTH})
  endif()
  golmpi_test(${name} PYTHON ONE_THREAD PROCESSORS 2 ${T_UNPARSED_ARGUMENTS}
    COMMAND ${GOLMPI_TEST_DIR}/integration.py --mpiexec "${GOLMPI_MPIEXEC_LINE}"
            --golmpi $<TARGET_FILE:golmpi> --backend ${backend} ${depth} ${case})
endfunction()

# Older names, kept so that branches written before these helpers still register their tests when
# merged (a test silently not registered would be a test lost): new tests use the names above.
set(GOLMPI_IO_PYTHON "${GOLMPI_PYTHON}")
set(GOLMPI_JOBS_PYTHON "${GOLMPI_H5PY_PYTHON}")
set(golmpi_jobs_launcher "${GOLMPI_MPIEXEC_LINE}")
# golmpi_io_check(<name> <python> <script> <args...>): golmpi_test(<name> SKIP PYTHON_EXE <python>
# COMMAND <script> <args...>)
function(golmpi_io_check name python)
  golmpi_test(${name} SKIP PYTHON PYTHON_EXE "${python}" COMMAND ${ARGN})
endfunction()
