/* The simulated GPU's cuda_runtime.h: the runtime API plus what a .cu file's host side names
 * (dim3, uint3, the execution-space keywords). Kernels never run here: a .cu file built for the
 * simulator launches its kernels' host emulation through cudasim_launch (tests/cudasim/cudasim.h),
 * and keeps its __global__ shells out of the build (GOLMPI_CUDA_SIM). */
#ifndef GOLMPI_CUDASIM_CUDA_RUNTIME_H
#define GOLMPI_CUDASIM_CUDA_RUNTIME_H

#include "cuda_runtime_api.h"

#define __host__
#define __device__
#define __forceinline__ inline
#ifndef __restrict__
#define __restrict__ __restrict
#endif

typedef struct uint3 {
    unsigned x, y, z;
} uint3;

static inline uint3 make_uint3(unsigned x, unsigned y, unsigned z) {
    uint3 v = {x, y, z};
    return v;
}

#ifdef __cplusplus
struct dim3 {
    unsigned x, y, z;
    dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
    dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    operator uint3() const { return make_uint3(x, y, z); }
};
#endif

#endif
