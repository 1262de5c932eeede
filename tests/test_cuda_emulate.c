/* The CUDA kernels without a GPU: kernels/life_cuda.cu's emulate_* functions run the kernels'
 * own __host__ __device__ thread bodies over the launchers' own grid geometry (the Conway
 * instantiation included) on the host, checked here against kernel_check.h's per-cell reference.
 * test_cuda_kernels runs the same cases through the real launches on a GPU. */
#include "tests/kernel_check.h"

static void run_emulated(gol_cuda_grid g, const uint64_t *src, uint64_t *next, uint8_t *u8,
                         unsigned long long *pop) {
    emulate_life_edges(g, src, next);
    emulate_life_rows(g, src, next, 2, g.rows);
    emulate_unpack_u8(src + g.nwords, u8, g.rows, g.nwords, g.width);
    emulate_popcount(src + g.nwords, g.rows * g.nwords, pop);
}

int main(void) { return kernel_check_all(run_emulated) ? 1 : 0; }
