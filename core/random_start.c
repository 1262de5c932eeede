#include "core/random_start.h"

/* The clones give AVX-512/AVX2 hashes where the CPU has them, from one portable binary; the word
 * function is inlined into each clone and vectorised there (64 lanes, one word). */
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) static void
random_row(uint64_t row_key, uint64_t threshold, int64_t width, int64_t nwords, uint64_t *row) {
    for (int64_t w = 0; w < nwords; w++)
        row[w] = init_random_word(row_key, threshold, w, width);
}

void init_random_rows(uint64_t seed, double density, int64_t row0, int64_t rows, int64_t width,
                      int64_t nwords, uint64_t *rows_h) {
    uint64_t threshold = init_threshold(density), run_key = init_run_key(seed);
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; r++)
        random_row(init_row_key(run_key, row0 + r), threshold, width, nwords, rows_h + r * nwords);
}
