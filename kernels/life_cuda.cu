/* The CUDA kernels: one thread per 64-cell word, the rule arithmetic from life_word.h. Host C
 * reaches them only through the extern "C" launch_* functions of life_cuda.h. */
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1 /* check.h pulls in mpi.h: keep MPI's C++ bindings out of nvcc */
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>
#include <stdint.h>

#include "kernels/life_cuda.h"
/* check.h is a C header without C++ guards; its own includes are already in, so only the gol_*
 * declarations get C linkage here. */
extern "C" {
#include "core/check.h"
}

namespace {

constexpr int kBlockWords = 128;  /* threads per block along a row */
constexpr int kRowsPerThread = 16; /* rows one interior thread walks down */
constexpr int kMaxGridY = 65535;

/* Conway's rule as a compile-time constant, so gol_word_next folds its rule test away. */
template <bool Conway> GOL_HD inline gol_rule kernel_rule(gol_rule r) {
    if (Conway) {
        gol_rule c = {GOL_RULE_CONWAY_BIRTH, GOL_RULE_CONWAY_SURVIVE};
        return c;
    }
    return r;
}

/* Word j of one row as the three boards a neighbour count needs: the word itself and the word
 * shifted so that each bit sees its west or east neighbour. The row ends are selects, not
 * branches around loads, so a warp that holds word 0 or the last word barely diverges. */
struct word3 {
    uint64_t w, c, e;
};

GOL_HD inline word3 load_word3(const uint64_t *row, int64_t j, int64_t nwords, int last_pos, int torus) {
    uint64_t cur = row[j];
    bool first = j == 0, last = j == nwords - 1;
    uint64_t west_word = row[first ? nwords - 1 : j - 1];
    uint64_t east_word = row[last ? 0 : j + 1];
    uint64_t west_in = first ? (torus ? (west_word >> last_pos) & 1 : 0) : west_word >> 63;
    uint64_t east_in = (last && !torus) ? 0 : east_word & 1;
    word3 r;
    r.c = cur;
    r.w = gol_west(cur, west_in);
    r.e = gol_east(cur, east_in, last ? last_pos : 63);
    return r;
}

/* One interior thread: word j of rows [r0, r1), walking down with a window of three rows so each
 * row is loaded once per thread instead of three times. */
template <bool Conway>
GOL_HD inline void interior_thread(const gol_cuda_grid &g, const uint64_t *src, uint64_t *dst, int64_t j,
                            int64_t r0, int64_t r1) {
    const int64_t nw = g.nwords;
    const int last_pos = (int)((g.width - 1) & 63);
    const uint64_t mask = j == nw - 1 ? gol_row_last_mask(g.width) : ~(uint64_t)0;
    const gol_rule rule = kernel_rule<Conway>(g.rule);
    word3 up = load_word3(src + (r0 - 1) * nw, j, nw, last_pos, g.torus);
    word3 mid = load_word3(src + r0 * nw, j, nw, last_pos, g.torus);
    for (int64_t r = r0; r < r1; r++) {
        word3 down = load_word3(src + (r + 1) * nw, j, nw, last_pos, g.torus);
        uint64_t next =
            gol_word_next(up.w, up.c, up.e, mid.w, mid.c, mid.e, down.w, down.c, down.e, rule);
        dst[r * nw + j] = next & mask;
        up = mid;
        mid = down;
    }
}

template <bool Conway>
__global__ void __launch_bounds__(kBlockWords)
    interior_kernel(gol_cuda_grid g, const uint64_t *__restrict__ src, uint64_t *__restrict__ dst,
                    int64_t row_begin, int64_t row_end) {
    int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= g.nwords) return;
    int64_t nchunks = (row_end - row_begin + kRowsPerThread - 1) / kRowsPerThread;
    for (int64_t chunk = blockIdx.y; chunk < nchunks; chunk += gridDim.y) {
        int64_t r0 = row_begin + chunk * kRowsPerThread;
        int64_t r1 = r0 + kRowsPerThread < row_end ? r0 + kRowsPerThread : row_end;
        interior_thread<Conway>(g, src, dst, j, r0, r1);
    }
}

/* The first and last owned rows, thread t: word t % nwords of row 1 (t < nwords) or row rows. */
GOL_HD inline void edge_thread(const gol_cuda_grid &g, const uint64_t *src, uint64_t *dst, int64_t t) {
    const int64_t nw = g.nwords;
    int64_t row = t < nw ? 1 : g.rows;
    int64_t j = t < nw ? t : t - nw;
    const uint64_t *r = src + row * nw;
    dst[row * nw + j] = gol_row_word(r - nw, r, r + nw, j, nw, g.width, g.torus, g.rule);
}

__global__ void edge_kernel(gol_cuda_grid g, const uint64_t *__restrict__ src,
                            uint64_t *__restrict__ dst, int64_t nthreads) {
    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < nthreads) edge_thread(g, src, dst, t);
}

__global__ void unpack_kernel(const uint64_t *__restrict__ src, uint8_t *__restrict__ dst,
                              int64_t rows, int64_t nwords, int64_t width) {
    int64_t x = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= width) return;
    for (int64_t r = blockIdx.y; r < rows; r += gridDim.y)
        dst[r * width + x] = (uint8_t)((src[r * nwords + (x >> 6)] >> (x & 63)) & 1);
}

__global__ void popcount_kernel(const uint64_t *__restrict__ src, int64_t words,
                                unsigned long long *count) {
    unsigned long long sum = 0;
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < words; i += stride)
        sum += (unsigned long long)__popcll(src[i]);
    for (int off = 16; off > 0; off >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, off);
    if ((threadIdx.x & 31) == 0 && sum) atomicAdd(count, sum);
}

unsigned grid_dim(int64_t n, int block) { return (unsigned)((n + block - 1) / block); }

} // namespace

extern "C" void launch_life_edges(gol_cuda_grid g, const uint64_t *src_d, uint64_t *dst_d,
                                  cudaStream_t s) {
    int64_t nthreads = (g.rows == 1 ? 1 : 2) * g.nwords;
    edge_kernel<<<grid_dim(nthreads, kBlockWords), kBlockWords, 0, s>>>(g, src_d, dst_d, nthreads);
    CUDA_CHECK(cudaGetLastError());
}

extern "C" void launch_life_rows(gol_cuda_grid g, const uint64_t *src_d, uint64_t *dst_d,
                                 int64_t row_begin, int64_t row_end, cudaStream_t s) {
    if (row_end <= row_begin) return;
    /* narrow grids: no more threads per block than words, rounded up to whole warps */
    int block = g.nwords < kBlockWords ? (int)((g.nwords + 31) / 32 * 32) : kBlockWords;
    int64_t nchunks = (row_end - row_begin + kRowsPerThread - 1) / kRowsPerThread;
    dim3 grid(grid_dim(g.nwords, block), (unsigned)(nchunks < kMaxGridY ? nchunks : kMaxGridY));
    bool conway =
        g.rule.birth == GOL_RULE_CONWAY_BIRTH && g.rule.survive == GOL_RULE_CONWAY_SURVIVE;
    if (conway)
        interior_kernel<true><<<grid, block, 0, s>>>(g, src_d, dst_d, row_begin, row_end);
    else
        interior_kernel<false><<<grid, block, 0, s>>>(g, src_d, dst_d, row_begin, row_end);
    CUDA_CHECK(cudaGetLastError());
}

extern "C" void launch_unpack_u8(const uint64_t *src_d, uint8_t *dst_d, int64_t rows,
                                 int64_t nwords, int64_t width, cudaStream_t s) {
    if (rows <= 0) return;
    const int block = 256;
    dim3 grid(grid_dim(width, block), (unsigned)(rows < kMaxGridY ? rows : kMaxGridY));
    unpack_kernel<<<grid, block, 0, s>>>(src_d, dst_d, rows, nwords, width);
    CUDA_CHECK(cudaGetLastError());
}

extern "C" void launch_popcount(const uint64_t *src_d, int64_t words, unsigned long long *count_d,
                                cudaStream_t s) {
    if (words <= 0) return;
    const int block = 256;
    int64_t blocks = (words + block - 1) / block;
    if (blocks > 4096) blocks = 4096; /* grid-stride beyond that: enough to fill any GPU */
    popcount_kernel<<<(unsigned)blocks, block, 0, s>>>(src_d, words, count_d);
    CUDA_CHECK(cudaGetLastError());
}

#ifdef GOLMPI_LIFE_CUDA_HOST_EMULATION
/* Host-side emulation of the thread bodies, for checking the index arithmetic of the kernels on a
 * machine without a GPU. Not part of the library build. */
extern "C" void emulate_life_edges(gol_cuda_grid g, const uint64_t *src, uint64_t *dst) {
    int64_t nthreads = (g.rows == 1 ? 1 : 2) * g.nwords;
    for (int64_t t = 0; t < nthreads; t++) edge_thread(g, src, dst, t);
}
extern "C" void emulate_life_rows(gol_cuda_grid g, const uint64_t *src, uint64_t *dst,
                                  int64_t row_begin, int64_t row_end, unsigned grid_y) {
    int64_t nchunks = (row_end - row_begin + kRowsPerThread - 1) / kRowsPerThread;
    for (unsigned by = 0; by < grid_y; by++)
        for (int64_t j = 0; j < g.nwords; j++)
            for (int64_t chunk = by; chunk < nchunks; chunk += grid_y) {
                int64_t r0 = row_begin + chunk * kRowsPerThread;
                int64_t r1 = r0 + kRowsPerThread < row_end ? r0 + kRowsPerThread : row_end;
                interior_thread<false>(g, src, dst, j, r0, r1);
            }
}
#endif
