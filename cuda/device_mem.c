#include "cuda/device_mem.h"

#include "core/check.h"

#ifdef GOLMPI_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "cuda/device.h"
#endif

/* ---- device memory ----------------------------------------------------------------------- */

int64_t mem_device_free(MPI_Comm node, int *device) {
    *device = -1;
#ifdef GOLMPI_HAVE_CUDA
    int n = device_count_unchecked(), local;
    MPI_CHECK(MPI_Comm_rank(node, &local));
    if (n > 0) {
        *device = local % n;
        CUDA_CHECK(cudaSetDevice(*device));
        CUDA_CHECK(cudaFree(NULL)); /* the context now, so that it is not counted as free */
    }
    /* every context of the node exists before anyone reads what is left */
    MPI_CHECK(MPI_Barrier(node));
    if (n <= 0) return -1;
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    return (int64_t)free_b;
#else
    MPI_CHECK(MPI_Barrier(node));
    return -1;
#endif
}
