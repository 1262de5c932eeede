/* The start-up table, as nccl-tests' "Using devices": which host, local rank and GPU or cores each
 * rank got, so a user can check the launcher's binding (Slurm's --gpu-bind, --cpu-bind) at a
 * glance. */
#ifndef GOLMPI_STARTUP_H
#define GOLMPI_STARTUP_H

#include <mpi.h>

#include "core/config.h"

/* Collective over comm: every rank describes itself, rank 0 prints one line per rank to stdout. */
void startup_table(gol_backend_kind backend, const char *halo, MPI_Comm comm);

#endif
