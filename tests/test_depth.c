/* core/depth.h: the depth choice, and the trapezoid passes checked by replaying their row ranges on
 * generation stamps instead of cells. Each (buffer, row) holds the generation it was last
 * computed at; computing row r at generation g needs rows r-1..r+1 at g-1 in the other buffer.
 * A dead halo row is dead at every generation and must never be written. The phases that may run
 * in parallel (the threads' runs of tiles with their seams, for 1 to 5 threads; the seams between
 * runs; the two bands) are checked for independence: a (buffer, row) that
 * one unit writes is neither read nor written by another unit of the same phase. The phases that
 * run while the halo travels must not touch a halo row that is not dead. The plan is walked
 * through whole exchange cycles cut into passes of every length, so a pass that starts part way
 * through a cycle (a frame inside it) is covered too. */
#include <stdlib.h>
#include <string.h>

#include "core/depth.h"

#include "tests/expect.h"

enum { MAXR = 200, DEAD = 1 << 30, GARBAGE = -1 };

typedef struct sim {
    gol_pass p;
    int64_t k, gen; /* depth; the generation the current buffer holds */
    int cur;
    int stamp[2][MAXR];
    int writer[2][MAXR], reader[2][MAXR]; /* unit ids in the current phase; -1 none, -2 many */
    bool in_flight; /* the halo is travelling: only owned rows may be touched */
    const char *what;
} sim;

static int idx(const sim *s, int64_t row) { return (int)(row + s->k); }

static bool row_is_dead(const sim *s, int64_t row) {
    return (row < 0 && s->p.dead_top) || (row >= s->p.rows && s->p.dead_bottom);
}

static void phase_begin(sim *s) {
    memset(s->writer, 0xff, sizeof s->writer); /* -1 */
    memset(s->reader, 0xff, sizeof s->reader);
}

static void phase_end(sim *s) {
    for (int b = 0; b < 2; b++)
        for (int x = 0; x < MAXR; x++)
            EXPECT(s->writer[b][x] < 0 || s->reader[b][x] == -1 ||
                       s->reader[b][x] == s->writer[b][x],
                   "%s: buffer %d row %lld written by unit %d and read by another (%d)", s->what, b,
                   (long long)x - s->k, s->writer[b][x], s->reader[b][x]);
}

static void note_read(sim *s, int b, int x, int unit) {
    int *r = &s->reader[b][x];
    *r = (*r == -1 || *r == unit) ? unit : -2;
}

/* Row r at pass generation i (1-based), as unit `unit` of the phase. */
static void compute(sim *s, int64_t r, int64_t i, int unit) {
    int src = (s->cur + (int)(i - 1)) & 1, dst = 1 - src;
    int want = (int)(s->gen + i - 1);
    EXPECT(r >= -s->k && r < s->p.rows + s->k, "%s: row %lld outside the slab", s->what,
           (long long)r);
    if (r < -s->k || r >= s->p.rows + s->k) return;
    EXPECT(!row_is_dead(s, r), "%s: dead halo row %lld computed", s->what, (long long)r);
    EXPECT(!s->in_flight || (r >= 0 && r < s->p.rows), "%s: row %lld written in flight", s->what,
           (long long)r);
    for (int64_t y = r - 1; y <= r + 1; y++) {
        if (y < -s->k || y >= s->p.rows + s->k) {
            EXPECT(row_is_dead(s, r), "%s: row %lld reads past the halo", s->what, (long long)r);
            continue;
        }
        EXPECT(!s->in_flight || row_is_dead(s, y) || (y >= 0 && y < s->p.rows),
               "%s: halo row %lld read in flight", s->what, (long long)y);
        int got = s->stamp[src][idx(s, y)];
        EXPECT(got == want || got == DEAD, "%s: row %lld at generation %d reads row %lld at %d",
               s->what, (long long)r, want + 1, (long long)y, got);
        note_read(s, src, idx(s, y), unit);
    }
    int *w = &s->writer[dst][idx(s, r)];
    EXPECT(*w == -1 || *w == unit, "%s: row %lld written by two units", s->what, (long long)r);
    *w = unit;
    s->stamp[dst][idx(s, r)] = want + 1;
}

static void walk(sim *s, gol_rows (*rows)(const gol_pass *, int64_t, int64_t), int64_t j,
                 int unit) {
    for (int64_t i = 1; i <= s->p.gens; i++) {
        gol_rows r = rows(&s->p, j, i);
        for (int64_t y = r.lo; y < r.hi; y++)
            compute(s, y, i, unit);
    }
}

static gol_rows band(const gol_pass *p, int64_t side, int64_t i) {
    return pass_band_rows(p, (int)side, i);
}
static gol_rows whole(const gol_pass *p, int64_t j, int64_t i) {
    (void)j;
    return pass_whole_rows(p, i);
}

/* Thread t's part of the interior (core/depth.h): its run of tiles, each seam inside the run
 * right after the seam's second tile. */
static void run_of_tiles(sim *s, int t, int nt) {
    int64_t first = pass_run_start(&s->p, t, nt), end = pass_run_start(&s->p, t + 1, nt);
    for (int64_t j = first; j < end; j++) {
        walk(s, pass_tile_rows, j, t);
        if (j > first) walk(s, pass_seam_rows, j, t);
    }
}

/* One pass in the documented order with nt threads; the threads' runs, and the seams between
 * them, walked backwards when `reverse`. */
static void run_pass(sim *s, bool exchanged, int nt, bool reverse) {
    s->in_flight = exchanged;
    if (pass_split(&s->p)) {
        int64_t n = pass_tiles(&s->p), seams = 0;
        EXPECT_EQ(pass_tile_edge(&s->p, 0), 0, "%s", s->what);
        EXPECT_EQ(pass_tile_edge(&s->p, n), s->p.rows, "%s", s->what);
        EXPECT_EQ(pass_run_start(&s->p, 0, nt), 0, "%s", s->what);
        EXPECT_EQ(pass_run_start(&s->p, nt, nt), n, "%s", s->what);
        phase_begin(s);
        for (int t = 0; t < nt; t++)
            run_of_tiles(s, reverse ? nt - 1 - t : t, nt);
        phase_end(s);
        phase_begin(s);
        for (int t = 1; t < nt; t++) {
            int u = reverse ? nt - t : t;
            if (pass_run_opens_seam(&s->p, u, nt)) {
                walk(s, pass_seam_rows, pass_run_start(&s->p, u, nt), u);
                seams++;
            }
        }
        phase_end(s);
        for (int t = 0; t < nt; t++) /* the seams inside runs */
            seams += pass_run_start(&s->p, t + 1, nt) - pass_run_start(&s->p, t, nt) -
                     (pass_run_start(&s->p, t + 1, nt) > pass_run_start(&s->p, t, nt));
        EXPECT_EQ(seams, n - 1, "%s: %d threads", s->what, nt);
        s->in_flight = false;
        phase_begin(s);
        walk(s, band, reverse ? 1 : 0, 0);
        walk(s, band, reverse ? 0 : 1, 1);
        phase_end(s);
    } else {
        s->in_flight = false;
        phase_begin(s);
        walk(s, whole, 0, 0);
        phase_end(s);
    }
    s->cur = (s->cur + (int)s->p.gens) & 1;
    s->gen += s->p.gens;
    for (int64_t r = 0; r < s->p.rows; r++)
        EXPECT_EQ(s->stamp[s->cur][idx(s, r)], s->gen, "%s: owned row %lld after the pass", s->what,
                  (long long)r);
    s->p.halo_left -= s->p.gens;
}

/* The exchange: valid halo rows at the current generation where there is a neighbour. */
static void exchange(sim *s) {
    for (int64_t d = 1; d <= s->k; d++) {
        if (!s->p.dead_top) s->stamp[s->cur][idx(s, -d)] = (int)s->gen;
        if (!s->p.dead_bottom) s->stamp[s->cur][idx(s, s->p.rows - 1 + d)] = (int)s->gen;
    }
    s->p.halo_left = s->k;
}

static void cycles(int64_t rows, int64_t k, int64_t tile, bool dead_top, bool dead_bottom,
                   unsigned seed) {
    sim s;
    memset(&s, 0, sizeof s);
    char what[160];
    snprintf(what, sizeof what, "rows %lld k %lld tile %lld dead %d/%d seed %u", (long long)rows,
             (long long)k, (long long)tile, dead_top, dead_bottom, seed);
    s.what = what;
    s.k = k;
    s.p = (gol_pass){.rows = rows, .dead_top = dead_top, .dead_bottom = dead_bottom, .tile = tile};
    for (int b = 0; b < 2; b++)
        for (int64_t r = -k; r < rows + k; r++)
            s.stamp[b][idx(&s, r)] =
                row_is_dead(&s, r) ? DEAD : (b == 0 && r >= 0 && r < rows ? 0 : GARBAGE);
    srand(seed);
    const int threads[6] = {1, 2, 3, 1, 5, 2};
    for (int c = 0; c < 6; c++) {
        exchange(&s);
        bool first = true;
        while (s.p.halo_left > 0) {
            /* seed 0: whole cycles */
            int64_t n = seed == 0 ? s.p.halo_left : 1 + rand() % s.p.halo_left;
            s.p.gens = n;
            run_pass(&s, first, threads[c], (c & 1) != 0);
            first = false;
        }
    }
}

static void test_passes(void) {
    for (int64_t rows = 1; rows <= 40; rows++)
        for (int64_t k = 1; k <= 9 && k <= rows; k++)
            for (int64_t tile = 1; tile <= 13; tile += 3)
                for (int dead = 0; dead < 4; dead++)
                    for (unsigned seed = 0; seed < 3; seed++)
                        cycles(rows, k, tile, dead & 1, dead >> 1, seed);
    cycles(150, 16, 20, false, false, 0);
    cycles(150, 16, 20, true, false, 5);
}

static void test_choose(void) {
    int64_t k = 0;
    gol_status st = depth_choose(0, GOL_BACKEND_CUDA, 65536, 1, &k);
    EXPECT(st.code == GOL_OK && k == 16, "cuda auto, a tall slab: k %lld", (long long)k);
    st = depth_choose(0, GOL_BACKEND_CUDA, 64, 2, &k);
    EXPECT(st.code == GOL_OK && k == 1, "cuda auto, 32-row slabs: k %lld", (long long)k);
    st = depth_choose(0, GOL_BACKEND_CPU, 4096, 2, &k);
    EXPECT(st.code == GOL_OK && k > 1 && k <= 2048, "cpu auto at 4096/2: k %lld", (long long)k);
    st = depth_choose(0, GOL_BACKEND_CPU, 7, 4, &k); /* one row on the last rank */
    EXPECT(st.code == GOL_OK && k == 1, "cpu auto, one-row slabs: k %lld", (long long)k);
    st = depth_choose(5, GOL_BACKEND_CPU, 23, 4, &k);
    EXPECT(st.code == GOL_OK && k == 5, "explicit 5 of 5 rows: %s", st.msg);
    st = depth_choose(6, GOL_BACKEND_CPU, 23, 4, &k);
    EXPECT(st.code == GOL_EXIT_USAGE && strstr(st.msg, "rank 3 owns only 5"), "too deep: '%s'",
           st.msg);
    st = depth_choose(64, GOL_BACKEND_CUDA, 4096, 1, &k);
    EXPECT(st.code == GOL_OK && k == 64, "cuda k 64: %s", st.msg);
    st = depth_choose(1, GOL_BACKEND_CUDA, 4096, 1, &k);
    EXPECT(st.code == GOL_OK && k == 1, "cuda k 1: %s", st.msg);
}

int main(void) {
    test_choose();
    test_passes();
    if (failures) fprintf(stderr, "%d failures\n", failures);
    return failures ? 1 : 0;
}
