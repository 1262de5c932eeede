/* Halo mode "nccl" on device memory: NCCL point-to-point on the comm stream. The exchange is only
 * enqueued: it runs in stream order, so it can be captured into a CUDA graph. Needs the CUDA
 * device already chosen.
 *
 * create is collective over comm (its ranks are the NCCL ranks): rank 0 makes the unique id,
 * MPI_Bcast, MPI_Barrier, then a nonblocking ncclCommInitRankConfig that is polled, so a failure
 * on one rank aborts with NCCL's message instead of hanging. With one rank and a dead boundary
 * there is no peer and no communicator. */
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <stdlib.h>
#include <time.h>

#include "core/check.h"
#include "core/trace.h"
#include "halo/halo.h"

typedef struct halo_nccl {
    ncclComm_t comm;
    int have_comm; /* no peer at all (one rank, dead boundary): nothing to exchange */
    int up, down;
    int64_t nwords;
    cudaStream_t stream;
} halo_nccl;

/* A nonblocking communicator answers ncclInProgress until its background work is done; poll so a
 * failure anywhere surfaces as NCCL's own error instead of a silent hang. */
static void wait_ready(halo_nccl *h, const char *what) {
    ncclResult_t state = ncclInProgress;
    for (;;) {
        NCCL_CHECK(ncclCommGetAsyncError(h->comm, &state));
        if (state != ncclInProgress) break;
        struct timespec ts = {0, 20000};
        nanosleep(&ts, NULL);
    }
    if (state != ncclSuccess) gol_die_nccl(__FILE__, __LINE__, what, state);
}

static void *nccl_create(const gol_slab *slab, MPI_Comm comm, void *stream, double timeout_s) {
    (void)timeout_s; /* not watched yet: the NCCL watchdog (issue 8, problem 4) will use it */
    halo_nccl *h = gol_xcalloc(1, sizeof *h);
    h->up = slab->up;
    h->down = slab->down;
    h->nwords = slab->nwords;
    h->stream = (cudaStream_t)stream;
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

/* Enqueues the whole exchange on the stream; the NVTX range covers the enqueue. */
static void nccl_post(void *impl, const uint64_t *first_d, const uint64_t *last_d, uint64_t *top_d,
                      uint64_t *bottom_d) {
    halo_nccl *h = impl;
    trace_push("halo");
    if (!h->have_comm) {
        trace_pop();
        return;
    }
    size_t count = (size_t)h->nwords;
    cudaStream_t s = h->stream;
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
    trace_pop();
}

/* Stream order completes the exchange: nothing to wait for on the host. */
static void nccl_wait(void *impl) { (void)impl; }

/* The host only enqueues; the caller samples the exchange with events (ops.sampled). */
static double nccl_seconds(const void *impl) {
    (void)impl;
    return 0.0;
}

static void nccl_poll(void *impl) {
    halo_nccl *h = impl;
    if (!h->have_comm) return;
    ncclResult_t state = ncclSuccess;
    NCCL_CHECK(ncclCommGetAsyncError(h->comm, &state));
    if (state != ncclSuccess && state != ncclInProgress)
        gol_die_nccl(__FILE__, __LINE__, "ncclCommGetAsyncError (halo exchange)", state);
}

static void nccl_sync_stream(void *impl, void *stream) {
    cudaStream_t s = (cudaStream_t)stream;
    for (;;) {
        cudaError_t e = cudaStreamQuery(s);
        if (e == cudaSuccess) return;
        if (e != cudaErrorNotReady) CUDA_CHECK(e);
        nccl_poll(impl);
        struct timespec ts = {0, 10000};
        nanosleep(&ts, NULL);
    }
}

static void nccl_destroy(void *impl) {
    halo_nccl *h = impl;
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

/* NCCL p2p is capturable; NCCL connects to a peer on first use, so the caller warms up first. */
const halo_ops halo_nccl_ops = {
    .create = nccl_create,
    .post = nccl_post,
    .wait = nccl_wait,
    .seconds = nccl_seconds,
    .destroy = nccl_destroy,
    .capturable = 1,
    .sampled = 1,
    .poll = nccl_poll,
    .sync_stream = nccl_sync_stream,
};
