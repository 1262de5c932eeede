/* The CPU backend: OpenMP threads over tiles of rows, with the MPI halo in flight while the
 * interior rows are computed. Each generation of a block of rows is cpu/cpu_strip.h's
 * (the shared rule of core/life_word.h in SIMD vectors, walked down column strips), and with a
 * deep halo (core/depth.h) advances k generations between exchanges,
 * each tile of rows through all k while it is in cache. */
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend_ops.h"
#include "core/check.h"
#include "core/depth.h"
#include "core/life_word.h"
#include "core/random_start.h"
#include "core/trace.h"
#include "cpu/cpu_strip.h"
#include "halo/halo.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "packed frames are the row words' bytes in order; that needs a little-endian host"
#endif

typedef struct cpu_backend {
    gol_slab slab;
    int torus;
    int64_t depth;     /* k: halo rows a side, exchanged every k generations (core/depth.h) */
    int64_t halo_left; /* halo rows still valid; 0: exchange at the start of the next pass */
    uint64_t *grid[2]; /* rows + 2k rows: k halo rows above, the owned rows, k halo rows below */
    uint64_t *send; /* 2k rows: the edge rows in flight, copied, as the interior overwrites them */
    const cpu_strip_kernel *strip; /* the generation step for this CPU's vectors */
    int nthreads;
    int64_t tile_rows_set; /* GOLMPI_CPU_TILE_ROWS, or 0 */
    int cur_buf; /* grid[cur_buf] holds the current generation: the buffer the next pass reads */
    gol_halo *halo;
    double compute_s, frame_s;
    int64_t held; /* host bytes allocated and not freed: the grids, the send rows, frame slots */
} cpu_backend;

/* Row r of a buffer, r counted from the first owned row (-k..rows+k-1). */
static uint64_t *row_ptr(const cpu_backend *c, int buf, int64_t r) {
    return c->grid[buf] + (r + c->depth) * c->slab.nwords;
}

/* Generation i (1-based) of the pass: rows from the buffer of generation i-1 into the other. */
static void step_gen(const cpu_backend *c, int64_t i, gol_rows rows) {
    if (rows.lo >= rows.hi) return;
    int src = (c->cur_buf + (int)((i - 1) & 1)) & 1;
    const gol_slab *s = &c->slab;
    c->strip->rows(row_ptr(c, src, 0), row_ptr(c, 1 - src, 0), rows.lo, rows.hi, s->nwords,
                   s->width, c->torus, s->rule);
}

/* A tile of rows fits the core's cache with both buffers, so the tile's generations after the
 * first reuse it instead of streaming the slab from memory each generation. One generation
 * reuses nothing: then one tile a thread. GOLMPI_CPU_TILE_ROWS (a debug setting) sets the tile
 * height, so that tests on small grids run many tiles and their seams. */
enum { TILE_CACHE_BYTES = 512 * 1024 };
static int64_t tile_rows(const cpu_backend *c, int64_t gens) {
    if (c->tile_rows_set > 0) return c->tile_rows_set;
    if (gens == 1) return (c->slab.rows + c->nthreads - 1) / c->nthreads;
    int64_t t = TILE_CACHE_BYTES / (2 * c->slab.nwords * (int64_t)sizeof(uint64_t));
    return t < 1 ? 1 : t;
}

static int64_t tile_rows_setting(void) {
    const char *s = getenv("GOLMPI_CPU_TILE_ROWS");
    long long n = 0;
    if (!s || sscanf(s, "%lld", &n) != 1 || n <= 0) return 0;
    return (int64_t)n;
}

/* Sends this rank's k edge rows and receives the k halo rows a side into the current buffer:
 * halo_post (halo/halo.c) calls the mode's post, mpi_post in halo/halo_mpi.c (MPI_Irecv and
 * MPI_Isend a neighbour). */
static void post_exchange(cpu_backend *c) {
    int64_t k = c->depth, rows = c->slab.rows, words = k * c->slab.nwords;
    memcpy(c->send, row_ptr(c, c->cur_buf, 0), (size_t)words * 8);
    memcpy(c->send + words, row_ptr(c, c->cur_buf, rows - k), (size_t)words * 8);
    halo_post(c->halo, c->send, c->send + words, row_ptr(c, c->cur_buf, -k),
              row_ptr(c, c->cur_buf, rows));
}

/* All the pass's generations of tile j, or of seam j (the rows between tiles j-1 and j that
 * both tiles leave out as they shrink; it needs both, whole). */
static void tile_gens(const cpu_backend *c, const gol_pass *p, int64_t j, bool seam) {
    for (int64_t i = 1; i <= p->gens; i++)
        step_gen(c, i, seam ? pass_seam_rows(p, j, i) : pass_tile_rows(p, j, i));
}

/* One pass (core/depth.h): the interior tiles and their seams while the halo travels (each
 * thread a run of tiles, each seam inside it right after its second tile, while both are in
 * cache; then the seams between runs), then the edge bands. MPI only on the master thread. */
static void run_split_pass(cpu_backend *c, const gol_pass *p, bool posted) {
#pragma omp parallel
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        int64_t first = pass_run_start(p, t, nt), end = pass_run_start(p, t + 1, nt);
        for (int64_t j = first; j < end; j++) {
            tile_gens(c, p, j, false);
            if (j > first) tile_gens(c, p, j, true);
        }
#pragma omp barrier
#pragma omp for schedule(static)
        for (int u = 1; u < nt; u++)
            if (pass_run_opens_seam(p, u, nt)) tile_gens(c, p, pass_run_start(p, u, nt), true);
#pragma omp master
        if (posted) halo_wait(c->halo);
#pragma omp barrier
#pragma omp for schedule(static)
        for (int side = 0; side < 2; side++)
            for (int64_t i = 1; i <= p->gens; i++)
                step_gen(c, i, pass_band_rows(p, side, i));
    }
}

static void run_pass(cpu_backend *c, int64_t gens, bool posted) {
    gol_pass p = {.rows = c->slab.rows,
                  .halo_left = c->halo_left,
                  .gens = gens,
                  .dead_top = c->slab.up < 0,
                  .dead_bottom = c->slab.down < 0,
                  .tile = tile_rows(c, gens)};
    if (pass_split(&p)) {
        run_split_pass(c, &p, posted);
        return;
    }
    /* a slab too short to split: every valid row a generation, once the halo is in */
    if (posted) halo_wait(c->halo);
    for (int64_t i = 1; i <= gens; i++)
        step_gen(c, i, pass_whole_rows(&p, i));
}

/* What the backend allocates, in words: two grids of rows + 2k rows (k halo rows above and below
 * the owned rows) and the 2k send rows. cpu_need counts it and cpu_create allocates it, so
 * the memory admitted is the memory allocated. */
typedef struct cpu_layout {
    int64_t grid_words, send_words;
} cpu_layout;

static cpu_layout layout_of(const gol_plan *p) {
    int64_t nw = p->slab.nwords;
    cpu_layout l = {mem_mul(mem_add(p->slab.rows, mem_mul(2, p->depth)), nw),
                    mem_mul(mem_mul(2, p->depth), nw)};
    return l;
}

static gol_mem_need cpu_need(const gol_plan *p) {
    cpu_layout l = layout_of(p);
    gol_mem_need n = {mem_mul(8, mem_add(mem_mul(2, l.grid_words), l.send_words)), 0};
    return n;
}

/* A grid buffer on a cache line, so that rows of a multiple of 8 words keep the strips' vector
 * loads and stores off line boundaries (cpu/cpu_strip.c; calloc's large blocks start 16 bytes
 * into a page, which cost 15-20%). Zeroed by the threads that compute it, each its share, so
 * that the pages sit near them; halo rows past a dead boundary stay zero for the whole run. */
static uint64_t *zeroed_grid(cpu_backend *c, int64_t words) {
    uint64_t *g = gol_xmalloc_aligned((size_t)words * sizeof(uint64_t), 64);
    c->held += words * (int64_t)sizeof(uint64_t);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < words; i += 4096)
        memset(g + i, 0, (size_t)(words - i < 4096 ? words - i : 4096) * sizeof(uint64_t));
    return g;
}

static void *cpu_create(const gol_plan *plan, const gol_config *cfg, MPI_Comm comm) {
    cpu_backend *c = gol_xcalloc(1, sizeof *c);
    const gol_slab *slab = &plan->slab;
    c->slab = *slab;
    c->torus = slab->boundary == GOL_BOUNDARY_TORUS;
    c->depth = plan->depth;
    c->strip = plan->cpu_kernel;
    c->nthreads = omp_get_max_threads();
    c->tile_rows_set = tile_rows_setting();
    cpu_layout l = layout_of(plan);
    for (int b = 0; b < 2; b++)
        c->grid[b] = zeroed_grid(c, l.grid_words);
    c->send = gol_xcalloc((size_t)l.send_words, sizeof(uint64_t));
    c->held += l.send_words * (int64_t)sizeof(uint64_t);
    c->halo = halo_create(plan->halo, slab, c->depth, comm, NULL, cfg->timeout_s);
    return c;
}

static void cpu_load(void *impl, const uint64_t *rows_h) {
    cpu_backend *c = impl;
    memcpy(row_ptr(c, c->cur_buf, 0), rows_h, (size_t)(c->slab.rows * c->slab.nwords) * 8);
    c->halo_left = 0; /* the halo rows are of another grid */
}

/* The random start straight into the grid, with no host copy; as after a load, the halo rows
 * are exchanged before the next generation. */
static void cpu_init_random(void *impl, uint64_t seed, double density) {
    cpu_backend *c = impl;
    const gol_slab *s = &c->slab;
    init_random_rows(seed, density, s->row0, s->rows, s->width, s->nwords,
                     row_ptr(c, c->cur_buf, 0));
    c->halo_left = 0;
}

static void cpu_store(void *impl, uint64_t *rows_h) {
    cpu_backend *c = impl;
    memcpy(rows_h, row_ptr(c, c->cur_buf, 0), (size_t)(c->slab.rows * c->slab.nwords) * 8);
}

/* Exchanges fall every k generations counted from the load, whatever pieces the caller cuts its
 * calls into (frames, progress, GOLMPI_DEBUG_PIECE), so every rank posts the same exchanges; the
 * owned rows are whole after every generation, so a call may end anywhere in a cycle. */
static void cpu_advance(void *impl, int64_t generations) {
    cpu_backend *c = impl;
    while (generations > 0) {
        double t0 = MPI_Wtime();
        bool posted = c->halo_left == 0;
        if (posted) {
            post_exchange(c);
            c->halo_left = c->depth;
        }
        int64_t n = generations < c->halo_left ? generations : c->halo_left;
        run_pass(c, n, posted);
        c->cur_buf = (c->cur_buf + (int)(n & 1)) & 1;
        c->halo_left -= n;
        generations -= n;
        c->compute_s += MPI_Wtime() - t0;
    }
}

/* Eight cells, the bits of b from the least significant, as eight bytes of 0 or 1 in memory
 * order (little-endian, checked above). The multiply puts a copy of b in every byte; byte k keeps
 * bit k alone, so it is 0 or 2^k <= 0x80, and adding 0x7f sets its top bit exactly when it is not
 * 0, with no carry into the next byte. */
static inline uint64_t spread8(uint64_t b) {
    uint64_t m = (b * 0x0101010101010101ULL) & 0x8040201008040201ULL;
    return ((m + 0x7f7f7f7f7f7f7f7fULL) >> 7) & 0x0101010101010101ULL;
}

/* One packed row into width bytes: eight cells a store, no branch per cell, the last width % 8
 * cells one at a time. The stores stream past the caches (movnti): a u8 frame is 8x the grid and
 * goes to the writer, not back to the generations, so reading each line before writing it would
 * only cost memory traffic. The caller fences. (Measured: docs/performance-history.md, "Unpack to
 * u8" and "Past the page cache".) */
static void unpack_row_u8(const uint64_t *row, uint8_t *dst, int64_t width) {
    const uint8_t *bits = (const uint8_t *)row; /* LSB-first words are LSB-first bytes */
    int64_t groups = width >> 3;
    for (int64_t i = 0; i < groups; i++) {
        uint64_t cells = spread8(bits[i]);
        _mm_stream_si64((long long *)(dst + 8 * i), (long long)cells);
    }
    for (int64_t x = groups * 8; x < width; x++)
        dst[x] = (uint8_t)((bits[x >> 3] >> (x & 7)) & 1);
}

static void cpu_frame_begin(void *impl, int slot, gol_frame_format fmt, void *dst_h) {
    cpu_backend *c = impl;
    trace_pushf("unpack slot %d", slot);
    double t0 = MPI_Wtime();
    int64_t width = c->slab.width, row_bytes = frame_row_bytes(width, fmt);
#pragma omp parallel
    {
#pragma omp for schedule(static)
        for (int64_t r = 0; r < c->slab.rows; r++) {
            const uint64_t *row = row_ptr(c, c->cur_buf, r);
            uint8_t *dst = (uint8_t *)dst_h + r * row_bytes;
            if (fmt == GOL_FRAME_PACKED)
                memcpy(dst, row, (size_t)row_bytes); /* LSB-first words are LSB-first bytes */
            else
                unpack_row_u8(row, dst, width);
        }
        _mm_sfence(); /* each thread's streaming stores are visible before the writer reads */
    }
    c->frame_s += MPI_Wtime() - t0;
    trace_pop();
}

static void cpu_frame_wait(void *impl, int slot) {
    (void)impl;
    (void)slot; /* frames are complete when frame_begin returns */
}

/* A slot's size is kept before it, so that a free gives back to the count what its alloc took.
 * The slot itself starts on a page, as the CUDA backend's do: the writer's O_DIRECT path
 * (io/tuning.h) sends frames from it to the disk only from aligned memory. */
enum { SLOT_HEAD = 4096 };
static void *cpu_host_alloc(void *impl, int64_t bytes) {
    cpu_backend *c = impl;
    char *p = gol_xmalloc_aligned((size_t)bytes + SLOT_HEAD, SLOT_HEAD);
    memcpy(p, &bytes, sizeof bytes);
    /* Touched now, a byte a page, by the threads that will unpack into it (the same static
     * schedule as cpu_frame_begin's): a first write's page faults are paid here, before the run's
     * clock starts, as cudaMallocHost pays them for the GPU's pinned slots, instead of slowing the
     * unpack of the first two chunks' frames (docs/performance-history.md, "Frames at disk
     * speed"); and on a NUMA machine the pages land next to the cores that write them. */
    const int64_t page = 4096;
#pragma omp parallel for schedule(static)
    for (int64_t i = SLOT_HEAD; i < bytes + SLOT_HEAD; i += page)
        p[i] = 0;
    c->held += bytes;
    return p + SLOT_HEAD;
}

static void cpu_host_free(void *impl, void *p) {
    cpu_backend *c = impl;
    int64_t bytes;
    char *head = (char *)p - SLOT_HEAD;
    memcpy(&bytes, head, sizeof bytes);
    c->held -= bytes;
    free(head);
}

static gol_mem_need cpu_held(const void *impl) {
    const cpu_backend *c = impl;
    gol_mem_need n = {c->held, 0};
    return n;
}

static int64_t cpu_population(void *impl) {
    cpu_backend *c = impl;
    int64_t n = 0, words = c->slab.rows * c->slab.nwords;
    const uint64_t *w = row_ptr(c, c->cur_buf, 0);
#pragma omp parallel for reduction(+ : n) schedule(static)
    for (int64_t i = 0; i < words; i++)
        n += __builtin_popcountll(w[i]);
    return n;
}

static gol_backend_times cpu_times(const void *impl) {
    const cpu_backend *c = impl;
    double halo = halo_seconds(c->halo);
    gol_backend_times t = {c->compute_s - halo, halo, c->frame_s, halo_messages(c->halo)};
    return t;
}

static const char *cpu_kernel(const void *impl) {
    const cpu_backend *c = impl;
    return c->strip->isa;
}

static void cpu_destroy(void *impl) {
    cpu_backend *c = impl;
    halo_destroy(c->halo);
    free(c->grid[0]);
    free(c->grid[1]);
    free(c->send);
    free(c);
}

const gol_backend_ops gol_backend_cpu_ops = {
    .name = "cpu",
    .frame_lag = 0, /* frames are unpacked on the host, complete when frame_begin returns */
    .need = cpu_need,
    .create = cpu_create,
    .load = cpu_load,
    .init_random = cpu_init_random,
    .store = cpu_store,
    .advance = cpu_advance,
    .frame_begin = cpu_frame_begin,
    .frame_wait = cpu_frame_wait,
    .host_alloc = cpu_host_alloc,
    .host_free = cpu_host_free,
    .population = cpu_population,
    .times = cpu_times,
    .held = cpu_held,
    .kernel = cpu_kernel,
    .destroy = cpu_destroy,
};
