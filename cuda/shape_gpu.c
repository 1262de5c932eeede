/* cuda/shape_choice.h's shape_choice_gpu_of: the CUDA facts of a device that the shape's
 * choice needs (the model's constructor and the wisdom key), apart so that shape_choice.c makes no
 * CUDA call. */
#include <cuda_runtime_api.h>
#include <stdio.h>

#include "cuda/shape_choice.h"

void shape_choice_gpu_of(int device, shape_choice_gpu *gpu) {
    *gpu = (shape_choice_gpu){.name = "?"};
    struct cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, device) == cudaSuccess) {
        snprintf(gpu->name, sizeof gpu->name, "%s", prop.name);
        gpu->sms = prop.multiProcessorCount;
        gpu->cc_major = prop.major;
        gpu->cc_minor = prop.minor;
    }
    if (cudaDeviceGetAttribute(&gpu->clock_khz, cudaDevAttrClockRate, device) != cudaSuccess)
        gpu->clock_khz = 0;
    if (cudaDriverGetVersion(&gpu->driver) != cudaSuccess) gpu->driver = 0;
    if (cudaRuntimeGetVersion(&gpu->runtime) != cudaSuccess) gpu->runtime = 0;
    (void)cudaGetLastError(); /* an unknown fact is an answer ("?" or 0), not an error */
}
