/* Slabs cover every row once, in order, differ by at most one row, and refuse empty ranks. */
#include <stdio.h>

#include "core/decomp.h"

int main(void) {
    int failures = 0;
    gol_config cfg = {0};
    cfg.width = 100;
    cfg.boundary = GOL_BOUNDARY_TORUS;
    for (int64_t height = 1; height <= 70; height++)
        for (int nranks = 1; nranks <= 9; nranks++) {
            cfg.height = height;
            int64_t next = 0, lo = height, hi = 0;
            for (int r = 0; r < nranks; r++) {
                gol_slab s;
                gol_status st = decomp_make(&cfg, r, nranks, &s);
                if (nranks > height) {
                    if (st.code != GOL_EXIT_USAGE) {
                        printf("FAIL: %d ranks, %lld rows accepted\n", nranks, (long long)height);
                        failures++;
                    }
                    break;
                }
                if (s.row0 != next || s.rows < 1) failures++;
                if (s.up != (r + nranks - 1) % nranks || s.down != (r + 1) % nranks) failures++;
                next = s.row0 + s.rows;
                if (s.rows < lo) lo = s.rows;
                if (s.rows > hi) hi = s.rows;
                if (s.nwords != 2) failures++;
            }
            if (nranks <= height && (next != height || hi - lo > 1)) {
                printf("FAIL: H=%lld P=%d covers %lld rows, spread %lld\n", (long long)height,
                       nranks, (long long)next, (long long)(hi - lo));
                failures++;
            }
        }
    /* dead boundary: the outer ranks have no neighbour beyond the edge */
    cfg.boundary = GOL_BOUNDARY_DEAD;
    cfg.height = 10;
    gol_slab a, b;
    decomp_make(&cfg, 0, 3, &a);
    decomp_make(&cfg, 2, 3, &b);
    if (a.up != -1 || a.down != 1 || b.down != -1 || b.up != 1) failures++;
    if (decomp_rows(10, 3, 0) != 4 || decomp_rows(10, 3, 2) != 3 || decomp_row0(10, 3, 2) != 7)
        failures++;
    printf(failures ? "FAIL: %d\n" : "PASS%.0d\n", failures);
    return failures != 0;
}
