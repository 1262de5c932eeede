/* The initial state, built by each rank for its own rows only. */
#ifndef GOLMPI_INIT_H
#define GOLMPI_INIT_H

#include <stdint.h>

#include "core/decomp.h"
#include "src/pattern.h"

/* The random start: the hash of (seed, row, column) in core/random_start.h, one 64-bit word at a
 * time (init_random_rows). rows_h: slab->rows rows of slab->nwords words, fully overwritten. The
 * program builds its random start in the backend instead (backend_init_random: the same rows,
 * made where the grid lives); this host form is the reference the tests hold it to. */
void init_random(uint64_t seed, double density, const gol_slab *slab, uint64_t *rows_h);
/* The pattern's top-left cell at (x0, y0); the caller has checked that it fits. */
void init_pattern(const gol_pattern *p, int64_t x0, int64_t y0, const gol_slab *slab,
                  uint64_t *rows_h);

#endif
