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
 *   so a caller that walks down rows (the GPU thread, or gol_row_sums + gol_row_from_sums on the
 *   CPU) pays 5 + 17 = 22 operations and 2 shifts (or 6 plain shifts) per word instead of
 *   26 + 18. */
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

/* Neighbour boards: west(w) holds in bit k the cell at k-1, east(w) the cell at k+1. in_bit is
 * the cell that shifts in across the word boundary (0 or 1, already in bit 0). */
static GOL_HD inline uint64_t gol_west(uint64_t w, uint64_t in_bit) { return (w << 1) | in_bit; }
static GOL_HD inline uint64_t gol_east(uint64_t w, uint64_t in_bit, int in_pos) {
    return (w >> 1) | (in_bit << in_pos);
}

/* A bit-sliced count of up to three: lo + 2 hi in every bit lane. */
typedef struct gol_sum3 {
    uint64_t lo, hi;
} gol_sum3;

/* Full adder: 5 operations (a LOP3 / vpternlog machine does it in 2). */
static GOL_HD inline gol_sum3 gol_sum3_of(uint64_t a, uint64_t b, uint64_t c) {
    uint64_t t = a ^ b;
    gol_sum3 s;
    s.lo = t ^ c;
    s.hi = (a & b) | (t & c);
    return s;
}

static GOL_HD inline uint64_t gol_lane_mask(unsigned bits, int n) {
    return (uint64_t)0 - (uint64_t)((bits >> n) & 1u);
}

/* Any rule, as a bit-sliced table look-up: q = q0 + 2 q1 + 4 q2 + 8 q3 (0..9) indexes `dead` for
 * a dead cell and `live` for a live one. A mux tree costs the same for every rule (no branch in a
 * vector loop, about 47 operations with the rule in registers) and folds to far less when the
 * rule is a compile-time constant. q3 set means q is 8 or 9, so q1 = q2 = 0 there. */
static GOL_HD inline uint64_t gol_rule_lookup(uint64_t q0, uint64_t q1, uint64_t q2, uint64_t q3,
                                              uint64_t alive, unsigned dead, unsigned live) {
    uint64_t e[10];
    for (int i = 0; i < 10; i++) {
        uint64_t d = gol_lane_mask(dead, i);
        e[i] = d ^ ((d ^ gol_lane_mask(live, i)) & alive);
    }
    uint64_t p[5];
    for (int i = 0; i < 5; i++)
        p[i] = e[2 * i] ^ ((e[2 * i] ^ e[2 * i + 1]) & q0);
    uint64_t lo = p[0] ^ ((p[0] ^ p[1]) & q1);
    uint64_t hi = p[2] ^ ((p[2] ^ p[3]) & q1);
    uint64_t r = lo ^ ((lo ^ hi) & q2);
    return r ^ ((r ^ p[4]) & q3);
}

/* The next state of a word from its nine boards. The neighbour count (not the centre) is
 * n = b0 + 2 (s1 + k) + 4 s2, built with full adders; B3/S23 only needs n mod 8 in {2, 3}, and
 * n mod 8 = 2 or 3 means bit 1 = s1 ^ k is set, so s1 & k = 0 and bit 2 is s2 alone.
 * Operations for B3/S23: 5 + 5 + 2 (rows above, below, beside) + 5 (ones) + 5 (twos) + 4 (rule)
 * = 26. */
static GOL_HD inline uint64_t gol_word_next(uint64_t nw_, uint64_t n_, uint64_t ne_, uint64_t w_,
                                            uint64_t c, uint64_t e_, uint64_t sw_, uint64_t s_,
                                            uint64_t se_, gol_rule rule) {
    gol_sum3 a = gol_sum3_of(nw_, n_, ne_), d = gol_sum3_of(sw_, s_, se_);
    gol_sum3 m = {w_ ^ e_, w_ & e_};
    gol_sum3 ones = gol_sum3_of(a.lo, d.lo, m.lo); /* b0 = ones.lo, carry k = ones.hi */
    gol_sum3 twos = gol_sum3_of(a.hi, d.hi, m.hi); /* s1 = twos.lo, s2 = twos.hi */
    uint64_t b1 = twos.lo ^ ones.hi;
    if (gol_rule_is_conway(rule)) return b1 & ~twos.hi & (ones.lo | c);
    uint64_t k2 = twos.lo & ones.hi;
    return gol_rule_lookup(ones.lo, b1, twos.hi ^ k2, twos.hi & k2, c, rule.birth, rule.survive);
}

/* The next state of a word from the column sums of the rows above (a), at (m, centre included)
 * and below (d). The total T = a + m + d counts the centre c too, so B3/S23 reads: alive iff
 * T == 3, or T == 4 and c (a live cell with 3 neighbours, or any cell with 3). With
 * T = t0 + 2 (s1 + k) + 4 s2 (t1 = s1 ^ k, t2 = s2 ^ (s1 & k)), T mod 8 (8 and 9 become 0 and 1,
 * harmless) is 3 or 4 iff t1 == t0 and t2 != t1, and t2 ^ t1 = s2 ^ (s1 | k); then t0 tells 3
 * from 4. Operations for B3/S23: 5 (ones) + 5 (twos) + 7 (rule) = 17; on a LOP3 machine 2 + 2 + 4.
 * Other rules look T up with the survive mask moved up one, as T counts the live centre. */
static GOL_HD inline uint64_t gol_sum_next(gol_sum3 a, gol_sum3 m, gol_sum3 d, uint64_t c,
                                           gol_rule rule) {
    gol_sum3 ones = gol_sum3_of(a.lo, m.lo, d.lo); /* t0 = ones.lo, carry k = ones.hi */
    gol_sum3 twos = gol_sum3_of(a.hi, m.hi, d.hi); /* s1 = twos.lo, s2 = twos.hi */
    uint64_t t1 = twos.lo ^ ones.hi;
    if (gol_rule_is_conway(rule)) {
        uint64_t three_or_four = ~(t1 ^ ones.lo) & (twos.hi ^ (twos.lo | ones.hi));
        return three_or_four & (ones.lo | c);
    }
    uint64_t k2 = twos.lo & ones.hi;
    return gol_rule_lookup(ones.lo, t1, twos.hi ^ k2, twos.hi & k2, c, rule.birth,
                           (unsigned)rule.survive << 1);
}

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
 * used at the row ends; loops over many words use the sliding window below. */
static GOL_HD inline uint64_t gol_row_word(const uint64_t *up, const uint64_t *row,
                                           const uint64_t *down, int64_t j, int64_t nwords,
                                           int64_t width, int torus, gol_rule rule) {
    uint64_t next = gol_sum_next(gol_row_sum(up, j, nwords, width, torus),
                                 gol_row_sum(row, j, nwords, width, torus),
                                 gol_row_sum(down, j, nwords, width, torus), row[j], rule);
    return j == nwords - 1 ? next & gol_row_last_mask(width) : next;
}

/* The sliding window over whole rows, for a host loop that walks down a block of rows. A row's
 * sums are 2 * nwords words: the lo plane, then the hi plane.
 *
 *     gol_row_sums(row r0-1, S0);  gol_row_sums(row r0, S1)
 *     for r in [r0, r1):
 *         gol_row_sums(row r+1, S2)
 *         gol_row_from_sums(S0, S1, S2, row r) -> next row r
 *         (S0, S1, S2) = (S1, S2, S0)
 *
 * The loops are branch-free between the row ends, so the compiler vectorises them in a caller
 * built for AVX2/AVX-512. */
static GOL_HD inline void gol_row_sums(const uint64_t *__restrict__ row,
                                       uint64_t *__restrict__ sums, int64_t nwords, int64_t width,
                                       int torus) {
    uint64_t *lo = sums, *hi = sums + nwords;
    for (int64_t j = 1; j < nwords - 1; j++) {
        gol_sum3 s = gol_sum3_of(gol_west(row[j], row[j - 1] >> 63), row[j],
                                 gol_east(row[j], row[j + 1] & 1, 63));
        lo[j] = s.lo;
        hi[j] = s.hi;
    }
    gol_sum3 s = gol_row_sum(row, 0, nwords, width, torus);
    lo[0] = s.lo;
    hi[0] = s.hi;
    if (nwords > 1) {
        s = gol_row_sum(row, nwords - 1, nwords, width, torus);
        lo[nwords - 1] = s.lo;
        hi[nwords - 1] = s.hi;
    }
}

/* Row r of the next generation from the sums of rows r-1, r and r+1 and row r's cells, the last
 * word masked to the width. */
static GOL_HD inline void
gol_row_from_sums(const uint64_t *__restrict__ above, const uint64_t *__restrict__ mid,
                  const uint64_t *__restrict__ below, const uint64_t *__restrict__ row,
                  uint64_t *__restrict__ out, int64_t nwords, int64_t width, gol_rule rule) {
    for (int64_t j = 0; j < nwords; j++) {
        gol_sum3 a = {above[j], above[nwords + j]}, m = {mid[j], mid[nwords + j]},
                 d = {below[j], below[nwords + j]};
        out[j] = gol_sum_next(a, m, d, row[j], rule);
    }
    out[nwords - 1] &= gol_row_last_mask(width);
}

#endif
