/* Deep halos (DESIGN, "Halo exchange"): a rank keeps k halo rows above and below its
 * owned rows, exchanges its k edge rows with each neighbour every k generations (one message each
 * way), and advances up to k generations between exchanges. After g generations since an
 * exchange, only the rows at least g rows from the halo's outer edge are still valid, so each
 * generation computes a shrinking trapezoid. Past a dead boundary there is no neighbour and no
 * trapezoid: those halo rows are dead at every generation, so they are never computed (a B0 rule
 * would otherwise bring them to life) and stay zero.
 *
 * Everything here is a pure function of sizes, so every backend walks the same row ranges and a
 * test checks their dependencies without running either. Rows are numbered within the slab:
 * owned rows 0..rows-1, the halo above -k..-1, the halo below rows..rows+k-1.
 *
 * A pass of n generations (n <= the halo rows still valid) is computed as:
 * 1. the interior, which needs no halo row: tiles, each tile walking its generations 1..n in
 *    order over pass_tile_rows, and the seams between tiles, each over pass_seam_rows for 1..n
 *    once both its tiles are done. With nt threads, thread t takes the run of tiles
 *    [pass_run_start(t), pass_run_start(t + 1)) and computes each seam inside its run right after
 *    the seam's second tile, while both are in its cache; then the seams that open a run
 *    (pass_run_opens_seam) in parallel. A pass that follows an exchange runs this while the halo
 *    rows travel: it reads and writes owned rows only.
 * 2. once the halo rows have arrived, the two edge bands (in parallel), each over pass_band_rows
 *    for 1..n.
 * A pass too short for that split (pass_split false) is one range a generation, pass_whole_rows,
 * after the halo has arrived. Generation i of the pass reads the buffer of generation i-1 and
 * writes the other one (two buffers, alternating); the owned rows end in the buffer of
 * generation n, and so do the halo rows a later pass of the same exchange needs. */
#ifndef GOLMPI_DEPTH_H
#define GOLMPI_DEPTH_H

#include <stdbool.h>
#include <stdint.h>

#include "core/config.h"

#define GOL_HALO_DEPTH_MAX 1024 /* the largest --halo-depth */

/* The depth a run uses: asked is --halo-depth, 0 for auto. Every rank must own at least k rows,
 * since its k edge rows are what fills its neighbours' halos; the shortest rank owns
 * height / nranks. auto picks what suits the backend within that; an explicit depth above it
 * is a user error.
 * height >= nranks (decomp_make has checked). */
gol_status depth_choose(int64_t asked, gol_backend_kind backend, int64_t height, int nranks,
                        int64_t *k);

typedef struct gol_rows {
    int64_t lo, hi; /* slab rows [lo, hi); empty when lo >= hi */
} gol_rows;

/* One pass: some generations between two exchanges, or the rest of one. */
typedef struct gol_pass {
    int64_t rows;               /* owned rows, 1 or more */
    int64_t halo_left;          /* halo rows still valid at the start, on a side with a neighbour */
    int64_t gens;               /* generations in this pass: 1..halo_left */
    bool dead_top, dead_bottom; /* no neighbour on that side: the halo is dead, never computed */
    int64_t tile;               /* the interior's tile height the caller wants, in rows */
} gol_pass;

/* Whether the pass splits into interior and edge bands (rows >= 2 gens); if not, use
 * pass_whole_rows. */
bool pass_split(const gol_pass *p);
/* Interior tiles: at least 1, each at least 2 gens rows and about p->tile rows. */
int64_t pass_tiles(const gol_pass *p);
/* Tile j's first owned row (j = 0..tiles; edge `tiles` is rows). */
int64_t pass_tile_edge(const gol_pass *p, int64_t j);
/* Generation i (1..gens) of tile j: its rows shrink by one a generation at each side, except at a
 * dead slab edge, where the dead halo is known at every generation. */
gol_rows pass_tile_rows(const gol_pass *p, int64_t j, int64_t i);
/* Generation i of the seam above tile j (j = 1..tiles-1): the triangle the two tiles left. */
gol_rows pass_seam_rows(const gol_pass *p, int64_t j, int64_t i);

/* The first tile of thread t's run of tiles, of nt threads (t = nt: the tile count). */
int64_t pass_run_start(const gol_pass *p, int t, int nt);

/* Whether run t (1 <= t < nt) opens a seam: it has tiles and starts past tile 0. Every seam
 * 1..tiles-1 is either inside one run or opens exactly one. */
bool pass_run_opens_seam(const gol_pass *p, int t, int nt);
/* Generation i of the edge band of one side (0: top, 1: bottom); empty past a dead boundary. It
 * reaches into the halo as far as rows stay valid: halo_left - i rows past the owned rows. */
gol_rows pass_band_rows(const gol_pass *p, int side, int64_t i);
/* Generation i of an unsplit pass: every row that is still valid. */
gol_rows pass_whole_rows(const gol_pass *p, int64_t i);

#endif
