/* The CUDA backend's memory account: every device allocation and free is counted in it
 * (cuda/cuda_mem.h allocates). Plain C with no CUDA types, built in every configuration, so
 * that tests/test_cuda_choices.c checks it on machines without a GPU. */
#ifndef GOLMPI_CUDA_ACCOUNT_H
#define GOLMPI_CUDA_ACCOUNT_H

#include <stdint.h>

/* Everything the backend has cudaMalloc'ed: every allocation and free goes through it. */
typedef struct cuda_mem_account {
    int64_t bytes;       /* held now */
    int64_t peak;        /* the most held at once */
    int64_t allocations; /* live allocations */
} cuda_mem_account;

void cuda_account_alloc(cuda_mem_account *a, int64_t bytes);
void cuda_account_free(cuda_mem_account *a, int64_t bytes);

#endif
