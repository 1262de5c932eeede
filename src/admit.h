/* Admission: before anything big is allocated or written, refuse what cannot run. */
#ifndef GOLMPI_ADMIT_H
#define GOLMPI_ADMIT_H

#include <mpi.h>

#include "core/plan.h"
#include "src/setup.h"

/* Collective: a user error when the run cannot fit: the ranks of a node need more host memory
 * than the node has available (the plan's host peaks, summed over the node's ranks), or, for the
 * CUDA backend, the ranks of a GPU need more than it has free. The message gives both numbers.
 * Then the outputs (io/output.h's output_check): a file in the way without --force. */
gol_status admit_run(const gol_setup *s, const gol_plan *plan, MPI_Comm comm);

#endif
