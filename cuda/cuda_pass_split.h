/* How a CUDA pass splits its rows between the compute and the comm stream. Plain C with no CUDA
 * types, built in every configuration, so that tests/test_cuda_choices.c checks it on machines
 * without a GPU. */
#ifndef GOLMPI_CUDA_PASS_SPLIT_H
#define GOLMPI_CUDA_PASS_SPLIT_H

#include <stdint.h>

#include "core/depth.h"

/* How a pass of a slab with halo depth k splits its rows between the streams (enqueue_pass): the
 * comm stream's two edge bands, each from the first row still valid after the pass to the k rows
 * that end sends (none past a dead boundary, where the interior runs to the edge), the compute
 * stream's interior between them; a slab of fewer than 2k rows is one range, band[0], on the comm
 * stream. At depth 1 between two neighbours the bands are the first and the last owned row, one
 * launch of the edge kernel (edges). Together, each row once: pass_whole_rows(pass, pass->gens). */
typedef struct cuda_pass_rows {
    gol_rows band[2];  /* comm stream: top, bottom (empty: none) */
    gol_rows interior; /* compute stream (empty: none) */
    int edges;         /* band[0], band[1] are rows 0 and rows - 1: launch_life_edges */
} cuda_pass_rows;

cuda_pass_rows cuda_pass_split(const gol_pass *pass, int64_t k);

#endif
