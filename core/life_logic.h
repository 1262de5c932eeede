/* The rule arithmetic of core/life_word.h for one type of word: the full adder, the rule and the
 * next state of a word, written once for any type that has C's bitwise operators and shifts.
 * life_word.h includes it for uint64_t (so C and nvcc compile it), and cpu/cpu_strip.c for a
 * SIMD vector of words (a GCC/Clang vector type of the CPU's native width), so the CPU backend's
 * vector loops run these operations, not a copy of them.
 *
 * Before including, define GOL_WORD (the type) and GOL_NAME(n) (what the names become for it);
 * no include guard, as it is included once per type. */

/* Neighbour boards: west(w) holds in bit k the cell at k-1, east(w) the cell at k+1. in_bit is
 * the cell that shifts in across the word boundary (0 or 1, already in bit 0). */
static GOL_HD inline GOL_WORD GOL_NAME(gol_west)(GOL_WORD w, GOL_WORD in_bit) {
    return (w << 1) | in_bit;
}
static GOL_HD inline GOL_WORD GOL_NAME(gol_east)(GOL_WORD w, GOL_WORD in_bit, int in_pos) {
    return (w >> 1) | (in_bit << in_pos);
}

/* A bit-sliced count of up to three: lo + 2 hi in every bit lane. */
typedef struct GOL_NAME(gol_sum3) {
    GOL_WORD lo, hi;
} GOL_NAME(gol_sum3);

/* Full adder: 5 operations (a LOP3 / vpternlog machine does it in 2). */
static GOL_HD inline GOL_NAME(gol_sum3) GOL_NAME(gol_sum3_of)(GOL_WORD a, GOL_WORD b, GOL_WORD c) {
    GOL_WORD t = a ^ b;
    GOL_NAME(gol_sum3) s;
    s.lo = t ^ c;
    s.hi = (a & b) | (t & c);
    return s;
}

/* Any rule, as a bit-sliced table look-up: q = q0 + 2 q1 + 4 q2 + 8 q3 (0..9) indexes `dead` for
 * a dead cell and `live` for a live one. A mux tree costs the same for every rule (no branch in a
 * vector loop, about 47 operations with the rule in registers) and folds to far less when the
 * rule is a compile-time constant. q3 set means q is 8 or 9, so q1 = q2 = 0 there. */
static GOL_HD inline GOL_WORD GOL_NAME(gol_rule_lookup)(GOL_WORD q0, GOL_WORD q1, GOL_WORD q2,
                                                        GOL_WORD q3, GOL_WORD alive, unsigned dead,
                                                        unsigned live) {
    GOL_WORD e[10];
    for (int i = 0; i < 10; i++) {
        uint64_t d = gol_lane_mask(dead, i);
        e[i] = d ^ ((d ^ gol_lane_mask(live, i)) & alive);
    }
    GOL_WORD p[5];
    for (int i = 0; i < 5; i++)
        p[i] = e[2 * i] ^ ((e[2 * i] ^ e[2 * i + 1]) & q0);
    GOL_WORD lo = p[0] ^ ((p[0] ^ p[1]) & q1);
    GOL_WORD hi = p[2] ^ ((p[2] ^ p[3]) & q1);
    GOL_WORD r = lo ^ ((lo ^ hi) & q2);
    return r ^ ((r ^ p[4]) & q3);
}

/* The next state of a word from its nine boards. The neighbour count (not the centre) is
 * n = b0 + 2 (s1 + k) + 4 s2, built with full adders; B3/S23 only needs n mod 8 in {2, 3}, and
 * n mod 8 = 2 or 3 means bit 1 = s1 ^ k is set, so s1 & k = 0 and bit 2 is s2 alone.
 * Operations for B3/S23: 5 + 5 + 2 (rows above, below, beside) + 5 (ones) + 5 (twos) + 4 (rule)
 * = 26. */
static GOL_HD inline GOL_WORD GOL_NAME(gol_word_next)(GOL_WORD nw_, GOL_WORD n_, GOL_WORD ne_,
                                                      GOL_WORD w_, GOL_WORD c, GOL_WORD e_,
                                                      GOL_WORD sw_, GOL_WORD s_, GOL_WORD se_,
                                                      gol_rule rule) {
    GOL_NAME(gol_sum3)
    a = GOL_NAME(gol_sum3_of)(nw_, n_, ne_),
    d = GOL_NAME(gol_sum3_of)(sw_, s_, se_);
    GOL_NAME(gol_sum3) m = {w_ ^ e_, w_ & e_};
    GOL_NAME(gol_sum3)
    ones = GOL_NAME(gol_sum3_of)(a.lo, d.lo, m.lo); /* b0 = ones.lo, carry k = ones.hi */
    GOL_NAME(gol_sum3)
    twos = GOL_NAME(gol_sum3_of)(a.hi, d.hi, m.hi); /* s1 = twos.lo, s2 = twos.hi */
    GOL_WORD b1 = twos.lo ^ ones.hi;
    if (gol_rule_is_conway(rule)) return b1 & ~twos.hi & (ones.lo | c);
    GOL_WORD k2 = twos.lo & ones.hi;
    return GOL_NAME(gol_rule_lookup)(ones.lo, b1, twos.hi ^ k2, twos.hi & k2, c, rule.birth,
                                     rule.survive);
}

/* The next state of a word from the column sums of the rows above (a), at (m, centre included)
 * and below (d). The total T = a + m + d counts the centre c too, so B3/S23 reads: alive iff
 * T == 3, or T == 4 and c (a live cell with 3 neighbours, or any cell with 3). With
 * T = t0 + 2 (s1 + k) + 4 s2 (t1 = s1 ^ k, t2 = s2 ^ (s1 & k)), T mod 8 (8 and 9 become 0 and 1,
 * harmless) is 3 or 4 iff t1 == t0 and t2 != t1, and t2 ^ t1 = s2 ^ (s1 | k); then t0 tells 3
 * from 4. Operations for B3/S23: 5 (ones) + 5 (twos) + 7 (rule) = 17; on a LOP3 machine 2 + 2 + 4.
 * Other rules look T up with the survive mask moved up one, as T counts the live centre. */
static GOL_HD inline GOL_WORD GOL_NAME(gol_sum_next)(GOL_NAME(gol_sum3) a, GOL_NAME(gol_sum3) m,
                                                     GOL_NAME(gol_sum3) d, GOL_WORD c,
                                                     gol_rule rule) {
    GOL_NAME(gol_sum3)
    ones = GOL_NAME(gol_sum3_of)(a.lo, m.lo, d.lo); /* t0 = ones.lo, carry k = ones.hi */
    GOL_NAME(gol_sum3)
    twos = GOL_NAME(gol_sum3_of)(a.hi, m.hi, d.hi); /* s1 = twos.lo, s2 = twos.hi */
    GOL_WORD t1 = twos.lo ^ ones.hi;
    if (gol_rule_is_conway(rule)) {
        GOL_WORD three_or_four = ~(t1 ^ ones.lo) & (twos.hi ^ (twos.lo | ones.hi));
        return three_or_four & (ones.lo | c);
    }
    GOL_WORD k2 = twos.lo & ones.hi;
    return GOL_NAME(gol_rule_lookup)(ones.lo, t1, twos.hi ^ k2, twos.hi & k2, c, rule.birth,
                                     (unsigned)rule.survive << 1);
}
