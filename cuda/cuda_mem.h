/* The CUDA backend's device allocations, each counted in its account (cuda/cuda_account.h's
 * cuda_mem_account), so that what a GPU gets can be checked against the host-tested plan. */
#ifndef GOLMPI_CUDA_MEM_H
#define GOLMPI_CUDA_MEM_H

#include <stdint.h>

#include "cuda/cuda_account.h"

/* cudaMalloc of bytes, counted in a; a failure aborts, naming what and what a holds already. */
void *cuda_mem_alloc(cuda_mem_account *a, int64_t bytes, const char *what);
/* cudaFree of p (NULL: nothing), taken out of a. */
void cuda_mem_free(cuda_mem_account *a, void *p, int64_t bytes);

#endif
