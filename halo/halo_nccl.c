#include "halo/halo_nccl.h"

#include <nccl.h>
#include <stdlib.h>
#include <time.h>

#include "core/check.h"

struct gol_halo_nccl {
    ncclComm_t comm;
    int have_comm; /* no peer at all (one rank, dead boundary): nothing to exchange */
    int up, down;
    int64_t nwords;
};

/* A nonblocking communicator answers ncclInProgress until its background work is done; poll so a
 * failure anywhere surfaces as NCCL's own error instead of a silent hang. */
static void wait_ready(gol_halo_nccl *h, const char *what) {
    ncclResult_t state = ncclInProgress;
    for (;;) {
        NCCL_CHECK(ncclCommGetAsyncError(h->comm, &state));
        if (state != ncclInProgress) break;
        struct timespec ts = {0, 20000};
        nanosleep(&ts, NULL);
    }
    if (state != ncclSuccess) gol_die_nccl(__FILE__, __LINE__, what, state);
}

gol_halo_nccl *halo_nccl_create(const gol_slab *slab, MPI_Comm comm) {
    gol_halo_nccl *h = gol_xcalloc(1, sizeof *h);
    h->up = slab->up;
    h->down = slab->down;
    h->nwords = slab->nwords;
    /* Every rank reaches the same decision: only a single rank can be without peers. */
    if (h->up < 0 && h->down < 0) return h;

    int rank, nranks;
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    MPI_CHECK(MPI_Comm_size(comm, &nranks));
    ncclUniqueId id;
    if (rank == 0) NCCL_CHECK(ncclGetUniqueId(&id));
    MPI_CHECK(MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, comm));
    /* Everyone holds the id before anyone starts connecting (avoids init hangs seen elsewhere). */
    MPI_CHECK(MPI_Barrier(comm));
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    NCCL_CHECK(ncclCommInitRankConfig(&h->comm, nranks, id, rank, &config));
    wait_ready(h, "ncclCommInitRankConfig (waiting for the other ranks)");
    h->have_comm = 1;
    return h;
}

void halo_nccl_enqueue(gol_halo_nccl *h, const uint64_t *first_d, const uint64_t *last_d,
                       uint64_t *top_d, uint64_t *bottom_d, cudaStream_t s) {
    if (!h->have_comm) return;
    size_t count = (size_t)h->nwords;
    /* NCCL matches the operations between two ranks in the order they are posted. With one or two
     * ranks on a torus, up == down, so both receives and both sends go to the same peer: posting
     * receives as (top, bottom) and sends as (last, first) makes the peer's last row land in our
     * top halo and its first row in our bottom halo, for self-exchange as for a real neighbour. */
    NCCL_CHECK(ncclGroupStart());
    if (h->up >= 0) NCCL_CHECK(ncclRecv(top_d, count, ncclUint64, h->up, h->comm, s));
    if (h->down >= 0) NCCL_CHECK(ncclRecv(bottom_d, count, ncclUint64, h->down, h->comm, s));
    if (h->down >= 0) NCCL_CHECK(ncclSend(last_d, count, ncclUint64, h->down, h->comm, s));
    if (h->up >= 0) NCCL_CHECK(ncclSend(first_d, count, ncclUint64, h->up, h->comm, s));
    ncclResult_t rc = ncclGroupEnd();
    if (rc == ncclInProgress)
        wait_ready(h, "ncclGroupEnd (halo exchange)");
    else
        NCCL_CHECK(rc);
}

void halo_nccl_check(gol_halo_nccl *h) {
    if (!h->have_comm) return;
    ncclResult_t state = ncclSuccess;
    NCCL_CHECK(ncclCommGetAsyncError(h->comm, &state));
    if (state != ncclSuccess && state != ncclInProgress)
        gol_die_nccl(__FILE__, __LINE__, "ncclCommGetAsyncError (halo exchange)", state);
}

void halo_nccl_sync_stream(gol_halo_nccl *h, cudaStream_t s) {
    for (;;) {
        cudaError_t e = cudaStreamQuery(s);
        if (e == cudaSuccess) return;
        if (e != cudaErrorNotReady) CUDA_CHECK(e);
        halo_nccl_check(h);
        struct timespec ts = {0, 10000};
        nanosleep(&ts, NULL);
    }
}

void halo_nccl_destroy(gol_halo_nccl *h) {
    if (!h) return;
    if (h->have_comm) {
        /* Finalize flushes outstanding operations; with a nonblocking comm it is polled too. */
        ncclResult_t rc = ncclCommFinalize(h->comm);
        if (rc == ncclInProgress)
            wait_ready(h, "ncclCommFinalize");
        else
            NCCL_CHECK(rc);
        NCCL_CHECK(ncclCommDestroy(h->comm));
    }
    free(h);
}
