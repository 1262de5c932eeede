/* The CUDA kernels on a GPU, through the real launch_* functions: kernel_check.h's cases (many
 * widths and heights, torus and dead, grid-edge and random halos, Conway's and other rules, unpack
 * and population; the multi-generation kernel at depths 1 to 64) against its per-cell reference. Independent of the CPU backend and of the rule
 * code the kernels use. Exits 77 without a GPU; test_cuda_emulate runs the same cases there. */
#include <cuda_runtime_api.h>
#include <mpi.h>

#include "backend/backend.h"
#include "cuda/device.h"
#include "tests/kernel_check.h"

static void run_on_gpu(gol_cuda_grid g, const uint64_t *src, uint64_t *next, uint8_t *u8,
                       unsigned long long *pop) {
    size_t bytes = (size_t)((g.rows + 2) * g.nwords) * sizeof *src;
    size_t u8_bytes = (size_t)(g.rows * g.width);
    uint64_t *src_d, *next_d;
    uint8_t *u8_d;
    unsigned long long *pop_d;
    CUDA_CHECK(cudaMalloc((void **)&src_d, bytes));
    CUDA_CHECK(cudaMalloc((void **)&next_d, bytes));
    CUDA_CHECK(cudaMalloc((void **)&u8_d, u8_bytes));
    CUDA_CHECK(cudaMalloc((void **)&pop_d, sizeof *pop));
    /* next and u8 go up poisoned, so a word the kernels should not write shows if they do */
    CUDA_CHECK(cudaMemcpy(src_d, src, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(next_d, next, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(u8_d, u8, u8_bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(pop_d, pop, sizeof *pop, cudaMemcpyHostToDevice));
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreate(&s));
    /* the launchers number rows from the first owned row: one past the top halo row */
    launch_life_edges(g, src_d + g.nwords, next_d + g.nwords, s);
    launch_life_rows(g, src_d + g.nwords, next_d + g.nwords, 1, g.rows - 1, s);
    launch_unpack_u8(src_d + g.nwords, u8_d, g.rows, g.nwords, g.width, s);
    launch_popcount(src_d + g.nwords, g.rows * g.nwords, pop_d, s);
    CUDA_CHECK(cudaStreamSynchronize(s));
    CUDA_CHECK(cudaMemcpy(next, next_d, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(u8, u8_d, u8_bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(pop, pop_d, sizeof *pop, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaStreamDestroy(s));
    CUDA_CHECK(cudaFree(src_d));
    CUDA_CHECK(cudaFree(next_d));
    CUDA_CHECK(cudaFree(u8_d));
    CUDA_CHECK(cudaFree(pop_d));
}

/* One deep launch: both buffers up (dst poisoned where the kernel must not write), the launch at
 * slab row 0, dst back. */
static void run_deep_on_gpu(gol_cuda_grid g, const uint64_t *src, uint64_t *dst, int64_t halo,
                            int64_t row_begin, int64_t row_end, int gens, int shape,
                            int64_t live_begin, int64_t live_end) {
    size_t bytes = (size_t)((g.rows + 2 * halo) * g.nwords) * sizeof *src;
    const int64_t row0 = halo * g.nwords;
    uint64_t *src_d, *dst_d;
    CUDA_CHECK(cudaMalloc((void **)&src_d, bytes));
    CUDA_CHECK(cudaMalloc((void **)&dst_d, bytes));
    CUDA_CHECK(cudaMemcpy(src_d, src, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dst_d, dst, bytes, cudaMemcpyHostToDevice));
    launch_life_deep(g, src_d + row0, dst_d + row0, row_begin, row_end, gens, shape, live_begin,
                     live_end, 1, 0);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(dst, dst_d, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(src_d));
    CUDA_CHECK(cudaFree(dst_d));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    char why[512];
    if (!device_cuda_available(MPI_COMM_WORLD, why, sizeof why)) {
        printf("SKIP: %s\n", why);
        MPI_Finalize();
        return GOL_EXIT_SKIP;
    }
    device_select(MPI_COMM_WORLD);
    int failed = kernel_check_all(run_on_gpu);
    for (int shape = 0; shape < GOL_SHAPE_COUNT; shape++) {
        printf("deep kernel, shape %s:\n", gol_shapes[shape].name);
        failed += deep_check_all(run_deep_on_gpu, shape);
    }
    MPI_Finalize();
    return failed ? 1 : 0;
}
