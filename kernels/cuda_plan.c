#include "kernels/cuda_plan.h"

#include <stdio.h>

#include "halo/halo.h"

int64_t cuda_slab_bytes(int64_t rows, int64_t depth, int64_t nwords) {
    return (rows + 2 * depth) * nwords * (int64_t)sizeof(uint64_t);
}

int64_t cuda_frame_stage_bytes(int64_t rows, int64_t width, gol_frame_format fmt) {
    return rows * frame_row_bytes(width, fmt);
}

void cuda_account_alloc(cuda_mem_account *a, int64_t bytes) {
    a->bytes += bytes;
    a->allocations++;
    if (a->bytes > a->peak) a->peak = a->bytes;
}

void cuda_account_free(cuda_mem_account *a, int64_t bytes) {
    a->bytes -= bytes;
    a->allocations--;
}

int64_t cuda_device_bytes(int64_t rows, int64_t depth, int64_t nwords, int64_t width,
                          gol_frame_format fmt, int with_frames) {
    int64_t bytes = 2 * cuda_slab_bytes(rows, depth, nwords) + (int64_t)sizeof(unsigned long long);
    if (with_frames) bytes += 2 * cuda_frame_stage_bytes(rows, width, fmt);
    return bytes;
}

int cuda_mark_due(int64_t queued) { return queued > 0 && queued % CUDA_MARK_EVERY == 0; }

int64_t cuda_mark_to_wait(int64_t m) { return m >= CUDA_MARKS_AHEAD ? m - CUDA_MARKS_AHEAD : -1; }

int cuda_halo_sample_due(int64_t since_load) {
    return since_load >= 0 && since_load % CUDA_HALO_SAMPLE_EVERY == 0;
}

int cuda_stall_is_local(int rank, int up, int down, int exchange_on_stream) {
    return !exchange_on_stream || ((up < 0 || up == rank) && (down < 0 || down == rank));
}

void cuda_stall_message(char *buf, size_t len, int rank, int up, int down, int exchange_on_stream,
                        double waited_s, const char *what) {
    if (cuda_stall_is_local(rank, up, down, exchange_on_stream)) {
        snprintf(buf, len,
                 "the GPU made no progress for %.0f s (--timeout) while waiting for %s; no "
                 "neighbour is involved, so this rank's GPU itself stopped; aborting every rank",
                 waited_s, what);
        return;
    }
    char who[96];
    halo_name_neighbours(who, sizeof who, up, down);
    snprintf(buf, len,
             "the halo exchange made no progress for %.0f s (--timeout) while waiting for %s: "
             "neighbour %s stopped answering (NCCL cannot tell which); aborting every rank",
             waited_s, what, who);
}
