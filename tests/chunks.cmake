# Per-chunk timings (src/chunk_log.h): the chunks of --stats add up to the totals, --profile
# prints them, and a writer slowed on purpose shows its wait on the chunk that needed its slot.
foreach(case sums slow)
  golmpi_test(chunks_${case} PYTHON ONE_THREAD PROCESSORS 2 TIMEOUT 120
    COMMAND ${GOLMPI_TEST_DIR}/test_chunks.py --mpiexec "${GOLMPI_MPIEXEC_LINE}"
            --golmpi $<TARGET_FILE:golmpi> ${case})
endforeach()
# the same on the GPU (77, skipped, without one)
if(GOLMPI_CUDA_BACKEND)
  foreach(case sums slow)
    golmpi_test(chunks_${case}_cuda PYTHON SKIP ONE_THREAD PROCESSORS 2 TIMEOUT 120
      COMMAND ${GOLMPI_TEST_DIR}/test_chunks.py --mpiexec "${GOLMPI_MPIEXEC_LINE}"
              --golmpi $<TARGET_FILE:golmpi> --backend cuda ${case})
  endforeach()
endif()
# bench/plot_chunks.py's PNG, with a Python that has matplotlib (skipped, 77, without one).
golmpi_python_with(GOLMPI_CHUNKS_PLOT_PYTHON "matplotlib")
if(GOLMPI_CHUNKS_PLOT_PYTHON)
  golmpi_test(chunks_plot PYTHON ONE_THREAD TIMEOUT 120
    COMMAND ${GOLMPI_TEST_DIR}/test_chunks.py --mpiexec "${GOLMPI_MPIEXEC_LINE}"
            --golmpi $<TARGET_FILE:golmpi> --plot-python ${GOLMPI_CHUNKS_PLOT_PYTHON} plot)
else()
  golmpi_test(chunks_plot SKIP COMMAND sh -c "echo 'SKIP: no Python with matplotlib'; exit 77")
endif()
# Chunk files past generation 10^6 (seven digits): named by golmpi, found and indexed by the
# tests' checkers (tests/reference.py's CHUNK_NAME, tests/cluster/check_cluster.py).
golmpi_test(chunk_names_past_million PYTHON ONE_THREAD TIMEOUT 120
  COMMAND ${GOLMPI_TEST_DIR}/test_chunk_names.py --mpiexec "${GOLMPI_MPIEXEC_LINE}"
          --golmpi $<TARGET_FILE:golmpi>)
