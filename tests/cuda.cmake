# CUDA backend tests. Each exits 77 on every rank when some rank has no GPU (ctest: skipped).
if(GOLMPI_CUDA_BACKEND)
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
  # 59 s on the simulated GPU beside the rehearsals (CI, 2026-12-07): twice that and more
  set_tests_properties(cuda_kernels PROPERTIES TIMEOUT 300 LABELS gpu)

  # No GPU needed: the kernels' own thread bodies over the launchers' own geometry, on the host
  # (life_cuda.cu's emulate_*), against the same cases and reference as cuda_kernels.
  add_executable(test_cuda_emulate ${GOLMPI_TEST_DIR}/test_cuda_emulate.c)
  target_link_libraries(test_cuda_emulate PRIVATE golmpi_core)
  add_test(NAME cuda_kernels_emulated COMMAND test_cuda_emulate)
  set_tests_properties(cuda_kernels_emulated PROPERTIES TIMEOUT 300)

  # Two ranks on one GPU: the notice once without MPS, the plan's ranks_per_gpu and mps; on the
  # simulated GPU also under a stand-in MPS daemon (tests/test_gpu_share.py says why only there).
  if(GOLMPI_CUDA_SIM)
    set(golmpi_share_sim --sim)
  else()
    set(golmpi_share_sim "")
  endif()
  golmpi_test(cuda_gpu_share PYTHON SKIP ONE_THREAD PROCESSORS 2 TIMEOUT 300 LABELS gpu
    COMMAND ${GOLMPI_TEST_DIR}/test_gpu_share.py "${GOLMPI_MPIEXEC_LINE}" $<TARGET_FILE:golmpi>
            ${golmpi_share_sim})
endif()
