# Core: the rule arithmetic, the decomposition, and the whole program against a naive reference.
foreach(t word decomp random_start cuda_plan)
  add_executable(test_${t} ${GOLMPI_TEST_DIR}/test_${t}.c)
  target_link_libraries(test_${t} PRIVATE golmpi_core)
  add_test(NAME unit_${t} COMMAND test_${t})
endforeach()

# integration.py runs golmpi under mpiexec itself; the rank count is part of each case.
string(JOIN " " GOLMPI_MPIEXEC_LINE ${MPIEXEC_EXECUTABLE} ${GOLMPI_MPIEXEC_FLAGS} ${MPIEXEC_NUMPROC_FLAG})
set(GOLMPI_INTEGRATION_CASES
  ref_77x23_p1_torus_B3S23 ref_77x23_p2_dead_B3S23 ref_77x23_p3_torus_B36S23
  ref_77x23_p4_dead_B36S23 ref_130x67_p3_torus_B3S23_packed ref_130x67_p4_dead_B36S23_packed
  ref_64x9_p4_torus_B3S23 ref_1x5_p2_torus_B3S23 ref_200x4_p4_dead_B2S ref_65x7_p2_torus_B0S8
  random_start across restart pattern r_pentomino pieces)
function(golmpi_integration_tests backend)
  foreach(c ${GOLMPI_INTEGRATION_CASES})
    add_test(NAME ${backend}_${c}
      COMMAND ${Python3_EXECUTABLE} ${GOLMPI_TEST_DIR}/integration.py
              --mpiexec "${GOLMPI_MPIEXEC_LINE}" --golmpi $<TARGET_FILE:golmpi> --backend ${backend} ${ARGN} ${c})
    set_tests_properties(${backend}_${c} PROPERTIES SKIP_RETURN_CODE 77 PROCESSORS 2
      ENVIRONMENT "OMP_NUM_THREADS=1" TIMEOUT 600)
  endforeach()
endfunction()
golmpi_integration_tests(cpu)
if(GOLMPI_ENABLE_CUDA)
  # one GPU serves every rank in CI-like setups: --halo auto picks NCCL only for distinct GPUs
  golmpi_integration_tests(cuda)
endif()

add_test(NAME backend_auto
  COMMAND ${Python3_EXECUTABLE} ${GOLMPI_TEST_DIR}/test_backend_auto.py "${GOLMPI_MPIEXEC_LINE}" $<TARGET_FILE:golmpi>)
set_tests_properties(backend_auto PROPERTIES PROCESSORS 2 ENVIRONMENT "OMP_NUM_THREADS=1")
