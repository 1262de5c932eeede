#include "cuda/cuda_share.h"

int cuda_launch_ranks(const gol_gpu_share *gpu) {
    return gpu->mps && gpu->ranks_on_gpu > 1 ? gpu->ranks_on_gpu : 1;
}
