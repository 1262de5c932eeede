/* The initial state, built by each rank for its own rows only. */
#ifndef GOLMPI_INIT_H
#define GOLMPI_INIT_H

#include <stdint.h>

#include "core/decomp.h"
#include "src/pattern.h"

/* Counter-based: the cell's value depends only on (seed, row, column), never on the rank count
 * or the order of evaluation. tests/reference.py carries an independent copy. */
static inline uint64_t init_mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static inline int init_random_cell(uint64_t seed, uint64_t threshold, int64_t row, int64_t col) {
    uint64_t h = init_mix64(seed + 0x9e3779b97f4a7c15ULL);
    h = init_mix64(h ^ (uint64_t)row);
    h = init_mix64(h ^ ((uint64_t)col + 0x632be59bd9b4e019ULL));
    return (h >> 11) < threshold;
}
/* A cell is alive when 53 random bits fall below density * 2^53. */
uint64_t init_threshold(double density);

/* rows_h: slab->rows rows of slab->nwords words, fully overwritten. */
void init_random(uint64_t seed, double density, const gol_slab *slab, uint64_t *rows_h);
/* The pattern's top-left cell at (x0, y0); the caller has checked that it fits. */
void init_pattern(const gol_pattern *p, int64_t x0, int64_t y0, const gol_slab *slab,
                  uint64_t *rows_h);

#endif
