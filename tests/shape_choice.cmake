# The kernel shape's choice at run time (cuda/shape_choice.h) and its wisdom file (io/wisdom.h),
# on the host: no GPU needed, the kernel times injected.
add_executable(test_wisdom ${GOLMPI_TEST_DIR}/test_wisdom.c)
target_link_libraries(test_wisdom PRIVATE golmpi_core)
golmpi_test(unit_wisdom TIMEOUT 60 COMMAND test_wisdom)

# 1 to 4 ranks disagreeing on their fastest shape; "cuda" in the name: the simulated build's
# stage (scripts/test.sh) runs it with the rest of the CUDA path.
add_executable(test_shape_choice ${GOLMPI_TEST_DIR}/test_shape_choice.c)
target_link_libraries(test_shape_choice PRIVATE golmpi_core m)
foreach(n 1 2 3 4)
  golmpi_mpi_test(NAME cuda_shape_choice_p${n} RANKS ${n} COMMAND $<TARGET_FILE:test_shape_choice>)
endforeach()

# Frames bit-identical whatever shape runs: golmpi --kernel SHAPE for every shape against the CPU
# backend (and so against baseline), depth 16, a ragged width, torus and dead; exit 77 without a
# GPU. On the simulated GPU the kernels' own bodies run, over each shape's launch geometry, with
# no adversarial schedule (seed 0): the cells do not depend on it, and ten runs under one are slow.
if(GOLMPI_CUDA_BACKEND)
  golmpi_test(cuda_kernel_shapes_frames PYTHON SKIP ONE_THREAD PROCESSORS 2 TIMEOUT 300 LABELS gpu
    ENV GOLMPI_SIM_SEED=0
    COMMAND ${GOLMPI_TEST_DIR}/test_kernel_shapes.py "${GOLMPI_MPIEXEC_LINE}" $<TARGET_FILE:golmpi>)
endif()
