/* Slabs cover every row once, in order, differ by at most one row, and refuse empty ranks. Each
 * failed check says which grid, rank count and rank, what it checked, and the expected and actual
 * values. */
#include <stdio.h>

#include "core/decomp.h"
#include "tests/expect.h"

/* Every rank's slab of a height x 100 torus on nranks ranks. */
static void check_torus(int64_t height, int nranks) {
    gol_config cfg = {0};
    cfg.width = 100;
    cfg.height = height;
    cfg.boundary = GOL_BOUNDARY_TORUS;
    long long h = (long long)height;
    int64_t next = 0, lo = height, hi = 0;
    for (int r = 0; r < nranks; r++) {
        gol_slab s;
        gol_status st = decomp_make(&cfg, r, nranks, &s);
        if (nranks > height) {
            EXPECT_EQ(st.code, GOL_EXIT_USAGE, "H=%lld P=%d: more ranks than rows", h, nranks);
            return;
        }
        EXPECT_EQ(st.code, GOL_OK, "H=%lld P=%d rank %d: decomp_make", h, nranks, r);
        EXPECT_EQ(s.row0, next, "H=%lld P=%d rank %d: first row follows the rank above", h, nranks,
                  r);
        EXPECT(s.rows >= 1, "H=%lld P=%d rank %d: rows: expected at least 1, got %lld", h, nranks,
               r, (long long)s.rows);
        EXPECT_EQ(s.up, (r + nranks - 1) % nranks, "H=%lld P=%d rank %d: torus up", h, nranks, r);
        EXPECT_EQ(s.down, (r + 1) % nranks, "H=%lld P=%d rank %d: torus down", h, nranks, r);
        EXPECT_EQ(s.nwords, 2, "H=%lld P=%d rank %d: words per 100-cell row", h, nranks, r);
        EXPECT_EQ(s.rows, decomp_rows(height, nranks, r), "H=%lld P=%d rank %d: decomp_rows", h,
                  nranks, r);
        EXPECT_EQ(s.row0, decomp_row0(height, nranks, r), "H=%lld P=%d rank %d: decomp_row0", h,
                  nranks, r);
        next = s.row0 + s.rows;
        if (s.rows < lo) lo = s.rows;
        if (s.rows > hi) hi = s.rows;
    }
    EXPECT_EQ(next, height, "H=%lld P=%d: rows covered", h, nranks);
    EXPECT(hi - lo <= 1, "H=%lld P=%d: slab sizes: expected to differ by at most 1, got %lld..%lld",
           h, nranks, (long long)lo, (long long)hi);
}

int main(void) {
    for (int64_t height = 1; height <= 70; height++)
        for (int nranks = 1; nranks <= 9; nranks++)
            check_torus(height, nranks);

    /* dead boundary: the outer ranks have no neighbour beyond the edge */
    gol_config cfg = {0};
    cfg.width = 100;
    cfg.height = 10;
    cfg.boundary = GOL_BOUNDARY_DEAD;
    gol_slab a, b;
    EXPECT_EQ(decomp_make(&cfg, 0, 3, &a).code, GOL_OK, "dead H=10 P=3 rank 0");
    EXPECT_EQ(decomp_make(&cfg, 2, 3, &b).code, GOL_OK, "dead H=10 P=3 rank 2");
    EXPECT_EQ(a.up, -1, "dead H=10 P=3 rank 0: no rank above the top edge");
    EXPECT_EQ(a.down, 1, "dead H=10 P=3 rank 0: down");
    EXPECT_EQ(b.down, -1, "dead H=10 P=3 rank 2: no rank below the bottom edge");
    EXPECT_EQ(b.up, 1, "dead H=10 P=3 rank 2: up");
    EXPECT_EQ(decomp_rows(10, 3, 0), 4, "decomp_rows(10, 3, 0)");
    EXPECT_EQ(decomp_rows(10, 3, 2), 3, "decomp_rows(10, 3, 2)");
    EXPECT_EQ(decomp_row0(10, 3, 2), 7, "decomp_row0(10, 3, 2)");
    printf(failures ? "FAIL: %d\n" : "PASS%.0d\n", failures);
    return failures != 0;
}
