/* The per-word bit-sliced update against a naive per-cell rule: every neighbourhood, random rows,
 * odd widths, both boundaries, several rules. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/life_word.h"
#include "tests/xorshift.h"

static int failures;

static uint64_t rng_state = 0x243f6a8885a308d3ULL;
static uint64_t rng(void) { return xorshift64(&rng_state); }

static int naive(gol_rule rule, int alive, int n) {
    return alive ? (rule.survive >> n) & 1 : (rule.birth >> n) & 1;
}

/* All 512 neighbourhoods, one per bit lane: lane k of the nine boards holds the bits of k. */
static void all_neighbourhoods(gol_rule rule, const char *name) {
    for (int base = 0; base < 512; base += 64) {
        uint64_t board[9] = {0};
        for (int k = 0; k < 64; k++)
            for (int i = 0; i < 9; i++)
                if (((base + k) >> i) & 1) board[i] |= (uint64_t)1 << k;
        /* order: nw n ne w c e sw s se; board[4] is the cell itself */
        uint64_t got = gol_word_next(board[0], board[1], board[2], board[3], board[4], board[5],
                                     board[6], board[7], board[8], rule);
        for (int k = 0; k < 64; k++) {
            int cfg = base + k, n = 0;
            for (int i = 0; i < 9; i++)
                if (i != 4) n += (cfg >> i) & 1;
            int want = naive(rule, (cfg >> 4) & 1, n);
            if ((int)((got >> k) & 1) != want) {
                if (failures++ < 10)
                    printf("FAIL %s: neighbourhood %03x: got %d want %d\n", name, cfg,
                           (int)((got >> k) & 1), want);
            }
        }
    }
}

static int cell(const uint64_t *row, int64_t x) { return (int)((row[x / 64] >> (x % 64)) & 1); }

/* Random three-row windows of odd widths, compared cell by cell with wrap or dead columns. */
static void random_rows(gol_rule rule, const char *name) {
    static const int64_t widths[] = {1, 2, 5, 63, 64, 65, 127, 128, 129, 200, 333};
    for (size_t wi = 0; wi < sizeof widths / sizeof *widths; wi++) {
        int64_t width = widths[wi], nw = (width + 63) / 64;
        for (int torus = 0; torus < 2; torus++)
            for (int trial = 0; trial < 40; trial++) {
                uint64_t rows[3][6];
                for (int r = 0; r < 3; r++) {
                    for (int64_t j = 0; j < nw; j++) rows[r][j] = rng() & (trial % 3 ? rng() : ~0ULL);
                    rows[r][nw - 1] &= gol_row_last_mask(width);
                }
                for (int64_t j = 0; j < nw; j++) {
                    uint64_t got = gol_row_word(rows[0], rows[1], rows[2], j, nw, width, torus, rule);
                    for (int b = 0; b < 64; b++) {
                        int64_t x = j * 64 + b;
                        int want = 0;
                        if (x < width) {
                            int n = 0;
                            for (int r = 0; r < 3; r++)
                                for (int dx = -1; dx <= 1; dx++) {
                                    if (r == 1 && dx == 0) continue;
                                    int64_t xx = x + dx;
                                    if (xx < 0 || xx >= width) {
                                        if (!torus) continue;
                                        xx = (xx + width) % width;
                                    }
                                    n += cell(rows[r], xx);
                                }
                            want = naive(rule, cell(rows[1], x), n);
                        }
                        if ((int)((got >> b) & 1) != want && failures++ < 10)
                            printf("FAIL %s: width %lld torus %d word %lld bit %d: got %d want %d\n",
                                   name, (long long)width, torus, (long long)j, b,
                                   (int)((got >> b) & 1), want);
                    }
                }
            }
    }
}

int main(void) {
    struct {
        const char *name;
        gol_rule rule;
    } rules[] = {
        {"B3/S23", {1 << 3, (1 << 2) | (1 << 3)}},
        {"B36/S23 (HighLife)", {(1 << 3) | (1 << 6), (1 << 2) | (1 << 3)}},
        {"B2/S (Seeds)", {1 << 2, 0}},
        {"B3678/S34678 (Day & Night)",
         {(1 << 3) | (1 << 6) | (1 << 7) | (1 << 8), (1 << 3) | (1 << 4) | (1 << 6) | (1 << 7) | (1 << 8)}},
        {"B012345678/S012345678", {0x1ff, 0x1ff}},
        {"B0/S8", {1, 1 << 8}},
        {"B/S", {0, 0}},
    };
    for (size_t i = 0; i < sizeof rules / sizeof *rules; i++) {
        all_neighbourhoods(rules[i].rule, rules[i].name);
        random_rows(rules[i].rule, rules[i].name);
    }
    if (failures) {
        printf("%d wrong cells\n", failures);
        return 1;
    }
    printf("PASS: word update equals the per-cell rule\n");
    return 0;
}
