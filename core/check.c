#include "core/check.h"

#include <errno.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


const char *gol_mpi_errstr(int code) {
    static char buf[MPI_MAX_ERROR_STRING + 1];
    int len = 0;
    if (MPI_Error_string(code, buf, &len) != MPI_SUCCESS) snprintf(buf, sizeof buf, "code %d", code);
    return buf;
}

/* The innermost message of HDF5's error stack names the real cause. */
static herr_t h5_walk(unsigned n, const H5E_error2_t *e, void *data) {
    (void)n;
    char *buf = data;
    snprintf(buf, 512, "%s() in %s: %s", e->func_name, e->file_name, e->desc);
    return 0;
}

const char *gol_h5_errstr(void) {
    static char buf[512];
    snprintf(buf, sizeof buf, "(no HDF5 error stack)");
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, h5_walk, buf);
    return buf;
}

const char *gol_sys_errstr(void) { return strerror(errno); }

void *gol_xmalloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        char what[64];
        snprintf(what, sizeof what, "malloc(%zu)", bytes);
        gol_die(__FILE__, __LINE__, what, "system", "out of host memory");
    }
    return p;
}

void *gol_xmalloc_aligned(size_t bytes, size_t align) {
    void *p = NULL;
    if (posix_memalign(&p, align, bytes ? bytes : 1) != 0) {
        char what[80];
        snprintf(what, sizeof what, "posix_memalign(%zu, %zu)", align, bytes);
        gol_die(__FILE__, __LINE__, what, "system", "out of host memory");
    }
    return p;
}

void *gol_xcalloc(size_t count, size_t size) {
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p) {
        char what[64];
        snprintf(what, sizeof what, "calloc(%zu, %zu)", count, size);
        gol_die(__FILE__, __LINE__, what, "system", "out of host memory");
    }
    return p;
}

static struct {
    void (*fn)(void *, double);
    void *arg;
} watch[4];
static int watch_n;

void gol_watch_add(void (*fn)(void *, double), void *arg) {
    if (watch_n == (int)(sizeof watch / sizeof *watch))
        gol_die(__FILE__, __LINE__, "gol_watch_add", "golmpi", "too many watchdogs");
    watch[watch_n].fn = fn;
    watch[watch_n++].arg = arg;
}

void gol_watch_remove(void (*fn)(void *, double), void *arg) {
    for (int i = 0; i < watch_n; i++)
        if (watch[i].fn == fn && watch[i].arg == arg) {
            for (watch_n--; i < watch_n; i++)
                watch[i] = watch[i + 1];
            return;
        }
}

void gol_watch_poll(double since) {
    for (int i = 0; i < watch_n; i++)
        watch[i].fn(watch[i].arg, since);
}

#ifdef GOLMPI_HAVE_CUDA
void gol_die_cuda(const char *file, int line, const char *call, const char *name,
                  const char *str) {
    char err[512];
    snprintf(err, sizeof err, "%s: %s", name, str);
    gol_die(file, line, call, "CUDA", err);
}
#endif

#ifdef GOLMPI_HAVE_NCCL
void gol_die_nccl(const char *file, int line, const char *call, ncclResult_t rc) {
    char err[768];
    snprintf(err, sizeof err, "%s (last: %s)", ncclGetErrorString(rc), ncclGetLastError(NULL));
    gol_die(file, line, call, "NCCL", err);
}
#endif
