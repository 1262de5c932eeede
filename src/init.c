#include "src/init.h"

#include <string.h>


void init_pattern(const gol_pattern *p, int64_t x0, int64_t y0, const gol_slab *slab,
                  uint64_t *rows_h) {
    memset(rows_h, 0, (size_t)(slab->rows * slab->nwords) * sizeof *rows_h);
    for (int64_t r = 0; r < slab->rows; r++) {
        int64_t py = slab->row0 + r - y0;
        if (py < 0 || py >= p->height) continue;
        uint64_t *row = rows_h + r * slab->nwords;
        for (int64_t px = 0; px < p->width; px++)
            if (pattern_cell(p, px, py)) {
                int64_t x = x0 + px;
                row[x / 64] |= (uint64_t)1 << (x % 64);
            }
    }
}
