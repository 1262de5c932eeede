/* Input resolution: from argv to a validated run: parse, fill what the pattern or restart file
 * says, cross-check the output paths, and later build the initial state. Every step's verdict is
 * agreed across ranks. */
#ifndef GOLMPI_SETUP_H
#define GOLMPI_SETUP_H

#include <mpi.h>
#include <stdbool.h>

#include "io/restart.h"
#include "io/series.h"
#include "core/config.h"
#include "core/decomp.h"
#include "core/plan.h"
#include "src/pattern.h"
#include "core/schedule.h"
#include "backend/backend.h"

typedef struct gol_setup {
    gol_config cfg;
    bool has_pattern;
    gol_pattern pattern;
    int64_t at_x, at_y; /* where the pattern's top-left cell goes */
    bool has_restart;
    gol_restart_info restart;
    gol_schedule sched;
    /* --restart X.h5 --output X.h5: this run continues X's series (its chunks, its index) */
    bool has_series;
    io_series series;
} gol_setup;

gol_status setup_parse(int argc, char **argv, MPI_Comm comm, gol_setup *s, const char **text);
/* The start state of a pattern or a restart, this rank's rows (slab->rows x slab->nwords words). */
gol_status setup_initial_state(const gol_setup *s, const gol_slab *slab, uint64_t *rows_h,
                               MPI_Comm comm);
/* Collective: *backend created as the plan says (backend_create), with the plan's threads, and
 * holding the initial state. A pattern or a restart is built on the host (setup_initial_state)
 * and loaded; the random start is made by the backend where the grid lives (backend_init_random):
 * on a GPU no host rows and no copy. A user error (a restart file that cannot be read) leaves
 * *backend NULL. */
gol_status setup_start(const gol_setup *s, const gol_plan *plan, MPI_Comm comm,
                       gol_backend **backend);
void setup_free(gol_setup *s);

#endif
