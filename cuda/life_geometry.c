#include "cuda/life_geometry.h"

#include <string.h>

const gol_shape gol_shapes[GOL_SHAPE_COUNT] = {
#define GOL_SHAPE_ROW(id, name, gens_max, tile_min, unroll, what)                                  \
    {name, gens_max, tile_min, unroll, what},
    GOL_SHAPES(GOL_SHAPE_ROW)
#undef GOL_SHAPE_ROW
};

int gol_shape_find(const char *name) {
    for (int i = 0; i < GOL_SHAPE_COUNT; i++)
        if (name && strcmp(name, gol_shapes[i].name) == 0) return i;
    return -1;
}

int gol_deep_unroll(int shape, int gens, int conway) {
    if (shape < 0 || shape >= GOL_SHAPE_COUNT || !conway || gens % 2 != 0) return 1;
    return gol_shapes[shape].unroll;
}

static int64_t blocks_for(int64_t n, int64_t block) { return (n + block - 1) / block; }
static int64_t capped_grid_y(int64_t n) { return n < GOL_MAX_GRID_Y ? n : GOL_MAX_GRID_Y; }

static gol_launch launch_1d(int64_t grid_x, int64_t grid_y, int64_t block_x, int64_t n) {
    gol_launch l = {grid_x, grid_y, block_x, 1, n};
    return l;
}

gol_launch gol_edges_geometry(const gol_cuda_grid *g) {
    const int64_t n = (g->rows == 1 ? 1 : 2) * g->nwords; /* rows 0 and rows - 1, or the one row */
    return launch_1d(blocks_for(n, GOL_BLOCK_WORDS), 1, GOL_BLOCK_WORDS, n);
}

gol_launch gol_rows_geometry(const gol_cuda_grid *g, int64_t row_begin, int64_t row_end) {
    const int64_t n = row_end > row_begin
                          ? (row_end - row_begin + GOL_ROWS_PER_THREAD - 1) / GOL_ROWS_PER_THREAD
                          : 0;
    /* narrow grids: no more threads per block than words, rounded up to whole warps */
    const int64_t block =
        g->nwords < GOL_BLOCK_WORDS ? (g->nwords + 31) / 32 * 32 : GOL_BLOCK_WORDS;
    return launch_1d(blocks_for(g->nwords, block), capped_grid_y(n), block, n);
}

int gol_deep_ragged(const gol_cuda_grid *g) { return g->torus && (g->width & 63) != 0; }

int64_t gol_deep_tile_rows(int64_t span, int64_t strips, int gens, int tile_min,
                           int64_t resident) {
    const int64_t min_tile = (int64_t)tile_min * gens, wave = resident * GOL_DEEP_WARPS;
    int64_t waves = (GOL_DEEP_WARP_TARGET + wave / 2) / wave;
    const int64_t fill = strips * (span / min_tile) / wave; /* waves that min tiles fill */
    if (waves > fill) waves = fill;
    if (waves < 1) waves = 1;
    int64_t per_strip = waves * wave / strips;
    if (per_strip < 1) per_strip = 1;
    int64_t tile = (span + per_strip - 1) / per_strip;
    if (tile > GOL_DEEP_TILE_MAX) tile = GOL_DEEP_TILE_MAX;
    if (tile < min_tile) tile = min_tile;
    return tile;
}

gol_deep_launch gol_deep_geometry(const gol_cuda_grid *g, int64_t row_begin, int64_t row_end,
                                  int gens, int shape, int64_t resident) {
    gol_deep_launch d;
    gol_deep_cut *s = &d.cut;
    if (resident < 1) resident = 1;
    d.ragged = gol_deep_ragged(g);
    s->whole_row = g->torus && g->nwords <= GOL_DEEP_LANES;
    s->margin = s->whole_row ? 0 : d.ragged ? 2 : 1;
    s->stride = GOL_DEEP_LANES - 2 * s->margin;
    s->strips = s->whole_row ? 1 : (g->nwords + s->stride - 1) / s->stride;
    const int64_t span = row_end > row_begin ? row_end - row_begin : 0;
    const gol_shape *sh = &gol_shapes[shape >= 0 && shape < GOL_SHAPE_COUNT ? shape : 0];
    s->tile_rows = gol_deep_tile_rows(span, s->strips, gens, sh->tile_min, resident);
    s->tiles = (span + s->tile_rows - 1) / s->tile_rows;
    const int64_t items = s->strips * s->tiles, wave = resident * GOL_DEEP_WARPS;
    /* whole waves of resident blocks, a warp an item; less than a wave of work: just its blocks */
    const int64_t blocks = items >= wave ? (items + wave - 1) / wave * resident
                                         : (items + GOL_DEEP_WARPS - 1) / GOL_DEEP_WARPS;
    d.launch.n = gens >= 1 && gens <= sh->gens_max ? items : 0;
    d.launch.grid_x = blocks > 0 ? blocks : 1;
    d.launch.grid_y = 1;
    d.launch.block_x = GOL_DEEP_LANES;
    d.launch.block_y = GOL_DEEP_WARPS;
    return d;
}

gol_launch gol_unpack_geometry(int64_t rows, int64_t width) {
    const int64_t n = rows > 0 ? rows : 0;
    return launch_1d(blocks_for(width, GOL_UNPACK_BLOCK), capped_grid_y(n), GOL_UNPACK_BLOCK, n);
}

gol_launch gol_popcount_geometry(int64_t words) {
    const int64_t n = words > 0 ? words : 0, blocks = blocks_for(n, GOL_POP_BLOCK);
    return launch_1d(blocks < GOL_POP_MAX_BLOCKS ? blocks : GOL_POP_MAX_BLOCKS, 1, GOL_POP_BLOCK,
                     n);
}

int64_t gol_resident_share(int64_t resident, int ranks) {
    if (ranks < 1) ranks = 1;
    const int64_t share = (resident + ranks - 1) / ranks;
    return share > 0 ? share : 1;
}
