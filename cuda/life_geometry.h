/* The launch geometry of every CUDA kernel (cuda/life_cuda.cu): the grid and block of each
 * launch, and which rows and words each thread or warp takes. Plain C with no CUDA types, built
 * in every configuration (CPU-only included), so that tests/test_launch_geometry.c checks the
 * very shapes the launchers and the host emulation use at the sizes users run, on machines
 * without a GPU. The launchers call the *_geometry functions; the kernel bodies call the inline
 * item maps below, so the test and the GPU follow one map.
 *
 * Rows are numbered as in cuda/life_cuda.h: row 0 the first owned row, halo rows negative or
 * at rows and beyond. */
#ifndef GOLMPI_LIFE_GEOMETRY_H
#define GOLMPI_LIFE_GEOMETRY_H

#include <stdint.h>

#include "core/life_word.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Geometry and rule of one slab, passed by value to every update launch. */
typedef struct gol_cuda_grid {
    int64_t rows;   /* owned rows */
    int64_t nwords; /* words per row */
    int64_t width;  /* cells per row */
    int torus;      /* columns wrap */
    gol_rule rule;
} gol_cuda_grid;

/* The multi-generation kernel holds at most this many generations of a pass on chip (registers,
 * about 14 a generation a thread on sm_90: 8 takes 159 to 178, 16 spills past 255); a longer pass
 * is several launches, each 0.25/gens byte of global traffic per cell update. */
#define GOL_DEEP_GENS_MAX 8

/* The multi-generation kernel's shapes: exact variants of one kernel (life_cuda.cu's deep_tile),
 * all computing the same cells, that trade redundant rows for warps and registers for chain
 * length. Which one is fastest depends on the GPU and the slab, so the GPU a run is on chooses by
 * timing them (cuda/shape_choice.h); `baseline` is the reference shape and never leaves the
 * table. One row a shape: X(ID, name, gens_max, tile_min, unroll, what)
 *   gens_max  generations a launch at most (a pass of the backend is at most this long)
 *   tile_min  rows a warp's tile has at least, in generations of the launch: a tile of T rows
 *             reads T + 2 gens rows, so short tiles buy warps (and short chains) with rows
 *             computed twice
 *   unroll    input rows one iteration of the row loop takes (B3/S23 at an even number of
 *             generations a launch; otherwise 1: gol_deep_unroll): the
 *             wavefront's window rotates through registers, and an unrolled loop renames them
 *             instead of moving them (sm_90, 8 generations: 308 instructions a row unrolled
 *             twice, 395 not unrolled). Measured on an H200, it buys nothing (0.95-1.01x
 *             baseline): the moves issue to the FMA pipe, the rule's 260 others to the integer
 *             pipe, which bounds the loop. `unrolled` stays a candidate that another GPU may
 *             time faster; the other shapes keep the plain loop.
 * A shape is geometry (gens_max, tile_min), which every launch carries in its arguments, and an
 * unroll: the kernel instances are one per unroll (deep_kernel<K, Conway, Ragged, U>, 40 an
 * architecture), not one per shape, so a shape that only cuts the slab differently adds no
 * kernel to the build. */
#define GOL_SHAPES(X)                                                                              \
    X(BASELINE, "baseline", 8, 8, 1, "tiles of 8 gens rows or more, the row loop not unrolled")   \
    X(UNROLLED, "unrolled", 8, 8, 2, "baseline's tiles, the row loop unrolled twice")           \
    X(SHORT, "short", 8, 2, 1, "tiles of 2 gens rows or more: 4x the warps for small slabs")      \
    X(HALF, "half", 4, 4, 1, "4 generations a launch: fewer registers, more warps, short chains")

typedef enum gol_shape_id {
#define GOL_SHAPE_ENUM(id, name, gens_max, tile_min, unroll, what) GOL_SHAPE_##id,
    GOL_SHAPES(GOL_SHAPE_ENUM)
#undef GOL_SHAPE_ENUM
        GOL_SHAPE_COUNT
} gol_shape_id;

typedef struct gol_shape {
    const char *name;
    int gens_max, tile_min, unroll;
    const char *what;
} gol_shape;

extern const gol_shape gol_shapes[GOL_SHAPE_COUNT];
/* The shape called `name`, or -1. */
int gol_shape_find(const char *name);

/* The row loop's unroll a launch of shape `shape` at gens generations runs: the shape's for
 * Conway's rule (conway != 0) at an even gens, 1 otherwise. Unrolled, ptxas spills other rules
 * and odd gens on one architecture or another (CUDA 13: 12 bytes at 5 generations, any rule,
 * ragged torus, sm_90; 28 bytes at 5, Conway, sm_80), so those are never instantiated
 * unrolled; kernel_resources checks. The kernel's template parameter U is this. */
int gol_deep_unroll(int shape, int gens, int conway);
/* The largest unroll of the table: the instances are U = 1 .. GOL_DEEP_UNROLL_MAX. */
#define GOL_DEEP_UNROLL_MAX 2

/* The shapes' constants; the kernels' __launch_bounds__ are these block sizes. */
enum {
    GOL_BLOCK_WORDS = 128,    /* one-generation kernels: threads per block along a row */
    GOL_ROWS_PER_THREAD = 16, /* rows one interior thread walks down */
    GOL_MAX_GRID_Y = 65535,   /* CUDA's limit on gridDim.y */
    GOL_DEEP_WARPS = 4,       /* warps per deep block, each a work item of its own */
    GOL_DEEP_LANES = 32,      /* words a deep strip spans: one a lane */
    GOL_UNPACK_BLOCK = 256,
    GOL_POP_BLOCK = 256 /* a power of two: the block reduction halves it */
};
/* Deep launches come in whole waves (gol_deep_geometry): as many blocks as the device holds at
 * once (the occupancy API's, which the launcher asks), times the waves. Each warp takes one tile of
 * rows of one strip; tiles are at least 8 K rows, so the wavefront's start and end (2 K rows
 * computed for nothing) cost at most a fifth, and at most GOL_DEEP_TILE_MAX. The waves: about
 * GOL_DEEP_WARP_TARGET warps a launch, so that the edge bands' blocks (a higher-priority stream)
 * find a free slot soon, but no more than tiles of 8 K rows can fill. */
#define GOL_DEEP_WARP_TARGET INT64_C(4096)
#define GOL_DEEP_TILE_MAX INT64_C(1024)
#define GOL_POP_MAX_BLOCKS INT64_C(4096) /* grid-stride beyond that: enough to fill any GPU */

/* One launch: CUDA's grid and block (z is 1), and n, the extent that the threads' guard or
 * grid-stride loop covers (the kernel receives it as an argument). n <= 0: nothing to launch.
 * int64_t, so that a shape past CUDA's limits shows as such to a test instead of wrapping. */
typedef struct gol_launch {
    int64_t grid_x, grid_y;
    int64_t block_x, block_y;
    int64_t n;
} gol_launch;

/* How a deep launch cuts its rows: strips of GOL_DEEP_LANES words a row (stride of them written,
 * margin a side read for the wavefront's edge), tiles of tile_rows rows a strip; work item i is
 * tile i / strips of strip i % strips, one a warp. */
typedef struct gol_deep_cut {
    int64_t tile_rows, tiles; /* tiles a strip */
    int64_t strips;
    int margin, stride;
    int whole_row; /* a torus of at most 32 words: one strip whose shuffles wrap, no margin */
} gol_deep_cut;

typedef struct gol_deep_launch {
    gol_launch launch; /* n: work items */
    gol_deep_cut cut;
    int ragged; /* a torus whose last word is partial: the Ragged instantiation */
} gol_deep_launch;

/* launch_life_edges: rows 0 and rows - 1 (one row when rows == 1), thread t < n a word of them. */
gol_launch gol_edges_geometry(const gol_cuda_grid *g);
/* launch_life_rows: a thread a word (x), chunks of GOL_ROWS_PER_THREAD rows from row_begin over
 * blockIdx.y in a grid-stride loop; n: the chunks. */
gol_launch gol_rows_geometry(const gol_cuda_grid *g, int64_t row_begin, int64_t row_end);
int gol_deep_ragged(const gol_cuda_grid *g);
/* The tile height that makes strips x tiles work items fill whole waves of `resident` blocks with
 * tiles of at least tile_min x gens rows: as many waves as GOL_DEEP_WARP_TARGET warps make, fewer
 * where such tiles cannot fill them; within [tile_min x gens, GOL_DEEP_TILE_MAX]. */
int64_t gol_deep_tile_rows(int64_t span, int64_t strips, int gens, int tile_min,
                           int64_t resident);
/* Of `resident` blocks a GPU holds at once, the share of one of `ranks` ranks whose kernels run on
 * it side by side (MPS), rounded up so the ranks together fill it; at least 1. */
int64_t gol_resident_share(int64_t resident, int ranks);
/* launch_life_deep of rows [row_begin, row_end), gens generations, in shape `shape`, on a device
 * that holds `resident` blocks of the kernel at once: a 1-D grid of blocks of GOL_DEEP_WARPS
 * warps. n is 0 (nothing to launch) for gens outside 1..the shape's gens_max. */
gol_deep_launch gol_deep_geometry(const gol_cuda_grid *g, int64_t row_begin, int64_t row_end,
                                  int gens, int shape, int64_t resident);
/* launch_unpack_u8: a thread a cell (x), rows over blockIdx.y in a grid-stride loop; n: rows. */
gol_launch gol_unpack_geometry(int64_t rows, int64_t width);
/* launch_popcount: a grid-stride loop over n words. */
gol_launch gol_popcount_geometry(int64_t words);

/* Rows [*r0, *r1) of interior chunk `chunk` of rows [row_begin, row_end). */
static GOL_HD inline void gol_rows_chunk(int64_t row_begin, int64_t row_end, int64_t chunk,
                                         int64_t *r0, int64_t *r1) {
    *r0 = row_begin + chunk * GOL_ROWS_PER_THREAD;
    *r1 = *r0 + GOL_ROWS_PER_THREAD < row_end ? *r0 + GOL_ROWS_PER_THREAD : row_end;
}

/* Deep work item `item`: tile item / strips of strip item % strips, output rows [r0, r1). */
typedef struct gol_deep_item {
    int64_t strip, r0, r1;
} gol_deep_item;

static GOL_HD inline gol_deep_item gol_deep_item_of(const gol_deep_cut *s, int64_t row_begin,
                                                    int64_t row_end, int64_t item) {
    gol_deep_item it;
    const int64_t t = item / s->strips;
    it.strip = item % s->strips;
    it.r0 = row_begin + t * s->tile_rows;
    it.r1 = it.r0 + s->tile_rows < row_end ? it.r0 + s->tile_rows : row_end;
    return it;
}

/* Where lane `lane` of a deep warp sits in strip `strip`: the word it holds (j, -1 a dead word past
 * a dead row end), whether the strip writes that word (store: the lanes inside the margins, on
 * the row), and the lanes it reads its west and east neighbours from (itself at a strip end). */
typedef struct gol_deep_place {
    int64_t j;
    int west, east, store;
} gol_deep_place;

static GOL_HD inline gol_deep_place gol_deep_lane_place(const gol_deep_cut *s, int64_t nwords,
                                                        int torus, int64_t strip, int lane) {
    gol_deep_place p;
    if (s->whole_row) {
        p.j = lane < nwords ? lane : -1;
        p.west = lane >= nwords ? lane : lane == 0 ? (int)nwords - 1 : lane - 1;
        p.east = lane >= nwords ? lane : lane == nwords - 1 ? 0 : lane + 1;
        p.store = lane < nwords;
    } else {
        const int64_t u = strip * s->stride - s->margin + lane; /* unwrapped word */
        if (torus)
            p.j = u < 0 ? u + nwords : u >= nwords ? u - nwords : u;
        else
            p.j = u >= 0 && u < nwords ? u : -1;
        p.west = lane > 0 ? lane - 1 : lane;
        p.east = lane < GOL_DEEP_LANES - 1 ? lane + 1 : lane;
        p.store = lane >= s->margin && lane < GOL_DEEP_LANES - s->margin && u >= 0 && u < nwords;
    }
    return p;
}

#ifdef __cplusplus
}
#endif

#endif
