# The halo modes called directly (tests/test_halo_modes.c), on 1 to 4 ranks: host "mpi" in every
# build; the device modes too where the build has CUDA and every rank a GPU (the simulated GPU
# included).
add_executable(test_halo_modes ${GOLMPI_TEST_DIR}/test_halo_modes.c)
target_link_libraries(test_halo_modes PRIVATE golmpi_core)
foreach(n 1 2 3 4)
  golmpi_mpi_test(NAME halo_modes_np${n} RANKS ${n} COMMAND $<TARGET_FILE:test_halo_modes>)
  set_tests_properties(halo_modes_np${n} PROPERTIES TIMEOUT 300)
endforeach()

# ... and the test fails on a mode that delivers the rows to the wrong halo: test_halo_modes
# linked with halo/halo_mpi.c rewritten (tests/cudasim/mutate.py) so that the rows from above land
# below and those from below above, on 2 ranks (where up == down on a torus) and on 3.
# The mutant's source is written by Python at build time: without a Python (tests/helpers.cmake
# looked for it) neither it nor its tests exist.
if(NOT Python3_EXECUTABLE)
  golmpi_not_registered(Python3 halo_modes_swapped_fails_np2 halo_modes_swapped_fails_np3)
  return()
endif()
set(swapped ${CMAKE_CURRENT_BINARY_DIR}/mutants/halo_swapped/halo/halo_mpi.c)
add_custom_command(OUTPUT ${swapped}
  COMMAND ${Python3_EXECUTABLE} ${GOLMPI_TEST_DIR}/cudasim/mutate.py
          ${PROJECT_SOURCE_DIR}/halo/halo_mpi.c ${swapped}
          "post_peer(h, h->up, top," "post_peer(h, h->up, bottom,"
          "post_peer(h, h->down, bottom," "post_peer(h, h->down, top,"
  DEPENDS ${PROJECT_SOURCE_DIR}/halo/halo_mpi.c ${GOLMPI_TEST_DIR}/cudasim/mutate.py VERBATIM)
add_executable(test_halo_modes_swapped ${GOLMPI_TEST_DIR}/test_halo_modes.c ${swapped})
target_link_libraries(test_halo_modes_swapped PRIVATE golmpi_core)
target_compile_options(test_halo_modes_swapped PRIVATE -w)
foreach(n 2 3)
  golmpi_mpi_test(NAME halo_modes_swapped_fails_np${n} RANKS ${n}
    COMMAND $<TARGET_FILE:test_halo_modes_swapped>)
  set_tests_properties(halo_modes_swapped_fails_np${n} PROPERTIES TIMEOUT 300 WILL_FAIL TRUE)
endforeach()
