/* The rule logic that every backend shares: one 64-cell word of the next generation from the
 * three rows around it. It is plain C that nvcc also compiles, so the CPU backend that CI tests
 * runs the very same arithmetic as the GPU kernels.
 *
 * Layout (DESIGN, Representation): cell x of a row is bit x%64 of word x/64, least significant
 * bit first; bits past the row's width are always 0. */
#ifndef GOLMPI_LIFE_WORD_H
#define GOLMPI_LIFE_WORD_H

#include <stdint.h>

#ifdef __CUDACC__
/* __forceinline__ already says __inline__, and the functions below say inline: nvcc rejects the
 * duplicate, so ask for always_inline alone. */
#define GOL_HD __host__ __device__ __attribute__((always_inline))
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

static GOL_HD inline uint64_t gol_row_last_mask(int64_t width) {
    int r = (int)(width & 63);
    return r ? (~(uint64_t)0 >> (64 - r)) : ~(uint64_t)0;
}

/* Neighbour boards: west(w) holds in bit k the cell at k-1, east(w) the cell at k+1. in_bit is
 * the cell that shifts in across the word boundary (0 or 1, already in bit 0). */
static GOL_HD inline uint64_t gol_west(uint64_t w, uint64_t in_bit) { return (w << 1) | in_bit; }
static GOL_HD inline uint64_t gol_east(uint64_t w, uint64_t in_bit, int in_pos) {
    return (w >> 1) | (in_bit << in_pos);
}

/* Count the eight neighbour boards bit-sliced into four bit planes (count = b0+2b1+4b2+8b3) with
 * full adders, then apply the rule. Conway's B3/S23 skips the per-count loop. */
static GOL_HD inline uint64_t gol_word_next(uint64_t nw_, uint64_t n_, uint64_t ne_, uint64_t w_,
                                             uint64_t c, uint64_t e_, uint64_t sw_, uint64_t s_,
                                             uint64_t se_, gol_rule rule) {
    /* three neighbours above: sum a0 + 2 a1 */
    uint64_t t = nw_ ^ n_;
    uint64_t a0 = t ^ ne_;
    uint64_t a1 = (nw_ & n_) | (t & ne_);
    /* three below */
    t = sw_ ^ s_;
    uint64_t c0 = t ^ se_;
    uint64_t c1 = (sw_ & s_) | (t & se_);
    /* two beside */
    uint64_t m0 = w_ ^ e_;
    uint64_t m1 = w_ & e_;
    /* ones: a0 + c0 + m0 -> b0, carry k (weight 2) */
    t = a0 ^ c0;
    uint64_t b0 = t ^ m0;
    uint64_t k = (a0 & c0) | (t & m0);
    /* twos: a1 + c1 + m1 + k */
    t = a1 ^ c1;
    uint64_t s1 = t ^ m1;
    uint64_t s2 = (a1 & c1) | (t & m1); /* weight 4 */
    uint64_t b1 = s1 ^ k;
    uint64_t k2 = s1 & k; /* weight 4 */
    uint64_t b2 = s2 ^ k2;
    uint64_t b3 = s2 & k2;

    if (rule.birth == GOL_RULE_CONWAY_BIRTH && rule.survive == GOL_RULE_CONWAY_SURVIVE)
        return ~b2 & ~b3 & b1 & (b0 | c);

    uint64_t next = 0;
    for (int n = 0; n <= 8; n++) {
        int born = (rule.birth >> n) & 1, stays = (rule.survive >> n) & 1;
        if (!born && !stays) continue;
        uint64_t eq = ((n & 1) ? b0 : ~b0) & ((n & 2) ? b1 : ~b1) & ((n & 4) ? b2 : ~b2) &
                      ((n & 8) ? b3 : ~b3);
        next |= eq & ((born ? ~c : 0) | (stays ? c : 0));
    }
    return next;
}

/* Word j of the next generation of row `row`, with `up` and `down` the rows above and below
 * (already the halo rows or dead rows at the slab's edges). Columns wrap when torus is set,
 * otherwise the cells left of column 0 and right of column width-1 are dead. This is the
 * general, branchy form used at the row ends and by the GPU; the CPU backend's inner loop
 * handles the words in between without the branches. */
static GOL_HD inline uint64_t gol_row_word(const uint64_t *up, const uint64_t *row,
                                            const uint64_t *down, int64_t j, int64_t nwords,
                                            int64_t width, int torus, gol_rule rule) {
    int last_pos = (int)((width - 1) & 63); /* bit of the last cell in the last word */
    const uint64_t *r3[3] = {up, row, down};
    uint64_t w[3], e[3], c[3];
    for (int i = 0; i < 3; i++) {
        const uint64_t *r = r3[i];
        uint64_t cur = r[j];
        uint64_t west_in, east_in;
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
        c[i] = cur;
        w[i] = gol_west(cur, west_in);
        e[i] = gol_east(cur, east_in, east_pos);
    }
    uint64_t next = gol_word_next(w[0], c[0], e[0], w[1], c[1], e[1], w[2], c[2], e[2], rule);
    return j == nwords - 1 ? next & gol_row_last_mask(width) : next;
}

#endif
