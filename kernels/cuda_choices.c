#include "kernels/cuda_choices.h"

#include <stdio.h>

#include "halo/halo.h"
#include "kernels/life_geometry.h"

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

cuda_pass_rows cuda_pass_split(const gol_pass *pass, int64_t k) {
    const int64_t rows = pass->rows;
    const gol_rows all = pass_whole_rows(pass, pass->gens), none = {0, 0};
    cuda_pass_rows c = {.band = {none, none}, .interior = none, .edges = 0};
    if (rows < 2 * k) {
        c.band[0] = all;
        return c;
    }
    if (!pass->dead_top) c.band[0] = (gol_rows){all.lo, k};
    if (!pass->dead_bottom) c.band[1] = (gol_rows){rows - k, all.hi};
    c.interior = (gol_rows){pass->dead_top ? all.lo : k, pass->dead_bottom ? all.hi : rows - k};
    c.edges = k == 1 && !pass->dead_top && !pass->dead_bottom;
    return c;
}

int cuda_launch_ranks(const gol_gpu_share *gpu) {
    return gpu->mps && gpu->ranks_on_gpu > 1 ? gpu->ranks_on_gpu : 1;
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
                        double waited_s, const char *what, int alive) {
    if (cuda_stall_is_local(rank, up, down, exchange_on_stream)) {
        snprintf(buf, len,
                 "the GPU made no progress for %.0f s (--timeout) while waiting for %s; no "
                 "neighbour is involved, so this rank's GPU itself stopped; aborting every rank",
                 waited_s, what);
        return;
    }
    char who[96];
    halo_name_neighbours(who, sizeof who, up, down);
    if (alive)
        snprintf(buf, len,
                 "the halo exchange made no progress for %.0f s (--timeout) while waiting for %s, "
                 "though neighbour %s still answers and every rank had posted the exchanges "
                 "waited for: a GPU (this rank's or a neighbour's) or NCCL's transport stopped; "
                 "aborting every rank",
                 waited_s, what, who);
    else
        snprintf(buf, len,
                 "the halo exchange made no progress for %.0f s (--timeout) while waiting for %s: "
                 "neighbour %s stopped answering (NCCL cannot tell which); aborting every rank",
                 waited_s, what, who);
}

void cuda_silent_message(char *buf, size_t len, int silent, const char *host, int up, int down,
                         double quiet_s, const char *what) {
    const char *where = up == down ? "above and below" : silent == up ? "above" : "below";
    snprintf(buf, len,
             "the halo exchange made no progress for %.0f s (--timeout) while waiting for %s, "
             "and rank %d (host %s, %s) sent no sign of life either: stopped answering; aborting "
             "every rank",
             quiet_s, what, silent, host, where);
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
