/* The generation-and-output driver: advance from frame to frame, hand each full chunk to the
 * writer, and let the next chunk compute while it is written. */
#ifndef GOLMPI_RUN_H
#define GOLMPI_RUN_H

#include <mpi.h>

#include "io/output.h"
#include "kernels/backend.h"
#include "src/setup.h"

typedef struct gol_run_result {
    double wall_s; /* from the first generation to the last byte written, max over ranks */
    int64_t generations;
    int64_t frames;
    int64_t population; /* all ranks, at the last generation */
    gol_backend_times times;
    gol_output_stats output;
} gol_run_result;

void run_generations(gol_backend *b, const gol_setup *s, const gol_slab *slab, MPI_Comm comm,
                     gol_run_result *res);

#endif
