/* The CPU generation step, for one instruction set: this file is compiled once per set
 * (cpu/CMakeLists.txt defines CPU_STRIP_ISA and CPU_STRIP_VECTOR_BYTES and gives the flags),
 * each copy in the vector width its set runs natively, as a wider GCC vector type is split badly.
 *
 * Each word's column sum (core/life_word.h, the sliding window) is made once and kept in
 * registers while a strip of LANES vectors walks down the rows: per word and generation three
 * loads, one store and the rule's operations, with no sums going through memory. A row's first
 * and last VW words are one vector each, with the cells across the row ends (wrap or dead) shifted
 * into their end lanes; the interior between them is covered by strips of LANES vectors (or of
 * one, if it is narrower than LANES), the last one moved back to end where the last vector
 * starts (it computes some words twice, the same values). Rows narrower than 2 VW + 1 words walk
 * their two end words one at a time, and their interior too if it is narrower than a vector. */
#include "cpu/cpu_strip.h"

#include <string.h>

#ifndef CPU_STRIP_ISA
#error "CPU_STRIP_ISA (avx512, avx2 or base) comes from cpu/CMakeLists.txt"
#endif

typedef uint64_t gol_vec __attribute__((vector_size(CPU_STRIP_VECTOR_BYTES)));
#define GOL_WORD gol_vec
#define GOL_NAME(n) n##_vec
#include "core/life_logic.h"
#undef GOL_WORD
#undef GOL_NAME

/* Words a vector; vectors a strip (four: enough independent work to hide the operations'
 * latency, few enough that the sums stay in registers). */
enum { VW = CPU_STRIP_VECTOR_BYTES / 8, LANES = 4 };

#define ALWAYS_INLINE inline __attribute__((always_inline))

static ALWAYS_INLINE gol_vec load(const uint64_t *p) {
    gol_vec v;
    memcpy(&v, p, sizeof v); /* rows are nw words long: most strips are unaligned */
    return v;
}

static ALWAYS_INLINE void store(uint64_t *p, gol_vec v) { memcpy(p, &v, sizeof v); }

/* The column sums of the VW words at p, none of them a row end: the neighbours across word
 * boundaries are the words at p - 1 and p + VW. */
static ALWAYS_INLINE gol_sum3_vec sum_at(const uint64_t *p) {
    gol_vec c = load(p);
    return gol_sum3_of_vec(gol_west_vec(c, load(p - 1) >> 63), c,
                           gol_east_vec(c, load(p + 1) & 1, 63));
}

/* Word j of rows [lo, hi), one word at a time, with the row ends' wrap or dead cells. */
static ALWAYS_INLINE void column(const uint64_t *src, uint64_t *dst, int64_t j, int64_t lo,
                                 int64_t hi, int64_t nw, int64_t width, int torus, gol_rule rule) {
    uint64_t mask = j == nw - 1 ? gol_row_last_mask(width) : ~(uint64_t)0;
    gol_sum3 above = gol_row_sum(src + (lo - 1) * nw, j, nw, width, torus);
    gol_sum3 at = gol_row_sum(src + lo * nw, j, nw, width, torus);
    for (int64_t r = lo; r < hi; r++) {
        gol_sum3 below = gol_row_sum(src + (r + 1) * nw, j, nw, width, torus);
        dst[r * nw + j] = gol_sum_next(above, at, below, src[r * nw + j], rule) & mask;
        above = at;
        at = below;
    }
}

/* The two vectors at the row ends: the first holds words [0, VW), the last [nw - VW, nw). The
 * cell across the row end (the other end's when the columns wrap, else dead) goes into the end
 * lane by a lane shift, so nothing is read outside the row. */
#if defined(__clang__) || __GNUC__ >= 12
#define SHUFFLE2(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else /* gcc before 12 (RHEL 8's 8, say) has only __builtin_shuffle, with the indices a vector */
typedef int64_t gol_vec_index __attribute__((vector_size(CPU_STRIP_VECTOR_BYTES)));
#define SHUFFLE2(a, b, ...) __builtin_shuffle(a, b, (gol_vec_index){__VA_ARGS__})
#endif
#if CPU_STRIP_VECTOR_BYTES == 64
#define LANES_FROM_WEST(in, c) SHUFFLE2(in, c, 0, 8, 9, 10, 11, 12, 13, 14)
#define LANES_FROM_EAST(c, in) SHUFFLE2(c, in, 1, 2, 3, 4, 5, 6, 7, 8)
#elif CPU_STRIP_VECTOR_BYTES == 32
#define LANES_FROM_WEST(in, c) SHUFFLE2(in, c, 0, 4, 5, 6)
#define LANES_FROM_EAST(c, in) SHUFFLE2(c, in, 1, 2, 3, 4)
#elif CPU_STRIP_VECTOR_BYTES == 16
#define LANES_FROM_WEST(in, c) SHUFFLE2(in, c, 0, 2)
#define LANES_FROM_EAST(c, in) SHUFFLE2(c, in, 1, 2)
#else
#error "CPU_STRIP_VECTOR_BYTES is 16, 32 or 64"
#endif

typedef struct row_ends {
    int64_t nw;
    int last_pos; /* bit of the last cell in the last word */
    int torus;
    gol_vec east_pos; /* where the east neighbour goes: bit 63, last_pos in the row's last word */
    gol_vec mask;     /* all ones, the last word's cells in the last lane */
} row_ends;

static ALWAYS_INLINE gol_vec splat(uint64_t x) { return (gol_vec){0} | x; }

static ALWAYS_INLINE row_ends ends_of(int64_t nw, int64_t width, int torus) {
    row_ends e = {nw, (int)((width - 1) & 63), torus, splat(63), splat(~(uint64_t)0)};
    e.east_pos[VW - 1] = (uint64_t)e.last_pos;
    e.mask[VW - 1] = gol_row_last_mask(width);
    return e;
}

/* The column sums of a row's first VW words, or of its last VW. */
static ALWAYS_INLINE gol_sum3_vec sum_end(const uint64_t *row, const row_ends *e, int last) {
    if (!last) {
        gol_vec c = load(row);
        uint64_t across = e->torus ? row[e->nw - 1] >> e->last_pos : 0; /* bit 0 */
        gol_vec west_in = LANES_FROM_WEST(splat(across << 63), c) >> 63;
        return gol_sum3_of_vec(gol_west_vec(c, west_in), c, gol_east_vec(c, load(row + 1) & 1, 63));
    }
    const uint64_t *p = row + e->nw - VW;
    gol_vec c = load(p);
    gol_vec east_in = LANES_FROM_EAST(c, splat(e->torus ? row[0] : 0)) & 1;
    return gol_sum3_of_vec(gol_west_vec(c, load(p - 1) >> 63), c,
                           (c >> 1) | (east_in << e->east_pos));
}

enum { INTERIOR, FIRST, LAST }; /* where a strip sits in the row */

static ALWAYS_INLINE gol_sum3_vec sum_of(const uint64_t *row, int64_t j, int where,
                                         const row_ends *e) {
    return where == INTERIOR ? sum_at(row + j) : sum_end(row, e, where == LAST);
}

/* Words [j, j + n VW) of rows [lo, hi): interior words (1 <= j, j + n VW <= nw - 1), or, with
 * n = 1, the row's FIRST or LAST VW words. */
static ALWAYS_INLINE void strip(const uint64_t *src, uint64_t *dst, int64_t j, int n, int where,
                                int64_t lo, int64_t hi, const row_ends *e, gol_rule rule) {
    const int64_t nw = e->nw;
    gol_sum3_vec above[LANES], at[LANES];
    gol_vec centre[LANES];
    for (int l = 0; l < n; l++) {
        above[l] = sum_of(src + (lo - 1) * nw, j + l * VW, where, e);
        at[l] = sum_of(src + lo * nw, j + l * VW, where, e);
        centre[l] = load(src + lo * nw + j + l * VW);
    }
    for (int64_t r = lo; r < hi; r++) {
        const uint64_t *below_row = src + (r + 1) * nw;
        uint64_t *out = dst + r * nw + j;
        for (int l = 0; l < n; l++) {
            gol_sum3_vec below = sum_of(below_row, j + l * VW, where, e);
            gol_vec next = gol_sum_next_vec(above[l], at[l], below, centre[l], rule);
            store(out + l * VW, where == LAST ? next & e->mask : next);
            above[l] = at[l];
            at[l] = below;
            centre[l] = load(below_row + j + l * VW);
        }
    }
}

/* Interior words [first, end) in strips of n vectors, the last one moved back to end at `end`
 * (it computes some words twice, the same values); end - n VW >= 1. */
static ALWAYS_INLINE void strips(const uint64_t *src, uint64_t *dst, int64_t first, int64_t end,
                                 int n, int64_t lo, int64_t hi, const row_ends *e, gol_rule rule) {
    const int64_t wide = n * VW;
    for (int64_t j = first; j < end; j += wide)
        strip(src, dst, j + wide <= end ? j : end - wide, n, INTERIOR, lo, hi, e, rule);
}

static ALWAYS_INLINE void rows(const uint64_t *src, uint64_t *dst, int64_t lo, int64_t hi,
                               int64_t nw, int64_t width, int torus, gol_rule rule) {
    const row_ends e = ends_of(nw, width, torus);
    if (nw < 2 * VW + 1) {
        /* narrow rows: the two end words one at a time, the interior [1, nw - 1) in vectors if
         * it holds one, else a word at a time too */
        column(src, dst, 0, lo, hi, nw, width, torus, rule);
        if (nw == 1) return;
        column(src, dst, nw - 1, lo, hi, nw, width, torus, rule);
        if (nw - 2 >= VW) {
            strips(src, dst, 1, nw - 1, 1, lo, hi, &e, rule);
            return;
        }
        for (int64_t j = 1; j < nw - 1; j++)
            column(src, dst, j, lo, hi, nw, width, torus, rule);
        return;
    }
    strip(src, dst, 0, 1, FIRST, lo, hi, &e, rule);
    strip(src, dst, nw - VW, 1, LAST, lo, hi, &e, rule);
    /* the interior [VW, nw - VW), at least one word; its strips start on vector boundaries of the
     * row (aligned when the row is) */
    if (nw - 2 * VW >= (int64_t)LANES * VW)
        strips(src, dst, VW, nw - VW, LANES, lo, hi, &e, rule);
    else
        strips(src, dst, VW, nw - VW, 1, lo, hi, &e, rule);
}

#define CAT3(a, b, c) a##b##c
#define ISA_NAME(isa) CAT3(cpu_strip_rows_, isa, )

/* Conway's rule is its own copy of the loops with the rule a constant, so the look-up folds
 * away to the seven operations of gol_sum_next. */
void ISA_NAME(CPU_STRIP_ISA)(const uint64_t *src, uint64_t *dst, int64_t lo, int64_t hi, int64_t nw,
                             int64_t width, int torus, gol_rule rule) {
    if (lo >= hi) return;
    if (gol_rule_is_conway(rule)) {
        const gol_rule conway = {GOL_RULE_CONWAY_BIRTH, GOL_RULE_CONWAY_SURVIVE};
        rows(src, dst, lo, hi, nw, width, torus, conway);
    } else {
        rows(src, dst, lo, hi, nw, width, torus, rule);
    }
}
