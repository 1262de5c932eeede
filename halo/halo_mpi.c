#include "halo/halo_mpi.h"

#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "core/trace.h"

/* Tags name the direction a row travels, so that with two ranks on a torus (up == down) the row
 * sent up and the row sent down still land in the right halos. */
enum { TAG_TO_UP = 11, TAG_TO_DOWN = 12 };

struct gol_halo_mpi {
    MPI_Comm comm;
    int up, down;
    int count; /* words per row; a row of 2^31 words would be 2^37 cells, beyond our limits */
    MPI_Request req[4];
    int nreq;
    double seconds;
};

gol_halo_mpi *halo_mpi_create(const gol_slab *slab, MPI_Comm comm) {
    gol_halo_mpi *h = gol_xcalloc(1, sizeof *h);
    MPI_CHECK(MPI_Comm_dup(comm, &h->comm));
    h->up = slab->up;
    h->down = slab->down;
    h->count = (int)slab->nwords;
    return h;
}

void halo_mpi_start(gol_halo_mpi *h, const uint64_t *first, const uint64_t *last, uint64_t *top,
                    uint64_t *bottom) {
    double t0 = MPI_Wtime();
    trace_push("halo");
    h->nreq = 0;
    if (h->up >= 0) {
        MPI_CHECK(MPI_Irecv(top, h->count, MPI_UINT64_T, h->up, TAG_TO_DOWN, h->comm, &h->req[h->nreq++]));
        MPI_CHECK(MPI_Isend(first, h->count, MPI_UINT64_T, h->up, TAG_TO_UP, h->comm, &h->req[h->nreq++]));
    }
    if (h->down >= 0) {
        MPI_CHECK(MPI_Irecv(bottom, h->count, MPI_UINT64_T, h->down, TAG_TO_UP, h->comm, &h->req[h->nreq++]));
        MPI_CHECK(MPI_Isend(last, h->count, MPI_UINT64_T, h->down, TAG_TO_DOWN, h->comm, &h->req[h->nreq++]));
    }
    h->seconds += MPI_Wtime() - t0;
}

void halo_mpi_finish(gol_halo_mpi *h) {
    double t0 = MPI_Wtime();
    MPI_CHECK(MPI_Waitall(h->nreq, h->req, MPI_STATUSES_IGNORE));
    h->nreq = 0;
    trace_pop();
    h->seconds += MPI_Wtime() - t0;
}

double halo_mpi_seconds(const gol_halo_mpi *h) { return h->seconds; }

void halo_mpi_destroy(gol_halo_mpi *h) {
    if (!h) return;
    MPI_CHECK(MPI_Comm_free(&h->comm));
    free(h);
}
