#include "src/init.h"

#include <string.h>

#include "core/random_start.h"

/* The clones give AVX-512/AVX2 hashes where the CPU has them, from one portable binary; the word
 * function is inlined into each clone and vectorised there (64 lanes, one word). */
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) static void
random_row(uint64_t row_key, uint64_t threshold, int64_t width, int64_t nwords, uint64_t *row) {
    for (int64_t w = 0; w < nwords; w++)
        row[w] = init_random_word(row_key, threshold, w, width);
}

void init_random(uint64_t seed, double density, const gol_slab *slab, uint64_t *rows_h) {
    uint64_t threshold = init_threshold(density), run_key = init_run_key(seed);
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < slab->rows; r++)
        random_row(init_row_key(run_key, slab->row0 + r), threshold, slab->width, slab->nwords,
                   rows_h + r * slab->nwords);
}

void init_pattern(const gol_pattern *p, int64_t x0, int64_t y0, const gol_slab *slab,
                  uint64_t *rows_h) {
    memset(rows_h, 0, (size_t)(slab->rows * slab->nwords) * sizeof *rows_h);
    for (int64_t r = 0; r < slab->rows; r++) {
        int64_t py = slab->row0 + r - y0;
        if (py < 0 || py >= p->height) continue;
        uint64_t *row = rows_h + r * slab->nwords;
        for (int64_t px = 0; px < p->width; px++)
            if (pattern_cell(p, px, py)) {
                int64_t x = x0 + px;
                row[x / 64] |= (uint64_t)1 << (x % 64);
            }
    }
}
