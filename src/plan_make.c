#include "src/plan_make.h"

#include <cjson/cJSON.h>
#include <omp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "backend/backend.h"
#include "core/check.h"
#include "cuda/life_geometry.h"
#include "halo/halo.h"
#include "io/golfile.h"

/* Ranks sharing a node share its cores, unless OMP_NUM_THREADS says otherwise. Collective over
 * comm (it splits it by node). */
static int threads_per_rank(MPI_Comm comm) {
    if (getenv("OMP_NUM_THREADS")) return omp_get_max_threads();
    MPI_Comm node;
    int local;
    MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_CHECK(MPI_Comm_size(node, &local));
    MPI_CHECK(MPI_Comm_free(&node));
    int n = omp_get_num_procs() / local; /* the cores this rank may run on, shared fairly */
    return n > 0 ? n : 1;
}

/* The restart frame's bytes per stored row (u8 or packed), which restart_load_rows reads in one
 * buffer beside the start state; the width (u8, the larger) when the file says nothing. */
static int64_t restart_row_bytes(const gol_setup *s) {
    int64_t bytes = s->cfg.width;
    golfile *g = golfile_open(s->cfg.restart);
    if (!g) return bytes;
    const golfile_facts *f = golfile_facts_of(g);
    if (f->frames_ndims == 3 && f->frames_dims[2] > 0) bytes = f->frames_dims[2];
    golfile_close(g);
    return bytes;
}

/* The peak is the largest of three moments: the start state while the restart frame is read into
 * it; the start state while the backend loads it; the backend with the two frame slots (run.c). A
 * random start is made in the backend (backend_init_random): no start state. A pattern is left
 * out: it was allocated while parsing, so the memory it holds is not available any more. */
static void host_bytes(const gol_setup *s, gol_plan *p) {
    gol_host_bytes *h = &p->host;
    const gol_slab *slab = &p->slab;
    h->backend = p->backend_need.host;
    bool on_host = s->has_restart || s->has_pattern; /* built on the host, then loaded */
    h->start = on_host ? mem_mul(mem_mul(slab->rows, slab->nwords), 8) : 0;
    h->read = s->has_restart ? mem_mul(slab->rows, restart_row_bytes(s)) : 0;
    h->slots = mem_mul(2, plan_slot_bytes(p));
    h->base = mem_add(h->start, h->read); /* the peak without frame slots, for the advice */
    if (mem_add(h->start, h->backend) > h->base) h->base = mem_add(h->start, h->backend);
    h->peak = mem_add(h->backend, h->slots) > h->base ? mem_add(h->backend, h->slots) : h->base;
    p->device_bytes = p->backend_need.device;
}

/* Ranks that share a GPU without MPS take turns on it (time slices), each context alone on the
 * whole GPU in its slice: what that costs, in words (the figures depend on the GPU and the run:
 * docs/PERFORMANCE.md has one GPU's), and the command that lets them run side by side. Said once,
 * by rank 0 (main), in every run and dry run of such a plan. */
static void gpu_share_notice(const gol_gpu_share *gpu, char *notice, size_t notice_len) {
    if (gpu->ranks_per_gpu < 2 || gpu->mps) return;
    snprintf(notice, notice_len,
             "golmpi: notice: up to %d ranks share one GPU and no MPS control daemon serves "
             "them, so their kernels take turns on it, each rank's alone in its time slice: the "
             "run is several times slower than with MPS, and slower than one rank alone on the "
             "GPU (docs/PERFORMANCE.md has figures); start MPS on each such node before the run "
             "with `nvidia-cuda-mps-control -d` (stop it after with `echo quit | "
             "nvidia-cuda-mps-control`), or run one rank per GPU",
             gpu->ranks_per_gpu);
}

gol_status plan_make(const gol_setup *s, MPI_Comm comm, gol_plan *plan, char *notice,
                     size_t notice_len) {
    const gol_config *cfg = &s->cfg;
    int rank, nranks;
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    MPI_CHECK(MPI_Comm_size(comm, &nranks));
    *plan = (gol_plan){0};
    gol_slab slab;
    GOL_TRY(status_agree(decomp_make(cfg, rank, nranks, &slab), comm));
    gol_backend_kind kind;
    const halo_mode *halo;
    gol_gpu_share gpu;
    GOL_TRY(status_agree(backend_select(cfg, comm, &kind, &halo, &gpu, notice, notice_len), comm));
    GOL_TRY(status_agree(backend_plan(cfg, &slab, kind, halo, plan), comm));
    plan->gpu = gpu;
    gpu_share_notice(&gpu, notice, notice_len);
    plan->threads = threads_per_rank(comm);
    plan->chunk_frames = cfg->no_output ? 0 : schedule_chunk_frames(&s->sched, 0);
    host_bytes(s, plan);
    return gol_ok();
}

/* ---- --dry-run --------------------------------------------------------------------------- */

enum { HOST_LEN = 64 };

/* One rank's row of the plan, gathered on rank 0. */
typedef struct plan_row {
    char host[HOST_LEN];
    int64_t row0, rows, host_bytes, device_bytes;
    int ranks_on_gpu; /* the plan's gpu.ranks_on_gpu: 0 on the CPU */
} plan_row;

static plan_row *gather_rows(const gol_plan *plan, MPI_Comm comm, int rank, int nranks) {
    plan_row me = {.row0 = plan->slab.row0, .rows = plan->slab.rows,
                   .host_bytes = plan->host.peak, .device_bytes = plan->device_bytes,
                   .ranks_on_gpu = plan->gpu.ranks_on_gpu};
    if (gethostname(me.host, sizeof me.host - 1) != 0) snprintf(me.host, sizeof me.host, "?");
    plan_row *all = rank == 0 ? gol_xcalloc((size_t)nranks, sizeof *all) : NULL;
    MPI_CHECK(MPI_Gather(&me, (int)sizeof me, MPI_BYTE, all, (int)sizeof me, MPI_BYTE, 0, comm));
    return all;
}

/* The kernel shape is chosen on the GPU as the backend is made (cuda/shape_choice.h): a dry
 * run, which makes none, says how it will be chosen. */
static const char *shape_plan_text(const gol_plan *plan) {
    if (plan->kernel_shape >= 0) return "asked by --kernel";
    if (plan->depth == 1) return "not used at depth 1";
    return "the wisdom's record for this GPU and slab; else timed on the GPU when that "
           "costs at most 1% of the run; else the model's";
}

static void print_shape(const gol_plan *plan) {
    printf("golmpi: dry run: kernel shape %s (%s)\n",
           plan->kernel_shape >= 0 ? gol_shapes[plan->kernel_shape].name : "auto",
           shape_plan_text(plan));
}

static void print_rows(const gol_plan *plan, const plan_row *rows, int nranks) {
    const char *mode = plan->halo->name;
    int64_t host = 0, device = 0;
    printf("golmpi: dry run: %lld x %lld grid, %s backend, %s halo, depth %lld, %d thread%s/rank, "
           "%s frames\n",
           (long long)plan->slab.width, (long long)plan->slab.height,
           config_backend_name(plan->backend), mode, (long long)plan->depth, plan->threads,
           plan->threads == 1 ? "" : "s",
           plan->output ? config_frame_format_name(plan->frame_format) : "no");
    if (plan->backend == GOL_BACKEND_CUDA) {
        printf("golmpi: dry run: up to %d rank%s a GPU, MPS %s\n", plan->gpu.ranks_per_gpu,
               plan->gpu.ranks_per_gpu == 1 ? "" : "s", plan->gpu.mps ? "yes" : "no");
        print_shape(plan);
    }
    printf("%6s  %-20s %12s %12s %6s  %-10s %16s %16s\n", "rank", "host", "first row", "rows",
           "depth", "halo", "host bytes", "device bytes");
    for (int r = 0; r < nranks; r++) {
        printf("%6d  %-20s %12lld %12lld %6lld  %-10s %16lld %16lld\n", r, rows[r].host,
               (long long)rows[r].row0, (long long)rows[r].rows, (long long)plan->depth, mode,
               (long long)rows[r].host_bytes, (long long)rows[r].device_bytes);
        host = mem_add(host, rows[r].host_bytes);
        device = mem_add(device, rows[r].device_bytes);
    }
    printf("%6s  %-20s %12s %12lld %6s  %-10s %16lld %16lld\n", "total", "", "",
           (long long)plan->slab.height, "", "", (long long)host, (long long)device);
}

static void write_json(const gol_plan *plan, const plan_row *rows, int nranks, const char *path) {
    cJSON *o = cJSON_CreateObject(), *ranks = cJSON_CreateArray();
    SYS_CHECK(o && ranks, "cJSON_CreateObject(--stats)");
    cJSON_AddStringToObject(o, "kind", "plan");
    cJSON_AddNumberToObject(o, "width", (double)plan->slab.width);
    cJSON_AddNumberToObject(o, "height", (double)plan->slab.height);
    cJSON_AddStringToObject(o, "backend", config_backend_name(plan->backend));
    cJSON_AddStringToObject(o, "halo", plan->halo->name);
    cJSON_AddNumberToObject(o, "halo_depth", (double)plan->depth);
    cJSON_AddNumberToObject(o, "threads_per_rank", plan->threads);
    if (plan->backend == GOL_BACKEND_CUDA) {
        cJSON_AddNumberToObject(o, "ranks_per_gpu", plan->gpu.ranks_per_gpu);
        cJSON_AddBoolToObject(o, "mps", plan->gpu.mps);
        cJSON *shape = cJSON_AddObjectToObject(o, "kernel_shape");
        cJSON_AddStringToObject(shape, "name", plan->kernel_shape >= 0
                                                   ? gol_shapes[plan->kernel_shape].name
                                                   : "auto");
        cJSON_AddStringToObject(shape, "reason", shape_plan_text(plan));
    } else { /* no GPU to share */
        cJSON_AddNullToObject(o, "ranks_per_gpu");
        cJSON_AddNullToObject(o, "mps");
        cJSON_AddNullToObject(o, "kernel_shape");
    }
    cJSON_AddStringToObject(o, "frame_format",
                            plan->output ? config_frame_format_name(plan->frame_format) : "none");
    for (int r = 0; r < nranks; r++) {
        cJSON *row = cJSON_CreateObject();
        cJSON_AddNumberToObject(row, "rank", r);
        cJSON_AddStringToObject(row, "host", rows[r].host);
        cJSON_AddNumberToObject(row, "row0", (double)rows[r].row0);
        cJSON_AddNumberToObject(row, "rows", (double)rows[r].rows);
        cJSON_AddNumberToObject(row, "host_bytes", (double)rows[r].host_bytes);
        cJSON_AddNumberToObject(row, "device_bytes", (double)rows[r].device_bytes);
        if (plan->backend == GOL_BACKEND_CUDA)
            cJSON_AddNumberToObject(row, "ranks_on_gpu", rows[r].ranks_on_gpu);
        cJSON_AddItemToArray(ranks, row);
    }
    cJSON_AddItemToObject(o, "ranks", ranks);
    char *text = cJSON_Print(o);
    SYS_CHECK(text != NULL, "cJSON_Print(--stats)");
    FILE *f = fopen(path, "w");
    SYS_CHECK(f != NULL, "fopen(--stats)");
    SYS_CHECK(fputs(text, f) >= 0 && fputc('\n', f) != EOF, "write(--stats)");
    SYS_CHECK(fclose(f) == 0, "fclose(--stats)");
    free(text);
    cJSON_Delete(o);
}

void plan_print(const gol_plan *plan, const gol_config *cfg, MPI_Comm comm) {
    int rank, nranks;
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    MPI_CHECK(MPI_Comm_size(comm, &nranks));
    plan_row *rows = gather_rows(plan, comm, rank, nranks);
    if (rank != 0) return;
    print_rows(plan, rows, nranks);
    if (cfg->stats[0]) write_json(plan, rows, nranks, cfg->stats);
    free(rows);
}
