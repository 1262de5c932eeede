/* What the user sees at the end: the summary, and the same figures as JSON for scripts. */
#ifndef GOLMPI_REPORT_H
#define GOLMPI_REPORT_H

#include <mpi.h>
#include <time.h>

#include "core/config.h"
#include "core/decomp.h"
#include "core/plan.h"
#include "core/schedule.h"
#include "src/run.h"

typedef struct gol_report_info {
    const char *backend, *kernel, *halo;
    int64_t halo_depth; /* the plan's */
    int nranks, threads;
    int argc; /* the command line, for --stats */
    char *const *argv;
    time_t start_time; /* when golmpi started, for --stats */
    const gol_gpu_share *gpu; /* the plan's ranks per GPU and MPS; NULL on the CPU backend */
    /* the kernel shape and why (cuda/shape_choice.h); NULL where the backend has none */
    const struct shape_choice_result *shape;
} gol_report_info;

/* Collective: maxima (and minima and means) over ranks and the hosts, then rank 0 prints the
 * summary and writes --stats. */
void report_summary(const gol_config *cfg, const gol_schedule *sched, const gol_run_result *res,
                    const gol_report_info *info, MPI_Comm comm);

#endif
