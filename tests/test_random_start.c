/* The word-level random start against the per-cell definition (core/random_start.h), bit for bit:
 * many seeds, densities (0, 1 and between), rows and widths (1, 63, 64, 65, odd), bits past the
 * width, and init_random_rows itself (its SIMD clone, OpenMP) over slabs of 1 to 4 ranks. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/random_start.h"
#include "core/decomp.h"
#include "tests/expect.h"
#include "tests/xorshift.h"

static uint64_t rng_state = 0x243f6a8885a308d3ULL;
static uint64_t rng(void) { return xorshift64(&rng_state); }

/* The word as the definition builds it, one cell at a time. */
static uint64_t word_from_cells(uint64_t seed, uint64_t threshold, int64_t row, int64_t w,
                                int64_t width) {
    uint64_t word = 0;
    for (int64_t k = 0; k < 64 && w * 64 + k < width; k++)
        if (init_random_cell(seed, threshold, row, w * 64 + k)) word |= (uint64_t)1 << k;
    return word;
}

/* Words computed by tests/reference.py's independent copy, so that a change to both C paths at
 * once still fails here. */
static void pinned_words(void) {
    static const struct {
        uint64_t seed;
        double density;
        int64_t row, w, width;
        uint64_t want;
    } pins[] = {
        {1, 0.5, 0, 0, 4096, 0xfd6332e86be5e146ULL},
        {1, 0.5, 1, 0, 4096, 0xbb81c8553468dc8aULL},
        {7, 0.25, 12345, 2, 150, 0x200c3ULL},
        {~(uint64_t)0, 0.9, (int64_t)1 << 40, 1, 65, 0x1ULL},
    };
    for (size_t i = 0; i < sizeof pins / sizeof *pins; i++) {
        uint64_t t = init_threshold(pins[i].density);
        uint64_t got = init_random_word(init_row_key(init_run_key(pins[i].seed), pins[i].row), t,
                                        pins[i].w, pins[i].width);
        uint64_t cells = word_from_cells(pins[i].seed, t, pins[i].row, pins[i].w, pins[i].width);
        EXPECT(got == pins[i].want, "pin %zu: word %016llx, reference.py %016llx", i,
               (unsigned long long)got, (unsigned long long)pins[i].want);
        EXPECT(cells == pins[i].want, "pin %zu: cells %016llx, reference.py %016llx", i,
               (unsigned long long)cells, (unsigned long long)pins[i].want);
    }
}

/* Every word of the row, and one word past it (all zero), against the per-cell definition. */
static void one_row(uint64_t seed, double density, int64_t row, int64_t width) {
    uint64_t t = init_threshold(density), key = init_row_key(init_run_key(seed), row);
    for (int64_t w = 0; w <= (width + 63) / 64; w++) {
        uint64_t got = init_random_word(key, t, w, width);
        uint64_t want = word_from_cells(seed, t, row, w, width);
        EXPECT(got == want,
               "seed %llx density %.17g row %lld width %lld word %lld: got %016llx want %016llx",
               (unsigned long long)seed, density, (long long)row, (long long)width, (long long)w,
               (unsigned long long)got, (unsigned long long)want);
    }
}

static void sweep(void) {
    static const int64_t widths[] = {1, 2, 63, 64, 65, 127, 128, 129, 200, 333, 1001};
    const double densities[] = {0.0, 1.0, 0.5, 1e-9, 0.1, 0.37, 0.999999, 1.0 - 0x1p-53};
    const int64_t rows[] = {
        0, 1, 63, 12345, ((int64_t)1 << 31) + 5, (int64_t)1 << 40, (int64_t)(rng() >> 20)};
    uint64_t seeds[] = {0, 1, ~(uint64_t)0, rng(), rng()};
    for (size_t s = 0; s < sizeof seeds / sizeof *seeds; s++)
        for (size_t d = 0; d < sizeof densities / sizeof *densities; d++)
            for (size_t r = 0; r < sizeof rows / sizeof *rows; r++)
                for (size_t w = 0; w < sizeof widths / sizeof *widths; w++)
                    one_row(seeds[s], densities[d], rows[r], widths[w]);
    /* random densities, rows and widths */
    for (int i = 0; i < 2000; i++)
        one_row(rng(), (double)(rng() >> 11) * 0x1p-53, (int64_t)(rng() >> 24),
                1 + (int64_t)(rng() % 700));
    /* density 0 gives no live cell, density 1 every cell inside the width */
    EXPECT(init_random_word(init_row_key(init_run_key(5), 9), init_threshold(0.0), 0, 64) == 0,
           "density 0");
    EXPECT(init_random_word(init_row_key(init_run_key(5), 9), init_threshold(1.0), 1, 100) ==
               (((uint64_t)1 << 36) - 1),
           "density 1, width 100, word 1");
}

/* init_random_rows, the production path (its SIMD clone, OpenMP), on one rank's slab of a grid,
 * against the per-cell definition; the buffer starts as garbage, which must all be overwritten. */
static void one_slab(int64_t width, double density, int nranks, int rank) {
    gol_slab slab = {.width = width, .height = 37, .nranks = nranks, .rank = rank};
    slab.row0 = decomp_row0(slab.height, nranks, rank);
    slab.rows = decomp_rows(slab.height, nranks, rank);
    slab.nwords = (width + 63) / 64;
    uint64_t seed = 1000 + (uint64_t)width, t = init_threshold(density);
    size_t bytes = (size_t)(slab.rows * slab.nwords) * sizeof(uint64_t);
    uint64_t *rows_h = malloc(bytes);
    memset(rows_h, 0xa5, bytes);
    init_random_rows(seed, density, slab.row0, slab.rows, slab.width, slab.nwords, rows_h);
    for (int64_t r = 0; r < slab.rows; r++)
        for (int64_t w = 0; w < slab.nwords; w++)
            EXPECT(rows_h[r * slab.nwords + w] == word_from_cells(seed, t, slab.row0 + r, w, width),
                   "init_random_rows width %lld density %g rank %d/%d row %lld word %lld",
                   (long long)width, density, rank, nranks, (long long)(slab.row0 + r),
                   (long long)w);
    free(rows_h);
}

static void slabs(void) {
    static const int64_t widths[] = {1, 63, 64, 65, 129, 333};
    const double densities[] = {0.0, 1.0, 0.5, 0.2};
    for (size_t wi = 0; wi < sizeof widths / sizeof *widths; wi++)
        for (size_t d = 0; d < sizeof densities / sizeof *densities; d++)
            for (int nranks = 1; nranks <= 4; nranks++)
                for (int rank = 0; rank < nranks; rank++)
                    one_slab(widths[wi], densities[d], nranks, rank);
}

int main(void) {
    pinned_words();
    sweep();
    slabs();
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("random start: word-level path equals the per-cell definition\n");
    return 0;
}
