/* The kernel checks that the GPU test (test_cuda_kernels) and the host emulation test
 * (test_cuda_emulate) share: random slabs, a reference written here from the rule's definition,
 * and the comparisons. The reference counts each cell's eight neighbours with plain ints and
 * looks the count up in the B/S masks; nothing here calls the rule code of core/, cpu/ or cuda/, so
 * a mistake there cannot cancel out.
 *
 * A slab is rows owned rows between a top and a bottom halo row. Its halo rows are
 * the other edge of the grid (a whole torus), dead rows (a whole grid with a dead boundary) or
 * random rows (a slab between two others); its columns wrap or are dead. */
#ifndef GOLMPI_TESTS_KERNEL_CHECK_H
#define GOLMPI_TESTS_KERNEL_CHECK_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "core/rule.h"
#include "cuda/life_cuda.h"
#include "tests/xorshift.h"

/* One generation of the owned rows into next (the edge kernel on the first and last owned rows,
 * the interior kernel on the rows between, as the backend runs a one-generation pass), the owned
 * rows of src unpacked into u8 (rows x width) and their live cells added to *pop. Host buffers of
 * rows + 2 rows from the top halo row (the launchers take them from the next row, the first
 * owned); next and u8 come in poisoned, and what the kernels do not write must come back as it
 * was. */
typedef void (*kernel_runner)(gol_cuda_grid g, const uint64_t *src, uint64_t *next, uint8_t *u8,
                              unsigned long long *pop);

typedef enum { HALO_GRID_EDGE, HALO_RANDOM } halo_kind;

typedef struct kernel_case {
    int64_t width, rows;
    int torus; /* columns wrap; with HALO_GRID_EDGE the rows wrap too */
    halo_kind halo;
    gol_rule rule;
} kernel_case;

static uint64_t kc_rng_state = 0x853c49e6748fea9bull;
static uint64_t kc_rng(void) { return xorshift64(&kc_rng_state); }

/* Cell (r, x) of the next generation; cells holds rows + 2 rows of width cells, halos included. */
static int kc_ref_cell(const uint8_t *cells, int64_t width, int64_t r, int64_t x, int torus,
                       gol_rule rule) {
    int n = 0;
    for (int64_t dy = -1; dy <= 1; dy++)
        for (int64_t dx = -1; dx <= 1; dx++) {
            if (dy == 0 && dx == 0) continue;
            int64_t xx = x + dx;
            if (xx < 0 || xx >= width) {
                if (!torus) continue; /* dead beyond the edge */
                xx = (xx + width) % width;
            }
            n += cells[(r + dy) * width + xx];
        }
    int mask = cells[r * width + x] ? rule.survive : rule.birth;
    return (mask >> n) & 1;
}

static const char *kc_name(const kernel_case *c, char *buf, size_t len) {
    char rule[32];
    rule_format(c->rule, rule, sizeof rule);
    snprintf(buf, len, "%" PRId64 "x%" PRId64 " %s, %s halos, %s", c->width, c->rows,
             c->torus ? "torus" : "dead", c->halo == HALO_RANDOM ? "random" : "grid-edge", rule);
    return buf;
}

/* A mismatch: the first few of a case are printed with what, where, expected and got. */
static int64_t kc_bad(int64_t bad, const char *name, const char *what, int64_t r, int64_t i,
                      uint64_t want, uint64_t got) {
    if (bad < 4)
        printf("  %s: %s row %" PRId64 " [%" PRId64 "]: expected %#" PRIx64 ", got %#" PRIx64 "\n",
               name, what, r, i, want, got);
    return bad + 1;
}

/* The random cells of a case, halo rows included (0/1 bytes, (rows + 2) x width). */
static uint8_t *kc_cells(const kernel_case *c) {
    int64_t w = c->width, rows = c->rows;
    uint8_t *cells = gol_xcalloc((size_t)((rows + 2) * w), 1);
    for (int64_t i = w; i < (rows + 1) * w; i++)
        cells[i] = kc_rng() % 8 < 3;
    if (c->halo == HALO_RANDOM) {
        for (int64_t x = 0; x < w; x++) {
            cells[x] = kc_rng() % 8 < 3;
            cells[(rows + 1) * w + x] = kc_rng() % 8 < 3;
        }
    } else if (c->torus) {
        memcpy(cells, cells + rows * w, (size_t)w);
        memcpy(cells + (rows + 1) * w, cells + w, (size_t)w);
    }
    return cells;
}

/* Mismatches of one case (0 when the kernels are right). */
static int64_t kc_run_case(const kernel_case *c, kernel_runner run) {
    char name[160];
    kc_name(c, name, sizeof name);
    const int64_t w = c->width, rows = c->rows, nw = (w + 63) / 64, words = (rows + 2) * nw;
    const uint64_t poison = 0xa5a5a5a5a5a5a5a5ull;
    uint8_t *cells = kc_cells(c);
    uint64_t *src = gol_xcalloc((size_t)words, sizeof *src);
    uint64_t *next = gol_xmalloc((size_t)words * sizeof *next);
    uint8_t *u8 = gol_xmalloc((size_t)(rows * w));
    for (int64_t r = 0; r < rows + 2; r++)
        for (int64_t x = 0; x < w; x++)
            if (cells[r * w + x]) src[r * nw + x / 64] |= (uint64_t)1 << (x % 64);
    for (int64_t i = 0; i < words; i++)
        next[i] = poison;
    memset(u8, 0xee, (size_t)(rows * w));
    unsigned long long pop = 0;
    gol_cuda_grid g = {rows, nw, w, c->torus, c->rule};
    run(g, src, next, u8, &pop);

    int64_t bad = 0, live = 0;
    for (int64_t r = 0; r < rows + 2; r++)
        for (int64_t j = 0; j < nw; j++) {
            uint64_t want = poison; /* the halo rows are not the kernels' to write */
            if (r >= 1 && r <= rows) {
                want = 0; /* and the padding past the width stays dead */
                for (int64_t x = j * 64; x < w && x < j * 64 + 64; x++)
                    want |= (uint64_t)kc_ref_cell(cells, w, r, x, c->torus, c->rule) << (x % 64);
            }
            if (next[r * nw + j] != want)
                bad = kc_bad(bad, name, "next generation: slab", r, j, want, next[r * nw + j]);
        }
    for (int64_t r = 0; r < rows; r++)
        for (int64_t x = 0; x < w; x++) {
            uint8_t want = cells[(r + 1) * w + x];
            live += want;
            if (u8[r * w + x] != want)
                bad = kc_bad(bad, name, "unpack: owned", r, x, want, u8[r * w + x]);
        }
    if ((int64_t)pop != live)
        bad = kc_bad(bad, name, "popcount: owned rows", rows, 0, (uint64_t)live, pop);
    if (bad) printf("FAIL %s: %" PRId64 " mismatches\n", name, bad);
    free(cells);
    free(src);
    free(next);
    free(u8);
    return bad;
}

/* Every case: odd and round widths (one partial word, one word, many, more than one block of
 * threads), one- and two-row slabs, both boundaries, grid-edge and random halos, Conway's rule
 * (the GPU's Conway instantiation) and others; then slabs with more row chunks than a grid's y
 * dimension holds and more words than the popcount grid covers (the grid-stride loops). Returns
 * the number of failed cases. */
static int kernel_check_all(kernel_runner run) {
    static const int64_t widths[] = {1, 2, 5, 63, 64, 65, 77, 127, 128, 130, 200, 1000, 4097};
    static const int64_t heights[] = {1, 2, 3, 4, 17, 33, 40, 333};
    static const gol_rule rules[] = {
        {GOL_RULE_CONWAY_BIRTH, GOL_RULE_CONWAY_SURVIVE}, /* B3/S23 */
        {(1u << 3) | (1u << 6), GOL_RULE_CONWAY_SURVIVE}, /* B36/S23 */
        {1u << 2, 0},                                     /* B2/S */
        {0xaa, 0xaa},                                     /* B1357/S1357 */
        {1u, 1u << 8},                                    /* B0/S8: padding must stay dead */
        {0x1df, 0x1ef},                                   /* B01234678/S01235678 */
    };
    int failed = 0, ran = 0;
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++)
        for (size_t hi = 0; hi < sizeof heights / sizeof heights[0]; hi++)
            for (int torus = 0; torus < 2; torus++)
                for (int halo = 0; halo < 2; halo++)
                    for (size_t ri = 0; ri < sizeof rules / sizeof rules[0]; ri++) {
                        kernel_case c = {widths[wi], heights[hi], torus, (halo_kind)halo,
                                         rules[ri]};
                        failed += kc_run_case(&c, run) != 0;
                        ran++;
                    }
    const kernel_case big[] = {
        {8257, 3, 1, HALO_GRID_EDGE, rules[0]}, /* 129 words: two interior blocks along x */
        {8257, 20, 0, HALO_RANDOM, rules[1]},
        {3, 1100000, 1, HALO_GRID_EDGE, rules[0]}, /* 68750 row chunks > 65535 */
        {3, 1100000, 0, HALO_RANDOM, rules[4]},
        {70, 1100000, 1, HALO_RANDOM, rules[1]}, /* 2.2M words > 4096 x 256 */
    };
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
        failed += kc_run_case(&big[i], run) != 0;
        ran++;
    }
    printf("%d of %d kernel cases failed\n", failed, ran);
    return failed;
}

/* The multi-generation kernel (launch_life_deep): a slab of rows owned rows with `gens` halo rows
 * a side, advanced gens generations in passes of at most the shape's gens_max, each pass one or
 * more launches over the rows that are still valid, as the CUDA backend runs an exchange cycle of
 * depth gens. One launch: host buffers of g.rows + 2 halo rows, src and dst at their first (slab
 * row -halo); the other arguments as launch_life_deep's. */
typedef void (*deep_runner)(gol_cuda_grid g, const uint64_t *src, uint64_t *dst, int64_t halo,
                            int64_t row_begin, int64_t row_end, int gens, int shape,
                            int64_t live_begin, int64_t live_end);

/* What lies past a slab end: the grid's other end (a whole torus), a dead boundary, or the rows
 * of a neighbouring rank (random). */
typedef enum { EDGE_WRAP, EDGE_DEAD, EDGE_SLAB } deep_edge;

typedef struct deep_case {
    int64_t width, rows;
    int torus; /* columns wrap */
    deep_edge top, bottom;
    gol_rule rule;
    int64_t gens;
    int pieces; /* launches a pass is cut into along the rows: 1, 2 or 3 (band, interior, band) */
    int shape;  /* the kernel's shape (cuda/life_geometry.h's GOL_SHAPES) */
} deep_case;

static const char *deep_edge_name(deep_edge e) {
    return e == EDGE_WRAP ? "wrap" : e == EDGE_DEAD ? "dead" : "slab";
}

/* The reference: (rows + 2 gens) x width cells, array row a being slab row a - gens. Generation i
 * computes the rows still valid (at least i from an end that is another rank's rows); past a dead
 * end the rows stay dead, at every generation; a torus refills its halo from the owned rows
 * before each generation. Only the owned rows of the result are compared. */
static void kc_deep_reference(const deep_case *c, uint8_t *cells) {
    const int64_t w = c->width, k = c->gens, R = c->rows + 2 * k;
    uint8_t *next = gol_xmalloc((size_t)(R * w));
    for (int64_t i = 1; i <= k; i++) {
        if (c->top == EDGE_WRAP)
            for (int64_t a = 0; a < R; a++) {
                int64_t r = ((a - k) % c->rows + c->rows) % c->rows;
                if (a < k || a >= k + c->rows) memcpy(cells + a * w, cells + (k + r) * w, (size_t)w);
            }
        memcpy(next, cells, (size_t)(R * w));
        int64_t lo = c->top == EDGE_SLAB ? i : k, hi = c->bottom == EDGE_SLAB ? R - i : k + c->rows;
        for (int64_t a = lo; a < hi; a++)
            for (int64_t x = 0; x < w; x++)
                next[a * w + x] = (uint8_t)kc_ref_cell(cells, w, a, x, c->torus, c->rule);
        memcpy(cells, next, (size_t)(R * w));
    }
    free(next);
}

static int64_t kc_deep_launches(const deep_case *c, deep_runner run, gol_cuda_grid g,
                                uint64_t *buf[2], int64_t halo) {
    const int64_t rows = c->rows, k = c->gens;
    int cur = 0;
    for (int64_t valid = k; valid > 0;) {
        const int most = gol_shapes[c->shape].gens_max;
        int n = (int)(valid < most ? valid : most);
        int64_t lo = c->top == EDGE_DEAD ? 0 : -(valid - n);
        int64_t hi = c->bottom == EDGE_DEAD ? rows : rows + valid - n;
        /* live: everything but the rows past a dead end (far enough to never matter) */
        int64_t live_lo = c->top == EDGE_DEAD ? 0 : -2 * halo - 1;
        int64_t live_hi = c->bottom == EDGE_DEAD ? rows : rows + 2 * halo + 1;
        int64_t cut[4] = {lo, hi, hi, hi};
        for (int p = 1; p < c->pieces; p++) cut[p] = lo + (hi - lo) * p / c->pieces;
        cut[c->pieces] = hi;
        for (int p = 0; p < c->pieces; p++)
            run(g, buf[cur], buf[cur ^ 1], halo, cut[p], cut[p + 1], n, c->shape, live_lo, live_hi);
        cur ^= 1;
        valid -= n;
    }
    return cur;
}

/* Mismatches of one deep case (0 when the kernel is right). The halo rows past a dead end hold
 * garbage in src: the kernel must not read them. With a single pass, src must come back as it
 * was and every dst row outside the owned rows untouched. */
static int64_t kc_run_deep_case(const deep_case *c, deep_runner run) {
    char name[200], rule[32];
    rule_format(c->rule, rule, sizeof rule);
    snprintf(name, sizeof name,
             "deep %s %" PRId64 "x%" PRId64 " %s columns, top %s, bottom %s, %s, %" PRId64
             " generations, %d piece(s)",
             gol_shapes[c->shape].name, c->width, c->rows, c->torus ? "torus" : "dead",
             deep_edge_name(c->top), deep_edge_name(c->bottom), rule, c->gens, c->pieces);
    const int64_t w = c->width, rows = c->rows, k = c->gens, R = rows + 2 * k;
    const int64_t nw = (w + 63) / 64, words = R * nw;
    const uint64_t poison = 0xa5a5a5a5a5a5a5a5ull;
    uint8_t *cells = gol_xcalloc((size_t)(R * w), 1);
    for (int64_t a = 0; a < R; a++) {
        bool dead = (a < k && c->top == EDGE_DEAD) || (a >= k + rows && c->bottom == EDGE_DEAD);
        for (int64_t x = 0; x < w && !dead; x++) cells[a * w + x] = kc_rng() % 8 < 3;
    }
    uint64_t *buf[2], *orig = gol_xcalloc((size_t)words, sizeof *orig);
    for (int64_t a = 0; a < R; a++) {
        bool dead = (a < k && c->top == EDGE_DEAD) || (a >= k + rows && c->bottom == EDGE_DEAD);
        for (int64_t x = 0; x < w; x++)
            if (cells[a * w + x]) orig[a * nw + x / 64] |= (uint64_t)1 << (x % 64);
        for (int64_t j = 0; j < nw && dead; j++) orig[a * nw + j] = kc_rng(); /* never read */
    }
    if (c->top == EDGE_WRAP) /* the halo of a whole torus is its other end */
        for (int64_t a = 0; a < R; a++)
            if (a < k || a >= k + rows) {
                int64_t r = ((a - k) % rows + rows) % rows;
                memcpy(cells + a * w, cells + (k + r) * w, (size_t)w);
                memcpy(orig + a * nw, orig + (k + r) * nw, (size_t)nw * sizeof *orig);
            }
    for (int b = 0; b < 2; b++) buf[b] = gol_xmalloc((size_t)words * sizeof *orig);
    memcpy(buf[0], orig, (size_t)words * sizeof *orig);
    for (int64_t i = 0; i < words; i++) buf[1][i] = poison;
    gol_cuda_grid g = {rows, nw, w, c->torus, c->rule};
    int last = (int)kc_deep_launches(c, run, g, buf, k);
    kc_deep_reference(c, cells);

    int64_t bad = 0;
    bool one_pass = k <= gol_shapes[c->shape].gens_max;
    for (int64_t a = 0; a < R; a++)
        for (int64_t j = 0; j < nw; j++) {
            uint64_t got = buf[last][a * nw + j], want;
            if (a >= k && a < k + rows) {
                want = 0;
                for (int64_t x = j * 64; x < w && x < j * 64 + 64; x++)
                    want |= (uint64_t)cells[a * w + x] << (x % 64);
            } else if (one_pass) {
                want = poison;
            } else {
                continue;
            }
            if (got != want) bad = kc_bad(bad, name, "deep: slab", a - k, j, want, got);
        }
    if (one_pass && memcmp(buf[0], orig, (size_t)words * sizeof *orig))
        bad = kc_bad(bad, name, "deep: src changed", 0, 0, 0, 1);
    if (bad) printf("FAIL %s: %" PRId64 " mismatches\n", name, bad);
    free(cells);
    free(orig);
    free(buf[0]);
    free(buf[1]);
    return bad;
}

/* Every deep case: widths around one word, one strip (30 words, 32 for a whole torus row), two
 * strips, ragged and round; one-row to multi-tile slabs; a whole torus, a whole dead grid, a slab
 * between two others (columns wrapping or dead), the first and the last slab of a dead grid;
 * Conway's rule, B36/S23 and B0 rules; depths 1, 2, 3, 7, 8 (one launch a pass at most), 16 and
 * 64 (passes of the shape's gens_max, as an exchange cycle runs them); passes in one to three
 * launches; one kernel shape.
 * The largest combinations are left out so the reference stays quick. */
static int deep_check_all(deep_runner run, int shape) {
    static const int64_t widths[] = {1, 5, 64, 65, 127, 200, 1920, 2048, 2049, 2112, 4097};
    static const int64_t heights[] = {1, 2, 3, 17, 40};
    static const int64_t depths[] = {1, 2, 3, 7, 8, 16, 64};
    static const struct {
        int torus;
        deep_edge top, bottom;
    } edges[] = {
        {1, EDGE_WRAP, EDGE_WRAP}, {0, EDGE_DEAD, EDGE_DEAD}, {1, EDGE_SLAB, EDGE_SLAB},
        {0, EDGE_SLAB, EDGE_SLAB}, {0, EDGE_DEAD, EDGE_SLAB}, {0, EDGE_SLAB, EDGE_DEAD},
    };
    static const gol_rule rules[] = {
        {GOL_RULE_CONWAY_BIRTH, GOL_RULE_CONWAY_SURVIVE}, /* B3/S23 */
        {(1u << 3) | (1u << 6), GOL_RULE_CONWAY_SURVIVE}, /* B36/S23 */
        {1u, 1u << 8},                                    /* B0/S8: the outside stays dead */
        {0x1df, 0x1ef},                                   /* B01234678/S01235678 */
    };
    int failed = 0, ran = 0, n = 0;
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++)
        for (size_t hi = 0; hi < sizeof heights / sizeof heights[0]; hi++)
            for (size_t ei = 0; ei < sizeof edges / sizeof edges[0]; ei++)
                for (size_t di = 0; di < sizeof depths / sizeof depths[0]; di++, n++) {
                    int64_t wd = widths[wi], h = heights[hi], k = depths[di];
                    if (wd * (h + 2 * k) * k > 3000000) continue;
                    deep_case c = {wd,       h, edges[ei].torus, edges[ei].top, edges[ei].bottom,
                                   rules[n % 4], k, 1 + (int)(n / 4 % 3), shape};
                    failed += kc_run_deep_case(&c, run) != 0;
                    ran++;
                }
    /* the rule each combination above did not get, on one mid-sized shape */
    for (size_t ri = 0; ri < sizeof rules / sizeof rules[0]; ri++)
        for (size_t ei = 0; ei < sizeof edges / sizeof edges[0]; ei++)
            for (size_t di = 0; di < sizeof depths / sizeof depths[0]; di++) {
                deep_case c = {2049, 17, edges[ei].torus, edges[ei].top, edges[ei].bottom,
                               rules[ri], depths[di], 2, shape};
                if (c.gens > 16) c.width = 130;
                failed += kc_run_deep_case(&c, run) != 0;
                ran++;
            }
    printf("%d of %d deep kernel cases failed\n", failed, ran);
    return failed;
}

#endif
