/* Halo rows over MPI, non-blocking: start posts the receives and sends, the caller computes the
 * interior, finish waits. Buffers may be host memory or, with a CUDA-aware MPI, device memory. */
#ifndef GOLMPI_HALO_MPI_H
#define GOLMPI_HALO_MPI_H

#include <mpi.h>
#include <stdint.h>

#include "core/decomp.h"

typedef struct gol_halo_mpi gol_halo_mpi;

gol_halo_mpi *halo_mpi_create(const gol_slab *slab, MPI_Comm comm);
/* first/last: the slab's first and last owned rows; top/bottom: the halo rows above and below.
 * Past a dead boundary the halo row is not touched (the caller keeps it zero). */
void halo_mpi_start(gol_halo_mpi *h, const uint64_t *first, const uint64_t *last, uint64_t *top,
                    uint64_t *bottom);
void halo_mpi_finish(gol_halo_mpi *h);
double halo_mpi_seconds(const gol_halo_mpi *h); /* posting plus waiting */
void halo_mpi_destroy(gol_halo_mpi *h);

#endif
