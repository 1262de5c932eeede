#include "cuda/cuda_sizes.h"

int64_t cuda_slab_bytes(int64_t rows, int64_t depth, int64_t nwords) {
    return (rows + 2 * depth) * nwords * (int64_t)sizeof(uint64_t);
}

int64_t cuda_frame_stage_bytes(int64_t rows, int64_t width, gol_frame_format fmt) {
    return rows * frame_row_bytes(width, fmt);
}

int64_t cuda_device_bytes(int64_t rows, int64_t depth, int64_t nwords, int64_t width,
                          gol_frame_format fmt, int with_frames) {
    int64_t bytes = 2 * cuda_slab_bytes(rows, depth, nwords) + (int64_t)sizeof(unsigned long long);
    if (with_frames) bytes += 2 * cuda_frame_stage_bytes(rows, width, fmt);
    return bytes;
}

gol_mem_need cuda_need(const gol_plan *plan) {
    const gol_slab *s = &plan->slab;
    /* cuda_device_bytes' sums are plain int64 products. Below 2^58 bytes of grids they cannot
     * wrap (u8 staging is at most 8 times the grids); above, no GPU comes near, and INT64_MAX
     * says so. */
    int64_t grids = mem_mul(2, mem_mul(mem_add(s->rows, mem_mul(2, plan->depth)),
                                       mem_mul(s->nwords, 8)));
    int64_t planned = INT64_MAX;
    if (grids < (INT64_C(1) << 58))
        planned = cuda_device_bytes(s->rows, plan->depth, s->nwords, s->width, plan->frame_format,
                                    plan->output);
    gol_mem_need n = {mem_mul(4, mem_mul(plan->depth, mem_mul(s->nwords, 8))),
                      mem_add(planned, CUDA_RESERVE)};
    return n;
}
