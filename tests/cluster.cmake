# Several nodes under a real Slurm, the nodes network namespaces on this machine:
# tests/test_cluster.sh brings up tests/cluster/cluster.sh's three nodes, submits
# jobs/slurm_multinode.sbatch with -N 2 and -N 3, runs mpirun across the nodes without Slurm, loses
# a node (under mpirun and in a Slurm job that requeues itself) and cuts a link for longer than
# --timeout, and takes everything down again (the short cut: the fault matrix's cells below).
# Root only; 77 (skip) where network namespaces cannot be made. About 5 minutes here
# (docs/BUILD.md); the TIMEOUT leaves room for a loaded machine (every wait in it is bounded).
if(GOLMPI_JOBS_PYTHON)
  add_test(NAME jobs_cluster COMMAND bash ${GOLMPI_TEST_DIR}/test_cluster.sh)
  set_tests_properties(jobs_cluster PROPERTIES LABELS "cluster;slurm" SKIP_RETURN_CODE 77
    TIMEOUT 900 RUN_SERIAL TRUE
    ENVIRONMENT "GOLMPI_BIN=$<TARGET_FILE:golmpi>;GOLMPI_SRC=${PROJECT_SOURCE_DIR};GOLMPI_PYTHON=${GOLMPI_JOBS_PYTHON}")
endif()

# The fault matrix across nodes (docs/FAULTS.md, "Across nodes"; measured: docs/reports/): one test
# per cell, each on a cluster of its own (tests/test_cluster_faults.sh): a node lost, a link cut
# longer than --timeout, a link cut shorter, through jobs/slurm_multinode.sbatch's mpirun and its
# srun --mpi=pmix. The launcher must exit within --timeout + 30 s with the ranks' exit code and the
# job requeue itself (the short cut: complete, frames those of the run never cut). Each fault runs
# once under each launcher, on 2 nodes under one and 3 under the other; the other six of the twelve
# cells were measured by hand (the table) and add nothing a CI run would catch: about 4 minutes for
# these six.
if(GOLMPI_JOBS_PYTHON)
  foreach(entry "lost|2|mpirun" "cut-long|3|mpirun" "cut-short|2|mpirun"
                "lost|3|srun" "cut-long|2|srun" "cut-short|3|srun")
    string(REPLACE "|" ";" entry "${entry}")
    list(GET entry 0 cell)
    list(GET entry 1 nodes)
    list(GET entry 2 launcher)
    string(REPLACE "-" "_" test_name "cluster_${cell}_${nodes}nodes_${launcher}")
    add_test(NAME ${test_name} COMMAND bash ${GOLMPI_TEST_DIR}/test_cluster_faults.sh ${entry})
    set_tests_properties(${test_name} PROPERTIES LABELS "cluster" SKIP_RETURN_CODE 77
      TIMEOUT 600 RUN_SERIAL TRUE
      ENVIRONMENT "GOLMPI_BIN=$<TARGET_FILE:golmpi>;GOLMPI_SRC=${PROJECT_SOURCE_DIR};GOLMPI_PYTHON=${GOLMPI_JOBS_PYTHON}")
  endforeach()
endif()
