/* The random start on the device: core/random_start.h's word function, one thread per 64-cell
 * word, so the GPU builds, bit for bit, the rows that init_random_rows builds on the host. Host C
 * reaches the kernel only through launch_init_random; it enqueues on the given stream, checks
 * the launch (cudaGetLastError) and does not synchronise. */
#ifndef GOLMPI_INIT_CUDA_H
#define GOLMPI_INIT_CUDA_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Global rows [row0, row0 + rows) of the random start into dst_d: rows rows of nwords words, one
 * after another, every word overwritten (bits at or past width 0). run_key is init_run_key(seed)
 * and threshold init_threshold(density), both made on the host, so the density's one floating
 * point product is the host's. rows <= 0 or nwords <= 0 launches nothing. */
void launch_init_random(uint64_t run_key, uint64_t threshold, int64_t row0, int64_t rows,
                        int64_t width, int64_t nwords, uint64_t *dst_d, cudaStream_t s);

/* Host emulation, for tests on machines without a GPU; the program never calls it. It runs the
 * kernel's thread body over the launcher's grid and block (the same geometry function), one
 * (block, thread) at a time, on a host pointer. */
void emulate_init_random(uint64_t run_key, uint64_t threshold, int64_t row0, int64_t rows,
                         int64_t width, int64_t nwords, uint64_t *dst);

#ifdef __cplusplus
}
#endif

#endif
