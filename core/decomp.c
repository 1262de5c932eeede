#include "core/decomp.h"

int64_t decomp_rows(int64_t height, int nranks, int rank) {
    return height / nranks + (rank < height % nranks ? 1 : 0);
}

int64_t decomp_row0(int64_t height, int nranks, int rank) {
    int64_t base = height / nranks, extra = height % nranks;
    return (int64_t)rank * base + (rank < extra ? rank : extra);
}

gol_status decomp_make(const gol_config *cfg, int rank, int nranks, gol_slab *slab) {
    if (cfg->height < nranks)
        return gol_fail(GOL_EXIT_USAGE,
                        "%d ranks but only %lld rows: every rank needs at least one row; use at "
                        "most %lld ranks or a taller grid",
                        nranks, (long long)cfg->height, (long long)cfg->height);
    slab->width = cfg->width;
    slab->height = cfg->height;
    slab->row0 = decomp_row0(cfg->height, nranks, rank);
    slab->rows = decomp_rows(cfg->height, nranks, rank);
    slab->nwords = (cfg->width + 63) / 64;
    slab->rank = rank;
    slab->nranks = nranks;
    slab->boundary = cfg->boundary;
    slab->rule = cfg->rule;
    int torus = cfg->boundary == GOL_BOUNDARY_TORUS;
    slab->up = rank > 0 ? rank - 1 : (torus ? nranks - 1 : -1);
    slab->down = rank < nranks - 1 ? rank + 1 : (torus ? 0 : -1);
    return gol_ok();
}
