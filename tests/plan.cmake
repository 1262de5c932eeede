# The plan phase: memory admitted is memory allocated, and --dry-run.

# The CPU backend holds what the plan counts (backend_held against plan.backend_need and the
# frame slots), at depths 1..32 and both frame formats, on 1 and 3 ranks. About 1 s.
add_executable(test_plan ${GOLMPI_TEST_DIR}/test_plan.c)
target_link_libraries(test_plan PRIVATE golmpi_core)
foreach(n 1 3)
  golmpi_mpi_test(NAME unit_plan_np${n} RANKS ${n} COMMAND $<TARGET_FILE:test_plan>)
endforeach()

# --dry-run on 1 to 4 ranks: the plan's rows, figures that grow with the depth, nothing written;
# and a grid refused at a deep halo that is admitted at depth 1. About 10 s (17 s in CI, 2026-12-07).
golmpi_test(cli_dry_run PYTHON ONE_THREAD PROCESSORS 2 TIMEOUT 120
  COMMAND ${GOLMPI_TEST_DIR}/test_dry_run.py "${GOLMPI_MPIEXEC_LINE}" $<TARGET_FILE:golmpi>)
