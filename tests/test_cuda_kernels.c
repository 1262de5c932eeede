/* The kernels alone, against the host running the same per-word rule (gol_row_word) cell row by
 * row: edge + interior update for many widths (partial last words, one word, many), heights (one
 * and two rows, and more rows than one grid dimension holds), torus and dead, four rules; then
 * unpack and population. Independent of the CPU backend. Exits 77 without a GPU. */
#include <cuda_runtime_api.h>
#include <inttypes.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/backend.h"
#include "kernels/life_cuda.h"
#include "core/check.h"
#include "kernels/device.h"

static uint64_t rng_state = 0x853c49e6748fea9bull;
static uint64_t rng(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* One case: returns the number of mismatching words / bytes / counts (0 when right). */
static int64_t run_case(int64_t width, int64_t rows, int torus, gol_rule rule) {
    int64_t nw = (width + 63) / 64, words = (rows + 2) * nw;
    size_t bytes = (size_t)words * sizeof(uint64_t);
    uint64_t *src = gol_xcalloc((size_t)words, sizeof *src);
    uint64_t *want = gol_xcalloc((size_t)words, sizeof *want);
    uint64_t *got = gol_xcalloc((size_t)words, sizeof *got);
    uint64_t last_mask = gol_row_last_mask(width);
    int64_t live = 0;
    for (int64_t r = 1; r <= rows; r++)
        for (int64_t j = 0; j < nw; j++) {
            uint64_t w = rng() & rng(); /* about 25% live */
            if (j == nw - 1) w &= last_mask;
            src[r * nw + j] = w;
            live += __builtin_popcountll(w);
        }
    if (torus) {
        memcpy(src, src + rows * nw, (size_t)nw * sizeof *src);
        memcpy(src + (rows + 1) * nw, src + nw, (size_t)nw * sizeof *src);
    }
    for (int64_t r = 1; r <= rows; r++)
        for (int64_t j = 0; j < nw; j++)
            want[r * nw + j] = gol_row_word(src + (r - 1) * nw, src + r * nw, src + (r + 1) * nw,
                                            j, nw, width, torus, rule);

    uint64_t *src_d, *dst_d;
    uint8_t *u8_d;
    unsigned long long *count_d, count = 0;
    CUDA_CHECK(cudaMalloc((void **)&src_d, bytes));
    CUDA_CHECK(cudaMalloc((void **)&dst_d, bytes));
    CUDA_CHECK(cudaMalloc((void **)&u8_d, (size_t)(rows * width)));
    CUDA_CHECK(cudaMalloc((void **)&count_d, sizeof count));
    CUDA_CHECK(cudaMemcpy(src_d, src, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dst_d, 0, bytes));
    CUDA_CHECK(cudaMemset(count_d, 0, sizeof count));
    gol_cuda_grid g = {rows, nw, width, torus, rule};
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreate(&s));
    launch_life_edges(g, src_d, dst_d, s);
    launch_life_rows(g, src_d, dst_d, 2, rows, s);
    launch_unpack_u8(src_d + nw, u8_d, rows, nw, width, s);
    launch_popcount(src_d + nw, rows * nw, count_d, s);
    CUDA_CHECK(cudaStreamSynchronize(s));
    CUDA_CHECK(cudaMemcpy(got, dst_d, bytes, cudaMemcpyDeviceToHost));
    uint8_t *u8 = gol_xmalloc((size_t)(rows * width));
    CUDA_CHECK(cudaMemcpy(u8, u8_d, (size_t)(rows * width), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&count, count_d, sizeof count, cudaMemcpyDeviceToHost));

    int64_t bad = 0;
    for (int64_t r = 1; r <= rows; r++)
        for (int64_t j = 0; j < nw; j++)
            if (got[r * nw + j] != want[r * nw + j]) {
                if (bad < 3)
                    printf("  update: row %" PRId64 " word %" PRId64 ": got %016" PRIx64
                           " want %016" PRIx64 "\n",
                           r, j, got[r * nw + j], want[r * nw + j]);
                bad++;
            }
    for (int64_t r = 0; r < rows; r++)
        for (int64_t x = 0; x < width; x++) {
            uint8_t cell = (uint8_t)((src[(r + 1) * nw + x / 64] >> (x % 64)) & 1);
            if (u8[r * width + x] != cell) {
                if (bad < 3) printf("  unpack: row %" PRId64 " col %" PRId64 "\n", r, x);
                bad++;
            }
        }
    if ((int64_t)count != live) {
        printf("  popcount: got %llu want %" PRId64 "\n", count, live);
        bad++;
    }
    CUDA_CHECK(cudaStreamDestroy(s));
    CUDA_CHECK(cudaFree(src_d));
    CUDA_CHECK(cudaFree(dst_d));
    CUDA_CHECK(cudaFree(u8_d));
    CUDA_CHECK(cudaFree(count_d));
    free(src);
    free(want);
    free(got);
    free(u8);
    return bad;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    char why[512];
    if (!backend_cuda_available(MPI_COMM_WORLD, why, sizeof why)) {
        printf("SKIP: %s\n", why);
        MPI_Finalize();
        return GOL_EXIT_SKIP;
    }
    device_select(MPI_COMM_WORLD);
    const int64_t widths[] = {1, 5, 63, 64, 65, 77, 130, 1000, 4097};
    const int64_t heights[] = {1, 2, 3, 17, 40, 333};
    const gol_rule rules[] = {
        {GOL_RULE_CONWAY_BIRTH, GOL_RULE_CONWAY_SURVIVE}, /* B3/S23 */
        {(1u << 3) | (1u << 6), GOL_RULE_CONWAY_SURVIVE}, /* B36/S23 */
        {1u << 2, 0},                                     /* B2/S */
        {0xaa, 0xaa},                                     /* B1357/S1357 */
        {1u, 1u << 8},                                    /* B0/S8: padding must stay dead */
    };
    int failed = 0, ran = 0;
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++)
        for (size_t hi = 0; hi < sizeof heights / sizeof heights[0]; hi++)
            for (int torus = 0; torus < 2; torus++)
                for (size_t ri = 0; ri < sizeof rules / sizeof rules[0]; ri++) {
                    int64_t bad = run_case(widths[wi], heights[hi], torus, rules[ri]);
                    ran++;
                    if (bad) {
                        failed++;
                        printf("FAIL %" PRId64 "x%" PRId64 " %s rule B%x/S%x: %" PRId64
                               " mismatches\n",
                               widths[wi], heights[hi], torus ? "torus" : "dead",
                               rules[ri].birth, rules[ri].survive, bad);
                    }
                }
    /* more row chunks than gridDim.y holds: the kernels' grid-stride loops over rows */
    int64_t bad = run_case(3, 1100000, 1, rules[0]);
    ran++;
    if (bad) {
        failed++;
        printf("FAIL 3x1100000 torus: %" PRId64 " mismatches\n", bad);
    }
    printf("%d of %d kernel cases failed\n", failed, ran);
    MPI_Finalize();
    return failed ? 1 : 0;
}
