/* The CUDA kernels: one thread per 64-cell word, the rule arithmetic from life_word.h. Host C
 * reaches them only through the extern "C" launch_* functions of life_cuda.h.
 *
 * Each kernel is a thin __global__ shell around a __host__ __device__ body that is handed its
 * thread's indices as a value, and each launch takes its geometry from one *_geometry function.
 * The emulate_* functions at the end run those same bodies over that same geometry on the host,
 * so the tests on machines without a GPU check the kernels, not a copy of them. */
#include <cuda_runtime.h>
#include <stdint.h>

#include <initializer_list>
#include <type_traits>
#include <vector>

#ifdef GOLMPI_CUDA_SIM
#include <cudasim.h>
#endif

#include "cuda/life_cuda.h"
#include "core/check_cuda.h"

namespace {

/* The shapes' constants (cuda/life_geometry.h, where every launch's shape is decided). */
constexpr int kBlockWords = GOL_BLOCK_WORDS;
constexpr int kDeepWarps = GOL_DEEP_WARPS;
constexpr int kPopBlock = GOL_POP_BLOCK;
/* Each shape's generations a launch at most, and every unroll of the table an instance has
 * (life_geometry.h's GOL_SHAPES). */
constexpr int kShapeGensMax[] = {
#define GOL_SHAPE_GENS(id, name, gens_max, tile_min, unroll, what) gens_max,
    GOL_SHAPES(GOL_SHAPE_GENS)
#undef GOL_SHAPE_GENS
};
static_assert(sizeof kShapeGensMax / sizeof kShapeGensMax[0] == GOL_SHAPE_COUNT, "a row a shape");
#define GOL_SHAPE_UNROLL_OK(id, name, gens_max, tile_min, unroll, what)                           \
    static_assert(unroll >= 1 && unroll <= GOL_DEEP_UNROLL_MAX, "an unroll with no instance");
GOL_SHAPES(GOL_SHAPE_UNROLL_OK)
#undef GOL_SHAPE_UNROLL_OK
/* popcount: the per-thread sums, log2(kPopBlock) halvings, the block's total into the count */
constexpr int kPopPhases = 10;
static_assert(kPopBlock == 1 << (kPopPhases - 2), "one halving phase per bit of kPopBlock");

/* Where a thread is: CUDA's built-in indices as a value, which the host emulation fills too. */
struct thread_ix {
    dim3 grid, block; /* gridDim, blockDim */
    uint3 bid, tid;   /* blockIdx, threadIdx */
};

/* One launch (cuda/life_geometry.h's gol_launch) in CUDA's types. */
struct launch_geom {
    dim3 grid, block;
    int64_t n;
};

launch_geom cuda_shape(const gol_launch &l) {
    launch_geom geo;
    geo.grid = dim3((unsigned)l.grid_x, (unsigned)l.grid_y);
    geo.block = dim3((unsigned)l.block_x, (unsigned)l.block_y);
    geo.n = l.n;
    return geo;
}

GOL_HD inline int64_t global_x(const thread_ix &ix) {
    return (int64_t)ix.bid.x * ix.block.x + ix.tid.x;
}

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

/* The deep instantiation a launch runs: K = gens (1..GOL_DEEP_GENS_MAX, a compile-time constant so
 * the wavefront's levels live in registers), Conway's rule or any, ragged torus or not, and the
 * row loop's unroll U that the shape asks (gol_deep_unroll; the shape's geometry travels in the
 * arguments). The launcher and the emulator both choose through here. */
template <int K, class F> void with_deep_depth(int gens, F &&f) {
    if (gens == K) {
        f(std::integral_constant<int, K>());
        return;
    }
    if constexpr (K < GOL_DEEP_GENS_MAX) with_deep_depth<K + 1>(gens, f);
}

/* U = u, instantiated only where gol_deep_unroll may ask it: unrolled only for Conway's rule at
 * an even K (other instances spill). */
template <int K, bool Conway, int U = 1, class F> void with_deep_unroll(int u, F &&f) {
    if (u == U) {
        f(std::integral_constant<int, U>());
        return;
    }
    if constexpr (Conway && K % 2 == 0 && U < GOL_DEEP_UNROLL_MAX)
        with_deep_unroll<K, Conway, U + 1>(u, f);
}

template <class F> void with_deep_variant(gol_rule r, int gens, bool ragged, int shape, F &&f) {
    with_deep_depth<1>(gens, [&](auto k) {
        constexpr int K = decltype(k)::value;
        with_interior_variant(r, [&](auto conway) {
            constexpr bool C = decltype(conway)::value;
            with_deep_unroll<K, C>(gol_deep_unroll(shape, K, C), [&](auto un) {
                if (ragged)
                    f(k, conway, std::true_type(), un);
                else
                    f(k, conway, std::false_type(), un);
            });
        });
    });
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

/* Word j of rows [r0, r1), walking down with a window of three rows: each row is loaded once
 * per thread, and its column sum (gol_sum3_of of its west, centre and east boards) is made once
 * and serves the rows above, at and below it (core/life_word.h, the sliding window). */
template <bool Conway>
GOL_HD inline void interior_thread(const gol_cuda_grid &g, const uint64_t *src, uint64_t *dst,
                                   int64_t j, int64_t r0, int64_t r1) {
    const int64_t nw = g.nwords;
    const int last_pos = (int)((g.width - 1) & 63);
    const uint64_t mask = j == nw - 1 ? gol_row_last_mask(g.width) : ~(uint64_t)0;
    const gol_rule rule = kernel_rule<Conway>(g.rule);
    word3 up = load_word3(src + (r0 - 1) * nw, j, nw, last_pos, g.torus);
    word3 mid = load_word3(src + r0 * nw, j, nw, last_pos, g.torus);
    gol_sum3 above = gol_sum3_of(up.w, up.c, up.e), at = gol_sum3_of(mid.w, mid.c, mid.e);
    uint64_t centre = mid.c;
    for (int64_t r = r0; r < r1; r++) {
        word3 down = load_word3(src + (r + 1) * nw, j, nw, last_pos, g.torus);
        gol_sum3 below = gol_sum3_of(down.w, down.c, down.e);
        dst[r * nw + j] = gol_sum_next(above, at, below, centre, rule) & mask;
        above = at;
        at = below;
        centre = down.c;
    }
}

/* Interior thread: word x of the row chunks blockIdx.y, + gridDim.y, ... of nchunks chunks of
 * GOL_ROWS_PER_THREAD rows from row_begin (gol_rows_chunk). */
template <bool Conway>
GOL_HD inline void interior_body(const thread_ix &ix, const gol_cuda_grid &g,
                                 const uint64_t *__restrict__ src, uint64_t *__restrict__ dst,
                                 int64_t row_begin, int64_t row_end, int64_t nchunks) {
    int64_t j = global_x(ix);
    if (j >= g.nwords) return;
    for (int64_t chunk = ix.bid.y; chunk < nchunks; chunk += ix.grid.y) {
        int64_t r0, r1;
        gol_rows_chunk(row_begin, row_end, chunk, &r0, &r1);
        interior_thread<Conway>(g, src, dst, j, r0, r1);
    }
}

/* Edge thread t of nthreads: word t % nwords of row 0 (t < nwords) or of row rows - 1. */
GOL_HD inline void edge_body(const thread_ix &ix, const gol_cuda_grid &g,
                             const uint64_t *__restrict__ src, uint64_t *__restrict__ dst,
                             int64_t nthreads) {
    int64_t t = global_x(ix);
    if (t >= nthreads) return;
    const int64_t nw = g.nwords;
    int64_t row = t < nw ? 0 : g.rows - 1;
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

/* The multi-generation kernel (life_deep): K generations per pass over global memory.
 *
 * A warp is a strip of 32 consecutive words of a row, one word a lane; it walks down a tile of
 * rows once, and carries each row through the K generations as a wavefront: when input row i
 * arrives, generation g produces row i - g from its window of the rows above and at (their column
 * sums and the centre word, in registers) and the row below, which generation g-1 has just
 * produced. So a tile of T output rows reads T + 2K rows and writes T, once: 0.25/K byte per cell
 * update, whatever K. A lane learns its neighbours' edge cells through two warp shuffles a
 * generation (an explicit exchange phase, which the host emulation performs over 32 lane states).
 *
 * Validity: a wrong cell spreads one cell a generation. The strip's end lanes see no neighbour,
 * so they are wrong from their outer cell inwards; with a margin of one full 64-cell word at
 * each end, the inner 30 words stay right for K <= 64. Rows: the tile's first and last K input
 * rows start the wavefront, and generation g is right on rows at least g from the input's ends,
 * so output rows [r0, r1) need input rows [r0 - K, r1 + K) and nothing more.
 *
 * Exceptions, all decided by deep_geometry and deep_lane_start:
 * - a dead boundary: lanes past the row's ends hold dead words, forced to 0 at every generation,
 *   the last word's padding too, and rows outside [live_begin, live_end) are forced to 0 at every
 *   generation (a B0 rule must not bring the outside to life), so the margin there is exact;
 * - a torus with a partial last word ("ragged"): a lane holding the last word passes its cell at
 *   the width, not bit 63, to the east, and the margin is two words, since one end lane may hold
 *   that short word (it can be 1 cell wide) and the wrong cells would cross it at once;
 * - a torus of at most 32 words: one strip holds the whole row and the shuffles wrap around it,
 *   exactly, with no margin. */

/* One lane of a deep warp: where it is (set per tile) and the wavefront's state, level g holding
 * the window of generation g + 1. */
template <int K> struct deep_lane {
    int64_t j;        /* the word of the row it holds; -1: a dead word past the row's ends */
    uint64_t mask;    /* cells it keeps: none for a dead word, the width's in the last word */
    int west, east;   /* the lanes holding the words west and east of it (itself at a strip end) */
    int last;         /* bit of its last cell: 63, or the width's in a ragged torus' last word */
    int store;        /* its word is one of those the strip writes */
    uint64_t x;       /* the row word on its way down the generations */
    uint64_t ahead;   /* the next input row's word, loaded one row early */
    uint32_t send_e, send_w; /* what the neighbours read in the exchange: its last and first cell */
    uint32_t from_w, from_e; /* what it read: the west lane's last cell, the east lane's first */
    gol_sum3 above[K], at[K]; /* column sums of the rows above and at level g's next output row */
    uint64_t centre[K];       /* the cells of the row at */
};

/* The deep launch's arguments, and the geometry that deep_geometry chose. */
struct deep_args {
    gol_cuda_grid g;
    const uint64_t *src;
    uint64_t *dst;
    int64_t row_begin, row_end, live_begin, live_end;
    gol_deep_cut cut;     /* strips, tiles, margins: the work items (cuda/life_geometry.h) */
};

/* Where lane `lane` of strip `strip` sits; every tile starts its wavefront from `fill` (0 on the
 * GPU; the emulation passes garbage, which must never reach an output). */
template <int K>
GOL_HD inline void deep_lane_start(deep_lane<K> &L, const deep_args &a, int64_t strip, int lane,
                                   uint64_t fill) {
    const int64_t nw = a.g.nwords;
    const gol_deep_place p = gol_deep_lane_place(&a.cut, nw, a.g.torus, strip, lane);
    L.j = p.j;
    L.west = p.west;
    L.east = p.east;
    L.store = p.store;
    L.mask = L.j < 0 ? 0 : L.j == nw - 1 ? gol_row_last_mask(a.g.width) : ~(uint64_t)0;
    L.last = a.g.torus && L.j == nw - 1 ? (int)((a.g.width - 1) & 63) : 63;
    L.x = L.ahead = fill;
    L.send_e = L.send_w = L.from_w = L.from_e = (uint32_t)fill;
    for (int g = 0; g < K; g++) {
        L.above[g].lo = L.above[g].hi = L.at[g].lo = L.at[g].hi = fill;
        L.centre[g] = fill;
    }
}

GOL_HD inline bool deep_row_live(const deep_args &a, int64_t r) {
    return r >= a.live_begin && r < a.live_end;
}

/* Load phase of input row i: the word loaded a row ago goes in, row i + 1's is loaded (dead rows
 * and words are never read: src may hold anything there). */
template <int K, bool AllLive>
GOL_HD inline void deep_load(deep_lane<K> &L, const deep_args &a, int64_t i, int64_t end) {
    L.x = L.ahead;
    int64_t r = i + 1;
    bool read = r < end && L.j >= 0 && (AllLive || deep_row_live(a, r));
    L.ahead = read ? a.src[r * a.g.nwords + L.j] : 0;
}

/* First load of a tile: row `first` into `ahead`, so deep_load of `first` moves it in. */
template <int K>
GOL_HD inline void deep_prime(deep_lane<K> &L, const deep_args &a, int64_t first) {
    bool read = L.j >= 0 && deep_row_live(a, first);
    L.ahead = read ? a.src[first * a.g.nwords + L.j] : 0;
}

/* Send phase: the cells this lane's neighbours need from its word x: its last cell for the east
 * lane (bit 63, or bit `last` in a ragged torus; sent as a 32-bit half), its first for the west. */
template <int K, bool Ragged> GOL_HD inline void deep_send(deep_lane<K> &L) {
    L.send_e = Ragged ? (uint32_t)(L.x >> L.last) : (uint32_t)(L.x >> 32);
    L.send_w = (uint32_t)L.x;
}

/* Level phase of generation g + 1, after the exchange: the column sum of the row word x that
 * generation g produced, then the next state of the row at from the window, kept where it lives
 * (mask: the lane's cells; keep: all or nothing, whether the row is live). */
template <int K, bool Ragged>
GOL_HD inline void deep_level(deep_lane<K> &L, int g, gol_rule rule, uint64_t keep) {
    const uint64_t x = L.x;
    const uint64_t west_in = Ragged ? L.from_w & 1 : L.from_w >> 31;
    const uint64_t east_in = L.from_e & 1;
    const gol_sum3 below =
        gol_sum3_of(gol_west(x, west_in), x, gol_east(x, east_in, Ragged ? L.last : 63));
    L.x = gol_sum_next(L.above[g], L.at[g], below, L.centre[g], rule) & L.mask & keep;
    L.above[g] = L.at[g];
    L.at[g] = below;
    L.centre[g] = x;
}

template <int K>
GOL_HD inline void deep_store(const deep_lane<K> &L, const deep_args &a, int64_t r) {
    if (L.store) a.dst[r * a.g.nwords + L.j] = L.x;
}

/* The warp's 32 lanes as this GPU thread: one lane, its id threadIdx.x, the exchange two warp
 * shuffles. */
template <int K> struct gpu_warp {
    static constexpr int kLanes = 1;
    deep_lane<K> one;
    int id;
    GOL_HD deep_lane<K> &lane(int) { return one; }
    GOL_HD int lane_id(int) const { return id; }
    GOL_HD void exchange() {
#ifdef __CUDA_ARCH__
        one.from_w = __shfl_sync(0xffffffffu, one.send_e, one.west);
        one.from_e = __shfl_sync(0xffffffffu, one.send_w, one.east);
#endif
    }
};

/* The warp's 32 lanes on the host: the same phases for each lane in turn, and the exchange as
 * the shuffle defines it, every lane reading what its source lane sent in the phase before. */
template <int K> struct host_warp {
    static constexpr int kLanes = 32;
    deep_lane<K> lanes[32];
    GOL_HD deep_lane<K> &lane(int l) { return lanes[l]; }
    GOL_HD int lane_id(int l) const { return l; }
    GOL_HD void exchange() {
        uint32_t send_e[32], send_w[32];
        for (int l = 0; l < 32; l++) {
            send_e[l] = lanes[l].send_e;
            send_w[l] = lanes[l].send_w;
        }
        for (int l = 0; l < 32; l++) {
            lanes[l].from_w = send_e[lanes[l].west];
            lanes[l].from_e = send_w[lanes[l].east];
        }
    }
};

/* One tile of output rows [r0, r1), phase by phase: per input row a load phase, then per
 * generation a send phase, the exchange and a level phase, then a store phase. Every lane takes
 * part in every phase (the shuffles need the whole warp); what it keeps is in its mask. AllLive:
 * every row the tile reads or makes is inside [live_begin, live_end), so the per-generation
 * dead-row test folds away (most tiles: only those at a dead boundary test). */
template <int K, bool Conway, bool Ragged, bool AllLive, int Unroll, class Warp>
GOL_HD inline void deep_tile(Warp &w, const deep_args &a, int64_t strip, int64_t r0, int64_t r1,
                             uint64_t fill) {
    const gol_rule rule = kernel_rule<Conway>(a.g.rule);
    const int64_t first = r0 - K, end = r1 + K;
    for (int l = 0; l < Warp::kLanes; l++) {
        deep_lane_start(w.lane(l), a, strip, w.lane_id(l), fill);
        deep_prime(w.lane(l), a, first);
    }
#ifdef __CUDA_ARCH__
#pragma unroll Unroll
#endif
    for (int64_t i = first; i < end; i++) {
        for (int l = 0; l < Warp::kLanes; l++) deep_load<K, AllLive>(w.lane(l), a, i, end);
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
        for (int g = 0; g < K; g++) {
            const uint64_t keep = AllLive || deep_row_live(a, i - g - 1) ? ~(uint64_t)0 : 0;
            for (int l = 0; l < Warp::kLanes; l++) deep_send<K, Ragged>(w.lane(l));
            w.exchange();
            for (int l = 0; l < Warp::kLanes; l++)
                deep_level<K, Ragged>(w.lane(l), g, rule, keep);
        }
        if (i - K >= r0)
            for (int l = 0; l < Warp::kLanes; l++) deep_store(w.lane(l), a, i - K);
    }
}

/* A warp's whole work: items threadIdx.y + blockDim.y * blockIdx.x, + the grid's warps, ...
 * (one at most, as deep_geometry sizes the grid); neighbouring warps take neighbouring strips of
 * the same rows, which share their margin words in the cache. A tile reads input rows
 * [r0 - K, r1 + K) and tests rows down to r0 - 2K (generation g of input row i is row i - g - 1). */
template <int K, bool Conway, bool Ragged, int U, class Warp>
GOL_HD inline void deep_warp(Warp &w, const thread_ix &ix, const deep_args &a, uint64_t fill) {
    const int64_t warps = (int64_t)ix.grid.x * ix.block.y;
    const int64_t items = a.cut.strips * a.cut.tiles;
    for (int64_t i = (int64_t)ix.bid.x * ix.block.y + ix.tid.y; i < items; i += warps) {
        const gol_deep_item it = gol_deep_item_of(&a.cut, a.row_begin, a.row_end, i);
        const int64_t strip = it.strip, r0 = it.r0, r1 = it.r1;
        if (r0 - 2 * K >= a.live_begin && r1 + K <= a.live_end)
            deep_tile<K, Conway, Ragged, true, U>(w, a, strip, r0, r1, fill);
        else
            deep_tile<K, Conway, Ragged, false, U>(w, a, strip, r0, r1, fill);
    }
}

/* The kernels themselves: the simulated GPU (GOLMPI_CUDA_SIM, tests/cudasim) builds this file as
 * host C++ and runs the bodies through the emulators instead. */
#ifndef GOLMPI_CUDA_SIM
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

template <int K, bool Conway, bool Ragged, int U>
__global__ void __launch_bounds__(32 * kDeepWarps) deep_kernel(deep_args a) {
    gpu_warp<K> w;
    w.id = (int)threadIdx.x;
    deep_warp<K, Conway, Ragged, U>(w, this_thread(), a, 0);
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
#endif /* GOLMPI_CUDA_SIM */

/* The geometries: the launchers and the emulators take every launch's shape from here. */

launch_geom edges_geometry(const gol_cuda_grid &g) { return cuda_shape(gol_edges_geometry(&g)); }

launch_geom rows_geometry(const gol_cuda_grid &g, int64_t row_begin, int64_t row_end) {
    return cuda_shape(gol_rows_geometry(&g, row_begin, row_end));
}

/* Whether launch_life_deep has work: rows, and gens within its shape's (a caller past those
 * bounds launches nothing, as the contract in life_cuda.h says). */
bool deep_launchable(int64_t row_begin, int64_t row_end, int gens, int shape) {
    return row_end > row_begin && shape >= 0 && shape < GOL_SHAPE_COUNT && gens >= 1 &&
           gens <= kShapeGensMax[shape];
}

/* A deep launch: its geometry (gol_deep_geometry) and the kernel's arguments. */
struct deep_geom {
    launch_geom launch; /* n: work items */
    deep_args args;     /* the kernel's arguments, geometry included */
    bool ragged;        /* a torus whose last word is partial: the Ragged instantiation */
};

deep_geom deep_geometry(const gol_cuda_grid &g, const uint64_t *src, uint64_t *dst,
                        int64_t row_begin, int64_t row_end, int gens, int shape,
                        int64_t live_begin, int64_t live_end, int64_t resident) {
    const gol_deep_launch d_ = gol_deep_geometry(&g, row_begin, row_end, gens, shape, resident);
    deep_geom d;
    deep_args &a = d.args;
    a.g = g;
    a.src = src;
    a.dst = dst;
    a.row_begin = row_begin;
    a.row_end = row_end;
    a.live_begin = live_begin;
    a.live_end = live_end;
    a.cut = d_.cut;
    d.launch = cuda_shape(d_.launch);
    d.ragged = d_.ragged != 0;
    return d;
}

launch_geom unpack_geometry(int64_t rows, int64_t width) {
    return cuda_shape(gol_unpack_geometry(rows, width));
}

launch_geom popcount_geometry(int64_t words) { return cuda_shape(gol_popcount_geometry(words)); }

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

#ifdef GOLMPI_CUDA_SIM

/* The launchers on the simulated GPU: the same geometry, and the launch enqueued as the
 * kernel's host emulation (below), named with the rows it reads and writes, which the simulator
 * orders and checks like any stream work. The ranges are the launchers' contracts (life_cuda.h). */
template <class Launch>
void sim_launch(cudaStream_t s, const char *name, std::initializer_list<cudasim_access> acc,
                const Launch &launch) {
    cudasim_launch(s, name, acc.begin(), (int)acc.size(),
                   [](void *p) { static_cast<const Launch *>(p)->run(); }, &launch, sizeof launch);
}

/* Rows [r0, r1) of a slab numbered from row 0 at base, as a byte range (none when empty). */
cudasim_access sim_rows(const gol_cuda_grid &g, const uint64_t *base, int64_t r0, int64_t r1,
                        int mode) {
    cudasim_access a = {base + r0 * g.nwords, 0, mode};
    if (r1 > r0) a.bytes = (size_t)((r1 - r0) * g.nwords) * sizeof(uint64_t);
    return a;
}

template <class T> T *sim_ptr(T *p) { return static_cast<T *>(cudasim_ptr(p)); }

struct sim_edges {
    gol_cuda_grid g;
    const uint64_t *src;
    uint64_t *dst;
    void run() const { emulate_life_edges(g, sim_ptr(src), sim_ptr(dst)); }
};

struct sim_rows_launch {
    gol_cuda_grid g;
    const uint64_t *src;
    uint64_t *dst;
    int64_t row_begin, row_end;
    void run() const { emulate_life_rows(g, sim_ptr(src), sim_ptr(dst), row_begin, row_end); }
};

struct sim_deep {
    gol_cuda_grid g;
    const uint64_t *src;
    uint64_t *dst;
    int64_t row_begin, row_end, live_begin, live_end, resident;
    int gens, shape;
    void run() const {
        emulate_life_deep(g, sim_ptr(src), sim_ptr(dst), row_begin, row_end, gens, shape,
                          live_begin, live_end, resident);
    }
};

struct sim_unpack {
    const uint64_t *src;
    uint8_t *dst;
    int64_t rows, nwords, width;
    void run() const { emulate_unpack_u8(sim_ptr(src), sim_ptr(dst), rows, nwords, width); }
};

struct sim_popcount {
    const uint64_t *src;
    int64_t words;
    unsigned long long *count;
    void run() const { emulate_popcount(sim_ptr(src), words, sim_ptr(count)); }
};

} // namespace

extern "C" void launch_life_edges(gol_cuda_grid g, const uint64_t *src_d, uint64_t *dst_d,
                                  cudaStream_t s) {
    const int64_t last = g.rows - 1;
    sim_launch(s, "life_edges", {sim_rows(g, src_d, -1, 2, CUDASIM_READ),
                                 sim_rows(g, src_d, last - 1, last + 2, CUDASIM_READ),
                                 sim_rows(g, dst_d, 0, 1, CUDASIM_WRITE),
                                 sim_rows(g, dst_d, last, last + 1, CUDASIM_WRITE)},
               sim_edges{g, src_d, dst_d});
    CUDA_CHECK(cudaGetLastError());
}

extern "C" void launch_life_rows(gol_cuda_grid g, const uint64_t *src_d, uint64_t *dst_d,
                                 int64_t row_begin, int64_t row_end, cudaStream_t s) {
    if (rows_geometry(g, row_begin, row_end).n <= 0) return;
    sim_launch(s, "life_rows", {sim_rows(g, src_d, row_begin - 1, row_end + 1, CUDASIM_READ),
                                sim_rows(g, dst_d, row_begin, row_end, CUDASIM_WRITE)},
               sim_rows_launch{g, src_d, dst_d, row_begin, row_end});
    CUDA_CHECK(cudaGetLastError());
}

extern "C" void launch_life_deep(gol_cuda_grid g, const uint64_t *src_d, uint64_t *dst_d,
                                 int64_t row_begin, int64_t row_end, int gens, int shape,
                                 int64_t live_begin, int64_t live_end,
                                 int ranks, cudaStream_t s) {
    if (!deep_launchable(row_begin, row_end, gens, shape)) return;
    int device = 0, sms = 0, per_sm = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, nullptr, 32 * kDeepWarps, 0));
    const int64_t lo = row_begin - gens > live_begin ? row_begin - gens : live_begin;
    const int64_t hi = row_end + gens < live_end ? row_end + gens : live_end;
    sim_launch(s, "life_deep", {sim_rows(g, src_d, lo, hi, CUDASIM_READ),
                                sim_rows(g, dst_d, row_begin, row_end, CUDASIM_WRITE)},
               sim_deep{g, src_d, dst_d, row_begin, row_end, live_begin, live_end,
                        gol_resident_share((int64_t)sms * per_sm, ranks), gens, shape});
    CUDA_CHECK(cudaGetLastError());
}

extern "C" void launch_unpack_u8(const uint64_t *src_d, uint8_t *dst_d, int64_t rows,
                                 int64_t nwords, int64_t width, cudaStream_t s) {
    if (unpack_geometry(rows, width).n <= 0) return;
    sim_launch(s, "unpack_u8",
               {{src_d, (size_t)(rows * nwords) * sizeof(uint64_t), CUDASIM_READ},
                {dst_d, (size_t)(rows * width), CUDASIM_WRITE}},
               sim_unpack{src_d, dst_d, rows, nwords, width});
    CUDA_CHECK(cudaGetLastError());
}

extern "C" void launch_popcount(const uint64_t *src_d, int64_t words, unsigned long long *count_d,
                                cudaStream_t s) {
    if (popcount_geometry(words).n <= 0) return;
    sim_launch(s, "popcount", {{src_d, (size_t)words * sizeof(uint64_t), CUDASIM_READ},
                               {count_d, sizeof *count_d, CUDASIM_READ | CUDASIM_WRITE}},
               sim_popcount{src_d, words, count_d});
    CUDA_CHECK(cudaGetLastError());
}

#else /* a real GPU */

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

/* Blocks of deep_kernel<K, Conway, Ragged, U> the current device holds at once: the occupancy
 * API's per SM, times the SMs; asked once per instantiation (one device a process). */
template <int K, bool Conway, bool Ragged, int U> int64_t deep_resident() {
    static int64_t resident = 0;
    if (resident == 0) {
        int device = 0, sms = 0, per_sm = 0;
        CUDA_CHECK(cudaGetDevice(&device));
        CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &per_sm, deep_kernel<K, Conway, Ragged, U>, 32 * kDeepWarps, 0));
        resident = (int64_t)(sms > 0 ? sms : 1) * (per_sm > 0 ? per_sm : 1);
    }
    return resident;
}

extern "C" void launch_life_deep(gol_cuda_grid g, const uint64_t *src_d, uint64_t *dst_d,
                                 int64_t row_begin, int64_t row_end, int gens, int shape,
                                 int64_t live_begin, int64_t live_end,
                                 int ranks, cudaStream_t s) {
    if (!deep_launchable(row_begin, row_end, gens, shape)) return;
    const bool ragged_torus = gol_deep_ragged(&g) != 0;
    with_deep_variant(g.rule, gens, ragged_torus, shape,
                      [&](auto k, auto conway, auto ragged, auto un) {
        constexpr int K = decltype(k)::value, U = decltype(un)::value;
        constexpr bool C = decltype(conway)::value, R = decltype(ragged)::value;
        const int64_t resident = gol_resident_share(deep_resident<K, C, R, U>(), ranks);
        const deep_geom geo = deep_geometry(g, src_d, dst_d, row_begin, row_end, gens, shape,
                                            live_begin, live_end, resident);
        deep_kernel<K, C, R, U><<<geo.launch.grid, geo.launch.block, 0, s>>>(geo.args);
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


#endif /* GOLMPI_CUDA_SIM */

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

/* One warp at a time (they share nothing: each reads src and writes its own rows of dst), its
 * lanes through deep_warp's phases together; the wavefront starts from garbage, as registers do. */
extern "C" void emulate_life_deep(gol_cuda_grid g, const uint64_t *src, uint64_t *dst,
                                  int64_t row_begin, int64_t row_end, int gens, int shape,
                                  int64_t live_begin, int64_t live_end, int64_t resident) {
    if (!deep_launchable(row_begin, row_end, gens, shape)) return;
    const deep_geom geo = deep_geometry(g, src, dst, row_begin, row_end, gens, shape, live_begin,
                                        live_end, resident);
    if (geo.launch.n <= 0) return;
    with_deep_variant(g.rule, gens, geo.ragged, shape,
                      [&](auto k, auto conway, auto ragged, auto un) {
        constexpr int K = decltype(k)::value, U = decltype(un)::value;
        std::vector<host_warp<K>> warp(1); /* 32 lanes of K levels: on the heap */
        thread_ix ix;
        ix.grid = geo.launch.grid;
        ix.block = geo.launch.block;
        for (unsigned by = 0; by < ix.grid.y; by++) /* 1: a 1-D grid */
            for (unsigned bx = 0; bx < ix.grid.x; bx++)
                for (unsigned ty = 0; ty < ix.block.y; ty++) {
                    ix.bid = make_uint3(bx, by, 0);
                    ix.tid = make_uint3(0, ty, 0);
                    deep_warp<K, decltype(conway)::value, decltype(ragged)::value, U>(
                        warp[0], ix, geo.args, 0x5a5aa5a5c3c33c3cull);
                }
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
