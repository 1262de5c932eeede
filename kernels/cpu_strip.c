/* The CPU generation step, for one instruction set: this file is compiled once per set
 * (kernels/CMakeLists.txt defines CPU_STRIP_ISA and CPU_STRIP_VECTOR_BYTES and gives the flags),
 * each copy in the vector width its set runs natively, as a wider GCC vector type is split badly.
 *
 * Each word's column sum (core/life_word.h, the sliding window) is made once and kept in
 * registers while a strip of LANES vectors walks down the rows: per word and generation three
 * loads, one store and the rule's operations, with no sums going through memory. A row of the
 * interior is covered by strips of LANES vectors, the last one moved back to end at the row's
 * last interior word (it computes some words twice, the same values); rows too narrow for that
 * take strips of one vector, and the words left over and the two row ends (wrap or dead cells,
 * the last word's mask) walk down one word at a time. */
#include "kernels/cpu_strip.h"

#include <string.h>

#ifndef CPU_STRIP_ISA
#error "CPU_STRIP_ISA (avx512, avx2 or base) comes from kernels/CMakeLists.txt"
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

/* Words [j, j + n VW) of rows [lo, hi), 1 <= j and j + n VW <= nw - 1. */
static ALWAYS_INLINE void strip(const uint64_t *src, uint64_t *dst, int64_t j, int n, int64_t lo,
                                int64_t hi, int64_t nw, gol_rule rule) {
    gol_sum3_vec above[LANES], at[LANES];
    gol_vec centre[LANES];
    const uint64_t *p = src + (lo - 1) * nw + j;
    for (int l = 0; l < n; l++) {
        above[l] = sum_at(p + l * VW);
        at[l] = sum_at(p + nw + l * VW);
        centre[l] = load(p + nw + l * VW);
    }
    for (int64_t r = lo; r < hi; r++) {
        const uint64_t *below_row = src + (r + 1) * nw + j;
        uint64_t *out = dst + r * nw + j;
        for (int l = 0; l < n; l++) {
            gol_sum3_vec below = sum_at(below_row + l * VW);
            store(out + l * VW, gol_sum_next_vec(above[l], at[l], below, centre[l], rule));
            above[l] = at[l];
            at[l] = below;
            centre[l] = load(below_row + l * VW);
        }
    }
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

static ALWAYS_INLINE void rows(const uint64_t *src, uint64_t *dst, int64_t lo, int64_t hi,
                               int64_t nw, int64_t width, int torus, gol_rule rule) {
    column(src, dst, 0, lo, hi, nw, width, torus, rule);
    if (nw == 1) return;
    column(src, dst, nw - 1, lo, hi, nw, width, torus, rule);
    int64_t first = 1, end = nw - 1; /* the interior words, [first, end) */
    int64_t wide = (int64_t)LANES * VW;
    if (end - first >= wide) {
        for (int64_t j = first; j < end; j += wide)
            strip(src, dst, j + wide <= end ? j : end - wide, LANES, lo, hi, nw, rule);
        return;
    }
    int64_t j = first;
    for (; j + VW <= end; j += VW)
        strip(src, dst, j, 1, lo, hi, nw, rule);
    for (; j < end; j++)
        column(src, dst, j, lo, hi, nw, width, torus, rule);
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
