/* The CUDA backend against the CPU backend: the same random slab, the same sequence of calls
 * (load, advances of several lengths, frames u8 and packed taken while the grid moves on, several
 * frames in one slot, population), every output compared byte for byte. Sizes are odd on
 * purpose (partial last words, one and two rows per rank), over torus and dead boundaries, two
 * rules, the NCCL halo with and without graphs (when the ranks have GPUs of their own) and the
 * MPI halo. Exits 77 on every rank when some rank has no GPU.
 *     test_cuda_vs_cpu [DEPTH]    (the halo depth of both backends; default: auto) */
#include <inttypes.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "halo/halo.h"
#include "backend/backend.h"
#include "cuda/device.h"
#include "core/check.h"
#include "core/decomp.h"
#include "core/rule.h"

typedef struct test_case {
    int64_t width, height;
    gol_boundary boundary;
    gol_rule rule;
    const char *halo; /* a halo mode name (halo/halo.h) */
    int no_graphs;
} test_case;

/* Everything one run of the call sequence produced, to compare across backends. */
typedef struct run_out {
    uint64_t *rows;   /* states after each advance, one after another */
    uint8_t *frames;  /* every frame, in the order taken */
    int64_t pops[16]; /* population after each advance */
    int64_t nrows_out, nframe_bytes, npops;
} run_out;

static const int64_t advances[] = {1, 2, 13, 1, 5};
static int64_t depth; /* --halo-depth of every case; 0: auto */
enum { NADV = (int)(sizeof advances / sizeof advances[0]) };

static uint64_t mix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static gol_config make_config(const test_case *tc, int backend) {
    gol_config c;
    memset(&c, 0, sizeof c);
    c.width = tc->width;
    c.height = tc->height;
    c.steps = 100;
    c.save_every = 1;
    c.chunk = 4;
    c.no_output = false; /* frames are taken: the backend stages them as its plan says (u8) */
    c.seed = 7;
    c.density = 0.4;
    c.rule = tc->rule;
    rule_format(tc->rule, c.rule_text, sizeof c.rule_text);
    c.boundary = tc->boundary;
    c.backend = backend ? GOL_BACKEND_CUDA : GOL_BACKEND_CPU;
    c.frame_format = GOL_FRAME_U8;
    c.quiet = true;
    c.no_graphs = tc->no_graphs;
    c.halo_depth = depth;
    return c;
}

/* The slab the program gives this rank: the real decomposition (core/decomp.c) of the case. */
static gol_slab make_slab(const test_case *tc, int rank, int nranks) {
    gol_config cfg = make_config(tc, 0);
    gol_slab s;
    gol_status st = decomp_make(&cfg, rank, nranks, &s);
    if (st.code != GOL_OK) {
        fprintf(stderr, "rank %d: decomp_make: %s\n", rank, st.msg);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return s;
}

/* About 40% live, from the global cell coordinates, so the grid does not depend on the ranks. */
static void fill_random(const gol_slab *s, uint64_t *rows, uint64_t seed) {
    for (int64_t r = 0; r < s->rows; r++) {
        uint64_t *row = rows + r * s->nwords;
        memset(row, 0, (size_t)s->nwords * sizeof *row);
        for (int64_t x = 0; x < s->width; x++) {
            uint64_t h = mix64(seed ^ mix64((uint64_t)(s->row0 + r) * 0x100000001b3ull + (uint64_t)x));
            if (h % 5 < 2) row[x / 64] |= (uint64_t)1 << (x % 64);
        }
    }
}

/* 1 on every rank when the case's slabs take the depth asked (a depth deeper than a slab is
 * refused by the plan, as golmpi refuses it): else the case is left out at that depth. */
static int depth_fits(const test_case *tc, const gol_slab *slab, MPI_Comm comm) {
    gol_config cfg = make_config(tc, 0);
    gol_plan plan;
    int ok = backend_plan(&cfg, slab, GOL_BACKEND_CPU, halo_mode_find("mpi", HALO_MEM_HOST),
                          &plan).code == GOL_OK, all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
    return all;
}

/* The call sequence both backends go through. Frames are begun and then the grid advances
 * before the wait, so a frame that read the grid too late would show the wrong generation. */
static void run_sequence(const gol_backend_ops *ops, const test_case *tc, const gol_slab *slab,
                         MPI_Comm comm, const uint64_t *init, run_out *out) {
    int is_cpu = ops == &gol_backend_cpu_ops;
    gol_config cfg = make_config(tc, !is_cpu);
    /* the CPU backend knows only the MPI halo */
    const char *halo = is_cpu ? "mpi" : tc->halo;
    gol_plan plan;
    gol_backend_kind kind = is_cpu ? GOL_BACKEND_CPU : GOL_BACKEND_CUDA;
    const halo_mode *mode = halo_mode_find(halo, is_cpu ? HALO_MEM_HOST : HALO_MEM_DEVICE);
    if (!mode || backend_plan(&cfg, slab, kind, mode, &plan).code != GOL_OK)
        gol_abort_msg("test_cuda_vs_cpu: no plan for halo %s, depth %lld", halo,
                      (long long)cfg.halo_depth);
    void *b = ops->create(&plan, &cfg, comm);
    int64_t rows = slab->rows, width = slab->width, nw = slab->nwords;
    int64_t u8_bytes = rows * frame_row_bytes(width, GOL_FRAME_U8);
    int64_t packed_bytes = rows * frame_row_bytes(width, GOL_FRAME_PACKED);
    /* per round: two u8 frames in slot 0, one packed frame in slot 1 */
    int64_t round_bytes = 2 * u8_bytes + packed_bytes;
    out->nrows_out = (NADV + 1) * rows * nw;
    out->nframe_bytes = (NADV + 1) * round_bytes;
    out->rows = gol_xcalloc((size_t)out->nrows_out, sizeof *out->rows);
    out->frames = gol_xcalloc((size_t)out->nframe_bytes, 1);
    out->npops = 0;
    uint8_t *slot0 = ops->host_alloc(b, 2 * u8_bytes);
    uint8_t *slot1 = ops->host_alloc(b, packed_bytes);

    ops->load(b, init);
    for (int a = 0; a <= NADV; a++) {
        ops->store(b, out->rows + a * rows * nw);
        out->pops[out->npops++] = ops->population(b);
        memset(slot0, 0xee, (size_t)(2 * u8_bytes));
        memset(slot1, 0xee, (size_t)packed_bytes);
        ops->frame_begin(b, 0, GOL_FRAME_U8, slot0);
        ops->frame_begin(b, 1, GOL_FRAME_PACKED, slot1);
        ops->advance(b, 1);
        ops->frame_begin(b, 0, GOL_FRAME_U8, slot0 + u8_bytes);
        ops->advance(b, 2);
        ops->frame_wait(b, 0);
        ops->frame_wait(b, 1);
        uint8_t *dst = out->frames + a * round_bytes;
        memcpy(dst, slot0, (size_t)(2 * u8_bytes));
        memcpy(dst + 2 * u8_bytes, slot1, (size_t)packed_bytes);
        if (a < NADV) ops->advance(b, advances[a]);
    }
    ops->host_free(b, slot0);
    ops->host_free(b, slot1);
    ops->destroy(b);
}

static void run_free(run_out *o) {
    free(o->rows);
    free(o->frames);
}

/* 0 when equal, else 1 after printing where they differ. */
static int compare(const char *name, const run_out *cpu, const run_out *gpu, int rank) {
    for (int64_t i = 0; i < cpu->nrows_out; i++)
        if (cpu->rows[i] != gpu->rows[i]) {
            printf("rank %d: %s: packed rows differ at word %" PRId64 ": cpu %016" PRIx64
                   " cuda %016" PRIx64 "\n",
                   rank, name, i, cpu->rows[i], gpu->rows[i]);
            return 1;
        }
    for (int64_t i = 0; i < cpu->nframe_bytes; i++)
        if (cpu->frames[i] != gpu->frames[i]) {
            printf("rank %d: %s: frames differ at byte %" PRId64 ": cpu %u cuda %u\n", rank, name,
                   i, cpu->frames[i], gpu->frames[i]);
            return 1;
        }
    for (int64_t i = 0; i < cpu->npops; i++)
        if (cpu->pops[i] != gpu->pops[i]) {
            printf("rank %d: %s: population %" PRId64 " differs: cpu %" PRId64 " cuda %" PRId64
                   "\n",
                   rank, name, i, cpu->pops[i], gpu->pops[i]);
            return 1;
        }
    return 0;
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm comm = MPI_COMM_WORLD;
    int rank, nranks;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nranks);
    if (argc > 1) depth = strtoll(argv[1], NULL, 10);

    char why[512];
    if (!device_cuda_available(comm, why, sizeof why)) {
        if (rank == 0) printf("SKIP: %s\n", why);
        MPI_Finalize();
        return GOL_EXIT_SKIP;
    }
    int nccl_ok = device_distinct_gpus(comm);
    if (rank == 0 && !nccl_ok)
        printf("note: ranks share a GPU, NCCL cases skipped (NCCL refuses duplicate GPUs)\n");

    const int64_t sizes[][2] = {{77, 23},   {130, 67},          {1000, 999},
                                {64, nranks}, {200, 2 * nranks + 1}, {5, nranks + 2}};
    const gol_rule rules[] = {{GOL_RULE_CONWAY_BIRTH, GOL_RULE_CONWAY_SURVIVE},
                              {(1u << 3) | (1u << 6), GOL_RULE_CONWAY_SURVIVE}};
    /* halo modes: NCCL with graphs, NCCL without, MPI */
    const char *const halos[] = {"nccl", "nccl", "mpi"};
    const int graphs_off[] = {0, 1, 1};

    int failed = 0, ran = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (int bd = 0; bd < 2; bd++)
            for (int ri = 0; ri < 2; ri++)
                for (int hi = 0; hi < 3; hi++) {
                    test_case tc = {sizes[si][0], sizes[si][1],
                                    bd ? GOL_BOUNDARY_DEAD : GOL_BOUNDARY_TORUS, rules[ri],
                                    halos[hi], graphs_off[hi]};
                    if (!strcmp(tc.halo, "nccl") && !nccl_ok) continue;
                    char name[160];
                    char rule_text[32];
                    rule_format(tc.rule, rule_text, sizeof rule_text);
                    snprintf(name, sizeof name, "%" PRId64 "x%" PRId64 " %s %s halo=%s graphs=%s",
                             tc.width, tc.height, bd ? "dead" : "torus", rule_text,
                             tc.halo,
                             tc.no_graphs ? "off" : "on");
                    gol_slab slab = make_slab(&tc, rank, nranks);
                    if (depth && !depth_fits(&tc, &slab, comm)) continue;
                    uint64_t *init = gol_xcalloc((size_t)(slab.rows * slab.nwords), sizeof *init);
                    fill_random(&slab, init, 1234 + si);
                    run_out cpu, gpu;
                    run_sequence(&gol_backend_cpu_ops, &tc, &slab, comm, init, &cpu);
                    run_sequence(&gol_backend_cuda_ops, &tc, &slab, comm, init, &gpu);
                    int bad = compare(name, &cpu, &gpu, rank), any = 0;
                    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm);
                    if (rank == 0) printf("%s %s\n", any ? "FAIL" : "ok  ", name);
                    failed += any;
                    ran++;
                    run_free(&cpu);
                    run_free(&gpu);
                    free(init);
                }
    if (rank == 0) printf("%d of %d cases failed on %d rank(s)\n", failed, ran, nranks);
    MPI_Finalize();
    return failed ? 1 : 0;
}
