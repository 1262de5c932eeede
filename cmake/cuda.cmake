# The CUDA backend: kernels, device selection, and NCCL for the device halo modes (whose sources
# halo/CMakeLists.txt lists). Included by the root CMakeLists.txt when GOLMPI_ENABLE_CUDA=ON,
# after golmpi_core exists and CUDA is an enabled language. Sets GOLMPI_CUDA_RUNTIME_DIRS (the
# CUDA runtime's and NCCL's library directories) for the root's RPATH.
find_package(CUDAToolkit REQUIRED)

# The oldest NCCL the code is written for. 2.14 brought what halo_nccl.c calls today
# (ncclCommInitRankConfig with config.blocking = 0, ncclCommFinalize, ncclCommGetAsyncError
# answering ncclInProgress); 2.18 adds ncclCommSplit, the way to derive a blocking exchange
# communicator from the nonblocking one. Requiring it at configure time says
# so in one line instead of a compile error or a run-time failure; 2.18 dates from 2023.
set(GOLMPI_NCCL_MIN_VERSION 2.18)

# pip's NCCL wheel (nvidia-nccl-cu12/-cu13, the usual NCCL on clusters without a system one, and
# the one PyTorch brings) lays out site-packages/nvidia/nccl/{include/nccl.h,lib/libnccl.so.2}:
# no libnccl.so development link. Asked only when NCCL_HOME does not name a prefix.
function(golmpi_nccl_wheel_dir out)
  set(${out} "" PARENT_SCOPE)
  find_package(Python3 COMPONENTS Interpreter QUIET)
  if(NOT Python3_EXECUTABLE)
    return()
  endif()
  execute_process(
    COMMAND ${Python3_EXECUTABLE} -c "import nvidia.nccl as m; print(list(m.__path__)[0])"
    RESULT_VARIABLE rc OUTPUT_VARIABLE dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(rc EQUAL 0 AND IS_DIRECTORY "${dir}")
    set(${out} "${dir}" PARENT_SCOPE)
  endif()
endfunction()

# NCCL ships no CMake package: find it under NCCL_HOME when given (there only), else in a pip
# wheel, next to the toolkit (as in the NVIDIA HPC SDK and the CUDA containers) or in the system
# directories, and wrap it in an IMPORTED target like every other dependency.
if(NOT TARGET NCCL::nccl)
  set(NCCL_HOME "$ENV{NCCL_HOME}" CACHE PATH
      "NCCL install prefix (optional when NCCL sits in the CUDA toolkit or a pip wheel)")
  if(NCCL_HOME)
    set(nccl_hints ${NCCL_HOME})
    set(nccl_only NO_DEFAULT_PATH)
  else()
    golmpi_nccl_wheel_dir(nccl_wheel)
    set(nccl_hints ${nccl_wheel} ${CUDAToolkit_LIBRARY_ROOT} ${CUDAToolkit_INCLUDE_DIRS}
                   ${CUDAToolkit_LIBRARY_DIR})
    set(nccl_only "")
  endif()
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${nccl_hints} PATH_SUFFIXES include ${nccl_only})
  # NAMES_PER_DIR: a directory holding only libnccl.so.2 (a wheel, NCCL_HOME) wins over a
  # libnccl.so elsewhere on the default path.
  find_library(NCCL_LIBRARY NAMES nccl libnccl.so.2 NAMES_PER_DIR HINTS ${nccl_hints}
    PATH_SUFFIXES lib lib64 lib/x86_64-linux-gnu ${nccl_only})
  if(NOT NCCL_INCLUDE_DIR OR NOT NCCL_LIBRARY)
    message(FATAL_ERROR
      "golmpi's CUDA backend needs NCCL, but nccl.h or libnccl.so(.2) was not found "
      "(looked in NCCL_HOME='${NCCL_HOME}', else in python3's nvidia.nccl wheel, the CUDA toolkit "
      "${CUDAToolkit_LIBRARY_ROOT} and the system directories; found include: "
      "'${NCCL_INCLUDE_DIR}', library: '${NCCL_LIBRARY}'). Set -DNCCL_HOME=<prefix> or NCCL_HOME "
      "in the environment (a prefix with include/nccl.h and lib/libnccl.so.2, such as "
      "site-packages/nvidia/nccl of pip install nvidia-nccl-cu13), or build without the GPU "
      "backend: -DGOLMPI_ENABLE_CUDA=OFF.")
  endif()

  file(STRINGS "${NCCL_INCLUDE_DIR}/nccl.h" nccl_defs REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) ")
  string(REGEX REPLACE ".*NCCL_MAJOR ([0-9]+).*" "\\1" nccl_major "${nccl_defs}")
  string(REGEX REPLACE ".*NCCL_MINOR ([0-9]+).*" "\\1" nccl_minor "${nccl_defs}")
  string(REGEX REPLACE ".*NCCL_PATCH ([0-9]+).*" "\\1" nccl_patch "${nccl_defs}")
  set(NCCL_VERSION "${nccl_major}.${nccl_minor}.${nccl_patch}")
  if(NOT NCCL_VERSION MATCHES "^[0-9]+\\.[0-9]+\\.[0-9]+$")
    message(FATAL_ERROR "could not read NCCL_MAJOR/NCCL_MINOR/NCCL_PATCH from "
                        "${NCCL_INCLUDE_DIR}/nccl.h: is it NCCL's header?")
  endif()
  if(NCCL_VERSION VERSION_LESS GOLMPI_NCCL_MIN_VERSION)
    message(FATAL_ERROR
      "golmpi's CUDA backend needs NCCL ${GOLMPI_NCCL_MIN_VERSION} or newer (nonblocking "
      "communicators and ncclCommSplit), but "
      "${NCCL_INCLUDE_DIR}/nccl.h is NCCL ${NCCL_VERSION}. Point NCCL_HOME at a newer NCCL "
      "(pip install nvidia-nccl-cu13 gives one: NCCL_HOME=<site-packages>/nvidia/nccl), or build "
      "without the GPU backend: -DGOLMPI_ENABLE_CUDA=OFF.")
  endif()

  add_library(NCCL::nccl UNKNOWN IMPORTED)
  set_target_properties(NCCL::nccl PROPERTIES
    IMPORTED_LOCATION "${NCCL_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${NCCL_INCLUDE_DIR}")
  message(STATUS "NCCL ${NCCL_VERSION}: ${NCCL_LIBRARY}")
endif()

# Where the binaries find libcudart.so and libnccl.so.2 at run time (the root puts these in the
# build and install RPATH): the directories they were found in, as spelled (/usr/local/cuda/lib,
# not the versioned directory it points to, so that a toolkit update keeps working).
get_target_property(golmpi_nccl_location NCCL::nccl IMPORTED_LOCATION)
get_filename_component(golmpi_nccl_dir "${golmpi_nccl_location}" DIRECTORY)
set(GOLMPI_CUDA_RUNTIME_DIRS ${CUDAToolkit_LIBRARY_DIR} ${golmpi_nccl_dir})
# NVIDIA's own install spells the runtime's directory lib64 (a link to targets/<arch>-linux/lib),
# where a toolkit like this one may spell it lib: both, so that a binary carried to a machine with
# the standard layout of the same toolkit finds libcudart without LD_LIBRARY_PATH or ldconfig.
get_filename_component(golmpi_cuda_root "${CUDAToolkit_LIBRARY_DIR}" DIRECTORY)
list(APPEND GOLMPI_CUDA_RUNTIME_DIRS "${golmpi_cuda_root}/lib64"
     "${golmpi_cuda_root}/targets/${CMAKE_SYSTEM_PROCESSOR}-linux/lib")
list(REMOVE_DUPLICATES GOLMPI_CUDA_RUNTIME_DIRS)

target_sources(golmpi_core PRIVATE
  ${PROJECT_SOURCE_DIR}/cuda/life_cuda.cu
  ${PROJECT_SOURCE_DIR}/cuda/init_cuda.cu
  ${GOLMPI_CUDA_HOST_SOURCES}
  ${PROJECT_SOURCE_DIR}/cuda/trace_cuda.c
  ${PROJECT_SOURCE_DIR}/cuda/device.c)
target_link_libraries(golmpi_core PUBLIC CUDA::cudart NCCL::nccl)
target_compile_definitions(golmpi_core PUBLIC GOLMPI_HAVE_CUDA GOLMPI_HAVE_NCCL)
# Fast-math buys nothing for integer bit logic; -O3 is all the kernels want. -lineinfo maps SASS
# to source lines for ncu and compute-sanitizer at no run-time cost. Whole-program compilation:
# no kernel calls into another translation unit, so no device link step is needed.
target_compile_options(golmpi_core PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-O3 -lineinfo>)
set_target_properties(golmpi_core PROPERTIES CUDA_SEPARABLE_COMPILATION OFF)
# Every kernel instance's registers and spills, kept in the build tree for a test.
include(${CMAKE_CURRENT_LIST_DIR}/kernel_resources.cmake)
