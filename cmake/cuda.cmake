# The CUDA backend: kernels, device selection, and NCCL for the device halo modes (whose sources
# halo/CMakeLists.txt lists). Included by the root CMakeLists.txt when GOLMPI_ENABLE_CUDA=ON,
# after golmpi_core exists and CUDA is an enabled language.
find_package(CUDAToolkit REQUIRED)

# NCCL ships no CMake package: find it next to the toolkit (as in the NVIDIA HPC SDK and the CUDA
# containers) or under NCCL_HOME, and wrap it in an IMPORTED target like every other dependency.
if(NOT TARGET NCCL::nccl)
  set(NCCL_HOME "$ENV{NCCL_HOME}" CACHE PATH "NCCL install prefix (optional when NCCL sits in the CUDA toolkit)")
  find_path(NCCL_INCLUDE_DIR nccl.h
    HINTS ${NCCL_HOME} ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_LIBRARY_ROOT}
    PATH_SUFFIXES include)
  find_library(NCCL_LIBRARY nccl
    HINTS ${NCCL_HOME} ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}
    PATH_SUFFIXES lib lib64 lib/x86_64-linux-gnu)
  if(NOT NCCL_INCLUDE_DIR OR NOT NCCL_LIBRARY)
    message(FATAL_ERROR
      "golmpi's CUDA backend needs NCCL, but nccl.h or libnccl was not found "
      "(looked in the CUDA toolkit ${CUDAToolkit_LIBRARY_ROOT} and NCCL_HOME='${NCCL_HOME}'; "
      "found include: '${NCCL_INCLUDE_DIR}', library: '${NCCL_LIBRARY}'). "
      "Set -DNCCL_HOME=<prefix> or NCCL_HOME in the environment, or build without the GPU "
      "backend: -DGOLMPI_ENABLE_CUDA=OFF.")
  endif()
  add_library(NCCL::nccl UNKNOWN IMPORTED)
  set_target_properties(NCCL::nccl PROPERTIES
    IMPORTED_LOCATION "${NCCL_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${NCCL_INCLUDE_DIR}")
  message(STATUS "NCCL: ${NCCL_LIBRARY}")
endif()

target_sources(golmpi_core PRIVATE
  ${PROJECT_SOURCE_DIR}/kernels/life_cuda.cu
  ${PROJECT_SOURCE_DIR}/kernels/backend_cuda.c
  ${PROJECT_SOURCE_DIR}/kernels/trace_cuda.c
  ${PROJECT_SOURCE_DIR}/kernels/device.c)
target_link_libraries(golmpi_core PUBLIC CUDA::cudart NCCL::nccl)
target_compile_definitions(golmpi_core PUBLIC GOLMPI_HAVE_CUDA GOLMPI_HAVE_NCCL)
# Fast-math buys nothing for integer bit logic; -O3 is all the kernels want. Whole-program
# compilation: no kernel calls into another translation unit, so no device link step is needed.
target_compile_options(golmpi_core PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-O3>)
set_target_properties(golmpi_core PROPERTIES CUDA_SEPARABLE_COMPILATION OFF)
