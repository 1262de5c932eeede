/* What the user sees: a progress line on rank 0 when stderr is a terminal, the summary at the
 * end, and the same figures as JSON for scripts. */
#ifndef GOLMPI_REPORT_H
#define GOLMPI_REPORT_H

#include <mpi.h>

#include "src/config.h"
#include "src/decomp.h"
#include "src/schedule.h"

typedef struct gol_progress gol_progress;
struct gol_run_result;

gol_progress *progress_start(const gol_config *cfg, const gol_schedule *sched,
                             const gol_slab *slab, int rank);
/* How many generations to advance between updates, out of `remaining`. */
int64_t progress_piece(const gol_progress *p, int64_t remaining);
void progress_update(gol_progress *p, int64_t generation);
void progress_end(gol_progress *p);

typedef struct gol_report_info {
    const char *backend, *halo;
    int nranks, threads;
} gol_report_info;

/* Collective: maxima over ranks, then rank 0 prints and writes --stats. */
void report_summary(const gol_config *cfg, const gol_schedule *sched,
                    const struct gol_run_result *res, const gol_report_info *info, MPI_Comm comm);

#endif
