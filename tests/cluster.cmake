# Several nodes under a real Slurm, the nodes network namespaces on this machine (issue 21):
# tests/test_cluster.sh brings up tests/cluster/cluster.sh's three nodes, submits
# jobs/slurm_multinode.sbatch with -N 2 and -N 3, runs mpirun across the nodes without Slurm, loses
# a node and cuts links (under mpirun and in a Slurm job that requeues itself), and takes
# everything down again. Root only; 77 (skip) where network namespaces cannot be made. About 4
# minutes here; the TIMEOUT leaves room for a loaded machine (every wait in it is bounded).
if(GOLMPI_JOBS_PYTHON)
  add_test(NAME jobs_cluster COMMAND bash ${GOLMPI_TEST_DIR}/test_cluster.sh)
  set_tests_properties(jobs_cluster PROPERTIES LABELS "cluster;slurm" SKIP_RETURN_CODE 77
    TIMEOUT 900 RUN_SERIAL TRUE
    ENVIRONMENT "GOLMPI_BIN=$<TARGET_FILE:golmpi>;GOLMPI_SRC=${PROJECT_SOURCE_DIR};GOLMPI_PYTHON=${GOLMPI_JOBS_PYTHON}")
endif()
