/* Progress on rank 0: generation, percent, rate and ETA. A live line on a terminal; under mpirun
 * or srun, where stderr is a pipe or a batch log, a plain line every --progress seconds. */
#ifndef GOLMPI_PROGRESS_H
#define GOLMPI_PROGRESS_H

#include <stdint.h>

#include "core/config.h"
#include "core/decomp.h"
#include "core/schedule.h"

typedef struct gol_progress gol_progress;

/* cycle: the generations between two halo exchanges (the plan's depth), which the pieces are
 * multiples of. */
gol_progress *progress_start(const gol_config *cfg, const gol_schedule *sched, const gol_slab *slab,
                             int64_t cycle, int rank);
/* Where to stop for the next update, advancing from generation g towards `to` (at most `to`). */
int64_t progress_piece_end(const gol_progress *p, int64_t g, int64_t to);
void progress_update(gol_progress *p, int64_t generation);
void progress_end(gol_progress *p);

#endif
