/* CUDA_CHECK alone: the CUDA runtime's failures, reported as core/check.h reports every library
 * failure (host, rank, file:line, the call, the error's name and text, then MPI_Abort). The .cu
 * files include this header only, so they need neither mpi.h nor nccl.h; core/check.h includes it
 * in a CUDA build. */
#ifndef GOLMPI_CHECK_CUDA_H
#define GOLMPI_CHECK_CUDA_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* core/check.c: prints and aborts every rank. */
void gol_die_cuda(const char *file, int line, const char *call, const char *name, const char *str)
    __attribute__((noreturn));

#ifdef __cplusplus
}
#endif

#define CUDA_CHECK(call)                                                                   \
    do {                                                                                   \
        cudaError_t cuda_check_rc_ = (call);                                               \
        if (cuda_check_rc_ != cudaSuccess)                                                 \
            gol_die_cuda(__FILE__, __LINE__, #call, cudaGetErrorName(cuda_check_rc_),      \
                         cudaGetErrorString(cuda_check_rc_));                              \
    } while (0)

#endif
