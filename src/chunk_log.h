/* Per-chunk figures (DESIGN: Per-chunk timings): for every chunk of a run with frames, the
 * generations it covers and each stage's time (compute, halo, frames, the writer's time, the
 * wait for a free slot) as the maximum over ranks with its rank and the mean over ranks, and its
 * bytes. Each figure is the chunk's share of the summary's total of the same name, so the chunks'
 * means add up to times_over_ranks' means, and on one rank their maxima to the totals.
 *
 * The main thread records the backend's share of a chunk when it hands the chunk over; the
 * writer's share comes from io/output.h's per-chunk call on the writer thread. --profile prints
 * a line per chunk there, rank 0, as soon as the chunk is written (one small reduction a chunk
 * on a communicator of its own, off the generation loop); the table for --stats is reduced once,
 * at the end. */
#ifndef GOLMPI_CHUNK_LOG_H
#define GOLMPI_CHUNK_LOG_H

#include <cjson/cJSON.h>
#include <mpi.h>
#include <stdbool.h>

#include "backend/backend.h"
#include "core/schedule.h"
#include "io/output.h"

/* In the order of the summary's times (src/report.c), with the same names in --stats. */
enum { CHUNK_COMPUTE, CHUNK_HALO, CHUNK_FRAME, CHUNK_WRITE, CHUNK_WAIT, CHUNK_STAGES };

typedef struct gol_chunk_row {
    int64_t g_from, g_to; /* its generations: computed from g_from to g_to, its last frame */
    int64_t frames, bytes;
    double max[CHUNK_STAGES];
    int rank[CHUNK_STAGES]; /* the rank of the maximum (the lowest of equals) */
    double mean[CHUNK_STAGES];
} gol_chunk_row;

typedef struct gol_chunk_table {
    gol_chunk_row *rows; /* rank 0, with --stats; NULL otherwise */
    int64_t n;
} gol_chunk_table;

typedef struct gol_chunk_log gol_chunk_log;

/* Collective. sched: the run's schedule, which the caller may cut when the run stops; it must
 * outlive the log. profile: --profile's lines on rank 0. */
gol_chunk_log *chunk_log_open(const gol_schedule *sched, bool profile, MPI_Comm comm);
/* Before the first chunk is handed over: the writer reports each chunk's share to the log. */
void chunk_log_attach(gol_chunk_log *log, gol_output *out);
/* Main thread: chunk `chunk` begins computing at generation g. */
void chunk_log_begin(gol_chunk_log *log, int64_t chunk, int64_t g);
/* Main thread, before the chunk is handed to the writer: the backend's share of it. */
void chunk_log_backend(gol_chunk_log *log, int64_t chunk, gol_backend_times t);
/* Collective, after output_close: the wait in output_close goes to the last chunk (the main
 * thread waiting for its write), then with keep set rank 0 gets the table (the chunks written).
 * Frees the log. */
void chunk_log_close(gol_chunk_log *log, const gol_output_stats *st, bool keep,
                     gol_chunk_table *table);

/* --stats' "chunks" list (empty without a table). */
void chunk_table_json(cJSON *root, const gol_chunk_table *t);
void chunk_table_free(gol_chunk_table *t);

#endif
