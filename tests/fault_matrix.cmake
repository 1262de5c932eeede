# The one-node fault matrix: tests/test_fault_matrix.py, one ctest per group of cells,
# each with its own uninterrupted reference run. A rank held in each blocking phase
# (GOLMPI_DEBUG_HOLD) is SIGSTOPped or SIGKILLed; every other rank must be gone within --timeout
# + 5 s, the output read back, the resume equal the uninterrupted run. Every phase is stopped;
# only four phases are killed, since on one node mpiexec ends the job alike in every phase
# (docs/FAULTS.md, "How the tests land a fault"). About 85 s in all on a 2-core VM. Uses io.cmake's
# golmpi_io_check and Python with h5py.

# golmpi_fault_matrix(<test> <backend> <cells> [golmpi_test options]): the cells (a,b,...) on
# test_fault_matrix.py's backend, in a work folder named after the test.
function(golmpi_fault_matrix test backend cells)
  golmpi_test(${test} SKIP ONE_THREAD PYTHON_EXE "${GOLMPI_IO_PYTHON}" PROCESSORS 4 TIMEOUT 400
    ${ARGN} COMMAND ${GOLMPI_TEST_DIR}/test_fault_matrix.py --golmpi $<TARGET_FILE:golmpi>
    --work ${CMAKE_CURRENT_BINARY_DIR}/${test} --backend ${backend} --cells ${cells}
    --mpiexec ${MPIEXEC_EXECUTABLE} ${GOLMPI_MPIEXEC_FLAGS})
endfunction()

golmpi_fault_matrix(fault_matrix_stop_run cpu
  startup-stop,wireup-stop,first_exchange-stop,exchange-stop,vote-stop,handover-stop)
golmpi_fault_matrix(fault_matrix_stop_io cpu
  chunk_write-stop,chunk_end-stop,index-stop,rename-stop,checkpoint-stop,report-stop,finalize-stop)
golmpi_fault_matrix(fault_matrix_kill cpu exchange-kill,chunk_end-kill,rename-kill,finalize-kill)

# On the simulated GPU (the sim stage runs them by name), under each halo mode, the cells whose
# waits differ from the CPU backend's: the exchange on a stream, the vote and the writer's phases
# while the main thread's host waits run the CUDA watchdog, finalize (the exchange torn down);
# under NCCL also its set-up (wireup) and a killed peer (the simulated NCCL's own detection).
# At --timeout 4 (the simulated device is host threads: test_fault_matrix.py), about 2.2 min
# on a 2-core VM, 4 to 7 min under a load average of 20 to 40: a limit of 900 s.
if(GOLMPI_CUDA_SIM)
  golmpi_fault_matrix(cudasim_fault_matrix_nccl cuda-nccl
    wireup-stop,exchange-stop,vote-stop,chunk_end-stop,index-stop,finalize-stop,exchange-kill
    LABELS "gpu;sim" TIMEOUT 900)
  golmpi_fault_matrix(cudasim_fault_matrix_mpi cuda-mpi
    exchange-stop,vote-stop,chunk_end-stop,finalize-stop LABELS "gpu;sim" TIMEOUT 900)
endif()
