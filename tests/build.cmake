# The build itself: where the binaries look for CUDA and NCCL, and finding NCCL the way pip ships
# it. Included from tests/CMakeLists.txt; each case exits 77 (skipped) in a CPU-only build.
if(GOLMPI_ENABLE_CUDA)
  set(golmpi_build_cuda 1)
  string(REPLACE ";" ":" golmpi_runtime_dirs "${GOLMPI_CUDA_RUNTIME_DIRS}")
else()
  set(golmpi_build_cuda 0)
  set(golmpi_runtime_dirs "")
endif()
set(golmpi_build_env
  "GOLMPI_CUDA=${golmpi_build_cuda}" "GOLMPI_RUNTIME_DIRS=${golmpi_runtime_dirs}"
  "CMAKE=${CMAKE_COMMAND}" "GOLMPI_SRC=${PROJECT_SOURCE_DIR}" "GOLMPI_BUILD=${PROJECT_BINARY_DIR}"
  "NCCL_LIBRARY=${NCCL_LIBRARY}" "NCCL_INCLUDE_DIR=${NCCL_INCLUDE_DIR}"
  "CUDA_COMPILER=${CMAKE_CUDA_COMPILER}")

# readelf -d on the built and on an installed golmpi: RUNPATH names the CUDA and NCCL directories;
# the link line has no static CUDA runtime.
add_test(NAME build_rpath
  COMMAND bash ${GOLMPI_TEST_DIR}/test_build.sh rpath $<TARGET_FILE:golmpi>)
# Configure the project against prefixes holding only libnccl.so.2 and nccl.h (NCCL_HOME, and a
# pip wheel's layout found through python3), and against a too-old nccl.h (must stop, clearly).
add_test(NAME build_nccl_configure COMMAND bash ${GOLMPI_TEST_DIR}/test_build.sh nccl)
set_tests_properties(build_rpath build_nccl_configure PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300
  ENVIRONMENT "${golmpi_build_env}")

# scripts/gpu_check.sh without a GPU: its argument handling, the commands of every part
# (--dry-run), and "no GPU: nothing to prove" with a non-zero exit where golmpi finds no GPU.
add_test(NAME build_gpu_check
  COMMAND bash ${GOLMPI_TEST_DIR}/test_build.sh gpu_check $<TARGET_FILE:golmpi>)
set_tests_properties(build_gpu_check PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120
  ENVIRONMENT "${golmpi_build_env};GOLMPI_PYTHON=${GOLMPI_PYTHON}")
