/* The CUDA kernels' launch geometry (cuda/life_geometry.h) at the sizes users run, without a
 * GPU: every pass the backend makes (cuda/cuda_pass_split.h's cuda_pass_split of core/depth.h's
 * pass) at halo depths 1..GOL_DEEP_GENS_MAX, torus and dead, on grids of 4096^2 to 131072^2 and the
 * slabs 16384 x 4096 and 16384 x 1024, for devices holding 1 to 16 deep blocks an SM of 114 or 132
 * SMs, and every shape at the launch share gol_resident_share gives each of 1-4 ranks under MPS at
 * the registers the build gives its instance (check_shares). Each launch: within CUDA's limits; its
 * items (interior chunks, deep tiles of strips, lanes' words) cover every row and word of its range
 * exactly once, as the kernels' own item maps place them; a deep tile reads no row past the halo. A
 * pass's launches together are its rows.
 *
 *   test_launch_geometry [RESOURCES]
 * RESOURCES: the build's kernel resource table (cmake/kernel_resources.py); with it, the test also
 * prints the baseline shape's launch of each size's pass on a 132-SM sm_90 device (H100 SXM, H200):
 * warps in all, resident warps an SM, waves, and the longest dependent chain a warp walks. The
 * time those launches take is the model of a pass (cuda/shape_model.h, tools/golmpi-model). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/depth.h"
#include "cuda/cuda_pass_split.h"
#include "cuda/life_geometry.h"
#include "cuda/shape_model.h"
#include "tests/expect.h"

/* CUDA's limits on a launch (every architecture since sm_30). */
#define GRID_X_MAX INT64_C(2147483647)
#define BLOCK_THREADS_MAX 1024

typedef struct size_case {
    int64_t width, height;
} size_case;

static const size_case sizes[] = {{4096, 4096},   {8192, 8192},     {16384, 16384}, {32768, 32768},
                                  {65536, 65536}, {131072, 131072}, {16384, 4096},  {16384, 1024}};
enum { NSIZES = sizeof sizes / sizeof sizes[0] };

static char where[256]; /* the launch being checked, for the failure messages */

static void check_limits(const gol_launch *l) {
    EXPECT(l->grid_x >= 1 && l->grid_x <= GRID_X_MAX, "%s: grid.x %lld", where,
           (long long)l->grid_x);
    EXPECT(l->grid_y >= 1 && l->grid_y <= GOL_MAX_GRID_Y, "%s: grid.y %lld", where,
           (long long)l->grid_y);
    EXPECT(l->block_x >= 32 && l->block_x % 32 == 0 && l->block_x * l->block_y <= BLOCK_THREADS_MAX,
           "%s: block %lld x %lld", where, (long long)l->block_x, (long long)l->block_y);
}

/* Interior chunks: every row of [lo, hi) once, threads over every word of the row. */
static void check_rows(const gol_cuda_grid *g, int64_t lo, int64_t hi) {
    const gol_launch l = gol_rows_geometry(g, lo, hi);
    check_limits(&l);
    EXPECT(l.grid_x * l.block_x >= g->nwords && (l.grid_x - 1) * l.block_x < g->nwords,
           "%s: %lld threads a row for %lld words", where, (long long)(l.grid_x * l.block_x),
           (long long)g->nwords);
    int64_t next = lo; /* chunk c must start where chunk c - 1 ended */
    for (int64_t c = 0; c < l.n; c++) {
        int64_t r0, r1;
        gol_rows_chunk(lo, hi, c, &r0, &r1);
        if (r0 != next || r1 <= r0) {
            EXPECT(0, "%s: chunk %lld is rows [%lld, %lld), expected from %lld", where,
                   (long long)c, (long long)r0, (long long)r1, (long long)next);
            return;
        }
        next = r1;
    }
    EXPECT_EQ(next, hi, "%s: the chunks' last row", where);
}

static void check_edges(const gol_cuda_grid *g) {
    const gol_launch l = gol_edges_geometry(g);
    check_limits(&l);
    EXPECT_EQ(l.n, 2 * g->nwords, "%s: edge threads", where);
    EXPECT(l.grid_x * l.block_x >= l.n, "%s: %lld edge threads launched", where,
           (long long)(l.grid_x * l.block_x));
}

/* A deep launch of rows [lo, hi), gens generations in shape `shape`, halo depth k, `resident`
 * blocks at once. */
static gol_deep_launch check_deep(const gol_cuda_grid *g, int64_t lo, int64_t hi, int gens,
                                  int shape, int64_t k, int64_t resident, int *cover) {
    const gol_deep_launch d = gol_deep_geometry(g, lo, hi, gens, shape, resident);
    const int64_t tile_min = (int64_t)gol_shapes[shape].tile_min * gens;
    const gol_deep_cut *s = &d.cut;
    const int64_t items = s->strips * s->tiles, wave = resident * GOL_DEEP_WARPS;
    check_limits(&d.launch);
    EXPECT_EQ(d.launch.block_x * d.launch.block_y, 32 * GOL_DEEP_WARPS, "%s: deep block", where);
    EXPECT_EQ(d.launch.n, items, "%s: work items", where);
    const int64_t warps = d.launch.grid_x * d.launch.block_y;
    /* a warp an item, at most; whole waves of resident blocks once there is a wave of work */
    EXPECT(warps >= items, "%s: %lld warps for %lld items", where, (long long)warps,
           (long long)items);
    if (items >= wave)
        EXPECT(d.launch.grid_x % resident == 0 && warps - items < wave,
               "%s: %lld blocks for %lld items, waves of %lld blocks", where,
               (long long)d.launch.grid_x, (long long)items, (long long)resident);
    EXPECT(s->tile_rows >= tile_min && s->tile_rows <= GOL_DEEP_TILE_MAX + tile_min,
           "%s: tile of %lld rows", where, (long long)s->tile_rows);
    /* rows: each strip's tiles follow each other from lo to hi, items in order */
    int64_t *next = malloc((size_t)s->strips * sizeof *next);
    for (int64_t st = 0; st < s->strips; st++)
        next[st] = lo;
    int bad = 0;
    for (int64_t i = 0; i < items && !bad; i++) {
        const gol_deep_item it = gol_deep_item_of(s, lo, hi, i);
        bad = it.strip < 0 || it.strip >= s->strips || it.r0 != next[it.strip] || it.r1 <= it.r0 ||
              it.r0 - gens < -k || it.r1 + gens > g->rows + k;
        if (bad)
            EXPECT(0,
                   "%s: item %lld: strip %lld rows [%lld, %lld), expected from %lld within "
                   "the halo",
                   where, (long long)i, (long long)it.strip, (long long)it.r0, (long long)it.r1,
                   (long long)(it.strip >= 0 && it.strip < s->strips ? next[it.strip] : -1));
        else
            next[it.strip] = it.r1;
    }
    for (int64_t st = 0; st < s->strips && !bad; st++)
        if (next[st] != hi) {
            EXPECT(0, "%s: strip %lld ends at row %lld, not %lld", where, (long long)st,
                   (long long)next[st], (long long)hi);
            bad = 1;
        }
    free(next);
    /* words: the lanes that store cover every word of the row once */
    memset(cover, 0, (size_t)g->nwords * sizeof *cover);
    for (int64_t st = 0; st < s->strips; st++)
        for (int lane = 0; lane < GOL_DEEP_LANES; lane++) {
            const gol_deep_place p = gol_deep_lane_place(s, g->nwords, g->torus, st, lane);
            EXPECT(p.j >= -1 && p.j < g->nwords && p.west >= 0 && p.west < 32 && p.east >= 0 &&
                       p.east < 32,
                   "%s: strip %lld lane %d: word %lld, neighbours %d %d", where, (long long)st,
                   lane, (long long)p.j, p.west, p.east);
            if (p.store && p.j >= 0 && p.j < g->nwords) cover[p.j]++;
        }
    for (int64_t j = 0; j < g->nwords; j++)
        if (cover[j] != 1) {
            EXPECT(0, "%s: word %lld is written by %d lanes", where, (long long)j, cover[j]);
            break;
        }
    return d;
}

/* Every pass of halo depth k (n generations with valid halo rows left): its launches, and their
 * rows together against pass_whole_rows. */
static void check_pass(const gol_cuda_grid *g, int64_t k, int64_t valid, int n, int dead_top,
                       int dead_bottom, int64_t resident, int only_shape, int *cover) {
    const gol_pass ps = {.rows = g->rows,
                         .halo_left = valid,
                         .gens = n,
                         .dead_top = dead_top,
                         .dead_bottom = dead_bottom,
                         .tile = 0};
    const cuda_pass_rows split = cuda_pass_split(&ps, k);
    const gol_rows r[3] = {split.band[0], split.interior, split.band[1]};
    if (n == 1 && split.edges) check_edges(g);
    int64_t covered = 0;
    for (int i = 0; i < 3; i++) {
        if (r[i].lo >= r[i].hi || (n == 1 && split.edges && i != 1)) continue;
        covered += r[i].hi - r[i].lo;
        if (n == 1)
            check_rows(g, r[i].lo, r[i].hi);
        else /* every shape that runs passes of n generations */
            for (int shape = 0; shape < GOL_SHAPE_COUNT; shape++)
                if (n <= gol_shapes[shape].gens_max && (only_shape < 0 || shape == only_shape))
                    check_deep(g, r[i].lo, r[i].hi, n, shape, k, resident, cover);
    }
    if (split.edges) covered += g->rows == 1 ? 1 : 2;
    const gol_rows all = pass_whole_rows(&ps, n);
    EXPECT_EQ(covered, all.hi - all.lo, "%s: rows of the pass's launches", where);
}

static void check_sizes(void) {
    static const int64_t sms[] = {114, 132};
    for (int z = 0; z < NSIZES; z++) {
        const size_case *c = &sizes[z];
        const int64_t nwords = (c->width + 63) / 64;
        int *cover = malloc((size_t)nwords * sizeof *cover);
        for (int torus = 0; torus < 2; torus++) {
            /* one rank: a torus wraps to itself (neighbours on both sides), dead ends have none;
             * a rank between two others has neighbours either way, one at the end of a dead grid
             * has one */
            for (int ends = 0; ends < 3; ends++) {
                const int dead_top = !torus && ends >= 1, dead_bottom = !torus && ends == 2;
                if (torus && ends) continue;
                gol_cuda_grid g = {c->height, nwords, c->width, torus, {0, 0}};
                for (int64_t k = 1; k <= GOL_DEEP_GENS_MAX; k++)
                    for (int64_t valid = 1; valid <= k; valid++)
                        for (int n = 1; n <= valid; n++)
                            for (int m = 0; m < 2; m++)
                                for (int64_t per_sm = 1; per_sm <= 16; per_sm++) {
                                    snprintf(where, sizeof where,
                                             "%lldx%lld %s%s depth %lld valid %lld gens %d, "
                                             "%lld SMs x %lld blocks",
                                             (long long)c->width, (long long)c->height,
                                             torus ? "torus" : "dead",
                                             torus       ? ""
                                             : ends == 1 ? " top"
                                             : ends == 2 ? " both"
                                                         : " middle",
                                             (long long)k, (long long)valid, n, (long long)sms[m],
                                             (long long)per_sm);
                                    check_pass(&g, k, valid, n, dead_top, dead_bottom,
                                               sms[m] * per_sm, -1, cover);
                                    if (n == 1) break; /* no deep launch: resident is moot */
                                }
                /* frames and the population of the whole slab */
                snprintf(where, sizeof where, "%lldx%lld unpack", (long long)c->width,
                         (long long)c->height);
                gol_launch u = gol_unpack_geometry(c->height, c->width);
                check_limits(&u);
                EXPECT(u.grid_x * u.block_x >= c->width && u.n == c->height, "%s", where);
                snprintf(where, sizeof where, "%lldx%lld popcount", (long long)c->width,
                         (long long)c->height);
                gol_launch p = gol_popcount_geometry(c->height * nwords);
                check_limits(&p);
                EXPECT(p.grid_x <= GOL_POP_MAX_BLOCKS && p.n == c->height * nwords, "%s", where);
            }
        }
        free(cover);
    }
}

/* sm_90's occupancy for a block of `threads` using `regs` registers a thread and no shared
 * memory, as cudaOccupancyMaxActiveBlocksPerMultiprocessor answers it: registers are given a warp
 * at a time in units of 256, 64 Ki a SM, at most 64 warps and 32 blocks a SM. */
static int64_t sm90_blocks_per_sm(int regs, int threads) {
    const int64_t warps = (threads + 31) / 32, per_warp = (regs * 32 + 255) / 256 * 256;
    int64_t by_regs = 65536 / per_warp / warps, by_warps = 64 / warps;
    int64_t b = by_regs < by_warps ? by_regs : by_warps;
    return b < 32 ? b : 32;
}

/* Ranks sharing one GPU under MPS: each launch is sized to gol_resident_share of the blocks the
 * device holds at the registers the build gives that instance (cuda/shape_model_table.c, which
 * the test shape_model_table compares with the build), for 1-4 ranks on 114 and 132 SMs; each
 * rank's slab is the size's rows over the ranks. Shares that are no multiple of the SMs (396 / 4
 * = 99) are the case the 1..16 blocks an SM above never makes. Every shape, both rule classes. */
static void check_shares(void) {
    static const int64_t sms[] = {114, 132};
    int shares = 0;
    for (int z = 0; z < NSIZES; z++) {
        const size_case *c = &sizes[z];
        const int64_t nwords = (c->width + 63) / 64;
        int *cover = malloc((size_t)nwords * sizeof *cover);
        for (int ranks = 1; ranks <= 4; ranks++)
            for (int torus = 0; torus < 2; torus++) {
                const int64_t rows = c->height / ranks;
                gol_cuda_grid g = {rows, nwords, c->width, torus, {0, 0}};
                const int ragged = gol_deep_ragged(&g);
                for (int64_t k = 2; k <= GOL_DEEP_GENS_MAX; k++)
                    for (int n = 2; n <= k; n++)
                        for (int shape = 0; shape < GOL_SHAPE_COUNT; shape++)
                            for (int conway = 0; conway < 2; conway++)
                                for (int m = 0; m < 2; m++) {
                                    if (n > gol_shapes[shape].gens_max) continue;
                                    const int u = gol_deep_unroll(shape, n, conway);
                                    const shape_model_instance *in =
                                        shape_model_instance_find(90, n, conway, ragged, u);
                                    EXPECT(in != NULL,
                                           "deep_kernel<%d, %d, %d, %d>: not in the "
                                           "build table",
                                           n, conway, ragged, u);
                                    if (!in) continue;
                                    const int64_t device =
                                        sms[m] * sm90_blocks_per_sm(in->regs, 32 * GOL_DEEP_WARPS);
                                    const int64_t share = gol_resident_share(device, ranks);
                                    EXPECT(share * ranks >= device &&
                                               share * ranks < device + ranks,
                                           "%d ranks' shares of %lld blocks: %lld each", ranks,
                                           (long long)device, (long long)share);
                                    snprintf(where, sizeof where,
                                             "%lldx%lld / %d ranks (MPS) %s depth %lld gens %d "
                                             "%s %s, %lld SMs: share %lld of %lld blocks",
                                             (long long)c->width, (long long)c->height, ranks,
                                             torus ? "torus" : "dead", (long long)k, n,
                                             gol_shapes[shape].name, conway ? "B3/S23" : "other",
                                             (long long)sms[m], (long long)share,
                                             (long long)device);
                                    /* a rank between two others, and one at a dead end */
                                    check_pass(&g, k, k, n, 0, 0, share, shape, cover);
                                    if (!torus) check_pass(&g, k, k, n, 1, 0, share, shape, cover);
                                    shares++;
                                }
            }
        free(cover);
    }
    printf("MPS shares: %d launches checked at the build's registers\n", shares);
}

/* ---- The model, from the build's registers ---- */

/* Registers of the sm_90 instance whose demangled name starts with `name` in the table. */
static int table_regs(const char *path, const char *name) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[512];
    int regs = -1;
    while (fgets(line, sizeof line, f)) {
        char arch[32], kernel[256];
        int r;
        if (sscanf(line, "%31[^\t]\t%255[^\t]\t%d", arch, kernel, &r) == 3 &&
            !strcmp(arch, "sm_90") && !strcmp(kernel, name))
            regs = r;
    }
    fclose(f);
    return regs;
}

static void print_model(const char *table) {
    const int64_t sms = 132;
    printf("model: one rank, B3/S23, a pass of K generations at halo depth K, %lld SMs (sm_90: "
           "H100 SXM, H200)\n",
           (long long)sms);
    printf("%-16s %-5s %2s %4s %7s %9s %8s %6s %6s %6s\n", "grid", "edge", "K", "regs", "warps",
           "res/SM", "act/SM", "waves", "tile", "chain");
    for (int z = 0; z < NSIZES; z++) {
        const size_case *c = &sizes[z];
        for (int torus = 1; torus >= 0; torus--)
            for (int K = 1; K <= GOL_DEEP_GENS_MAX; K++) {
                char name[128];
                const int64_t nwords = (c->width + 63) / 64;
                gol_cuda_grid g = {c->height, nwords, c->width, torus, {0, 0}};
                const gol_pass ps = {.rows = c->height,
                                     .halo_left = K,
                                     .gens = K,
                                     .dead_top = !torus,
                                     .dead_bottom = !torus,
                                     .tile = 0};
                const cuda_pass_rows split = cuda_pass_split(&ps, K);
                const gol_rows in = split.interior;
                int64_t warps, resident_warps, tile, chain, waves;
                int regs;
                if (K == 1) { /* the interior_kernel<true>: a thread a word, 16 rows a chunk */
                    snprintf(name, sizeof name, "interior_kernel<true>");
                    regs = table_regs(table, name);
                    if (regs < 0) continue;
                    const gol_launch l = gol_rows_geometry(&g, in.lo, in.hi);
                    const int64_t per_sm = sm90_blocks_per_sm(regs, (int)l.block_x);
                    warps = l.grid_x * l.grid_y * l.block_x / 32;
                    resident_warps = per_sm * l.block_x / 32;
                    tile = GOL_ROWS_PER_THREAD;
                    chain = (l.n + l.grid_y - 1) / l.grid_y * GOL_ROWS_PER_THREAD;
                } else { /* deep_kernel<K, true, false, 1>: baseline's, whole words */
                    snprintf(name, sizeof name, "deep_kernel<%d, true, false, 1>", K);
                    regs = table_regs(table, name);
                    if (regs < 0) continue;
                    const int64_t per_sm = sm90_blocks_per_sm(regs, 32 * GOL_DEEP_WARPS);
                    const gol_deep_launch d =
                        gol_deep_geometry(&g, in.lo, in.hi, K, GOL_SHAPE_BASELINE, sms * per_sm);
                    warps = d.launch.n;
                    resident_warps = per_sm * GOL_DEEP_WARPS;
                    tile = d.cut.tile_rows;
                    chain = (tile + 2 * (int64_t)K) * K; /* rows of the wavefront, K steps a row */
                }
                waves = (warps + sms * resident_warps - 1) / (sms * resident_warps);
                const double active =
                    (double)(warps < sms * resident_warps ? warps : sms * resident_warps) /
                    (double)sms;
                char grid[32];
                snprintf(grid, sizeof grid, "%lldx%lld", (long long)c->width, (long long)c->height);
                printf("%-16s %-5s %2d %4d %7lld %9lld %8.1f %6lld %6lld %6lld\n", grid,
                       torus ? "torus" : "dead", K, regs, (long long)warps,
                       (long long)resident_warps, active, (long long)waves, (long long)tile,
                       (long long)chain);
            }
    }
}

int main(int argc, char **argv) {
    check_sizes();
    check_shares();
    if (argc > 1) print_model(argv[1]);
    if (failures) {
        fprintf(stderr, "%d launch geometry check(s) failed\n", failures);
        return 1;
    }
    printf("launch geometry: every launch within CUDA's limits, every row and word once\n");
    return 0;
}
