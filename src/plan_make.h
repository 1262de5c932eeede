/* The plan phase: after parsing, every fact of the run decided once (core/plan.h), and --dry-run,
 * which shows it. */
#ifndef GOLMPI_SRC_PLAN_MAKE_H
#define GOLMPI_SRC_PLAN_MAKE_H

#include <mpi.h>
#include <stddef.h>

#include "core/plan.h"
#include "src/setup.h"

/* Collective: the plan of the run set up in *s: this rank's slab (decomp_make), the backend and
 * the halo mode (backend_select), the depth and the backend's own memory need (backend_plan), the
 * threads of each rank, how the ranks share GPUs, and the host bytes the driver holds around the
 * backend (the start state, the restart frame being read, the frame slots). A user error is agreed
 * across ranks. *notice (rank 0 prints it): with --backend auto and no GPU, why the CPU was chosen;
 * with ranks sharing a GPU and no MPS, what that costs and the command that starts MPS. */
gol_status plan_make(const gol_setup *s, MPI_Comm comm, gol_plan *plan, char *notice,
                     size_t notice_len);

/* Collective: --dry-run's report. Rank 0 prints a row per rank (host, rows, depth, halo mode,
 * host and device bytes), then the totals, to stdout; with --stats the same as JSON in that file,
 * the one file --dry-run writes. */
void plan_print(const gol_plan *plan, const gol_config *cfg, MPI_Comm comm);

#endif
