/* Pattern files: RLE (with Golly's "rule = B3/S23:T64,64" header) and plaintext .cells. */
#ifndef GOLMPI_PATTERN_H
#define GOLMPI_PATTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/config.h"

typedef struct gol_pattern {
    int64_t width, height;
    int64_t nwords; /* words per row of bits */
    uint64_t *bits; /* height rows of nwords words, same bit order as the grid */
    bool has_rule;
    gol_rule rule;
    char rule_text[32];
    bool has_grid; /* a Golly bounded grid ":T" (torus) or ":P" (plane) */
    int64_t grid_width, grid_height;
    gol_boundary grid_boundary;
} gol_pattern;

gol_status pattern_load(const char *path, gol_pattern *p); /* by content: RLE or .cells */
gol_status pattern_parse_rle(const char *text, size_t len, gol_pattern *p);
gol_status pattern_parse_cells(const char *text, size_t len, gol_pattern *p);
static inline int pattern_cell(const gol_pattern *p, int64_t x, int64_t y) {
    return (int)((p->bits[y * p->nwords + x / 64] >> (x % 64)) & 1);
}
void pattern_free(gol_pattern *p);

/* An input file that is not a regular file (a FIFO, a device, a socket, a directory) would block
 * or never end: a user error "<what> <path>: is a FIFO, ...". A path that cannot be stat'ed passes,
 * so that its reader reports why in its own words. pattern_load checks its file so; setup uses it
 * for --restart too. */
gol_status input_check_regular(const char *what, const char *path);

#endif
