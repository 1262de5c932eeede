# The one-node fault matrix (issue 28): tests/test_fault_matrix.py, one ctest per group of cells,
# each with its own uninterrupted reference run. A rank held in each blocking phase
# (GOLMPI_DEBUG_HOLD) is SIGSTOPped or SIGKILLed; every other rank must be gone within --timeout
# + 5 s, the output read back, the resume equal the uninterrupted run. Every phase is stopped;
# only four phases are killed, since on one node mpiexec ends the job alike in every phase
# (docs/RUNNING.md, "The fault matrix"). About 85 s in all on a 2-core VM. Uses io.cmake's
# golmpi_io_check and Python with h5py.
set(GOLMPI_FAULT_MATRIX_GROUPS
  "stop_run=startup-stop,wireup-stop,first_exchange-stop,exchange-stop,vote-stop,handover-stop"
  "stop_io=chunk_write-stop,chunk_end-stop,index-stop,rename-stop,checkpoint-stop,report-stop,finalize-stop"
  "kill=exchange-kill,chunk_end-kill,rename-kill,finalize-kill")
foreach(group ${GOLMPI_FAULT_MATRIX_GROUPS})
  string(REPLACE "=" ";" parts "${group}")
  list(GET parts 0 name)
  list(GET parts 1 cells)
  golmpi_io_check(fault_matrix_${name} "${GOLMPI_IO_PYTHON}" ${GOLMPI_TEST_DIR}/test_fault_matrix.py
    --golmpi $<TARGET_FILE:golmpi> --work ${CMAKE_CURRENT_BINARY_DIR}/fault_matrix_${name}
    --cells ${cells} --mpiexec ${MPIEXEC_EXECUTABLE} ${GOLMPI_MPIEXEC_FLAGS})
  set_tests_properties(fault_matrix_${name} PROPERTIES PROCESSORS 4 TIMEOUT 400
    ENVIRONMENT "OMP_NUM_THREADS=1" SKIP_RETURN_CODE 77)
endforeach()
