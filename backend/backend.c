#include "backend/backend.h"
#include "cuda/life_geometry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "core/depth.h"
#include "cpu/cpu_strip.h"
#include "halo/halo.h"
#ifdef GOLMPI_HAVE_CUDA
#include "cuda/device.h"
#endif

struct gol_backend {
    const gol_backend_ops *ops;
    void *impl;
    /* without ops->chunk_begin: `times` at the beginning of each chunk still open */
    gol_backend_times begun[GOL_CHUNKS_OPEN];
    int64_t last_begun;
};

/* The CPU backend's choices: its kernel (GOLMPI_CPU_ISA, if set, must name one the CPU runs) and
 * its halo mode ("auto" is MPI; a mode with no host form needs the GPU. The parser already
 * refuses --backend cpu with --halo nccl, so this speaks to --backend auto without GPUs). */
static gol_status cpu_kernel(const cpu_strip_kernel **kernel) {
    const char *bad_isa;
    *kernel = cpu_strip_pick(&bad_isa);
    if (!*kernel)
        return gol_fail(GOL_EXIT_USAGE,
                        "GOLMPI_CPU_ISA=%s: this CPU or build has no such kernel; use avx512, "
                        "avx2 or base (one the CPU runs), or unset it for the fastest",
                        bad_isa);
    return gol_ok();
}

static gol_status cpu_select(const char *asked, const halo_mode **halo) {
    const cpu_strip_kernel *kernel;
    GOL_TRY(cpu_kernel(&kernel)); /* before the halo mode, as the user reads the two */
    const halo_mode *mode =
        halo_mode_find(strcmp(asked, "auto") == 0 ? "mpi" : asked, HALO_MEM_HOST);
    if (!mode)
        return gol_fail(GOL_EXIT_USAGE, "--halo %s needs a GPU on every rank; use --halo mpi",
                        asked);
    *halo = mode;
    return gol_ok();
}

/* The halo mode for the CUDA backend, given what the user asked for. */
#ifdef GOLMPI_HAVE_CUDA
static gol_status cuda_halo(const char *asked, MPI_Comm comm, const halo_mode **halo,
                            gol_gpu_share *share) {
    int distinct = device_sharing(comm, share) && share->ranks_per_gpu == 1;
    if (strcmp(asked, "nccl") == 0 && !distinct && !device_nccl_shares_gpus())
        return gol_fail(GOL_EXIT_USAGE,
                        "--halo nccl: some ranks share a GPU, and NCCL refuses two ranks on one "
                        "GPU; use --halo mpi (or --halo auto), or one rank per GPU");
    const char *name = strcmp(asked, "auto") == 0 ? (distinct ? "nccl" : "mpi") : asked;
    /* The old spelling of --halo none, kept so that older benchmark scripts still work. */
    const char *off = getenv("GOLMPI_HALO_OFF");
    if (off && strcmp(off, "1") == 0) name = "none";
    const halo_mode *mode = halo_mode_find(name, HALO_MEM_DEVICE);
    if (!mode)
        return gol_fail(GOL_EXIT_USAGE, "--halo %s works on host memory only; use --backend cpu",
                        name);
    *halo = mode;
    return gol_ok();
}
#endif

gol_status backend_select(const gol_config *cfg, MPI_Comm comm, gol_backend_kind *backend,
                          const halo_mode **halo, gol_gpu_share *share, char *notice,
                          size_t notice_len) {
    notice[0] = '\0';
    *share = (gol_gpu_share){0};
    const char *asked = cfg->halo; /* a mode name or "auto" */
    if (cfg->backend == GOL_BACKEND_CPU) {
        *backend = GOL_BACKEND_CPU;
        return cpu_select(asked, halo);
    }
#ifdef GOLMPI_HAVE_CUDA
    char why[256] = "";
    int available = device_cuda_available(comm, why, sizeof why);
    if (available) {
        *backend = GOL_BACKEND_CUDA;
        return cuda_halo(asked, comm, halo, share);
    }
    if (cfg->backend == GOL_BACKEND_CUDA)
        return gol_fail(GOL_EXIT_NOGPU, "--backend cuda: no usable GPU (%s); use --backend cpu",
                        why);
    snprintf(notice, notice_len, "golmpi: no usable GPU (%s); using the CPU backend", why);
#else
    (void)comm;
    if (cfg->backend == GOL_BACKEND_CUDA)
        return gol_fail(GOL_EXIT_NOGPU, "--backend cuda: this golmpi was built without CUDA "
                                        "(GOLMPI_ENABLE_CUDA=OFF); use --backend cpu");
    snprintf(notice, notice_len, "golmpi: built without CUDA; using the CPU backend");
#endif
    *backend = GOL_BACKEND_CPU;
    return cpu_select(asked, halo);
}

static const gol_backend_ops *ops_of(gol_backend_kind kind) {
#ifdef GOLMPI_HAVE_CUDA
    if (kind == GOL_BACKEND_CUDA) return &gol_backend_cuda_ops;
#else
    (void)kind;
#endif
    return &gol_backend_cpu_ops;
}

gol_status backend_plan(const gol_config *cfg, const gol_slab *slab, gol_backend_kind kind,
                        const halo_mode *halo, gol_plan *plan) {
    plan->slab = *slab;
    plan->backend = kind;
    plan->halo = halo;
    plan->frame_format = cfg->frame_format;
    plan->output = !cfg->no_output;
    plan->frame_lag = ops_of(kind)->frame_lag;
    /* --halo-depth against the backend and the shortest slab: the one choice of the depth */
    GOL_TRY(depth_choose(cfg->halo_depth, kind, slab->height, slab->nranks, &plan->depth));
    plan->kernel_shape = gol_shape_find(cfg->kernel); /* -1: auto, chosen on the GPU */
    plan->cpu_kernel = NULL;
    if (kind == GOL_BACKEND_CPU) GOL_TRY(cpu_kernel(&plan->cpu_kernel)); /* the one it runs */
    plan->backend_need = ops_of(kind)->need(plan);
    return gol_ok();
}

gol_backend *backend_create(const gol_plan *plan, const gol_config *cfg, MPI_Comm comm) {
    gol_backend *b = gol_xcalloc(1, sizeof *b);
    b->ops = ops_of(plan->backend);
    b->impl = b->ops->create(plan, cfg, comm);
    return b;
}

const char *backend_name(const gol_backend *b) { return b->ops->name; }
const char *backend_kernel(const gol_backend *b) { return b->ops->kernel(b->impl); }
const struct shape_choice_result *backend_shape_choice(const gol_backend *b) {
    return b->ops->shape_choice ? b->ops->shape_choice(b->impl) : NULL;
}
void backend_load(gol_backend *b, const uint64_t *rows_h) { b->ops->load(b->impl, rows_h); }
void backend_init_random(gol_backend *b, uint64_t seed, double density) {
    b->ops->init_random(b->impl, seed, density);
}
void backend_store(gol_backend *b, uint64_t *rows_h) { b->ops->store(b->impl, rows_h); }
void backend_advance(gol_backend *b, int64_t generations) {
    if (generations > 0) b->ops->advance(b->impl, generations);
}
void backend_frame_begin(gol_backend *b, int slot, gol_frame_format fmt, void *dst_h) {
    b->ops->frame_begin(b->impl, slot, fmt, dst_h);
}
void backend_frame_wait(gol_backend *b, int slot) { b->ops->frame_wait(b->impl, slot); }
void *backend_host_alloc(gol_backend *b, int64_t bytes) {
    return b->ops->host_alloc(b->impl, bytes);
}
void backend_host_free(gol_backend *b, void *p) {
    if (p) b->ops->host_free(b->impl, p);
}

void backend_chunk_begin(gol_backend *b, int64_t chunk) {
    if (b->ops->chunk_begin) {
        b->ops->chunk_begin(b->impl, chunk);
        return;
    }
    b->begun[chunk % GOL_CHUNKS_OPEN] = b->ops->times(b->impl);
    b->last_begun = chunk;
}

gol_backend_times backend_chunk_times(gol_backend *b, int64_t chunk, int slot) {
    if (b->ops->chunk_times) return b->ops->chunk_times(b->impl, chunk, slot);
    gol_backend_times a = b->begun[chunk % GOL_CHUNKS_OPEN], z = b->ops->times(b->impl);
    if (chunk < b->last_begun) z = b->begun[(chunk + 1) % GOL_CHUNKS_OPEN];
    gol_backend_times t = {.compute_s = z.compute_s - a.compute_s,
                           .halo_s = z.halo_s - a.halo_s,
                           .frame_s = z.frame_s - a.frame_s};
    return t;
}

int64_t backend_population(gol_backend *b) { return b->ops->population(b->impl); }
gol_backend_times backend_times(const gol_backend *b) { return b->ops->times(b->impl); }
gol_mem_need backend_held(const gol_backend *b) { return b->ops->held(b->impl); }
void backend_destroy(gol_backend *b) {
    if (!b) return;
    b->ops->destroy(b->impl);
    free(b);
}
