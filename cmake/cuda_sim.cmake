# The CUDA backend on the simulated GPU (GOLMPI_CUDA_SIM=ON): the production sources of
# cmake/cuda.cmake, compiled against tests/cudasim's CUDA runtime and NCCL instead of NVIDIA's,
# with no CUDA toolkit. The .cu files are built as host C++: their kernels stay out, and each
# launch_* enqueues its kernel's host emulation on the simulated stream (GOLMPI_CUDA_SIM).
add_subdirectory(${PROJECT_SOURCE_DIR}/tests/cudasim ${PROJECT_BINARY_DIR}/cudasim)
set(golmpi_cu_sources ${PROJECT_SOURCE_DIR}/cuda/life_cuda.cu
    ${PROJECT_SOURCE_DIR}/cuda/init_cuda.cu)
set_source_files_properties(${golmpi_cu_sources} PROPERTIES LANGUAGE CXX COMPILE_OPTIONS "-xc++")
target_sources(golmpi_core PRIVATE
  ${golmpi_cu_sources}
  ${GOLMPI_CUDA_HOST_SOURCES}
  ${PROJECT_SOURCE_DIR}/cuda/trace_cuda.c
  ${PROJECT_SOURCE_DIR}/cuda/device.c)
target_link_libraries(golmpi_core PUBLIC cudasim)
# first: a real toolkit's headers may be on the path too (NVTX's directory)
target_include_directories(golmpi_core BEFORE PUBLIC ${PROJECT_SOURCE_DIR}/tests/cudasim/include)
target_compile_definitions(golmpi_core PUBLIC GOLMPI_HAVE_CUDA GOLMPI_HAVE_NCCL GOLMPI_CUDA_SIM)
target_compile_options(golmpi_core PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-O2 -std=c++17 -Wall>)
set(GOLMPI_CUDA_RUNTIME_DIRS "")
