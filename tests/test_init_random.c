/* The random start as the backends make it in place (backend_init_random) against the host's rows
 * (init_random_rows, which test_random_start holds to the per-cell definition): the owned rows
 * right after it, and the halo rows too, through the generations that follow, against a backend
 * that loaded the host's rows (backend_load). Odd widths, one to many rows a rank, both
 * boundaries, densities 0 and 1, on whatever ranks mpiexec gives.
 *
 * With CUDA, also the device kernel without a GPU: its own thread body over its own launch
 * geometry (emulate_init_random, cuda/init_cuda.cu) against init_random_rows, bit for bit, for
 * many seeds, densities, widths and global rows, a slab large enough for the grid-stride loop,
 * and nothing written past the slab. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/check.h"
#include "core/decomp.h"
#include "core/random_start.h"
#include "core/rule.h"
#include "halo/halo.h"
#ifdef GOLMPI_HAVE_CUDA
#include "cuda/init_cuda.h"
#endif
#include "tests/expect.h"
#include "tests/xorshift.h"

static gol_config make_config(int64_t width, int64_t height, gol_boundary boundary, uint64_t seed,
                              double density) {
    gol_config c;
    memset(&c, 0, sizeof c);
    c.width = width;
    c.height = height;
    c.steps = 10;
    c.save_every = 1;
    c.chunk = 1;
    c.no_output = true;
    c.seed = seed;
    c.density = density;
    c.rule = (gol_rule){GOL_RULE_CONWAY_BIRTH, GOL_RULE_CONWAY_SURVIVE};
    rule_format(c.rule, c.rule_text, sizeof c.rule_text);
    c.boundary = boundary;
    c.backend = GOL_BACKEND_CPU;
    snprintf(c.halo, sizeof c.halo, "mpi");
    c.frame_format = GOL_FRAME_U8;
    c.quiet = true;
    return c;
}

static int64_t rows_differ(const uint64_t *a, const uint64_t *b, int64_t words) {
    for (int64_t i = 0; i < words; i++)
        if (a[i] != b[i]) return i;
    return -1;
}

/* One grid on the CPU backend: made in place, and loaded from the host's rows; equal after the
 * start and after each advance (the first needs the halo rows the start exchanged). */
static void cpu_case(int64_t width, int64_t height, gol_boundary boundary, uint64_t seed,
                     double density, MPI_Comm comm) {
    int rank, nranks;
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    MPI_CHECK(MPI_Comm_size(comm, &nranks));
    gol_config cfg = make_config(width, height, boundary, seed, density);
    gol_slab slab;
    if (decomp_make(&cfg, rank, nranks, &slab).code != GOL_OK) return; /* too few rows: skip */
    int64_t words = slab.rows * slab.nwords;
    uint64_t *want = gol_xcalloc((size_t)words, sizeof *want);
    uint64_t *got = gol_xcalloc((size_t)words, sizeof *got);
    uint64_t *loaded = gol_xcalloc((size_t)words, sizeof *loaded);
    init_random_rows(seed, density, slab.row0, slab.rows, slab.width, slab.nwords, want);
    gol_plan plan;
    EXPECT(backend_plan(&cfg, &slab, GOL_BACKEND_CPU, halo_mode_find("mpi", HALO_MEM_HOST), &plan)
                   .code == GOL_OK,
           "the plan of %lldx%lld", (long long)width, (long long)height);
    gol_backend *made = backend_create(&plan, &cfg, comm);
    gol_backend *load = backend_create(&plan, &cfg, comm);
    backend_init_random(made, seed, density);
    backend_load(load, want);
    backend_store(made, got);
    int64_t at = rows_differ(got, want, words);
    EXPECT(at < 0, "%lldx%lld %s seed %llu density %g rank %d/%d: start word %lld",
           (long long)width, (long long)height, config_boundary_name(boundary),
           (unsigned long long)seed, density, rank, nranks, (long long)at);
    static const int64_t steps[] = {1, 2, 5};
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
        backend_advance(made, steps[i]);
        backend_advance(load, steps[i]);
        backend_store(made, got);
        backend_store(load, loaded);
        at = rows_differ(got, loaded, words);
        EXPECT(at < 0, "%lldx%lld %s seed %llu density %g rank %d/%d: after advance %zu, word %lld",
               (long long)width, (long long)height, config_boundary_name(boundary),
               (unsigned long long)seed, density, rank, nranks, i, (long long)at);
    }
    backend_destroy(made);
    backend_destroy(load);
    free(want);
    free(got);
    free(loaded);
}

static void cpu_cases(MPI_Comm comm) {
    static const int64_t widths[] = {1, 63, 64, 65, 130, 333};
    static const int64_t heights[] = {4, 9, 37};
    static const double densities[] = {0.0, 1.0, 0.5, 0.3};
    for (size_t w = 0; w < sizeof widths / sizeof *widths; w++)
        for (size_t h = 0; h < sizeof heights / sizeof *heights; h++)
            for (size_t d = 0; d < sizeof densities / sizeof *densities; d++)
                for (int b = 0; b < 2; b++)
                    cpu_case(widths[w], heights[h], b ? GOL_BOUNDARY_DEAD : GOL_BOUNDARY_TORUS,
                             1000 + (uint64_t)(w * 7 + h), densities[d], comm);
}

#ifdef GOLMPI_HAVE_CUDA
enum { GUARD = 8 }; /* words past the slab that the kernel must leave alone */
static const uint64_t poison = 0xa5a5a5a5a5a5a5a5ULL;

/* rows x nwords words made by the kernel's emulation against init_random_rows. */
static void emulated_case(uint64_t seed, double density, int64_t row0, int64_t rows,
                          int64_t width) {
    int64_t nwords = (width + 63) / 64, words = rows * nwords;
    uint64_t *want = gol_xcalloc((size_t)(words + 1), sizeof *want);
    uint64_t *got = gol_xmalloc((size_t)(words + GUARD) * sizeof *got);
    for (int64_t i = 0; i < words + GUARD; i++)
        got[i] = poison;
    init_random_rows(seed, density, row0, rows, width, nwords, want);
    emulate_init_random(init_run_key(seed), init_threshold(density), row0, rows, width, nwords,
                        got);
    int64_t at = rows_differ(got, want, words);
    EXPECT(at < 0,
           "emulated: seed %llx density %.17g rows %lld+%lld width %lld: word %lld (row %lld "
           "word %lld): got %016llx want %016llx",
           (unsigned long long)seed, density, (long long)row0, (long long)rows, (long long)width,
           (long long)at, (long long)(at < 0 ? 0 : at / nwords),
           (long long)(at < 0 ? 0 : at % nwords), (unsigned long long)got[at < 0 ? 0 : at],
           (unsigned long long)want[at < 0 ? 0 : at]);
    for (int64_t i = words; i < words + GUARD; i++)
        EXPECT(got[i] == poison, "emulated: rows %lld width %lld: word %lld past the slab written",
               (long long)rows, (long long)width, (long long)i);
    free(want);
    free(got);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rng(void) { return xorshift64(&rng_state); }

static void emulated_cases(void) {
    static const int64_t widths[] = {1, 2, 63, 64, 65, 127, 128, 129, 200, 1001};
    static const int64_t nrows[] = {0, 1, 3, 17};
    const int64_t row0s[] = {0, 1, 12345, ((int64_t)1 << 31) + 5, (int64_t)1 << 40};
    const double densities[] = {0.0, 1.0, 0.5, 1e-9, 0.37, 1.0 - 0x1p-53};
    const uint64_t seeds[] = {0, 1, ~(uint64_t)0, rng()};
    for (size_t s = 0; s < sizeof seeds / sizeof *seeds; s++)
        for (size_t d = 0; d < sizeof densities / sizeof *densities; d++)
            for (size_t r = 0; r < sizeof row0s / sizeof *row0s; r++)
                for (size_t n = 0; n < sizeof nrows / sizeof *nrows; n++)
                    for (size_t w = 0; w < sizeof widths / sizeof *widths; w++)
                        emulated_case(seeds[s], densities[d], row0s[r], nrows[n], widths[w]);
    for (int i = 0; i < 200; i++)
        emulated_case(rng(), (double)(rng() >> 11) * 0x1p-53, (int64_t)(rng() >> 24),
                      1 + (int64_t)(rng() % 40), 1 + (int64_t)(rng() % 700));
    /* more words than the capped grid has threads: the grid-stride loop, rows split anywhere */
    emulated_case(77, 0.5, 1000, 2111, 64 * 1000 - 3);
    emulated_case(78, 0.5, 0, 2100000, 1); /* one word a row: every thread a new row */
}
#endif

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    cpu_cases(MPI_COMM_WORLD);
#ifdef GOLMPI_HAVE_CUDA
    if (rank == 0) emulated_cases();
#endif
    int mine = failures, all = 0;
    MPI_CHECK(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    if (rank == 0) {
        if (all)
            fprintf(stderr, "%d failure(s)\n", all);
        else
            printf("random start in place: the backends' rows equal the host's%s\n",
#ifdef GOLMPI_HAVE_CUDA
                   "; the CUDA kernel's emulation equals init_random_rows"
#else
                   ""
#endif
            );
    }
    MPI_Finalize();
    return all ? 1 : 0;
}
