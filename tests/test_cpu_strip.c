/* The CPU generation step (cpu/cpu_strip.c), each instruction set's build this CPU runs,
 * against a naive per-cell count written here: random rows of widths around every path of the
 * kernel (single-word columns, one-vector strips, strips of four vectors with the last one moved
 * back), both boundaries, several rules, every word of the rows it owns compared and the rows it
 * does not own checked untouched. Nothing here calls the rule code of core/, so a mistake there or
 * in the strips cannot cancel out. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rule.h"
#include "cpu/cpu_strip.h"
#include "tests/xorshift.h"

enum { ROWS = 9, LO = 1, HI = 8 }; /* rows 1..7 computed from rows 0..8 */

static const uint64_t poison = 0xa5a5a5a5deadbeefULL;
static int failures;

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rng(void) { return xorshift64(&rng_state); }

typedef struct strip_case {
    const char *isa, *rule_text;
    int64_t width;
    int torus;
    gol_rule rule;
} strip_case;

static int cell(const uint64_t *row, int64_t x) { return (int)((row[x / 64] >> (x % 64)) & 1); }

/* Word j of the next generation of buffer row r: each cell's eight neighbours counted with ints,
 * rows r-1 and r+1 taken as they are, columns wrapped or dead past the row ends. */
static uint64_t naive_word(const uint64_t *buf, int64_t nw, int64_t r, int64_t j,
                           const strip_case *c) {
    uint64_t out = 0;
    for (int b = 0; b < 64; b++) {
        int64_t x = j * 64 + b;
        if (x >= c->width) break; /* the bits past the width stay 0 */
        int n = 0;
        for (int64_t dy = -1; dy <= 1; dy++)
            for (int64_t dx = -1; dx <= 1; dx++) {
                if (dy == 0 && dx == 0) continue;
                int64_t xx = x + dx;
                if (xx < 0 || xx >= c->width) {
                    if (!c->torus) continue;
                    xx = (xx + c->width) % c->width;
                }
                n += cell(buf + (r + dy) * nw, xx);
            }
        int alive = cell(buf + r * nw, x);
        int next = alive ? (c->rule.survive >> n) & 1 : (c->rule.birth >> n) & 1;
        out |= (uint64_t)next << b;
    }
    return out;
}

static void report(const strip_case *c, int lo, int hi, int64_t row, int64_t word, uint64_t got,
                   uint64_t want) {
    if (failures++ < 12)
        printf("FAIL isa %s width %" PRId64 " %s %s rows [%d,%d): row %" PRId64 " word %" PRId64
               ": got %016" PRIx64 " want %016" PRIx64 "\n",
               c->isa, c->width, c->torus ? "torus" : "dead", c->rule_text, lo, hi, row, word, got,
               want);
}

/* One call of the kernel on rows [lo, hi) into a poisoned buffer; every word compared, rows
 * outside [lo, hi) against the poison, and src checked unchanged. */
static void run_one(const cpu_strip_kernel *k, const strip_case *c, const uint64_t *src,
                    const uint64_t *want, int lo, int hi) {
    int64_t nw = (c->width + 63) / 64, n = ROWS * nw;
    uint64_t *dst = malloc((size_t)n * sizeof *dst), *copy = malloc((size_t)n * sizeof *copy);
    if (!dst || !copy) exit(2);
    memcpy(copy, src, (size_t)n * sizeof *src);
    for (int64_t i = 0; i < n; i++)
        dst[i] = poison;
    k->rows(src, dst, lo, hi, nw, c->width, c->torus, c->rule);
    for (int64_t r = 0; r < ROWS; r++)
        for (int64_t j = 0; j < nw; j++) {
            uint64_t w = r >= lo && r < hi ? want[r * nw + j] : poison;
            if (dst[r * nw + j] != w) report(c, lo, hi, r, j, dst[r * nw + j], w);
        }
    if (memcmp(copy, src, (size_t)n * sizeof *src) != 0) report(c, lo, hi, -1, -1, 0, 0);
    free(dst);
    free(copy);
}

/* Random rows (density 1/2, or 1/4 on odd trials), the reference once, then each kernel. */
static void check_width(const cpu_strip_kernel *const *ks, int nk, strip_case c, int trial) {
    int64_t nw = (c.width + 63) / 64, n = ROWS * nw;
    /* an odd trial starts the rows one word in, so the vectors' alignment differs too */
    uint64_t *alloc = malloc((size_t)(n + 1) * sizeof *alloc), *want = malloc((size_t)n * 8);
    if (!alloc || !want) exit(2);
    uint64_t *src = alloc + (trial & 1);
    for (int64_t r = 0; r < ROWS; r++) {
        for (int64_t j = 0; j < nw; j++)
            src[r * nw + j] = rng() & (trial & 1 ? rng() : ~0ULL);
        int tail = (int)(c.width & 63);
        if (tail) src[r * nw + nw - 1] &= (~0ULL >> (64 - tail));
    }
    for (int64_t r = 0; r < ROWS; r++)
        for (int64_t j = 0; j < nw; j++)
            want[r * nw + j] = r >= LO && r < HI ? naive_word(src, nw, r, j, &c) : poison;
    for (int i = 0; i < nk; i++) {
        c.isa = ks[i]->isa;
        run_one(ks[i], &c, src, want, LO, HI);
        run_one(ks[i], &c, src, want, 3, 4);
        run_one(ks[i], &c, src, want, 5, 5); /* writes nothing */
    }
    free(alloc);
    free(want);
}

/* Widths whose interior (nw - 2 words) lies just below, at and above a strip of one and of four
 * vectors of each build (2, 4, 8 words a vector: 8, 16, 32 words a wide strip) and is mostly no
 * multiple of a strip, and whose last word holds 1, 31, 63 or 64 cells. */
static int64_t widths[160];
static int make_widths(void) {
    static const int64_t fixed[] = {1,           2,           63,           64,          65,
                                    127,         128,         129,          64 * 33 + 1, 64 * 34,
                                    64 * 34 + 5, 64 * 40 - 3, 64 * 70 + 17, 64 * 100};
    static const int64_t words[] = {17, 18, 19, 31, 32, 33, 35, 65, 66, 67, 131};
    int n = 0;
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
        widths[n++] = fixed[i];
    static const int64_t tails[] = {0, 1, 31, 63};
    for (int64_t k = 2; k <= 12; k++)
        for (size_t i = 0; i < sizeof tails / sizeof *tails; i++)
            widths[n++] = 64 * k + tails[i];
    for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
        widths[n++] = 64 * words[i];
        widths[n++] = 64 * (words[i] - 1) + 1 + (words[i] * 37) % 63;
    }
    return n;
}

int main(void) {
    static const char *isas[] = {"avx512", "avx2", "base"};
    static const char *rules[] = {"B3/S23", "B36/S23", "B2/S", "B0/S8", "B0/S23"};
    const cpu_strip_kernel *ks[3];
    int nk = 0;
    for (int i = 0; i < 3; i++) {
        const cpu_strip_kernel *k = cpu_strip_find(isas[i]);
        if (k)
            ks[nk++] = k;
        else
            printf("skip %s: this CPU or build has no such kernel\n", isas[i]);
    }
    if (!cpu_strip_find("base")) {
        printf("FAIL the base kernel is missing\n");
        return 1;
    }
    int nwidths = make_widths(), ncases = 0;
    for (size_t ri = 0; ri < sizeof rules / sizeof *rules; ri++) {
        strip_case c = {.rule_text = rules[ri]};
        char canon[64];
        if (rule_parse(rules[ri], &c.rule, canon, sizeof canon).code != GOL_OK) {
            printf("FAIL rule %s does not parse\n", rules[ri]);
            return 1;
        }
        for (int wi = 0; wi < nwidths; wi++)
            for (c.torus = 0; c.torus < 2; c.torus++)
                for (int trial = 0; trial < 2; trial++, ncases++) {
                    c.width = widths[wi];
                    check_width(ks, nk, c, trial);
                }
    }
    printf("%d widths, %d cases, %d kernels (", nwidths, ncases, nk);
    for (int i = 0; i < nk; i++)
        printf("%s%s", i ? " " : "", ks[i]->isa);
    printf("): %d wrong words\n", failures);
    return failures ? 1 : 0;
}
