#include "src/host_mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "core/plan.h"

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

