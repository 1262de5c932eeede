/* Restart from the last frame of a golmpi file (a chunk file or the index). */
#ifndef GOLMPI_RESTART_H
#define GOLMPI_RESTART_H

#include <stdint.h>

#include "core/config.h"
#include "core/decomp.h"

typedef struct gol_restart_info {
    int64_t width, height;
    int64_t generation; /* of the last frame */
    gol_rule rule;
    char rule_text[32];
    gol_boundary boundary;
    uint64_t seed;
    double density;
} gol_restart_info;

/* Every rank reads the attributes. Not a golmpi file, unreadable, or no frames: a user error. */
gol_status restart_probe(const char *path, gol_restart_info *info);

/* This rank's rows of the last frame, packed as the backend wants them. */
gol_status restart_load_rows(const char *path, const gol_slab *slab, uint64_t *rows_h);

#endif
