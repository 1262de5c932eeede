/* The generation-and-output driver: advance from frame to frame, hand each full chunk to the
 * writer, and let the next chunk compute while it is written. */
#ifndef GOLMPI_RUN_H
#define GOLMPI_RUN_H

#include <mpi.h>
#include <stdbool.h>

#include "io/output.h"
#include "kernels/backend.h"
#include "src/chunk_log.h"
#include "src/setup.h"

typedef struct gol_run_result {
    double wall_s;      /* from the first generation to the last byte written, max over ranks */
    gol_schedule sched; /* the run's, cut at the generation it stopped at when stopped */
    bool stopped;       /* a signal stopped it before the end: sched ends at its checkpoint */
    int64_t generations;
    int64_t frames;
    int64_t population; /* all ranks, at the last generation */
    gol_backend_times times;
    gol_output_stats output;
    gol_chunk_table chunks; /* rank 0 with --stats: each chunk's figures (chunk_table_free) */
} gol_run_result;

/* A signal handler (SIGTERM, SIGINT, SIGUSR1): it only sets a flag. At the next piece boundary
 * that every rank has voted at, the ranks stop at one generation, write it as the last frame,
 * close the index and the XDMF file, and run_generations returns with res->stopped. */
void run_stop_on_signal(int signo);

/* Collective. */
void run_generations(gol_backend *b, const gol_setup *s, const gol_slab *slab, MPI_Comm comm,
                     gol_run_result *res);

#endif
