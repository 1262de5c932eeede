/* The random start: a counter-based hash of (seed, global row, global column), so a cell's value
 * never depends on the rank count, the slab split or the order of evaluation. It is plain C that
 * nvcc also compiles (GOL_HD), so a device build of the start runs the very same arithmetic as
 * the CPU. tests/reference.py carries an independent Python copy.
 *
 * Definition, per cell: h0 = mix(seed + C1) per run, h1 = mix(h0 ^ row) per row,
 * h = mix(h1 ^ (col + C2)) per cell; the cell is alive when (h >> 11) < density * 2^53. */
#ifndef GOLMPI_RANDOM_START_H
#define GOLMPI_RANDOM_START_H

#include <stdint.h>

#include "core/life_word.h"

/* splitmix64's finaliser */
static GOL_HD inline uint64_t init_mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* A cell is alive when 53 random bits fall below density * 2^53 (density 1 gives 2^53: always). */
static GOL_HD inline uint64_t init_threshold(double density) {
    return (uint64_t)(density * 9007199254740992.0);
}

/* The definition, one cell at a time; the word-level path below must agree with it bit for bit. */
static GOL_HD inline int init_random_cell(uint64_t seed, uint64_t threshold, int64_t row,
                                          int64_t col) {
    uint64_t h = init_mix64(seed + 0x9e3779b97f4a7c15ULL);
    h = init_mix64(h ^ (uint64_t)row);
    h = init_mix64(h ^ ((uint64_t)col + 0x632be59bd9b4e019ULL));
    return (h >> 11) < threshold;
}

/* The first two links of the chain, hoisted: once per run, then once per global row. */
static GOL_HD inline uint64_t init_run_key(uint64_t seed) {
    return init_mix64(seed + 0x9e3779b97f4a7c15ULL);
}
static GOL_HD inline uint64_t init_row_key(uint64_t run_key, int64_t row) {
    return init_mix64(run_key ^ (uint64_t)row);
}

/* Word w (cells 64w..64w+63) of the row whose key is row_key, in the bit-row layout of
 * life_word.h; bits at or past width are 0, so a w past the row gives 0. Each lane's comparison
 * becomes a bit, with no branch, so gcc turns the loop into SIMD hashes and an OR reduction. */
static GOL_HD inline uint64_t init_random_word(uint64_t row_key, uint64_t threshold, int64_t w,
                                               int64_t width) {
    int64_t valid = width - w * 64; /* cells of this word inside the row */
    if (valid <= 0) return 0;
    /* col + C2 for col = 64w + k, in the same wrapping uint64_t arithmetic as the definition */
    uint64_t base = (uint64_t)w * 64u + 0x632be59bd9b4e019ULL;
    uint64_t word = 0;
    /* a 64-bit k: the shift below then has one element width, which SIMD shifts need */
    for (uint64_t k = 0; k < 64; k++) {
        uint64_t h = init_mix64(row_key ^ (base + k));
        word |= (uint64_t)((h >> 11) < threshold) << k;
    }
    return valid >= 64 ? word : word & (~(uint64_t)0 >> (64 - valid));
}

#ifdef __cplusplus
extern "C" {
#endif
/* The random start of global rows [row0, row0 + rows) into rows_h (rows rows of nwords words,
 * one after another, every word overwritten), on the host: init_random_word a row at a time, the
 * rows shared among OpenMP threads. Both the program's host path (src/init.c) and the CPU
 * backend (cpu/backend_cpu.c) build the start here; the CUDA kernel (cuda/init_cuda.cu)
 * runs the same word function. */
void init_random_rows(uint64_t seed, double density, int64_t row0, int64_t rows, int64_t width,
                      int64_t nwords, uint64_t *rows_h);
#ifdef __cplusplus
}
#endif

#endif
