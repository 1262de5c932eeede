# scripts/deps.txt, the one list of the packages golmpi needs and of the commands and Python
# modules its scripts and tests run from them. Included from tests/CMakeLists.txt.

# Every command and module the sources of the tests (and the scripts and jobs they run) call is
# in the list, and every word of the list is named in them. About 1 s.
golmpi_test(deps_list_sources PYTHON TIMEOUT 60
  COMMAND ${GOLMPI_TEST_DIR}/test_deps_list.py sources ${PROJECT_SOURCE_DIR})
# Every command and module of the list is here: what scripts/deps.sh --test installs, so that no
# test skips (or is left unregistered) for want of a package. About 2 s.
golmpi_test(deps_list_installed PYTHON TIMEOUT 60
  COMMAND ${GOLMPI_TEST_DIR}/test_deps_list.py installed ${PROJECT_SOURCE_DIR})
# ... and the check of the test tree's finds (part of deps_list_sources) fails where it must: on a
# copy with a find_package that no line lists and a REQUIRED one of a `test` package. About 1 s.
golmpi_test(deps_list_finds_mutant PYTHON TIMEOUT 60
  COMMAND ${GOLMPI_TEST_DIR}/test_deps_list.py finds-mutant ${PROJECT_SOURCE_DIR})
