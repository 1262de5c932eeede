/* The CUDA backend's GPU-free choices (cuda/cuda_sizes.h, cuda_account.h, cuda_pass_split.h,
 * cuda_share.h, cuda_cadence.h, cuda_stall.h), on the host: what it allocates for frames (a u8
 * stage of rows frame rows: rows x width bytes for u8, rows x ceil(width / 8) for packed), its
 * byte account, the bound on generations in flight, the generations it runs eagerly to time the
 * exchange (the same on every rank however the advance calls are cut), and the watchdog's message.
 * No GPU needed. */
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda_sizes.h"
#include "cuda/cuda_account.h"
#include "cuda/cuda_pass_split.h"
#include "cuda/cuda_share.h"
#include "cuda/cuda_cadence.h"
#include "cuda/cuda_stall.h"
#include "cuda/life_geometry.h"
#include "tests/expect.h"

static void test_frame_staging(void) {
    /* a 65536^2 grid on one GPU: 4 GiB of u8 staging per slot, 512 MiB for packed */
    int64_t rows = 65536, width = 65536, nwords = width / 64;
    EXPECT_EQ(cuda_frame_stage_bytes(rows, width, GOL_FRAME_U8), rows * width, "u8 %lldx%lld",
              (long long)rows, (long long)width);
    EXPECT_EQ(cuda_frame_stage_bytes(rows, width, GOL_FRAME_PACKED), rows * width / 8, "packed");
    EXPECT_EQ(cuda_frame_stage_bytes(37, 131, GOL_FRAME_U8), 37 * 131, "u8 37x131");
    EXPECT_EQ(cuda_frame_stage_bytes(37, 131, GOL_FRAME_PACKED), 37 * 17, "packed 37x131");

    int64_t slab = (rows + 2) * nwords * 8;
    EXPECT_EQ(cuda_slab_bytes(rows, 1, nwords), slab, "grid buffer");
    EXPECT_EQ(cuda_slab_bytes(rows, 16, nwords), (rows + 32) * nwords * 8, "depth 16");
    int64_t base = 2 * slab + 8; /* two grid buffers and the population counter */
    EXPECT_EQ(cuda_device_bytes(rows, 1, nwords, width, GOL_FRAME_U8, 0), base, "no frames");
    EXPECT_EQ(cuda_device_bytes(rows, 1, nwords, width, GOL_FRAME_PACKED, 1),
              base + 2 * rows * width / 8, "packed frames: two slots of rows x width / 8");
    EXPECT_EQ(cuda_device_bytes(rows, 1, nwords, width, GOL_FRAME_U8, 1), base + 2 * rows * width,
              "u8 frames: two slots of rows x width");
}

static void test_account(void) {
    cuda_mem_account a = {0, 0, 0};
    cuda_account_alloc(&a, 100);
    cuda_account_alloc(&a, INT64_C(5) << 32);
    cuda_account_free(&a, 100);
    cuda_account_alloc(&a, 7);
    EXPECT_EQ(a.bytes, (INT64_C(5) << 32) + 7, "held");
    EXPECT_EQ(a.peak, (INT64_C(5) << 32) + 100, "peak");
    EXPECT_EQ(a.allocations, 2, "live allocations");
}

/* The backend's loop over generations, marks only: the generations queued beyond the newest mark
 * waited for never exceed the bound, and no ring slot is recorded again before it was waited. */
static void test_marks(void) {
    int64_t waited = -1, recorded = 0, max_ahead = 0;
    int64_t slot_mark[CUDA_MARK_RING];
    for (int i = 0; i < CUDA_MARK_RING; i++)
        slot_mark[i] = -1;
    for (int64_t queued = 1; queued <= 10000; queued++) {
        if (!cuda_mark_due(queued)) continue;
        int64_t m = recorded, w = cuda_mark_to_wait(m);
        if (w > waited) waited = w;
        int64_t old = slot_mark[m % CUDA_MARK_RING];
        EXPECT(old <= waited, "mark %lld reuses the slot of mark %lld, not yet waited for",
               (long long)m, (long long)old);
        slot_mark[m % CUDA_MARK_RING] = m;
        recorded++;
        int64_t covered = (waited + 1) * CUDA_MARK_EVERY; /* generations known done */
        if (queued - covered > max_ahead) max_ahead = queued - covered;
    }
    EXPECT_EQ(recorded, 10000 / CUDA_MARK_EVERY, "marks recorded");
    EXPECT(max_ahead <= (CUDA_MARKS_AHEAD + 1) * CUDA_MARK_EVERY,
           "%lld generations queued ahead of the newest mark waited for", (long long)max_ahead);
    EXPECT(max_ahead >= CUDA_MARKS_AHEAD * CUDA_MARK_EVERY, "the bound is not needlessly tight");
    EXPECT(CUDA_MARK_RING > CUDA_MARKS_AHEAD, "ring larger than the marks ahead");
}

/* Generations 0..total-1 after a load, advanced in calls of `piece` generations: which run
 * eagerly (a bitmap), as the backend's advance decides it. */
static void eager_generations(int64_t total, int64_t piece, unsigned char *eager) {
    int64_t since_load = 0;
    for (int64_t done = 0; done < total; done += piece) {
        int64_t n = total - done < piece ? total - done : piece;
        for (int64_t g = 0; g < n; g++, since_load++)
            eager[since_load] = (unsigned char)cuda_halo_sample_due(since_load);
    }
}

static void test_halo_sample(void) {
    enum { TOTAL = 5000 };
    static unsigned char want[TOTAL], got[TOTAL];
    eager_generations(TOTAL, TOTAL, want); /* one call: --no-output */
    int64_t pieces[] = {1, 3, 7, 16, 1000, 1023, 1024, 1025, 4999};
    for (size_t i = 0; i < sizeof pieces / sizeof *pieces; i++) {
        eager_generations(TOTAL, pieces[i], got);
        EXPECT(memcmp(got, want, TOTAL) == 0, "pieces of %lld: other generations run eagerly",
               (long long)pieces[i]);
    }
    int n = 0;
    for (int g = 0; g < TOTAL; g++)
        n += want[g];
    EXPECT(want[0], "the first generation after a load is sampled");
    EXPECT_EQ(n, (TOTAL + CUDA_HALO_SAMPLE_EVERY - 1) / CUDA_HALO_SAMPLE_EVERY, "samples");
}

/* One pass's split (cuda_pass_split) against core/depth.h's rows of the pass: every row of
 * pass_whole_rows once across the bands and the interior, and nothing else; the bands hold the k
 * rows each live end sends (the exchange reads them from the comm stream's own work); the edge
 * kernel only at depth 1 between two neighbours, on rows 0 and rows - 1. */
static void check_cut(const gol_pass *ps, int64_t k) {
    const cuda_pass_rows c = cuda_pass_split(ps, k);
    const gol_rows all = pass_whole_rows(ps, ps->gens),
                   part[3] = {c.band[0], c.band[1], c.interior};
    const int64_t rows = ps->rows;
    char name[96];
    snprintf(name, sizeof name, "rows %lld k %lld valid %lld gens %lld dead %d%d", (long long)rows,
             (long long)k, (long long)ps->halo_left, (long long)ps->gens, ps->dead_top,
             ps->dead_bottom);
    for (int64_t r = all.lo - 3; r < all.hi + 3; r++) {
        int times = 0;
        for (int i = 0; i < 3; i++)
            times += r >= part[i].lo && r < part[i].hi;
        EXPECT_EQ(times, r >= all.lo && r < all.hi, "%s: row %lld", name, (long long)r);
    }
    int split = rows >= 2 * k;
    EXPECT_EQ(c.edges, split && k == 1 && !ps->dead_top && !ps->dead_bottom, "%s: edges", name);
    if (c.edges)
        EXPECT(c.band[0].lo == 0 && c.band[0].hi == 1 && c.band[1].lo == rows - 1 &&
                   c.band[1].hi == rows,
               "%s: the edge kernel's rows", name);
    if (split && !ps->dead_top) EXPECT(c.band[0].lo <= 0 && c.band[0].hi == k, "%s: top", name);
    if (split && !ps->dead_bottom)
        EXPECT(c.band[1].lo == rows - k && c.band[1].hi >= rows, "%s: bottom", name);
}

static void test_pass_cut(void) {
    for (int64_t rows = 1; rows <= 20; rows++)
        for (int64_t k = 1; k <= 10; k++)
            for (int64_t valid = 1; valid <= k; valid++)
                for (int64_t n = 1; n <= valid && n <= 8; n++)
                    for (int dead = 0; dead < 4; dead++) {
                        gol_pass ps = {.rows = rows,
                                       .halo_left = valid,
                                       .gens = n,
                                       .dead_top = dead & 1,
                                       .dead_bottom = dead >> 1,
                                       .tile = 0};
                        check_cut(&ps, k);
                    }
}

static void test_stall_message(void) {
    char buf[512];
    cuda_stall_message(buf, sizeof buf, 1, 0, 2, 1, 30.0, "frame slot 0", 0);
    EXPECT(strstr(buf, "rank 0 (above) or rank 2 (below)") && strstr(buf, "30 s") &&
               strstr(buf, "frame slot 0"),
           "three ranks: %s", buf);
    cuda_stall_message(buf, sizeof buf, 0, 1, 1, 1, 5.0, "x", 0);
    EXPECT(strstr(buf, "rank 1 (above and below)"), "two ranks on a torus: %s", buf);
    cuda_stall_message(buf, sizeof buf, 0, -1, 1, 1, 5.0, "x", 0);
    EXPECT(strstr(buf, "rank 1 (below)") && !strstr(buf, "above"), "dead top: %s", buf);
    cuda_stall_message(buf, sizeof buf, 0, 0, 0, 1, 5.0, "x", 0);
    EXPECT(strstr(buf, "no neighbour") && !strstr(buf, "rank 0"), "self-exchange: %s", buf);
    cuda_stall_message(buf, sizeof buf, 1, 0, 2, 0, 5.0, "x", 0);
    EXPECT(strstr(buf, "no neighbour"), "exchange on the host (MPI): %s", buf);
    cuda_stall_message(buf, sizeof buf, 1, 0, 2, 1, 5.0, "x", 1);
    EXPECT(strstr(buf, "still answers") && strstr(buf, "rank 0 (above) or rank 2 (below)") &&
               !strstr(buf, "stopped answering"),
           "neighbours alive, every exchange posted: %s", buf);
    cuda_stall_message(buf, sizeof buf, 0, 0, 0, 1, 5.0, "x", 1);
    EXPECT(strstr(buf, "no neighbour"), "self-exchange, alive: %s", buf);
    cuda_silent_message(buf, sizeof buf, 2, "n2", 0, 2, 31.0, "y");
    EXPECT(strstr(buf, "rank 2 (host n2, below)") && strstr(buf, "31 s") && strstr(buf, "no sign of life"),
           "a silent neighbour: %s", buf);
    cuda_silent_message(buf, sizeof buf, 1, "n1", 1, 1, 5.0, "y");
    EXPECT(strstr(buf, "rank 1 (host n1, above and below)"), "a silent torus neighbour: %s", buf);
    /* local: the watchdog leaves NCCL alone; with a neighbour on the stream it aborts NCCL */
    EXPECT(cuda_stall_is_local(0, 0, 0, 1), "one rank on a torus is local");
    EXPECT(cuda_stall_is_local(0, -1, -1, 1), "no neighbour is local");
    EXPECT(cuda_stall_is_local(1, 0, 2, 0), "an exchange on the host is local");
    EXPECT(!cuda_stall_is_local(1, 0, 2, 1), "two neighbours on the stream");
    EXPECT(!cuda_stall_is_local(0, -1, 1, 1), "one neighbour below on the stream");
    EXPECT(!cuda_stall_is_local(0, 1, 1, 1), "two ranks on a torus");
}

/* Under MPS a rank sizes its launches to its share of the GPU, rounded up; without MPS, alone or
 * taking turns, to the whole GPU. 132 SMs x 3 blocks: an H200's deep kernel. */
static void test_resident_share(void) {
    const gol_gpu_share alone = {1, 1, false}, turns = {4, 4, false}, mps4 = {4, 4, true},
                        mps3 = {4, 3, true}, mps_alone = {4, 1, true};
    EXPECT(gol_resident_share(396, cuda_launch_ranks(&alone)) == 396, "one rank: the whole GPU");
    EXPECT(gol_resident_share(396, cuda_launch_ranks(&turns)) == 396,
           "no MPS: each rank alone in its turn");
    EXPECT(gol_resident_share(396, cuda_launch_ranks(&mps4)) == 99, "4 ranks under MPS: a quarter");
    EXPECT(gol_resident_share(397, cuda_launch_ranks(&mps4)) == 100, "rounded up");
    EXPECT(gol_resident_share(396, cuda_launch_ranks(&mps3)) == 132,
           "this rank's GPU has 3 ranks, not the most");
    EXPECT(gol_resident_share(396, cuda_launch_ranks(&mps_alone)) == 396,
           "alone on its GPU, MPS or not");
    EXPECT(gol_resident_share(2, cuda_launch_ranks(&mps4)) == 1, "never below one block");
}

int main(void) {
    test_resident_share();
    test_frame_staging();
    test_account();
    test_marks();
    test_halo_sample();
    test_pass_cut();
    test_stall_message();
    if (failures) return 1;
    printf("PASS test_cuda_choices\n");
    return 0;
}
