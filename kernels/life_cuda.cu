/* The CUDA kernels: one thread per 64-cell word, the rule arithmetic from life_word.h. Host C
 * reaches them only through the extern "C" launch_* functions of life_cuda.h.
 *
 * Each kernel is a thin __global__ shell around a __host__ __device__ body that is handed its
 * thread's indices as a value, and each launch takes its geometry from one *_geometry function.
 * The emulate_* functions at the end run those same bodies over that same geometry on the host,
 * so the tests on machines without a GPU check the kernels, not a copy of them. */
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

#include <type_traits>
#include <vector>

#include "kernels/life_cuda.h"
/* check.h is a C header without C++ guards; its own includes are already in, so only the gol_*
 * declarations get C linkage here. */
extern "C" {
#include "core/check.h"
}

namespace {

constexpr int kBlockWords = 128;   /* threads per block along a row */
constexpr int kRowsPerThread = 16; /* rows one interior thread walks down */
constexpr int kMaxGridY = 65535;
constexpr int kUnpackBlock = 256;
constexpr int kPopBlock = 256;          /* a power of two: the block reduction halves it */
constexpr int64_t kPopMaxBlocks = 4096; /* grid-stride beyond that: enough to fill any GPU */
/* popcount: the per-thread sums, log2(kPopBlock) halvings, the block's total into the count */
constexpr int kPopPhases = 10;
static_assert(kPopBlock == 1 << (kPopPhases - 2), "one halving phase per bit of kPopBlock");

/* Where a thread is: CUDA's built-in indices as a value, which the host emulation fills too. */
struct thread_ix {
    dim3 grid, block; /* gridDim, blockDim */
    uint3 bid, tid;   /* blockIdx, threadIdx */
};

/* One launch: its grid and block, and n, the extent that the threads' guard or grid-stride loop
 * covers (the kernel receives it as an argument). n <= 0: nothing to launch. */
struct launch_geom {
    dim3 grid, block;
    int64_t n;
};

GOL_HD inline int64_t global_x(const thread_ix &ix) {
    return (int64_t)ix.bid.x * ix.block.x + ix.tid.x;
}

unsigned blocks_for(int64_t n, int block) { return (unsigned)((n + block - 1) / block); }
unsigned capped_grid_y(int64_t n) { return (unsigned)(n < kMaxGridY ? n : kMaxGridY); }

/* Conway's rule as a compile-time constant, so gol_word_next folds its rule test away. */
template <bool Conway> GOL_HD inline gol_rule kernel_rule(gol_rule r) {
    if (Conway) {
        gol_rule c = {GOL_RULE_CONWAY_BIRTH, GOL_RULE_CONWAY_SURVIVE};
        return c;
    }
    return r;
}

/* The interior instantiation a rule runs: B3/S23 gets interior_kernel<true>. The launcher and the
 * emulator both choose through here, so the emulator runs what the GPU runs. */
template <class F> void with_interior_variant(gol_rule r, F &&f) {
    if (r.birth == GOL_RULE_CONWAY_BIRTH && r.survive == GOL_RULE_CONWAY_SURVIVE)
        f(std::true_type());
    else
        f(std::false_type());
}

/* Word j of one row as the three boards a neighbour count needs: the word itself and the word
 * shifted so that each bit sees its west or east neighbour. The row ends are selects, not
 * branches around loads, so a warp that holds word 0 or the last word barely diverges. */
struct word3 {
    uint64_t w, c, e;
};

GOL_HD inline word3 load_word3(const uint64_t *row, int64_t j, int64_t nwords, int last_pos,
                               int torus) {
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

/* Word j of rows [r0, r1), walking down with a window of three rows so each row is loaded once
 * per thread instead of three times. */
template <bool Conway>
GOL_HD inline void interior_thread(const gol_cuda_grid &g, const uint64_t *src, uint64_t *dst,
                                   int64_t j, int64_t r0, int64_t r1) {
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

/* Interior thread: word x of the row chunks blockIdx.y, + gridDim.y, ... of nchunks chunks of
 * kRowsPerThread rows from row_begin. */
template <bool Conway>
GOL_HD inline void interior_body(const thread_ix &ix, const gol_cuda_grid &g,
                                 const uint64_t *__restrict__ src, uint64_t *__restrict__ dst,
                                 int64_t row_begin, int64_t row_end, int64_t nchunks) {
    int64_t j = global_x(ix);
    if (j >= g.nwords) return;
    for (int64_t chunk = ix.bid.y; chunk < nchunks; chunk += ix.grid.y) {
        int64_t r0 = row_begin + chunk * kRowsPerThread;
        int64_t r1 = r0 + kRowsPerThread < row_end ? r0 + kRowsPerThread : row_end;
        interior_thread<Conway>(g, src, dst, j, r0, r1);
    }
}

/* Edge thread t of nthreads: word t % nwords of row 1 (t < nwords) or of row rows. */
GOL_HD inline void edge_body(const thread_ix &ix, const gol_cuda_grid &g,
                             const uint64_t *__restrict__ src, uint64_t *__restrict__ dst,
                             int64_t nthreads) {
    int64_t t = global_x(ix);
    if (t >= nthreads) return;
    const int64_t nw = g.nwords;
    int64_t row = t < nw ? 1 : g.rows;
    int64_t j = t < nw ? t : t - nw;
    const uint64_t *r = src + row * nw;
    dst[row * nw + j] = gol_row_word(r - nw, r, r + nw, j, nw, g.width, g.torus, g.rule);
}

/* Unpack thread: cell x of rows blockIdx.y, + gridDim.y, ... */
GOL_HD inline void unpack_body(const thread_ix &ix, const uint64_t *__restrict__ src,
                               uint8_t *__restrict__ dst, int64_t rows, int64_t nwords,
                               int64_t width) {
    int64_t x = global_x(ix);
    if (x >= width) return;
    for (int64_t r = ix.bid.y; r < rows; r += ix.grid.y)
        dst[r * width + x] = (uint8_t)((src[r * nwords + (x >> 6)] >> (x & 63)) & 1);
}

GOL_HD inline unsigned long long popcount64(uint64_t w) {
#ifdef __CUDA_ARCH__
    return (unsigned long long)__popcll(w);
#else
    return (unsigned long long)__builtin_popcountll(w);
#endif
}

GOL_HD inline void add_to_count(unsigned long long *count, unsigned long long v) {
#ifdef __CUDA_ARCH__
    atomicAdd(count, v);
#else
    *count += v; /* the host emulation runs one thread at a time */
#endif
}

/* Popcount thread, one phase; the block synchronises between phases. partial is the block's
 * shared array of blockDim.x sums. Phase 0: this thread's grid-stride sum. Phases 1..8: a tree
 * reduction, each thread below the half adding the one a half above it. Last phase: thread 0
 * adds the block's total to the count. */
GOL_HD inline void popcount_phase(int phase, const thread_ix &ix, const uint64_t *__restrict__ src,
                                  int64_t words, unsigned long long *partial,
                                  unsigned long long *count) {
    const unsigned t = ix.tid.x;
    if (phase == 0) {
        unsigned long long sum = 0;
        int64_t stride = (int64_t)ix.grid.x * ix.block.x;
        for (int64_t i = global_x(ix); i < words; i += stride)
            sum += popcount64(src[i]);
        partial[t] = sum;
        return;
    }
    unsigned half = ix.block.x >> phase;
    if (half > 0) {
        if (t < half) partial[t] += partial[t + half];
        return;
    }
    if (t == 0 && partial[0]) add_to_count(count, partial[0]);
}

__device__ inline thread_ix this_thread() {
    thread_ix ix;
    ix.grid = gridDim;
    ix.block = blockDim;
    ix.bid = blockIdx;
    ix.tid = threadIdx;
    return ix;
}

template <bool Conway>
__global__ void __launch_bounds__(kBlockWords)
    interior_kernel(gol_cuda_grid g, const uint64_t *__restrict__ src, uint64_t *__restrict__ dst,
                    int64_t row_begin, int64_t row_end, int64_t nchunks) {
    interior_body<Conway>(this_thread(), g, src, dst, row_begin, row_end, nchunks);
}

__global__ void edge_kernel(gol_cuda_grid g, const uint64_t *__restrict__ src,
                            uint64_t *__restrict__ dst, int64_t nthreads) {
    edge_body(this_thread(), g, src, dst, nthreads);
}

__global__ void unpack_kernel(const uint64_t *__restrict__ src, uint8_t *__restrict__ dst,
                              int64_t rows, int64_t nwords, int64_t width) {
    unpack_body(this_thread(), src, dst, rows, nwords, width);
}

__global__ void __launch_bounds__(kPopBlock)
    popcount_kernel(const uint64_t *__restrict__ src, int64_t words, unsigned long long *count) {
    __shared__ unsigned long long partial[kPopBlock];
    const thread_ix ix = this_thread();
    for (int phase = 0; phase < kPopPhases; phase++) {
        if (phase) __syncthreads();
        popcount_phase(phase, ix, src, words, partial, count);
    }
}

/* The geometries: the launchers and the emulators take every launch's shape from here. */

launch_geom edges_geometry(const gol_cuda_grid &g) {
    launch_geom geo;
    geo.n = (g.rows == 1 ? 1 : 2) * g.nwords; /* rows 1 and rows, or the one row */
    geo.block = dim3(kBlockWords);
    geo.grid = dim3(blocks_for(geo.n, kBlockWords));
    return geo;
}

launch_geom rows_geometry(const gol_cuda_grid &g, int64_t row_begin, int64_t row_end) {
    launch_geom geo;
    geo.n = row_end > row_begin ? (row_end - row_begin + kRowsPerThread - 1) / kRowsPerThread : 0;
    /* narrow grids: no more threads per block than words, rounded up to whole warps */
    int block = g.nwords < kBlockWords ? (int)((g.nwords + 31) / 32 * 32) : kBlockWords;
    geo.block = dim3(block);
    geo.grid = dim3(blocks_for(g.nwords, block), capped_grid_y(geo.n));
    return geo;
}

launch_geom unpack_geometry(int64_t rows, int64_t width) {
    launch_geom geo;
    geo.n = rows > 0 ? rows : 0;
    geo.block = dim3(kUnpackBlock);
    geo.grid = dim3(blocks_for(width, kUnpackBlock), capped_grid_y(geo.n));
    return geo;
}

launch_geom popcount_geometry(int64_t words) {
    launch_geom geo;
    geo.n = words > 0 ? words : 0;
    int64_t blocks = blocks_for(geo.n, kPopBlock);
    geo.block = dim3(kPopBlock);
    geo.grid = dim3((unsigned)(blocks < kPopMaxBlocks ? blocks : kPopMaxBlocks));
    return geo;
}

/* Runs body(phase, ix, shared) for every phase, block and thread of a launch: each block in
 * turn, within it each phase for all its threads before the next phase (a barrier between
 * phases), as a GPU may. shared is the block's shared array, poisoned as the GPU leaves it. */
template <class Body>
void emulate_launch(const launch_geom &geo, int phases, size_t shared_words, Body &&body) {
    if (geo.n <= 0) return;
    std::vector<unsigned long long> shared(shared_words);
    thread_ix ix;
    ix.grid = geo.grid;
    ix.block = geo.block;
    for (unsigned bz = 0; bz < geo.grid.z; bz++)
        for (unsigned by = 0; by < geo.grid.y; by++)
            for (unsigned bx = 0; bx < geo.grid.x; bx++) {
                ix.bid = make_uint3(bx, by, bz);
                for (auto &w : shared)
                    w = 0xdeadbeefdeadbeefull;
                for (int phase = 0; phase < phases; phase++)
                    for (unsigned tz = 0; tz < geo.block.z; tz++)
                        for (unsigned ty = 0; ty < geo.block.y; ty++)
                            for (unsigned tx = 0; tx < geo.block.x; tx++) {
                                ix.tid = make_uint3(tx, ty, tz);
                                body(phase, ix, shared.data());
                            }
            }
}

} // namespace

extern "C" void launch_life_edges(gol_cuda_grid g, const uint64_t *src_d, uint64_t *dst_d,
                                  cudaStream_t s) {
    const launch_geom geo = edges_geometry(g);
    edge_kernel<<<geo.grid, geo.block, 0, s>>>(g, src_d, dst_d, geo.n);
    CUDA_CHECK(cudaGetLastError());
}

extern "C" void launch_life_rows(gol_cuda_grid g, const uint64_t *src_d, uint64_t *dst_d,
                                 int64_t row_begin, int64_t row_end, cudaStream_t s) {
    const launch_geom geo = rows_geometry(g, row_begin, row_end);
    if (geo.n <= 0) return;
    with_interior_variant(g.rule, [&](auto conway) {
        interior_kernel<decltype(conway)::value>
            <<<geo.grid, geo.block, 0, s>>>(g, src_d, dst_d, row_begin, row_end, geo.n);
    });
    CUDA_CHECK(cudaGetLastError());
}

extern "C" void launch_unpack_u8(const uint64_t *src_d, uint8_t *dst_d, int64_t rows,
                                 int64_t nwords, int64_t width, cudaStream_t s) {
    const launch_geom geo = unpack_geometry(rows, width);
    if (geo.n <= 0) return;
    unpack_kernel<<<geo.grid, geo.block, 0, s>>>(src_d, dst_d, geo.n, nwords, width);
    CUDA_CHECK(cudaGetLastError());
}

extern "C" void launch_popcount(const uint64_t *src_d, int64_t words, unsigned long long *count_d,
                                cudaStream_t s) {
    const launch_geom geo = popcount_geometry(words);
    if (geo.n <= 0) return;
    popcount_kernel<<<geo.grid, geo.block, 0, s>>>(src_d, geo.n, count_d);
    CUDA_CHECK(cudaGetLastError());
}

/* The host emulation: the bodies above, over the geometries above, one thread at a time. */

extern "C" void emulate_life_edges(gol_cuda_grid g, const uint64_t *src, uint64_t *dst) {
    const launch_geom geo = edges_geometry(g);
    emulate_launch(geo, 1, 0, [&](int, const thread_ix &ix, unsigned long long *) {
        edge_body(ix, g, src, dst, geo.n);
    });
}

extern "C" void emulate_life_rows(gol_cuda_grid g, const uint64_t *src, uint64_t *dst,
                                  int64_t row_begin, int64_t row_end) {
    const launch_geom geo = rows_geometry(g, row_begin, row_end);
    with_interior_variant(g.rule, [&](auto conway) {
        emulate_launch(geo, 1, 0, [&](int, const thread_ix &ix, unsigned long long *) {
            interior_body<decltype(conway)::value>(ix, g, src, dst, row_begin, row_end, geo.n);
        });
    });
}

extern "C" void emulate_unpack_u8(const uint64_t *src, uint8_t *dst, int64_t rows, int64_t nwords,
                                  int64_t width) {
    const launch_geom geo = unpack_geometry(rows, width);
    emulate_launch(geo, 1, 0, [&](int, const thread_ix &ix, unsigned long long *) {
        unpack_body(ix, src, dst, geo.n, nwords, width);
    });
}

extern "C" void emulate_popcount(const uint64_t *src, int64_t words, unsigned long long *count) {
    const launch_geom geo = popcount_geometry(words);
    emulate_launch(geo, kPopPhases, kPopBlock,
                   [&](int phase, const thread_ix &ix, unsigned long long *partial) {
                       popcount_phase(phase, ix, src, geo.n, partial, count);
                   });
}
