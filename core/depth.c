#include "core/depth.h"

/* auto on the CPU: deep enough that the exchanges are rare and a tile of rows is reused from cache
 * through many generations, shallow enough that the halo rows computed again by both neighbours
 * (about k rows a generation, split between the two sides) stay a small share of a slab's rows. */
enum { AUTO_CPU_MAX = 16, AUTO_CPU_ROWS_PER_DEPTH = 32 };
/* auto on the GPU: 16 on tall slabs, two passes of the multi-generation kernel (cuda/
 * life_cuda.h, 8 generations a pass on chip) between exchanges, so an exchange's latency is paid
 * every 16 generations; the edge bands (about 2k rows recomputed a pass, on the comm stream) stay
 * a small share of a slab of 32k rows or more. */
enum { AUTO_CUDA_MAX = 16, AUTO_CUDA_ROWS_PER_DEPTH = 32 };

gol_status depth_choose(int64_t asked, gol_backend_kind backend, int64_t height, int nranks,
                        int64_t *k) {
    int64_t shortest = height / nranks; /* the last rank owns no more than any other */
    if (asked == 0) {
        bool gpu = backend == GOL_BACKEND_CUDA;
        int64_t want = shortest / (gpu ? AUTO_CUDA_ROWS_PER_DEPTH : AUTO_CPU_ROWS_PER_DEPTH);
        int64_t most = gpu ? AUTO_CUDA_MAX : AUTO_CPU_MAX;
        if (want > most) want = most;
        if (want > shortest) want = shortest;
        *k = want < 1 ? 1 : want;
        return gol_ok();
    }
    if (asked > shortest)
        return gol_fail(GOL_EXIT_USAGE,
                        "--halo-depth %lld: each rank sends its neighbours its %lld first and last "
                        "rows, but rank %d owns only %lld; use --halo-depth %lld or less (or "
                        "auto), or fewer ranks",
                        (long long)asked, (long long)asked, nranks - 1, (long long)shortest,
                        (long long)shortest);
    *k = asked;
    return gol_ok();
}

bool pass_split(const gol_pass *p) { return p->rows >= 2 * p->gens; }

int64_t pass_tiles(const gol_pass *p) {
    int64_t least = 2 * p->gens; /* a tile's two seams must not overlap */
    int64_t want = p->tile > least ? p->tile : least;
    int64_t n = p->rows / want;
    return n < 1 ? 1 : n;
}

int64_t pass_tile_edge(const gol_pass *p, int64_t j) {
    int64_t n = pass_tiles(p);
    return p->rows / n * j + (j < p->rows % n ? j : p->rows % n);
}

static gol_rows rows_of(int64_t lo, int64_t hi) {
    gol_rows r = {lo, hi > lo ? hi : lo};
    return r;
}

gol_rows pass_tile_rows(const gol_pass *p, int64_t j, int64_t i) {
    int64_t n = pass_tiles(p);
    int64_t lo = pass_tile_edge(p, j) + (j == 0 && p->dead_top ? 0 : i);
    int64_t hi = pass_tile_edge(p, j + 1) - (j == n - 1 && p->dead_bottom ? 0 : i);
    return rows_of(lo, hi);
}

gol_rows pass_seam_rows(const gol_pass *p, int64_t j, int64_t i) {
    int64_t edge = pass_tile_edge(p, j);
    return rows_of(edge - i, edge + i);
}

int64_t pass_run_start(const gol_pass *p, int t, int nt) { return pass_tiles(p) * t / nt; }

bool pass_run_opens_seam(const gol_pass *p, int t, int nt) {
    int64_t j = pass_run_start(p, t, nt);
    return j > 0 && j < pass_run_start(p, t + 1, nt);
}

gol_rows pass_band_rows(const gol_pass *p, int side, int64_t i) {
    if (side == 0) return p->dead_top ? rows_of(0, 0) : rows_of(-(p->halo_left - i), i);
    if (p->dead_bottom) return rows_of(p->rows, p->rows);
    return rows_of(p->rows - i, p->rows + p->halo_left - i);
}

gol_rows pass_whole_rows(const gol_pass *p, int64_t i) {
    int64_t lo = p->dead_top ? 0 : -(p->halo_left - i);
    int64_t hi = p->dead_bottom ? p->rows : p->rows + p->halo_left - i;
    return rows_of(lo, hi);
}
