#include "cuda/cuda_account.h"

void cuda_account_alloc(cuda_mem_account *a, int64_t bytes) {
    a->bytes += bytes;
    a->allocations++;
    if (a->bytes > a->peak) a->peak = a->bytes;
}

void cuda_account_free(cuda_mem_account *a, int64_t bytes) {
    a->bytes -= bytes;
    a->allocations--;
}
