/* Halo mode "nccl" on device memory: NCCL point-to-point on the comm stream. The exchange is only
 * enqueued: it runs in stream order, so it can be captured into a CUDA graph. Needs the CUDA
 * device already chosen.
 *
 * create is collective over comm (its ranks are the NCCL ranks): rank 0 makes the unique id,
 * MPI_Bcast, MPI_Barrier, then a nonblocking ncclCommInitRankConfig that is polled, so a failure
 * on one rank aborts with NCCL's message instead of hanging, and a rank that never joins aborts
 * every rank after --timeout seconds. The exchanges then run on a blocking communicator split off
 * that one (also polled): NCCL 2.28 launches every group of a nonblocking communicator from a new
 * thread, about 100 us of host time per eager exchange, where a blocking one enqueues in the
 * calling thread. With one rank and a dead boundary there is no peer and no communicator. */
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>
#include <stdlib.h>
#include <time.h>

#include "core/check.h"
#include "core/trace.h"
#include "halo/halo.h"

typedef struct halo_nccl {
    ncclComm_t init; /* nonblocking: set up with polling; kept until destroy */
    ncclComm_t comm; /* blocking, split off init: the exchanges */
    int have_comm;   /* no peer at all (one rank, dead boundary): nothing to exchange */
    int rank, up, down;
    int64_t nwords;
    cudaStream_t stream;
    double timeout_s; /* --timeout, for the setup; 0: forever */
} halo_nccl;

/* Past --timeout seconds of setup, some rank never took part: abort every rank. */
static void setup_deadline(const halo_nccl *h, ncclComm_t comm, double t0, const char *what) {
    double waited = MPI_Wtime() - t0;
    if (h->timeout_s <= 0 || waited <= h->timeout_s) {
        struct timespec ts = {0, 20000};
        nanosleep(&ts, NULL);
        return;
    }
    (void)ncclCommAbort(comm); /* on the way out: its result changes nothing */
    gol_abort_msg("NCCL setup (%s) did not finish in %.0f s (--timeout): some rank did not take "
                  "part or cannot be reached; aborting every rank",
                  what, waited);
}

/* NCCL answers ncclInProgress until a nonblocking communicator's background work is done; poll so a
 * failure anywhere surfaces as NCCL's own error instead of a silent hang. */
static void wait_ready(const halo_nccl *h, ncclComm_t comm, const char *what) {
    ncclResult_t state = ncclInProgress;
    double t0 = MPI_Wtime();
    for (;;) {
        NCCL_CHECK(ncclCommGetAsyncError(comm, &state));
        if (state != ncclInProgress) break;
        setup_deadline(h, comm, t0, what);
    }
    if (state != ncclSuccess) gol_die_nccl(__FILE__, __LINE__, what, state);
}

/* The blocking communicator of the exchanges, split off the nonblocking one. The split is
 * nonblocking because its parent is: NCCL works on it in the background, answering ncclInProgress
 * on the parent, and stores the child only once it is made. */
static void split_blocking(halo_nccl *h) {
    static const char what[] = "ncclCommSplit (a blocking communicator for the exchanges)";
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 1;
    ncclComm_t child = NULL; /* NCCL's thread writes it: read atomically, never leave before */
    NCCL_CHECK(ncclCommSplit(h->init, 0, h->rank, &child, &config));
    wait_ready(h, h->init, what);
    double t0 = MPI_Wtime();
    while (!(h->comm = __atomic_load_n(&child, __ATOMIC_ACQUIRE))) {
        ncclResult_t state = ncclSuccess;
        NCCL_CHECK(ncclCommGetAsyncError(h->init, &state));
        if (state != ncclSuccess && state != ncclInProgress)
            gol_die_nccl(__FILE__, __LINE__, what, state);
        setup_deadline(h, h->init, t0, what);
    }
    wait_ready(h, h->comm, what);
}

static void *nccl_create(const gol_slab *slab, int64_t rows, MPI_Comm comm, void *stream,
                         double timeout_s) {
    halo_nccl *h = gol_xcalloc(1, sizeof *h);
    h->up = slab->up;
    h->down = slab->down;
    h->nwords = slab->nwords * rows; /* words per message: the `rows` rows of one side */
    h->stream = (cudaStream_t)stream;
    h->timeout_s = timeout_s;
    /* Every rank reaches the same decision: only a single rank can be without peers. */
    if (h->up < 0 && h->down < 0) return h;

    int nranks;
    MPI_CHECK(MPI_Comm_rank(comm, &h->rank));
    MPI_CHECK(MPI_Comm_size(comm, &nranks));
    ncclUniqueId id;
    if (h->rank == 0) NCCL_CHECK(ncclGetUniqueId(&id));
    MPI_CHECK(MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, comm));
    /* Everyone holds the id before anyone starts connecting (avoids init hangs seen elsewhere). */
    MPI_CHECK(MPI_Barrier(comm));
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    NCCL_CHECK(ncclCommInitRankConfig(&h->init, nranks, id, h->rank, &config));
    wait_ready(h, h->init, "ncclCommInitRankConfig (waiting for the other ranks)");
    split_blocking(h);
    h->have_comm = 1;
    return h;
}

/* Enqueues the whole exchange on the stream. The NVTX range is named for what it covers, the host
 * enqueueing (the exchange itself runs later, in stream order, and is timed with events by the
 * caller: ops.sampled). On the blocking communicator the first exchange with each peer also
 * connects to it here, during the backend's warm-up. */
static void nccl_post(void *impl, const uint64_t *first_d, const uint64_t *last_d, uint64_t *top_d,
                      uint64_t *bottom_d) {
    halo_nccl *h = impl;
    trace_push("halo enqueue");
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
    NCCL_CHECK(ncclGroupEnd());
    trace_pop();
}

/* Stream order completes the exchange: nothing to wait for on the host. */
static void nccl_wait(void *impl) { (void)impl; }

/* The host only enqueues; the caller samples the exchange with events (ops.sampled). */
static double nccl_seconds(const void *impl) {
    (void)impl;
    return 0.0;
}

/* Both communicators: an asynchronous error on either (a dead peer, a network failure) ends the
 * run with NCCL's message. */
static void nccl_poll(void *impl) {
    halo_nccl *h = impl;
    if (!h->have_comm) return;
    ncclComm_t comms[2] = {h->comm, h->init};
    for (int i = 0; i < 2; i++) {
        ncclResult_t state = ncclSuccess;
        NCCL_CHECK(ncclCommGetAsyncError(comms[i], &state));
        if (state != ncclSuccess && state != ncclInProgress)
            gol_die_nccl(__FILE__, __LINE__, "ncclCommGetAsyncError (halo exchange)", state);
    }
}

/* The watchdog's way out: NCCL's kernels stop waiting on the silent peer. The results are not
 * checked: MPI_Abort follows whatever they are. */
static void nccl_abort(void *impl) {
    halo_nccl *h = impl;
    if (!h->have_comm) return;
    h->have_comm = 0;
    (void)ncclCommAbort(h->comm);
    (void)ncclCommAbort(h->init);
}

static void nccl_destroy(void *impl) {
    halo_nccl *h = impl;
    if (!h) return;
    if (h->have_comm) {
        /* Finalize flushes outstanding operations: at once on the blocking communicator, polled
         * on the nonblocking one. */
        NCCL_CHECK(ncclCommFinalize(h->comm));
        NCCL_CHECK(ncclCommDestroy(h->comm));
        ncclResult_t rc = ncclCommFinalize(h->init);
        if (rc == ncclInProgress)
            wait_ready(h, h->init, "ncclCommFinalize");
        else
            NCCL_CHECK(rc);
        NCCL_CHECK(ncclCommDestroy(h->init));
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
    .abort = nccl_abort,
};
