/* Halo rows over NCCL point-to-point on a CUDA stream. The exchange is only enqueued: it runs in
 * stream order, so it can be captured into a CUDA graph. Needs the CUDA device already chosen. */
#ifndef GOLMPI_HALO_NCCL_H
#define GOLMPI_HALO_NCCL_H

#include <cuda_runtime_api.h>
#include <mpi.h>
#include <stdint.h>

#include "core/decomp.h"

typedef struct gol_halo_nccl gol_halo_nccl;

/* Collective over comm (its ranks are the NCCL ranks): rank 0 makes the unique id, MPI_Bcast,
 * MPI_Barrier, then a nonblocking ncclCommInitRankConfig that is polled, so a failure on one rank
 * aborts with NCCL's message instead of hanging. With one rank and a dead boundary there is no
 * peer and no communicator. */
gol_halo_nccl *halo_nccl_create(const gol_slab *slab, MPI_Comm comm);

/* Enqueue on s: top <- last row of the rank above, bottom <- first row of the rank below, and the
 * mirror sends. first/last/top/bottom are device rows of slab->nwords words. Past a dead boundary
 * the halo row is not touched. */
void halo_nccl_enqueue(gol_halo_nccl *h, const uint64_t *first_d, const uint64_t *last_d,
                       uint64_t *top_d, uint64_t *bottom_d, cudaStream_t s);

/* Host-side health check: aborts with NCCL's message when the communicator reports an
 * asynchronous error (a peer died, a network failure). Cheap; call it while waiting. */
void halo_nccl_check(gol_halo_nccl *h);

/* Waits for s while polling halo_nccl_check, so a dead peer ends the run instead of hanging it. */
void halo_nccl_sync_stream(gol_halo_nccl *h, cudaStream_t s);

void halo_nccl_destroy(gol_halo_nccl *h);

#endif
