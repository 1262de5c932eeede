/* The CUDA backend's share of a GPU that ranks share under MPS (its launches' size). Plain C with
 * no CUDA types, built in every configuration, so that tests/test_cuda_choices.c checks it on
 * machines without a GPU. */
#ifndef GOLMPI_CUDA_SHARE_H
#define GOLMPI_CUDA_SHARE_H

#include "core/plan.h"

/* The ranks whose kernels run on this rank's GPU side by side (core/plan.h's gol_gpu_share): those
 * on it under MPS, else 1. launch_life_deep sizes its grid to this rank's share of the blocks the
 * GPU holds at once (life_geometry.h's gol_resident_share): under MPS the ranks' kernels run side
 * by side, so a launch sized for the whole GPU would leave each rank a partial last wave; without
 * MPS the ranks take turns, each alone on the whole GPU in its time slice, and keep it all. */
int cuda_launch_ranks(const gol_gpu_share *gpu);

#endif
