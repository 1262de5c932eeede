# CUDA backend tests. Each exits 77 on every rank when some rank has no GPU (ctest: skipped).
if(GOLMPI_ENABLE_CUDA)
  foreach(t test_cuda_kernels test_cuda_vs_cpu)
    add_executable(${t} ${GOLMPI_TEST_DIR}/${t}.c)
    target_link_libraries(${t} PRIVATE golmpi_core)
  endforeach()

  golmpi_mpi_test(NAME cuda_kernels RANKS 1 COMMAND $<TARGET_FILE:test_cuda_kernels>)
  foreach(n 1 2 3 4)
    golmpi_mpi_test(NAME cuda_vs_cpu_np${n} RANKS ${n} COMMAND $<TARGET_FILE:test_cuda_vs_cpu>)
    # one NCCL communicator per case: allow for its setup time
    set_tests_properties(cuda_vs_cpu_np${n} PROPERTIES TIMEOUT 900 LABELS gpu)
  endforeach()
  set_tests_properties(cuda_kernels PROPERTIES LABELS gpu)
endif()
