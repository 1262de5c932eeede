# The CUDA kernels' launch geometry and their registers, both checked without a GPU.
# The geometry (kernels/life_geometry.h) is plain C in every build, CPU-only included: every pass
# at every size of issue 36's table, depths 1..GOL_DEEP_MAX. In a CUDA build the test also reads
# the build's register table and prints the model of each size's pass (docs/PERFORMANCE.md).
add_executable(test_launch_geometry ${GOLMPI_TEST_DIR}/test_launch_geometry.c)
target_link_libraries(test_launch_geometry PRIVATE golmpi_core)
if(GOLMPI_KERNEL_RESOURCES)
  add_test(NAME unit_launch_geometry COMMAND test_launch_geometry ${GOLMPI_KERNEL_RESOURCES})
else()
  add_test(NAME unit_launch_geometry COMMAND test_launch_geometry)
endif()
set_tests_properties(unit_launch_geometry PROPERTIES TIMEOUT 300)

# Every kernel instance's registers and spills as ptxas reported them in this build
# (cmake/kernel_resources.cmake): a spill fails. No CUDA kernels compiled (CPU only, or the
# simulated GPU, whose kernels are host code): skipped.
# Without a Python it is not registered (golmpi_test PYTHON): a test-only need never stops the
# configure (tests/helpers.cmake).
golmpi_test(kernel_resources PYTHON SKIP TIMEOUT 60
  COMMAND ${PROJECT_SOURCE_DIR}/cmake/kernel_resources.py check ${GOLMPI_KERNEL_RESOURCES})
