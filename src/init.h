/* The initial state, built by each rank for its own rows only. */
#ifndef GOLMPI_INIT_H
#define GOLMPI_INIT_H

#include <stdint.h>

#include "core/decomp.h"
#include "src/pattern.h"

/* The random start: the hash of (seed, row, column) in core/random_start.h, one 64-bit word at a
 * time. rows_h: slab->rows rows of slab->nwords words, fully overwritten. */
void init_random(uint64_t seed, double density, const gol_slab *slab, uint64_t *rows_h);
/* The pattern's top-left cell at (x0, y0); the caller has checked that it fits. */
void init_pattern(const gol_pattern *p, int64_t x0, int64_t y0, const gol_slab *slab,
                  uint64_t *rows_h);

#endif
