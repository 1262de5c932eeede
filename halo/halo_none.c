/* Halo mode "none": no exchange at all. A benchmarking aid (--halo none, hidden from --help): the
 * difference to a run with a real mode is the halo cost that the overlap does not hide. The grid
 * it computes is wrong, so rank 0 says so once. Works on host and device rows alike. */
#include <stdio.h>
#include <stdlib.h>

#include "core/check.h"
#include "halo/halo.h"

static void *none_create(const gol_slab *slab, int64_t depth, MPI_Comm comm, void *stream,
                         double timeout_s) {
    (void)depth;
    (void)comm;
    (void)stream;
    (void)timeout_s; /* nothing to wait for */
    if (slab->rank == 0)
        fprintf(stderr, "golmpi: --halo none: the halo exchange is skipped (a benchmarking aid: "
                        "the grid it computes is wrong)\n");
    return gol_xcalloc(1, 1); /* a state of its own, so destroy frees what create made */
}

static void none_post(void *impl, const uint64_t *first, const uint64_t *last, uint64_t *top,
                      uint64_t *bottom) {
    (void)impl;
    (void)first;
    (void)last;
    (void)top;
    (void)bottom;
}

static void none_wait(void *impl) { (void)impl; }

static double none_seconds(const void *impl) {
    (void)impl;
    return 0.0;
}

static void none_destroy(void *impl) { free(impl); }

/* Nothing enqueued and nothing on the host: capturable, nothing to sample or to watch. */
const halo_ops halo_none_ops = {
    .create = none_create,
    .post = none_post,
    .wait = none_wait,
    .seconds = none_seconds,
    .destroy = none_destroy,
    .capturable = 1,
    .sampled = 0,
    .poll = NULL,
    .abort = NULL,
};
