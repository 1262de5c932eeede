/* The random start on the device: one thread per 64-cell word, each running core/random_start.h's
 * init_random_word, the very function the host's init_random_rows vectorises, so the GPU's start
 * is the CPU's bit for bit. Host C reaches the kernel only through launch_init_random
 * (cuda/init_cuda.h).
 *
 * As in life_cuda.cu, the kernel is a thin __global__ shell around a __host__ __device__ body
 * that is handed its thread's indices as a value, and the launch takes its shape from one
 * geometry function; emulate_init_random runs that body over that shape on the host, so the
 * tests on machines without a GPU check the kernel, not a copy of it. */
#include <cuda_runtime.h>
#include <stdint.h>

#include "core/random_start.h"
#include "cuda/init_cuda.h"
#include "core/check_cuda.h"

#ifdef GOLMPI_CUDA_SIM
#include <cudasim.h>
#endif

namespace {

constexpr int kInitBlock = 256;
/* Enough threads to fill any GPU several times over (an H100 holds about 270k at once); a larger
 * slab is covered by the grid-stride loop, each thread a few words. */
constexpr int64_t kInitMaxBlocks = 8192;

/* Where a thread is: CUDA's built-in indices as a value, which the host emulation fills too. */
struct thread_ix {
    unsigned grid, block; /* gridDim.x, blockDim.x */
    unsigned bid, tid;    /* blockIdx.x, threadIdx.x */
};

/* One launch: its 1-D grid and block, and n, the words the grid-stride loop covers (the kernel
 * receives it as an argument). n <= 0: nothing to launch. */
struct launch_geom {
    unsigned grid, block;
    int64_t n;
};

/* Init thread: words i, i + stride, ... of the rows * nwords words, word i being word i % nwords
 * of row i / nwords. Neighbouring threads take neighbouring words, so the stores coalesce; each
 * word pays one extra hash for its row key (1 in 65), which keeps the threads independent of the
 * row boundaries. */
GOL_HD inline void init_body(const thread_ix &ix, uint64_t run_key, uint64_t threshold,
                             int64_t row0, int64_t width, int64_t nwords,
                             uint64_t *__restrict__ dst, int64_t n) {
    const int64_t stride = (int64_t)ix.grid * ix.block;
    for (int64_t i = (int64_t)ix.bid * ix.block + ix.tid; i < n; i += stride) {
        const int64_t r = i / nwords, w = i - r * nwords;
        dst[i] = init_random_word(init_row_key(run_key, row0 + r), threshold, w, width);
    }
}

#ifndef GOLMPI_CUDA_SIM /* the simulated GPU runs the body through the emulator */
__global__ void __launch_bounds__(kInitBlock)
    init_kernel(uint64_t run_key, uint64_t threshold, int64_t row0, int64_t width, int64_t nwords,
                uint64_t *__restrict__ dst, int64_t n) {
    thread_ix ix;
    ix.grid = gridDim.x;
    ix.block = blockDim.x;
    ix.bid = blockIdx.x;
    ix.tid = threadIdx.x;
    init_body(ix, run_key, threshold, row0, width, nwords, dst, n);
}
#endif

/* The launcher and the emulator take the launch's shape from here. */
launch_geom init_geometry(int64_t rows, int64_t nwords) {
    launch_geom geo;
    geo.n = rows > 0 && nwords > 0 ? rows * nwords : 0;
    int64_t blocks = (geo.n + kInitBlock - 1) / kInitBlock;
    geo.block = kInitBlock;
    geo.grid = (unsigned)(blocks < kInitMaxBlocks ? blocks : kInitMaxBlocks);
    return geo;
}

} // namespace

#ifdef GOLMPI_CUDA_SIM
namespace {
/* The launch on the simulated GPU (tests/cudasim): the emulator on the stream, writing the rows. */
struct sim_init {
    uint64_t run_key, threshold;
    int64_t row0, rows, width, nwords;
    uint64_t *dst;
    static void run(void *p) {
        const sim_init *a = static_cast<const sim_init *>(p);
        emulate_init_random(a->run_key, a->threshold, a->row0, a->rows, a->width, a->nwords,
                            static_cast<uint64_t *>(cudasim_ptr(a->dst)));
    }
};
} // namespace

extern "C" void launch_init_random(uint64_t run_key, uint64_t threshold, int64_t row0, int64_t rows,
                                   int64_t width, int64_t nwords, uint64_t *dst_d, cudaStream_t s) {
    const launch_geom geo = init_geometry(rows, nwords);
    if (geo.n <= 0) return;
    const sim_init a = {run_key, threshold, row0, rows, width, nwords, dst_d};
    const cudasim_access acc = {dst_d, (size_t)geo.n * sizeof(uint64_t), CUDASIM_WRITE};
    cudasim_launch(s, "init_random", &acc, 1, sim_init::run, &a, sizeof a);
    CUDA_CHECK(cudaGetLastError());
}
#else
extern "C" void launch_init_random(uint64_t run_key, uint64_t threshold, int64_t row0, int64_t rows,
                                   int64_t width, int64_t nwords, uint64_t *dst_d, cudaStream_t s) {
    const launch_geom geo = init_geometry(rows, nwords);
    if (geo.n <= 0) return;
    init_kernel<<<geo.grid, geo.block, 0, s>>>(run_key, threshold, row0, width, nwords, dst_d,
                                               geo.n);
    CUDA_CHECK(cudaGetLastError());
}
#endif

/* The host emulation: the body above, over the geometry above, one thread at a time. */
extern "C" void emulate_init_random(uint64_t run_key, uint64_t threshold, int64_t row0,
                                    int64_t rows, int64_t width, int64_t nwords, uint64_t *dst) {
    const launch_geom geo = init_geometry(rows, nwords);
    if (geo.n <= 0) return;
    thread_ix ix;
    ix.grid = geo.grid;
    ix.block = geo.block;
    for (ix.bid = 0; ix.bid < geo.grid; ix.bid++)
        for (ix.tid = 0; ix.tid < geo.block; ix.tid++)
            init_body(ix, run_key, threshold, row0, width, nwords, dst, geo.n);
}
