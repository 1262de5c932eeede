#include "cuda/cuda_pass_split.h"

cuda_pass_rows cuda_pass_split(const gol_pass *pass, int64_t k) {
    const int64_t rows = pass->rows;
    const gol_rows all = pass_whole_rows(pass, pass->gens), none = {0, 0};
    cuda_pass_rows c = {.band = {none, none}, .interior = none, .edges = 0};
    if (rows < 2 * k) {
        c.band[0] = all;
        return c;
    }
    if (!pass->dead_top) c.band[0] = (gol_rows){all.lo, k};
    if (!pass->dead_bottom) c.band[1] = (gol_rows){rows - k, all.hi};
    c.interior = (gol_rows){pass->dead_top ? all.lo : k, pass->dead_bottom ? all.hi : rows - k};
    c.edges = k == 1 && !pass->dead_top && !pass->dead_bottom;
    return c;
}
