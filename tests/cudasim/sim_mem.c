/* The simulated GPU's memory (tests/cudasim/sim.h).
 *
 * Device memory is one memfd mapped twice: the addresses cudaMalloc hands out lie in a view with
 * no access at all, so a host dereference of a device pointer faults (and is reported); the stream
 * workers reach the same pages through a second, writable view (sim_worker_ptr). Pinned host
 * memory is mapped the same way, each allocation on its own pages, but its host view is usable:
 * only while the host has not yet seen an operation on it complete is it closed, to writes when
 * the operation reads it (a copy to the device) and to any access when the operation writes it (a
 * copy from the device). A host access then faults, and the report names the operation; a correct
 * program first learns that the operation is done (a stream or event synchronised or queried),
 * which opens the pages again. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sim.h"

enum { MAX_BLOCKS = 4096, MAX_PINNED = 256, MAX_HOLDS = 4096 };

static const size_t dev_span = (size_t)64 << 30; /* address space; memory is only what is used */
static size_t dev_limit;                         /* what cudaMemGetInfo says the device has */
static char *dev_host, *dev_worker;              /* the two views */

typedef struct block {
    size_t off, bytes;
    sim_site site;
} block;

static block blocks[MAX_BLOCKS]; /* live device allocations, sorted by offset */
static int nblocks;
static size_t dev_used;

typedef struct pinned {
    char *host, *worker;
    size_t bytes;        /* whole pages */
    int *writes, *reads; /* per page: operations the host has not seen complete */
    int fd;
} pinned;

static pinned pins[MAX_PINNED];
static int npins;
static size_t page;

/* An operation's touch of pinned memory, until the host sees the operation complete. */
typedef struct hold {
    char *p;
    size_t bytes;
    int mode, slot;
    uint32_t tick;
    const char *what;
    sim_site site;
} hold;

static hold holds[MAX_HOLDS];
static int nholds;

static int two_views(size_t bytes, char **host, char **worker, int host_prot) {
    int fd = memfd_create("cudasim", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0) sim_fatal("memfd: %s", strerror(errno));
    *host = mmap(NULL, bytes, host_prot, MAP_SHARED | MAP_NORESERVE, fd, 0);
    *worker = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    if (*host == MAP_FAILED || *worker == MAP_FAILED) sim_fatal("mmap: %s", strerror(errno));
    return fd;
}

void sim_mem_init(void) {
    page = (size_t)sysconf(_SC_PAGESIZE);
    const char *gib = getenv("GOLMPI_SIM_DEVICE_GIB");
    dev_limit = (size_t)(gib && *gib ? atof(gib) : 16.0) * ((size_t)1 << 30);
    int fd = two_views(dev_span, &dev_host, &dev_worker, PROT_NONE);
    close(fd);
}

int sim_is_device(const void *p, size_t bytes) {
    const char *c = p;
    return c >= dev_host && c + bytes <= dev_host + dev_span && c < dev_host + dev_span;
}

static pinned *pinned_of(const void *p) {
    const char *c = p;
    for (int i = 0; i < npins; i++)
        if (c >= pins[i].host && c < pins[i].host + pins[i].bytes) return &pins[i];
    return NULL;
}

int sim_is_pinned(const void *p, size_t bytes) {
    pinned *b = pinned_of(p);
    return b && (const char *)p + bytes <= b->host + b->bytes;
}

void *sim_worker_ptr(const void *p) {
    const char *c = p;
    if (c >= dev_host && c < dev_host + dev_span) return dev_worker + (c - dev_host);
    pinned *b = pinned_of(p);
    if (b) return b->worker + (c - b->host);
    return (void *)p;
}

void *cudasim_ptr(const void *p) {
    sim_lock();
    void *w = sim_worker_ptr(p);
    sim_unlock();
    return w;
}

/* ---- allocation ------------------------------------------------------------------------- */

cudaError_t cudaMalloc(void **p, size_t bytes) {
    sim_init();
    if (sim_capture_refuses()) return cudaErrorStreamCaptureUnsupported;
    size_t want = (bytes + 255) / 256 * 256;
    if (want == 0) want = 256;
    sim_lock();
    size_t at = 0;
    int i = 0;
    for (; i < nblocks; i++) { /* first fit */
        if (blocks[i].off - at >= want) break;
        at = blocks[i].off + blocks[i].bytes;
    }
    if (dev_used + want > dev_limit || at + want > dev_span || nblocks == MAX_BLOCKS) {
        sim_unlock();
        *p = NULL;
        return sim_error(cudaErrorMemoryAllocation);
    }
    memmove(&blocks[i + 1], &blocks[i], (size_t)(nblocks - i) * sizeof *blocks);
    blocks[i] = (block){.off = at, .bytes = want};
    sim_site_here(&blocks[i].site);
    nblocks++;
    dev_used += want;
    memset(dev_worker + at, 0xa5, want); /* fresh device memory is not zero */
    sim_unlock();
    *p = dev_host + at;
    return cudaSuccess;
}

/* Synchronises the device first, as cudaFree does. */
cudaError_t cudaFree(void *p) {
    sim_init();
    if (sim_capture_refuses()) return cudaErrorStreamCaptureUnsupported;
    if (!p) return cudaSuccess; /* makes the context, nothing else */
    sim_sync_all();
    sim_lock();
    size_t off = (size_t)((char *)p - dev_host);
    for (int i = 0; i < nblocks; i++) {
        if (!sim_is_device(p, 1) || blocks[i].off != off) continue;
        sim_race_forget(p, blocks[i].bytes);
        madvise(dev_worker + off, blocks[i].bytes, MADV_REMOVE);
        dev_used -= blocks[i].bytes;
        memmove(&blocks[i], &blocks[i + 1], (size_t)(nblocks - i - 1) * sizeof *blocks);
        nblocks--;
        sim_unlock();
        return cudaSuccess;
    }
    sim_unlock();
    return sim_error(cudaErrorInvalidDevicePointer);
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes) {
    sim_init();
    sim_lock();
    *free_bytes = dev_limit - dev_used;
    *total_bytes = dev_limit;
    sim_unlock();
    return cudaSuccess;
}

cudaError_t cudaMallocHost(void **p, size_t bytes) {
    sim_init();
    if (sim_capture_refuses()) return cudaErrorStreamCaptureUnsupported;
    sim_lock();
    if (npins == MAX_PINNED) {
        sim_unlock();
        return sim_error(cudaErrorMemoryAllocation);
    }
    pinned *b = &pins[npins++];
    b->bytes = (bytes + page - 1) / page * page;
    if (b->bytes == 0) b->bytes = page;
    b->fd = two_views(b->bytes, &b->host, &b->worker, PROT_READ | PROT_WRITE);
    size_t pages = b->bytes / page;
    b->writes = calloc(pages, sizeof *b->writes);
    b->reads = calloc(pages, sizeof *b->reads);
    *p = b->host;
    sim_unlock();
    return cudaSuccess;
}

/* Synchronises the device first, as cudaFreeHost does. */
cudaError_t cudaFreeHost(void *p) {
    sim_init();
    if (sim_capture_refuses()) return cudaErrorStreamCaptureUnsupported;
    if (!p) return cudaSuccess;
    sim_sync_all();
    sim_lock();
    pinned *b = pinned_of(p);
    if (!b || b->host != p) {
        sim_unlock();
        return sim_error(cudaErrorInvalidValue);
    }
    sim_pinned_release();
    sim_race_forget(b->host, b->bytes);
    munmap(b->host, b->bytes);
    munmap(b->worker, b->bytes);
    close(b->fd);
    free(b->writes);
    free(b->reads);
    *b = pins[--npins];
    sim_unlock();
    return cudaSuccess;
}

/* ---- the host's view of pinned memory ---------------------------------------------------- */

static void protect_pages(pinned *b, size_t first, size_t last) {
    for (size_t pg = first; pg <= last; pg++) {
        int prot = b->writes[pg] ? PROT_NONE : b->reads[pg] ? PROT_READ : PROT_READ | PROT_WRITE;
        mprotect(b->host + pg * page, page, prot);
    }
}

/* Only the pages wholly inside the range close: a page it shares with other bytes (frames side by
 * side in a slot) stays open, since the host may use those bytes meanwhile, in a system call too
 * (pwrite), which a closed page would fail instead of faulting. */
static void count_hold(const hold *h, int delta) {
    pinned *b = pinned_of(h->p);
    if (!b) return;
    size_t first = ((size_t)(h->p - b->host) + page - 1) / page;
    size_t end = (size_t)(h->p + h->bytes - b->host) / page;
    if (first >= end) return;
    for (size_t pg = first; pg < end; pg++) {
        if (h->mode & CUDASIM_WRITE)
            b->writes[pg] += delta;
        else
            b->reads[pg] += delta;
    }
    protect_pages(b, first, end - 1);
}

/* Under the lock: the pinned ranges of an operation just enqueued close to the host. */
void sim_pinned_hold(const sim_op *op, int slot) {
    const cudasim_access *a = op->acc;
    for (int i = 0; i < op->nacc; i++) {
        if (!a[i].bytes || !sim_is_pinned(a[i].p, a[i].bytes)) continue;
        if (nholds == MAX_HOLDS) sim_fatal("more than %d pinned ranges in flight", MAX_HOLDS);
        hold *h = &holds[nholds++];
        *h = (hold){.p = (char *)a[i].p,
                    .bytes = a[i].bytes,
                    .mode = a[i].mode,
                    .slot = slot,
                    .tick = op->tick,
                    .what = op->what,
                    .site = op->site};
        count_hold(h, 1);
    }
}

/* Under the lock: every hold whose operation the host has now seen complete opens again. */
void sim_pinned_release(void) {
    for (int i = 0; i < nholds;) {
        if (sim.host.c[holds[i].slot] >= holds[i].tick) {
            count_hold(&holds[i], -1);
            holds[i] = holds[--nholds];
        } else {
            i++;
        }
    }
}

/* From the fault handler: 1 when addr is the simulator's to explain (and it was explained). */
int sim_fault_report(void *addr) {
    char *c = addr;
    if (c >= dev_host && c < dev_host + dev_span) {
        size_t off = (size_t)(c - dev_host);
        fprintf(stderr, "cudasim: rank %d: the host dereferenced device address %p", sim_rank(),
                addr);
        for (int i = 0; i < nblocks; i++)
            if (off >= blocks[i].off && off < blocks[i].off + blocks[i].bytes) {
                fprintf(stderr, ", %zu bytes into the allocation made at:\n", off - blocks[i].off);
                sim_site_print(&blocks[i].site, "    ");
            }
        fprintf(stderr, "\n");
        return 1;
    }
    for (int i = 0; i < nholds; i++) {
        hold *h = &holds[i];
        if (c < h->p || c >= h->p + h->bytes) continue;
        fprintf(stderr,
                "cudasim: rank %d: RACE: the host touched pinned memory at %p while a stream "
                "operation that %s it (%s, stream slot %d, op %u) was not yet seen complete by "
                "the host (no synchronise or query since); that operation was enqueued at:\n",
                sim_rank(), addr, h->mode & CUDASIM_WRITE ? "writes" : "reads", h->what, h->slot,
                h->tick);
        sim_site_print(&h->site, "    ");
        return 1;
    }
    return 0;
}
