# The registers and spills of every kernel instance, recorded where ptxas reports them: each .cu of
# golmpi_core compiles with --resource-usage through cmake/kernel_resources.py's launcher, which
# keeps the report beside the object, and after every build of golmpi_core the reports become one
# table, ${PROJECT_BINARY_DIR}/kernel_resources.tsv (arch, kernel, registers, stack, spill store
# and load bytes). The test kernel_resources (tests/geometry.cmake) fails on any spill.
# Included by cmake/cuda.cmake, in the CUDA build only.
# Python runs the launcher: without it (a new user's scripts/run.sh installs only the run packages)
# golmpi builds all the same, without the table, and kernel_resources is not registered.
find_package(Python3 COMPONENTS Interpreter)
if(NOT Python3_EXECUTABLE)
  message(STATUS "no Python 3: no kernel_resources.tsv, the kernels' registers and spills "
    "(package python3: scripts/deps.sh --test installs it)")
  return()
endif()
set(GOLMPI_KERNEL_RESOURCES ${PROJECT_BINARY_DIR}/kernel_resources.tsv)
set(golmpi_resources_py ${CMAKE_CURRENT_LIST_DIR}/kernel_resources.py)
set_property(TARGET golmpi_core PROPERTY CUDA_COMPILER_LAUNCHER
  ${Python3_EXECUTABLE} ${golmpi_resources_py} compile)
target_compile_options(golmpi_core PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--resource-usage>)
# Only this build's CUDA sources' reports are read (an object directory keeps the reports of
# sources no longer built): each as CMake places its object, the source's path under the
# project, below the target's object directory.
get_target_property(golmpi_core_sources golmpi_core SOURCES)
set(golmpi_cu_reports)
foreach(src IN LISTS golmpi_core_sources)
  if(src MATCHES "\\.cu$")
    file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${src})
    list(APPEND golmpi_cu_reports ${rel})
  endif()
endforeach()
add_custom_command(TARGET golmpi_core POST_BUILD
  COMMAND ${Python3_EXECUTABLE} ${golmpi_resources_py} table ${GOLMPI_KERNEL_RESOURCES}
          ${PROJECT_BINARY_DIR}/CMakeFiles/golmpi_core.dir ${golmpi_cu_reports}
  VERBATIM)
