#include "kernels/mem_need.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/check.h"
#include "core/depth.h"
#include "kernels/cuda_plan.h"

#ifdef GOLMPI_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "kernels/device.h"
#endif

int64_t mem_mul(int64_t a, int64_t b) {
    int64_t r;
    if (a < 0 || b < 0) return 0; /* no size is negative; a caller's bug must not wrap */
    return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

int64_t mem_add(int64_t a, int64_t b) {
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

static int64_t grid_bytes(const gol_slab *slab) {
    return mem_mul(mem_mul(slab->rows + 2, slab->nwords), 8);
}

gol_mem_need backend_cpu_need(const gol_slab *slab, const gol_config *cfg) {
    (void)cfg;
    gol_mem_need n = {mem_mul(2, grid_bytes(slab)), 0};
    return n;
}

gol_mem_need backend_cuda_need(const gol_slab *slab, const gol_config *cfg) {
    /* cuda_plan's sums are plain int64 products. Below 2^58 bytes of grids they cannot wrap (u8
     * staging is at most 8 times the grids); above, no GPU comes near, and INT64_MAX says so. */
    int64_t planned = INT64_MAX, depth = 1;
    /* the backend's own depth (an impossible one was refused at backend_select) */
    if (depth_choose(cfg->halo_depth, GOL_BACKEND_CUDA, slab->height, slab->nranks, &depth).code)
        depth = 1;
    if (mem_mul(2, grid_bytes(slab)) < (INT64_C(1) << 58))
        planned = cuda_device_bytes(slab->rows, depth, slab->nwords, slab->width,
                                    cfg->frame_format, !cfg->no_output);
    gol_mem_need n = {mem_mul(4, mem_mul(slab->nwords, 8)), mem_add(planned, MEM_CUDA_RESERVE)};
    return n;
}

gol_mem_need backend_need(gol_backend_kind kind, const gol_slab *slab, const gol_config *cfg) {
    return kind == GOL_BACKEND_CUDA ? backend_cuda_need(slab, cfg) : backend_cpu_need(slab, cfg);
}

/* ---- host memory ------------------------------------------------------------------------- */

/* The value of "key" in a file of "key value" lines (/proc/meminfo, memory.stat), times unit;
 * -1 when absent. */
static int64_t file_key(const char *path, const char *key, int64_t unit) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[256];
    int64_t v = -1;
    size_t k = strlen(key);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, k) == 0 && (line[k] == ' ' || line[k] == ':')) {
            long long x = strtoll(line + k + 1, NULL, 10);
            v = x >= 0 ? mem_mul(x, unit) : -1;
            break;
        }
    fclose(f);
    return v;
}

/* A file holding one number; -1 when absent or not a number ("max": no limit). */
static int64_t file_number(const char *dir, const char *name) {
    char path[2 * GOL_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    long long v = -1;
    if (fscanf(f, "%lld", &v) != 1) v = -1;
    fclose(f);
    return v;
}

/* What one cgroup directory still allows: its limit less its use, its inactive page cache counted
 * as free (the kernel reclaims it before it fails an allocation). -1: no limit there. */
static int64_t cgroup_room(const char *dir, int v2) {
    int64_t limit = file_number(dir, v2 ? "memory.max" : "memory.limit_in_bytes");
    int64_t used = file_number(dir, v2 ? "memory.current" : "memory.usage_in_bytes");
    if (limit < 0 || used < 0 || limit >= (INT64_C(1) << 60)) return -1; /* v1 says "no limit" so */
    char stat[2 * GOL_PATH_MAX + 64];
    snprintf(stat, sizeof stat, "%s/memory.stat", dir);
    int64_t cache = file_key(stat, v2 ? "inactive_file" : "total_inactive_file", 1);
    int64_t room = limit - used + (cache > 0 ? cache : 0);
    return room > 0 ? room : 0;
}

/* The tightest room from this process's cgroup up to the root of the hierarchy (Slurm puts the
 * limit on the job, above the task's own cgroup); the mount root alone inside a container. */
static int64_t cgroup_available(const char *mount, const char *path, int v2) {
    char rel[GOL_PATH_MAX], dir[2 * GOL_PATH_MAX];
    snprintf(rel, sizeof rel, "%s", path);
    int64_t best = -1;
    for (;;) {
        snprintf(dir, sizeof dir, "%s%s", mount, rel);
        int64_t room = access(dir, F_OK) == 0 ? cgroup_room(dir, v2) : -1;
        if (room >= 0 && (best < 0 || room < best)) best = room;
        char *slash = strrchr(rel, '/');
        if (!slash || rel[0] == '\0') break;
        *slash = '\0';
    }
    return best;
}

/* This process's memory cgroup, from /proc/self/cgroup: "0::/path" (v2) or "N:memory:/path". */
static int64_t cgroup_limit_available(void) {
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f) return -1;
    char line[GOL_PATH_MAX];
    int64_t best = -1;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2) continue;
        *c2 = '\0';
        const char *ctrl = c1 + 1, *path = c2 + 1;
        int64_t room = -1;
        if (ctrl[0] == '\0')
            room = cgroup_available("/sys/fs/cgroup", path, 1);
        else if (strstr(ctrl, "memory"))
            room = cgroup_available("/sys/fs/cgroup/memory", path, 0);
        if (room >= 0 && (best < 0 || room < best)) best = room;
    }
    fclose(f);
    return best;
}

int64_t mem_host_available(void) {
    int64_t avail = file_key("/proc/meminfo", "MemAvailable", 1024);
    if (avail < 0) {
        long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        if (pages > 0 && page > 0) avail = mem_mul(pages, page);
    }
    int64_t cg = cgroup_limit_available();
    if (cg >= 0 && (avail < 0 || cg < avail)) avail = cg;
    return avail;
}

/* ---- device memory ----------------------------------------------------------------------- */

int64_t mem_device_free(MPI_Comm node, int *device) {
    *device = -1;
#ifdef GOLMPI_HAVE_CUDA
    int n = device_count_unchecked(), local;
    MPI_CHECK(MPI_Comm_rank(node, &local));
    if (n > 0) {
        *device = local % n;
        CUDA_CHECK(cudaSetDevice(*device));
        CUDA_CHECK(cudaFree(NULL)); /* the context now, so that it is not counted as free */
    }
    /* every context of the node exists before anyone reads what is left */
    MPI_CHECK(MPI_Barrier(node));
    if (n <= 0) return -1;
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    return (int64_t)free_b;
#else
    MPI_CHECK(MPI_Barrier(node));
    return -1;
#endif
}
