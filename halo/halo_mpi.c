/* Halo mode "mpi" on host memory: non-blocking MPI. post posts the receives and sends, the caller
 * computes the interior, wait waits. The CPU backend's mode; the GPU's MPI mode builds on it. */
#include <stdlib.h>

#include "core/check.h"
#include "core/trace.h"
#include "halo/halo.h"

/* Tags name the direction a row travels, so that with two ranks on a torus (up == down) the row
 * sent up and the row sent down still land in the right halos. */
enum { TAG_TO_UP = 11, TAG_TO_DOWN = 12 };

typedef struct halo_mpi {
    MPI_Comm comm;
    int up, down;
    int count; /* words per row; a row of 2^31 words would be 2^37 cells, beyond our limits */
    MPI_Request req[4];
    int nreq;
    double seconds;
} halo_mpi;

static void *mpi_create(const gol_slab *slab, MPI_Comm comm, void *stream) {
    (void)stream;
    halo_mpi *h = gol_xcalloc(1, sizeof *h);
    MPI_CHECK(MPI_Comm_dup(comm, &h->comm));
    h->up = slab->up;
    h->down = slab->down;
    h->count = (int)slab->nwords;
    return h;
}

static void mpi_post(void *impl, const uint64_t *first, const uint64_t *last, uint64_t *top,
                     uint64_t *bottom) {
    halo_mpi *h = impl;
    double t0 = MPI_Wtime();
    trace_push("halo");
    h->nreq = 0;
    if (h->up >= 0) {
        MPI_CHECK(MPI_Irecv(top, h->count, MPI_UINT64_T, h->up, TAG_TO_DOWN, h->comm,
                            &h->req[h->nreq++]));
        MPI_CHECK(MPI_Isend(first, h->count, MPI_UINT64_T, h->up, TAG_TO_UP, h->comm,
                            &h->req[h->nreq++]));
    }
    if (h->down >= 0) {
        MPI_CHECK(MPI_Irecv(bottom, h->count, MPI_UINT64_T, h->down, TAG_TO_UP, h->comm,
                            &h->req[h->nreq++]));
        MPI_CHECK(MPI_Isend(last, h->count, MPI_UINT64_T, h->down, TAG_TO_DOWN, h->comm,
                            &h->req[h->nreq++]));
    }
    h->seconds += MPI_Wtime() - t0;
}

static void mpi_wait(void *impl) {
    halo_mpi *h = impl;
    double t0 = MPI_Wtime();
    MPI_CHECK(MPI_Waitall(h->nreq, h->req, MPI_STATUSES_IGNORE));
    h->nreq = 0;
    trace_pop();
    h->seconds += MPI_Wtime() - t0;
}

static double mpi_seconds(const void *impl) { return ((const halo_mpi *)impl)->seconds; }

static void mpi_destroy(void *impl) {
    halo_mpi *h = impl;
    if (!h) return;
    MPI_CHECK(MPI_Comm_free(&h->comm));
    free(h);
}

/* Host MPI calls cannot be captured, and their host time is the exchange time. */
const halo_ops halo_mpi_ops = {
    .create = mpi_create,
    .post = mpi_post,
    .wait = mpi_wait,
    .seconds = mpi_seconds,
    .destroy = mpi_destroy,
    .capturable = 0,
    .sampled = 0,
    .poll = NULL,
    .sync_stream = NULL,
};
