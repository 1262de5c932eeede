/* The kernel checks that the GPU test (test_cuda_kernels) and the host emulation test
 * (test_cuda_emulate) share: random slabs, a reference written here from the rule's definition,
 * and the comparisons. The reference counts each cell's eight neighbours with plain ints and
 * looks the count up in the B/S masks; nothing here calls the rule code of core/ or kernels/, so
 * a mistake there cannot cancel out.
 *
 * A slab is rows owned rows between a top and a bottom halo row (life_cuda.h). Its halo rows are
 * the other edge of the grid (a whole torus), dead rows (a whole grid with a dead boundary) or
 * random rows (a slab between two others); its columns wrap or are dead. */
#ifndef GOLMPI_TESTS_KERNEL_CHECK_H
#define GOLMPI_TESTS_KERNEL_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "core/rule.h"
#include "kernels/life_cuda.h"

/* One generation of slab rows 1..rows into next (edge kernel, then the interior kernel on rows
 * 2..rows-1, as the backend runs them), the owned rows of src unpacked into u8 (rows x width) and
 * their live cells added to *pop. Host buffers; next and u8 come in poisoned, and what the
 * kernels do not write must come back as it was. */
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
static uint64_t kc_rng(void) {
    kc_rng_state ^= kc_rng_state << 13;
    kc_rng_state ^= kc_rng_state >> 7;
    kc_rng_state ^= kc_rng_state << 17;
    return kc_rng_state;
}

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

#endif
