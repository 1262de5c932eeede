/* The generation-and-output driver: advance from frame to frame, hand each frame to the
 * writer as soon as it is in, and let the next frames compute while it is written. */
#ifndef GOLMPI_RUN_H
#define GOLMPI_RUN_H

#include <mpi.h>
#include <stdbool.h>

#include "io/output.h"
#include "backend/backend.h"
#include "core/plan.h"
#include "io/series.h"
#include "src/chunk_log.h"

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

/* What the driver reads: the plan (slab, frame format, whether frames are written), the options
 * the writer and the progress line take, the schedule, and the series a --restart continues
 * (NULL: none). */
typedef struct gol_run_inputs {
    const gol_plan *plan;
    const gol_config *cfg;
    const gol_schedule *sched;
    const io_series *series;
} gol_run_inputs;

/* Collective. */
void run_generations(gol_backend *b, const gol_run_inputs *in, MPI_Comm comm,
                     gol_run_result *res);

/* The driver's two frame slots, of plan_slot_bytes each, from backend_host_alloc: what the plan's
 * host.slots counts. */
void run_slots_alloc(gol_backend *b, const gol_plan *plan, void *slot_h[2]);

#endif
