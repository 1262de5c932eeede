/* The CUDA kernels without a GPU: cuda/life_cuda.cu's emulate_* functions run the kernels'
 * own __host__ __device__ thread bodies over the launchers' own grid geometry (the Conway
 * instantiation included) on the host, checked here against kernel_check.h's per-cell reference.
 * The multi-generation kernel's warps run lane by lane, phase by phase, its shuffles as exchanges
 * between the 32 lane states. test_cuda_kernels runs the same cases through the real launches on
 * a GPU. */
#include "tests/kernel_check.h"

static void run_emulated(gol_cuda_grid g, const uint64_t *src, uint64_t *next, uint8_t *u8,
                         unsigned long long *pop) {
    /* the launchers number rows from the first owned row: one past the top halo row */
    emulate_life_edges(g, src + g.nwords, next + g.nwords);
    emulate_life_rows(g, src + g.nwords, next + g.nwords, 1, g.rows - 1);
    emulate_unpack_u8(src + g.nwords, u8, g.rows, g.nwords, g.width);
    emulate_popcount(src + g.nwords, g.rows * g.nwords, pop);
}

/* The emulated device's resident blocks of the deep kernel: the geometry the launcher would pick
 * on a device that holds that many at once (1: one block a wave; 3: two waves, idle warps in
 * the last; 396: an H200 at 159 registers a thread, most test launches less than a wave). */
static int64_t resident;

static void run_deep_emulated(gol_cuda_grid g, const uint64_t *src, uint64_t *dst, int64_t halo,
                              int64_t row_begin, int64_t row_end, int gens, int shape,
                              int64_t live_begin, int64_t live_end) {
    const int64_t row0 = halo * g.nwords;
    emulate_life_deep(g, src + row0, dst + row0, row_begin, row_end, gens, shape, live_begin,
                      live_end, resident);
}

int main(void) {
    int failed = kernel_check_all(run_emulated);
    static const int64_t devices[] = {1, 3, 396};
    for (size_t i = 0; i < sizeof devices / sizeof devices[0]; i++)
        for (int shape = 0; shape < GOL_SHAPE_COUNT; shape++) {
            resident = devices[i];
            printf("deep kernel, shape %s, %lld resident blocks:\n", gol_shapes[shape].name,
                   (long long)resident);
            failed += deep_check_all(run_deep_emulated, shape);
        }
    return failed ? 1 : 0;
}
