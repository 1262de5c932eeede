/* The initial state of a pattern, built by each rank for its own rows only. (The random start is
 * made by the backend where the grid lives: backend_init_random, core/random_start.h.) */
#ifndef GOLMPI_INIT_H
#define GOLMPI_INIT_H

#include <stdint.h>

#include "core/decomp.h"
#include "src/pattern.h"

/* The pattern's top-left cell at (x0, y0); the caller has checked that it fits. */
void init_pattern(const gol_pattern *p, int64_t x0, int64_t y0, const gol_slab *slab,
                  uint64_t *rows_h);

#endif
