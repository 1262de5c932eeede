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

  # No GPU needed: the kernels' thread bodies on the host (the launches are not linked in).
  add_executable(test_cuda_emulate ${GOLMPI_TEST_DIR}/test_cuda_emulate.cu)
  target_link_libraries(test_cuda_emulate PRIVATE MPI::MPI_C NCCL::nccl CUDA::cudart)
  target_include_directories(test_cuda_emulate PRIVATE ${PROJECT_SOURCE_DIR})
  target_compile_definitions(test_cuda_emulate PRIVATE GOLMPI_HAVE_CUDA GOLMPI_HAVE_NCCL)
  add_test(NAME cuda_kernels_emulated COMMAND test_cuda_emulate)
endif()
