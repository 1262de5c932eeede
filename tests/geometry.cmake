# The CUDA kernels' launch geometry and their registers, both checked without a GPU.
# The geometry (cuda/life_geometry.h) is plain C in every build, CPU-only included: every pass
# at every size of issue 36's table, depths 1..GOL_DEEP_GENS_MAX. In a CUDA build the test also
# reads the build's register table and prints the model of each size's pass (docs/PERFORMANCE.md).
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

# The model of a pass against the measured curve it is calibrated on (bench/data/, one H200):
# golmpi's baseline within 15% at every size, the peer kernel fed its own launch within 25%.
add_test(NAME model_calibration
  COMMAND golmpi-model --check ${PROJECT_SOURCE_DIR}/bench/data/h200-2026-11-27/curve.tsv
          --bound 15 --peer-bound 25)
set_tests_properties(model_calibration PROPERTIES TIMEOUT 30 LABELS model)
# The calibration itself: the constants built into cuda/shape_model.c are the fit of that curve
# (`golmpi-model --fit`), so a change of the model or its build table fails until they are refit.
add_test(NAME model_fit
  COMMAND golmpi-model --fit ${PROJECT_SOURCE_DIR}/bench/data/h200-2026-11-27/curve.tsv)
set_tests_properties(model_fit PROPERTIES TIMEOUT 60 LABELS model)
# The model's choice against measurements kept out of its calibration (each shape at eight sizes,
# bench/data/h200-2026-11-28/shape_rates.tsv): at every size the shape the model alone takes
# (a run too short to time them) runs within 5% of the fastest measured.
add_test(NAME model_pick
  COMMAND golmpi-model --pick-check
          ${PROJECT_SOURCE_DIR}/bench/data/h200-2026-11-28/shape_rates.tsv --bound 5)
set_tests_properties(model_pick PROPERTIES TIMEOUT 30 LABELS model)

# The same measurements, every shape's rate: each within 35% of the model's (the worst, `half` at
# 4096², is 34% slow). They fixed the choice of lone_cpi that the curve leaves open
# (cuda/shape_model.c), so this guards that choice: the constants of before (lone_cpi 1.73, 52%
# off) fail it.
add_test(NAME model_kept_aside
  COMMAND golmpi-model --check ${PROJECT_SOURCE_DIR}/bench/data/h200-2026-11-28/shape_rates.tsv
          --bound 35)
set_tests_properties(model_kept_aside PROPERTIES TIMEOUT 30 LABELS model)

# The model's build table (cuda/shape_model_table.c) against this build: the registers of every
# deep_kernel instance (kernel_resources.tsv), and with a disassembler (cuobjdump) the row loops of
# the compiled object too. Says what it could not compare; skipped (77) when it compared nothing.
if(GOLMPI_KERNEL_RESOURCES)
  golmpi_test(shape_model_table PYTHON SKIP TIMEOUT 120
    COMMAND ${PROJECT_SOURCE_DIR}/tools/sass_rows.py check
            ${PROJECT_SOURCE_DIR}/cuda/shape_model_table.c --tsv ${GOLMPI_KERNEL_RESOURCES}
            --cubin ${PROJECT_BINARY_DIR}/CMakeFiles/golmpi_core.dir/cuda/life_cuda.cu.o)
endif()

# kernel_resources.py's own branches on crafted reports and tables (tests/test_kernel_resources.py):
# a spill, more than 255 registers, a missing report, and a deleted source's leftover report.
golmpi_test(kernel_resources_crafted PYTHON TIMEOUT 120
  COMMAND ${PROJECT_SOURCE_DIR}/tests/test_kernel_resources.py)
