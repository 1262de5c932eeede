/* Frames out of the CUDA backend (cuda/cuda_frames.h). */
#include "cuda/cuda_frames.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "core/trace.h"
#include "cuda/cuda_mem.h"
#include "cuda/cuda_sizes.h"
#include "cuda/event_timer.h"
#include "cuda/life_cuda.h"

struct cuda_frames {
    int64_t rows, width, row_words;
    size_t row_bytes;
    cudaStream_t compute, copy[2];
    cudaEvent_t gen_done;      /* the generation a frame copies is computed */
    cudaEvent_t frame_read[2]; /* slot s finished reading the grid buffer */
    int pending[2][2];         /* [slot][buffer]: compute must wait frame_read[slot] before writing */
    int64_t posts[2];          /* exchanges posted when each slot's frame began */
    event_timer *timer[2];
    uint8_t *stage_d[2];
    int64_t stage_bytes[2];
    cuda_watch *watch;
    cuda_mem_account *mem;
};

cuda_frames *cuda_frames_create(const gol_slab *slab, int64_t stage_bytes, cudaStream_t compute,
                                cuda_watch *w, cuda_mem_account *mem) {
    cuda_frames *f = gol_xcalloc(1, sizeof *f);
    f->rows = slab->rows;
    f->width = slab->width;
    f->row_words = slab->nwords;
    f->row_bytes = (size_t)slab->nwords * sizeof(uint64_t);
    f->compute = compute;
    f->watch = w;
    f->mem = mem;
    int least, greatest; /* the copies run at the interior's priority, below the edges' */
    CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    for (int s = 0; s < 2; s++)
        CUDA_CHECK(cudaStreamCreateWithPriority(&f->copy[s], cudaStreamNonBlocking, least));
    trace_name_stream(f->copy[0], "copy0");
    trace_name_stream(f->copy[1], "copy1");
    for (int s = 0; s < 2; s++) cuda_watch_add_stream(w, f->copy[s]);
    CUDA_CHECK(cudaEventCreateWithFlags(&f->gen_done, cudaEventDisableTiming));
    for (int s = 0; s < 2; s++) {
        CUDA_CHECK(cudaEventCreateWithFlags(&f->frame_read[s], cudaEventDisableTiming));
        f->timer[s] = event_timer_create(w);
    }
    for (int s = 0; s < 2 && stage_bytes > 0; s++) {
        f->stage_d[s] = cuda_mem_alloc(mem, stage_bytes,
                                       s ? "frame stage 1" : "frame stage 0");
        f->stage_bytes[s] = stage_bytes;
    }
    return f;
}

void cuda_frames_destroy(cuda_frames *f) {
    if (!f) return;
    for (int s = 0; s < 2; s++)
        cuda_watch_wait_stream(f->watch, f->copy[s], "the last frames", cuda_watch_posted(f->watch));
    for (int s = 0; s < 2; s++) {
        cuda_mem_free(f->mem, f->stage_d[s], f->stage_bytes[s]);
        CUDA_CHECK(cudaEventDestroy(f->frame_read[s]));
        event_timer_destroy(f->timer[s]);
        cuda_watch_remove_stream(f->watch, f->copy[s]);
        CUDA_CHECK(cudaStreamDestroy(f->copy[s]));
    }
    CUDA_CHECK(cudaEventDestroy(f->gen_done));
    free(f);
}

void cuda_frames_begin(cuda_frames *f, int slot, gol_frame_format fmt, const uint64_t *grid_d,
                       int buffer, void *dst_h) {
    trace_pushf("d2h slot %d", slot);
    size_t frame_row = (size_t)frame_row_bytes(f->width, fmt);
    if (cuda_frame_stage_bytes(f->rows, f->width, fmt) > f->stage_bytes[slot])
        gol_die(__FILE__, __LINE__, "cuda_frames_begin", "golmpi",
                "a frame larger than the plan's frame format (no stage allocated for it)");
    cudaStream_t s = f->copy[slot];
    CUDA_CHECK(cudaEventRecord(f->gen_done, f->compute));
    CUDA_CHECK(cudaStreamWaitEvent(s, f->gen_done, 0));
    int k = event_timer_begin(f->timer[slot], s, NULL);
    /* The frame in the stage first, on the device (a pass or so of memory traffic): then the grid
     * buffer is free again (frame_read), and the compute stream never waits for the copy to the
     * host, which reads only the stage. */
    if (fmt == GOL_FRAME_PACKED) /* little-endian: a grid row begins with its packed frame row */
        CUDA_CHECK(cudaMemcpy2DAsync(f->stage_d[slot], frame_row, grid_d, f->row_bytes, frame_row,
                                     (size_t)f->rows, cudaMemcpyDeviceToDevice, s));
    else
        launch_unpack_u8(grid_d, f->stage_d[slot], f->rows, f->row_words, f->width, s);
    CUDA_CHECK(cudaEventRecord(f->frame_read[slot], s));
    CUDA_CHECK(cudaMemcpyAsync(dst_h, f->stage_d[slot], (size_t)f->rows * frame_row,
                               cudaMemcpyDeviceToHost, s));
    f->pending[slot][buffer] = 1;
    f->posts[slot] = cuda_watch_posted(f->watch);
    event_timer_end(f->timer[slot], k, s);
    trace_pop();
}

void cuda_frames_wait(cuda_frames *f, int slot) {
    cuda_watch_wait_stream(f->watch, f->copy[slot],
                           slot ? "the frames of slot 1" : "the frames of slot 0", f->posts[slot]);
    event_timer_read(f->timer[slot]);
}

void cuda_frames_before_write(cuda_frames *f, int buffer) {
    for (int s = 0; s < 2; s++) {
        if (!f->pending[s][buffer]) continue;
        /* the slot's latest event also covers its earlier frames: one copy stream, in order */
        CUDA_CHECK(cudaStreamWaitEvent(f->compute, f->frame_read[s], 0));
        f->pending[s][buffer] = 0;
    }
}

double cuda_frames_seconds(const cuda_frames *f, int slot) {
    return event_timer_seconds(f->timer[slot]);
}

/* A frame slot starts on a page, which the writer's O_DIRECT path needs (io/tuning.h), and
 * cudaMallocHost does not promise one: so a page more is taken, the slot starts on the first page
 * boundary inside the block past a pointer's room, and the block's own address is kept there,
 * just before the slot, for the free. */
enum { SLOT_ALIGN = 4096 };
void *cuda_frames_slot_alloc(int64_t bytes) {
    char *block = NULL;
    CUDA_CHECK(cudaMallocHost((void **)&block, (size_t)bytes + SLOT_ALIGN));
    uintptr_t at = ((uintptr_t)block + sizeof block + SLOT_ALIGN - 1) / SLOT_ALIGN * SLOT_ALIGN;
    char *slot = block + (at - (uintptr_t)block);
    memcpy(slot - sizeof block, &block, sizeof block);
    return slot;
}

void cuda_frames_slot_free(void *p) {
    if (!p) return;
    char *block;
    memcpy(&block, (char *)p - sizeof block, sizeof block);
    CUDA_CHECK(cudaFreeHost(block));
}
