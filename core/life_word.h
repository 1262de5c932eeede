/* The rule logic that every backend shares: one 64-cell word of the next generation from the
 * three rows around it. It is plain C that nvcc also compiles, so the CPU backend that CI tests
 * runs the very same arithmetic as the GPU kernels.
 *
 * Layout (DESIGN, Representation): cell x of a row is bit x%64 of word x/64, least significant
 * bit first; bits past the row's width are always 0.
 *
 * Two ways in:
 * - gol_word_next takes the nine neighbour boards of one word. It suits a caller that has nothing
 *   to reuse (26 logic operations for B3/S23, besides the shifts that make the boards).
 * - The sliding window: gol_sum3_of turns one row-word's west, centre and east boards into their
 *   2-bit column sum, once per row-word; gol_sum_next adds the sums of the rows above, at and
 *   below (17 logic operations for B3/S23). A row's sum serves the rows above and below it too,
 *   so a caller that walks down a column of words (a GPU thread, or a CPU strip of vectors in
 *   cpu/cpu_strip.c) pays 5 + 17 = 22 operations and 2 shifts (or 6 plain shifts) per word
 *   instead of 26 + 18.
 *
 * The arithmetic itself is in core/life_logic.h, written once for any word type: here for
 * uint64_t, in cpu/cpu_strip.c for SIMD vectors. */
#ifndef GOLMPI_LIFE_WORD_H
#define GOLMPI_LIFE_WORD_H

#include <stdint.h>

#ifdef __CUDACC__
/* __forceinline__ already says __inline__, and the functions below say inline: nvcc rejects the
 * duplicate, so ask for always_inline alone. */
#define GOL_HD __host__ __device__ __attribute__((always_inline))
#elif defined(__GNUC__)
/* Inlined into every caller, so a caller cloned for AVX2/AVX-512 (target_clones) runs this code
 * built for its target, not a call into a baseline copy. */
#define GOL_HD __attribute__((always_inline))
#else
#define GOL_HD
#endif

/* A Life-like rule as two 9-bit masks: bit n of birth says a dead cell with n live neighbours
 * becomes alive, bit n of survive that a live one stays alive. */
typedef struct gol_rule {
    uint16_t birth;
    uint16_t survive;
} gol_rule;

#define GOL_RULE_CONWAY_BIRTH ((uint16_t)(1u << 3))
#define GOL_RULE_CONWAY_SURVIVE ((uint16_t)((1u << 2) | (1u << 3)))

static GOL_HD inline int gol_rule_is_conway(gol_rule r) {
    return r.birth == GOL_RULE_CONWAY_BIRTH && r.survive == GOL_RULE_CONWAY_SURVIVE;
}

static GOL_HD inline uint64_t gol_row_last_mask(int64_t width) {
    int r = (int)(width & 63);
    return r ? (~(uint64_t)0 >> (64 - r)) : ~(uint64_t)0;
}

static GOL_HD inline uint64_t gol_lane_mask(unsigned bits, int n) {
    return (uint64_t)0 - (uint64_t)((bits >> n) & 1u);
}

#define GOL_WORD uint64_t
#define GOL_NAME(n) n
#include "core/life_logic.h"
#undef GOL_WORD
#undef GOL_NAME

/* The column sum of word j of a row, with the row ends: columns wrap when torus is set,
 * otherwise the cells left of column 0 and right of column width-1 are dead. */
static GOL_HD inline gol_sum3 gol_row_sum(const uint64_t *r, int64_t j, int64_t nwords,
                                          int64_t width, int torus) {
    int last_pos = (int)((width - 1) & 63); /* bit of the last cell in the last word */
    uint64_t cur = r[j], west_in, east_in;
    int east_pos = 63;
    if (j > 0)
        west_in = r[j - 1] >> 63;
    else
        west_in = torus ? (r[nwords - 1] >> last_pos) & 1 : 0;
    if (j < nwords - 1) {
        east_in = r[j + 1] & 1;
    } else {
        east_in = torus ? (r[0] & 1) : 0;
        east_pos = last_pos;
    }
    return gol_sum3_of(gol_west(cur, west_in), cur, gol_east(cur, east_in, east_pos));
}

/* Word j of the next generation of row `row`, with `up` and `down` the rows above and below
 * (already the halo rows or dead rows at the slab's edges). This is the general, branchy form
 * used at the row ends; loops over many words walk columns with the sliding window. */
static GOL_HD inline uint64_t gol_row_word(const uint64_t *up, const uint64_t *row,
                                           const uint64_t *down, int64_t j, int64_t nwords,
                                           int64_t width, int torus, gol_rule rule) {
    uint64_t next = gol_sum_next(gol_row_sum(up, j, nwords, width, torus),
                                 gol_row_sum(row, j, nwords, width, torus),
                                 gol_row_sum(down, j, nwords, width, torus), row[j], rule);
    return j == nwords - 1 ? next & gol_row_last_mask(width) : next;
}

#endif
