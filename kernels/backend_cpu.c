/* The CPU backend: OpenMP threads over rows, with the MPI halo in flight while the interior rows
 * are computed. It runs the shared per-word rule of kernels/life_word.h. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "core/life_word.h"
#include "halo/halo.h"
#include "kernels/backend.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "packed frames are the row words' bytes in order; that needs a little-endian host"
#endif

typedef struct cpu_backend {
    gol_slab slab;
    int torus;
    uint64_t *grid[2]; /* (rows + 2) rows: halo above, owned rows, halo below */
    int cur;
    gol_halo *halo;
    double compute_s, frame_s;
} cpu_backend;

static uint64_t *row_ptr(const cpu_backend *c, int buf, int64_t r) {
    return c->grid[buf] + r * c->slab.nwords;
}

/* Words 1..nwords-2 have both neighbours in the row, so the loop has no branches and the
 * compiler vectorises it. */
static inline __attribute__((always_inline)) void
row_loop(const uint64_t *restrict up, const uint64_t *restrict row, const uint64_t *restrict down,
         uint64_t *restrict out, int64_t nwords, gol_rule rule) {
    for (int64_t j = 1; j < nwords - 1; j++)
        out[j] = gol_word_next(gol_west(up[j], up[j - 1] >> 63), up[j],
                               gol_east(up[j], up[j + 1] & 1, 63),
                               gol_west(row[j], row[j - 1] >> 63), row[j],
                               gol_east(row[j], row[j + 1] & 1, 63),
                               gol_west(down[j], down[j - 1] >> 63), down[j],
                               gol_east(down[j], down[j + 1] & 1, 63), rule);
}

/* The clones give AVX2/AVX-512 code where the CPU has it, from one portable binary. Conway gets
 * its own copy of the loop with the rule a constant, so the per-count loop folds away. */
__attribute__((target_clones("avx512f", "avx2", "default"))) static void
row_inner(const uint64_t *restrict up, const uint64_t *restrict row, const uint64_t *restrict down,
          uint64_t *restrict out, int64_t nwords, gol_rule rule) {
    if (rule.birth == GOL_RULE_CONWAY_BIRTH && rule.survive == GOL_RULE_CONWAY_SURVIVE) {
        const gol_rule conway = {GOL_RULE_CONWAY_BIRTH, GOL_RULE_CONWAY_SURVIVE};
        row_loop(up, row, down, out, nwords, conway);
    } else {
        row_loop(up, row, down, out, nwords, rule);
    }
}

/* Row r (1-based within the slab) of the next generation into buffer `next`. */
static void step_row(cpu_backend *c, int64_t r) {
    const gol_slab *s = &c->slab;
    const uint64_t *up = row_ptr(c, c->cur, r - 1), *row = row_ptr(c, c->cur, r),
                   *down = row_ptr(c, c->cur, r + 1);
    uint64_t *out = row_ptr(c, 1 - c->cur, r);
    int64_t nw = s->nwords;
    out[0] = gol_row_word(up, row, down, 0, nw, s->width, c->torus, s->rule);
    if (nw > 1) {
        row_inner(up, row, down, out, nw, s->rule);
        out[nw - 1] = gol_row_word(up, row, down, nw - 1, nw, s->width, c->torus, s->rule);
    }
}

static void *cpu_create(const char *halo, const gol_slab *slab, const gol_config *cfg,
                        MPI_Comm comm) {
    const halo_mode *mode = halo_mode_find(halo, HALO_MEM_HOST);
    if (!mode)
        gol_die(__FILE__, __LINE__, "halo_mode_find", "golmpi", "no host halo mode of that name");
    cpu_backend *c = gol_xcalloc(1, sizeof *c);
    c->slab = *slab;
    c->torus = slab->boundary == GOL_BOUNDARY_TORUS;
    int64_t words = (slab->rows + 2) * slab->nwords;
    /* calloc: halo rows past a dead boundary stay zero for the whole run */
    for (int b = 0; b < 2; b++) c->grid[b] = gol_xcalloc((size_t)words, sizeof(uint64_t));
    c->halo = halo_create(mode, slab, comm, NULL, cfg->timeout_s);
    return c;
}

static void cpu_load(void *impl, const uint64_t *rows_h) {
    cpu_backend *c = impl;
    memcpy(row_ptr(c, c->cur, 1), rows_h, (size_t)(c->slab.rows * c->slab.nwords) * 8);
}

static void cpu_store(void *impl, uint64_t *rows_h) {
    cpu_backend *c = impl;
    memcpy(rows_h, row_ptr(c, c->cur, 1), (size_t)(c->slab.rows * c->slab.nwords) * 8);
}

static void cpu_advance(void *impl, int64_t generations) {
    cpu_backend *c = impl;
    int64_t rows = c->slab.rows;
    for (int64_t g = 0; g < generations; g++) {
        double t0 = MPI_Wtime();
        halo_post(c->halo, row_ptr(c, c->cur, 1), row_ptr(c, c->cur, rows), row_ptr(c, c->cur, 0),
                  row_ptr(c, c->cur, rows + 1));
        /* the interior needs no halo: it runs while the edge rows travel */
#pragma omp parallel for schedule(static)
        for (int64_t r = 2; r < rows; r++) step_row(c, r);
        halo_wait(c->halo);
        step_row(c, 1);
        if (rows > 1) step_row(c, rows);
        c->cur = 1 - c->cur;
        c->compute_s += MPI_Wtime() - t0;
    }
}

static void cpu_frame_begin(void *impl, int slot, gol_frame_format fmt, void *dst_h) {
    (void)slot;
    cpu_backend *c = impl;
    double t0 = MPI_Wtime();
    int64_t width = c->slab.width, row_bytes = frame_row_bytes(width, fmt);
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < c->slab.rows; r++) {
        const uint64_t *row = row_ptr(c, c->cur, r + 1);
        uint8_t *dst = (uint8_t *)dst_h + r * row_bytes;
        if (fmt == GOL_FRAME_PACKED) {
            memcpy(dst, row, (size_t)row_bytes); /* LSB-first words are LSB-first bytes */
        } else {
            for (int64_t x = 0; x < width; x++) dst[x] = (uint8_t)((row[x >> 6] >> (x & 63)) & 1);
        }
    }
    c->frame_s += MPI_Wtime() - t0;
}

static void cpu_frame_wait(void *impl, int slot) {
    (void)impl;
    (void)slot; /* frames are complete when frame_begin returns */
}

static void *cpu_host_alloc(void *impl, int64_t bytes) {
    (void)impl;
    return gol_xmalloc((size_t)bytes);
}

static void cpu_host_free(void *impl, void *p) {
    (void)impl;
    free(p);
}

static int64_t cpu_population(void *impl) {
    cpu_backend *c = impl;
    int64_t n = 0, words = c->slab.rows * c->slab.nwords;
    const uint64_t *w = row_ptr(c, c->cur, 1);
#pragma omp parallel for reduction(+ : n) schedule(static)
    for (int64_t i = 0; i < words; i++) n += __builtin_popcountll(w[i]);
    return n;
}

static gol_backend_times cpu_times(const void *impl) {
    const cpu_backend *c = impl;
    double halo = halo_seconds(c->halo);
    gol_backend_times t = {c->compute_s - halo, halo, c->frame_s};
    return t;
}

static void cpu_destroy(void *impl) {
    cpu_backend *c = impl;
    halo_destroy(c->halo);
    free(c->grid[0]);
    free(c->grid[1]);
    free(c);
}

const gol_backend_ops gol_backend_cpu_ops = {
    .name = "cpu",
    .create = cpu_create,
    .load = cpu_load,
    .store = cpu_store,
    .advance = cpu_advance,
    .frame_begin = cpu_frame_begin,
    .frame_wait = cpu_frame_wait,
    .host_alloc = cpu_host_alloc,
    .host_free = cpu_host_free,
    .population = cpu_population,
    .times = cpu_times,
    .destroy = cpu_destroy,
};
