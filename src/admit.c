#include "src/admit.h"

#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

#include "core/check.h"
#include "cuda/cuda_sizes.h"
#include "cuda/device_mem.h"
#include "io/output.h"
#include "src/host_mem.h"

#define GIB(bytes) ((double)(bytes) / (double)(INT64_C(1) << 30))

/* The plan's host bytes by what holds them, as doubles: summed over the ranks of a node, a grid
 * that cannot fit may need more than int64 bytes. */
enum { HOST_BACKEND, HOST_START, HOST_READ, HOST_SLOTS, HOST_BASE, HOST_PEAK, HOST_N };

static void host_parts_of(const gol_host_bytes *h, double *d) {
    d[HOST_BACKEND] = (double)h->backend, d[HOST_START] = (double)h->start;
    d[HOST_READ] = (double)h->read, d[HOST_SLOTS] = (double)h->slots;
    d[HOST_BASE] = (double)h->base, d[HOST_PEAK] = (double)h->peak;
}

/* "12.3 GiB", or MiB below a tenth of a GiB, so that a small part does not read as nothing. */
static const char *human(double bytes, char *buf, size_t len) {
    if (bytes >= 0.1 * (double)(INT64_C(1) << 30))
        snprintf(buf, len, "%.1f GiB", GIB(bytes));
    else
        snprintf(buf, len, "%.1f MiB", bytes / (double)(1 << 20));
    return buf;
}

/* "grids 931.3 GiB, start state 465.7 GiB, ...": the parts that are there. */
static void host_parts(const double *sum, gol_backend_kind kind, char *out, size_t len) {
    const char *label[] = {kind == GOL_BACKEND_CUDA ? "pinned halo rows" : "grids", "start state",
                           "restart frame", "frame slots"};
    size_t at = 0;
    out[0] = '\0';
    for (int i = HOST_BACKEND; i <= HOST_SLOTS && at < len; i++) {
        char n[32];
        if (sum[i] <= 0) continue;
        at += (size_t)snprintf(out + at, len - at, "%s%s %s", at ? ", " : "", label[i],
                               human(sum[i], n, sizeof n));
    }
}

/* The ranks of one node share its memory: their needs add up against what the node has left.
 * Collective over node. */
static gol_status check_host(const gol_plan *plan, MPI_Comm node) {
    double mine[HOST_N], sum[HOST_N];
    host_parts_of(&plan->host, mine);
    MPI_CHECK(MPI_Allreduce(mine, sum, HOST_N, MPI_DOUBLE, MPI_SUM, node));
    int64_t avail = mem_host_available(), least;
    MPI_CHECK(MPI_Allreduce(&avail, &least, 1, MPI_INT64_T, MPI_MIN, node));
    if (least < 0 || sum[HOST_PEAK] <= (double)least) return gol_ok(); /* unknown: let it try */
    int nlocal;
    MPI_CHECK(MPI_Comm_size(node, &nlocal));
    char host[256] = "?", parts[256], need[32], have[32];
    gethostname(host, sizeof host - 1);
    host_parts(sum, plan->backend, parts, sizeof parts);
    /* the grid alone fits: the frames are what to cut */
    bool slots_weigh = sum[HOST_BASE] <= (double)least;
    return gol_fail(GOL_EXIT_USAGE,
                    "the %lld x %lld grid does not fit in memory: the %d rank(s) on node %s need "
                    "%s of host memory (%s), and the node has %s available; %s",
                    (long long)plan->slab.width, (long long)plan->slab.height, nlocal, host,
                    human(sum[HOST_PEAK], need, sizeof need), parts,
                    human((double)least, have, sizeof have),
                    slots_weigh ? "give fewer frames per chunk file (--chunk), --frame-format "
                                  "packed, or --no-output"
                                : "use more nodes, or a smaller grid");
}

/* Ranks that share a GPU share its memory: their needs add up against what it has free.
 * Collective over node (it splits it by GPU). */
static gol_status check_device(const gol_plan *plan, MPI_Comm node) {
    int device;
    int64_t free_b = mem_device_free(node, &device), least;
    MPI_Comm gpu;
    MPI_CHECK(MPI_Comm_split(node, device < 0 ? MPI_UNDEFINED : device, 0, &gpu));
    if (gpu == MPI_COMM_NULL) return gol_ok(); /* no device: backend_select decided otherwise */
    double mine = (double)plan->device_bytes, sum;
    MPI_CHECK(MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, gpu));
    MPI_CHECK(MPI_Allreduce(&free_b, &least, 1, MPI_INT64_T, MPI_MIN, gpu));
    int sharing;
    MPI_CHECK(MPI_Comm_size(gpu, &sharing));
    MPI_CHECK(MPI_Comm_free(&gpu));
    if (sum <= (double)least) return gol_ok();
    char host[256] = "?", need[32], have[32], reserve[32];
    gethostname(host, sizeof host - 1);
    return gol_fail(GOL_EXIT_USAGE,
                    "the %lld x %lld grid does not fit on the GPUs: GPU %d of node %s needs %s of "
                    "device memory for its %d rank(s) (two grids each, u8 frame staging, and %s "
                    "for NCCL and CUDA graphs), and has %s free; use more GPUs, or a smaller grid",
                    (long long)plan->slab.width, (long long)plan->slab.height, device, host,
                    human(sum, need, sizeof need), sharing,
                    human((double)CUDA_RESERVE * sharing, reserve, sizeof reserve),
                    human((double)least, have, sizeof have));
}

/* Collective over comm: splits it by node, then checks the host's and the GPU's memory. */
static gol_status admit_memory(const gol_plan *plan, MPI_Comm comm) {
    MPI_Comm node;
    MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    gol_status st = check_host(plan, node);
    /* collective over the node: every rank goes in, whatever the host said */
    if (plan->backend == GOL_BACKEND_CUDA) {
        gol_status dev = check_device(plan, node);
        if (st.code == GOL_OK) st = dev;
    }
    MPI_CHECK(MPI_Comm_free(&node));
    return status_agree(st, comm);
}

gol_status admit_run(const gol_setup *s, const gol_plan *plan, MPI_Comm comm) {
    GOL_TRY(admit_memory(plan, comm));
    if (s->cfg.no_output) return gol_ok();
    /* a continued series owns its index and .xmf; a chunk name of this run that exists lies past
     * the index's end (a run killed between a chunk and its index) and is replaced */
    gol_config check = s->cfg;
    check.force = check.force || s->has_series;
    return output_check(&check, &s->sched, comm);
}
