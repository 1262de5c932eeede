# Per-chunk timings (src/chunk_log.h): the chunks of --stats add up to the totals, --profile
# prints them, and a writer slowed on purpose shows its wait on the chunk that needed its slot.
foreach(case sums slow)
  golmpi_test(chunks_${case} PYTHON ONE_THREAD PROCESSORS 2 TIMEOUT 120
    COMMAND ${GOLMPI_TEST_DIR}/test_chunks.py --mpiexec "${GOLMPI_MPIEXEC_LINE}"
            --golmpi $<TARGET_FILE:golmpi> ${case})
endforeach()
