/* The CUDA backend's sizes: the device bytes of its grids and frame stages, and its need (what
 * admission weighs). Plain C with no CUDA types, built in every configuration, so that
 * tests/test_cuda_choices.c checks it on machines without a GPU. */
#ifndef GOLMPI_CUDA_SIZES_H
#define GOLMPI_CUDA_SIZES_H

#include <stdint.h>

#include "core/config.h"
#include "core/plan.h"

/* Device bytes of one grid buffer: rows + 2 depth rows (depth halo rows above and below, the halo
 * depth of core/depth.h) of nwords words. */
int64_t cuda_slab_bytes(int64_t rows, int64_t depth, int64_t nwords);

/* Device bytes of one frame stage: rows frame rows (core/config.h's frame_row_bytes). A
 * frame is first made on the device in its slot, u8 frames unpacked there, packed ones copied
 * there with one 2-D device copy (the grid row's first ceil(width/8) bytes are the frame row), so
 * the grid buffer is free again after that fast copy; the slow copy to pinned host memory then
 * reads only the slot. */
int64_t cuda_frame_stage_bytes(int64_t rows, int64_t width, gol_frame_format fmt);

/* The device memory the backend allocates for a slab, frames of fmt taken (with_frames) or not:
 * two grid buffers, the population counter, and a staging buffer per frame slot. All of it is
 * allocated at create (a cudaMalloc or cudaFree later could wait on queued NCCL work), so this is
 * what the account holds from create on, and what cuda_need counts. */
int64_t cuda_device_bytes(int64_t rows, int64_t depth, int64_t nwords, int64_t width,
                          gol_frame_format fmt, int with_frames);

/* The CUDA backend's need (its ops' need): on the device, cuda_device_bytes for the plan's slab,
 * depth and frames, plus CUDA_RESERVE, an allowance for what others allocate on its behalf:
 * NCCL's buffers (NCCL_BUFFSIZE, 4 MiB per channel and peer) and the CUDA graphs. On the host,
 * the pinned staging rows of the MPI halo mode (four messages of depth rows). */
#define CUDA_RESERVE (INT64_C(512) << 20)
gol_mem_need cuda_need(const gol_plan *plan);

#endif
