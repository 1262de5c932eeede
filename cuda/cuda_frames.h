/* Frames out of the CUDA backend: two frame slots, each with a copy stream, a stage (a one-frame
 * device buffer) and a timer. A frame is first made in its slot's stage (one fast device copy, or
 * the u8 unpack), which frees the grid buffer again; the slow copy to pinned host memory then
 * reads only the stage, so the compute stream never waits for it. */
#ifndef GOLMPI_CUDA_FRAMES_H
#define GOLMPI_CUDA_FRAMES_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#include "core/config.h"
#include "core/decomp.h"
#include "cuda/cuda_account.h"
#include "cuda/cuda_watch.h"

typedef struct cuda_frames cuda_frames;

/* Both slots' copy streams and events, and, stage_bytes > 0 (the plan takes frames), both
 * stages, counted in mem: all allocated here, at create, never at a frame, where a
 * cudaMalloc, and a cudaFree that synchronises the device, would wait on NCCL work queued with no
 * deadline. compute: the stream that writes the grid buffers. */
cuda_frames *cuda_frames_create(const gol_slab *slab, int64_t stage_bytes, cudaStream_t compute,
                                cuda_watch *w, cuda_mem_account *mem);
/* Waits (polling) for both slots' last frames, then frees everything. */
void cuda_frames_destroy(cuda_frames *f);

/* Queues the frame of grid buffer `buffer` (grid_d: its row 0) into dst_h through slot `slot`,
 * after the work already on the compute stream. */
void cuda_frames_begin(cuda_frames *f, int slot, gol_frame_format fmt, const uint64_t *grid_d,
                       int buffer, void *dst_h);
/* Until slot's frames are in host memory, polling. */
void cuda_frames_wait(cuda_frames *f, int slot);
/* Before the compute stream writes grid buffer `buffer`: it waits for every frame still reading
 * that buffer (an event wait on the stream; the host does not wait). */
void cuda_frames_before_write(cuda_frames *f, int buffer);
/* GPU seconds of slot's frames, as of its last wait. */
double cuda_frames_seconds(const cuda_frames *f, int slot);

/* Pinned host memory for a frame slot (the driver's), starting on a page; freed by
 * cuda_frames_slot_free. */
void *cuda_frames_slot_alloc(int64_t bytes);
void cuda_frames_slot_free(void *p);

#endif
