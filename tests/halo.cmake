# The halo modes called directly (tests/test_halo_modes.c), on 1 to 4 ranks: host "mpi" in every
# build; the device modes too where the build has CUDA and every rank a GPU (the simulated GPU
# included).
add_executable(test_halo_modes ${GOLMPI_TEST_DIR}/test_halo_modes.c)
target_link_libraries(test_halo_modes PRIVATE golmpi_core)
foreach(n 1 2 3 4)
  golmpi_mpi_test(NAME halo_modes_np${n} RANKS ${n} COMMAND $<TARGET_FILE:test_halo_modes>)
  set_tests_properties(halo_modes_np${n} PROPERTIES TIMEOUT 300)
endforeach()
