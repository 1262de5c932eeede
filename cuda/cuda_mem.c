/* Counted device allocations (cuda/cuda_mem.h). */
#include "cuda/cuda_mem.h"

#include <cuda_runtime_api.h>
#include <stdio.h>

#include "core/check.h"

void *cuda_mem_alloc(cuda_mem_account *a, int64_t bytes, const char *what) {
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, (size_t)bytes);
    if (e != cudaSuccess) {
        char call[192];
        snprintf(call, sizeof call, "cudaMalloc(%s: %lld bytes; the backend holds %lld already)",
                 what, (long long)bytes, (long long)a->bytes);
        gol_die_cuda(__FILE__, __LINE__, call, cudaGetErrorName(e), cudaGetErrorString(e));
    }
    cuda_account_alloc(a, bytes);
    return p;
}

void cuda_mem_free(cuda_mem_account *a, void *p, int64_t bytes) {
    if (!p) return;
    CUDA_CHECK(cudaFree(p));
    cuda_account_free(a, bytes);
}
