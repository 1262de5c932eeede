/* Slabs of whole rows: rank r of P owns H/P rows, plus one if r < H%P. */
#ifndef GOLMPI_DECOMP_H
#define GOLMPI_DECOMP_H

#include <stdint.h>

#include "core/config.h"

typedef struct gol_slab {
    int64_t width, height; /* the global grid */
    int64_t row0, rows;    /* this rank's first global row and how many it owns */
    int64_t nwords;        /* 64-bit words per packed row */
    int rank, nranks;
    int up, down; /* neighbour ranks; -1 past a dead boundary */
    gol_boundary boundary;
    gol_rule rule;
} gol_slab;

int64_t decomp_rows(int64_t height, int nranks, int rank);
int64_t decomp_row0(int64_t height, int nranks, int rank);

/* Fails (a user error) when some rank would own no rows. */
gol_status decomp_make(const gol_config *cfg, int rank, int nranks, gol_slab *slab);

#endif
