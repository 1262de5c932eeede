/* From argv to a validated run: parse, fill what the pattern or restart file says, cross-check,
 * and build the initial state. Every step's verdict is agreed across ranks. */
#ifndef GOLMPI_SETUP_H
#define GOLMPI_SETUP_H

#include <mpi.h>
#include <stdbool.h>

#include "io/restart.h"
#include "io/series.h"
#include "core/config.h"
#include "core/decomp.h"
#include "src/pattern.h"
#include "core/schedule.h"
#include "kernels/backend.h"

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
gol_status setup_initial_state(const gol_setup *s, const gol_slab *slab, uint64_t *rows_h,
                               MPI_Comm comm);
/* Collective: *backend created (backend_create) and holding the initial state. A pattern or a
 * restart is built on the host (setup_initial_state) and loaded; the random start is made by the
 * backend where the grid lives (backend_init_random): on a GPU no host rows and no copy. A user
 * error (a restart file that cannot be read) leaves *backend NULL. */
gol_status setup_start(const gol_setup *s, const gol_slab *slab, gol_backend_kind kind,
                       const char *halo, MPI_Comm comm, gol_backend **backend);
/* Collective: a user error, before anything big is allocated, when the run cannot fit: the ranks
 * of a node need more host memory than the node has available (the backend's own buffers, the
 * start state, the restart frame being read, the frame slots), or, for the CUDA backend, the
 * ranks of a GPU need more than it has free. The message gives both numbers. */
gol_status setup_check_memory(const gol_setup *s, const gol_slab *slab, gol_backend_kind kind,
                              MPI_Comm comm);
void setup_free(gol_setup *s);

#endif
