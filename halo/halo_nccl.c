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
 * calling thread. With one rank and a dead boundary there is no peer and no communicator.
 *
 * No NCCL call that can block on a peer or on the GPU keeps a rank from MPI_Abort. The first
 * exchange connects to each peer inside ncclGroupEnd, which on the blocking communicator waits
 * for the peer's own first exchange: it runs on a helper thread, watched against --timeout
 * (connect_first), so a peer stuck before its first exchange makes its neighbours abort every
 * rank, naming it. ncclCommAbort frees device memory and synchronises streams, and can block
 * there (NVIDIA/nccl issues 549, 1317): it too runs on a helper thread, waited for at most
 * HALO_ABORT_GRACE_S (abort_bounded). */
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/check.h"
#include "core/trace.h"
#include "halo/halo.h"

typedef struct halo_nccl {
    ncclComm_t init; /* nonblocking: set up with polling; kept until destroy */
    ncclComm_t comm; /* blocking, split off init: the exchanges */
    int have_comm;   /* no peer at all (one rank, dead boundary): nothing to exchange */
    int connected;   /* the first exchange, which connects to the peers, is done */
    int device;      /* the CUDA device, for the helper threads (the current device is per thread) */
    int rank, up, down;
    int64_t nwords;
    cudaStream_t stream;
    double timeout_s; /* --timeout, for the setup; 0: forever */
} halo_nccl;

/* NCCL calls on a detached helper thread, watched by the calling thread: run(job) sets rc. A job
 * is never freed once started when its thread may outlive the watch (the process is exiting). */
typedef struct nccl_job {
    void (*run)(struct nccl_job *job);
    int device;
    ncclComm_t comms[2]; /* abort: the communicators */
    int ncomms;
    const halo_nccl *h; /* connect: the exchange and its rows */
    const uint64_t *first, *last;
    uint64_t *top, *bottom;
    ncclResult_t rc;
    int done; /* set, atomically, once run returned */
} nccl_job;

static void *job_thread(void *arg) {
    nccl_job *job = arg;
    (void)cudaSetDevice(job->device); /* no check: a thread may not call MPI_Abort; NCCL reports */
    job->run(job);
    __atomic_store_n(&job->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* 0 when no thread could be made. */
static int job_start(nccl_job *job) {
    pthread_t t;
    if (pthread_create(&t, NULL, job_thread, job)) return 0;
    pthread_detach(t);
    return 1;
}

static int job_done(const nccl_job *job) { return __atomic_load_n(&job->done, __ATOMIC_ACQUIRE); }

static void nap(void) {
    struct timespec ts = {0, 20000};
    nanosleep(&ts, NULL);
}

static void run_abort(nccl_job *job) {
    for (int i = 0; i < job->ncomms; i++) (void)ncclCommAbort(job->comms[i]);
}

/* ncclCommAbort of the communicators, waited for at most HALO_ABORT_GRACE_S: only MPI_Abort
 * follows, which must be reached whatever NCCL does. The results change nothing. */
static void abort_bounded(int device, const ncclComm_t *comms, int ncomms) {
    nccl_job *job = gol_xcalloc(1, sizeof *job); /* left to the thread: see nccl_job */
    job->run = run_abort;
    job->device = device;
    memcpy(job->comms, comms, (size_t)ncomms * sizeof *comms);
    job->ncomms = ncomms;
    if (!job_start(job)) return;
    double t0 = MPI_Wtime();
    while (!job_done(job) && MPI_Wtime() - t0 < HALO_ABORT_GRACE_S) nap();
}

/* Past --timeout seconds of setup, some rank never took part: abort every rank. */
static void setup_deadline(const halo_nccl *h, ncclComm_t comm, double t0, const char *what) {
    double waited = MPI_Wtime() - t0;
    if (h->timeout_s <= 0 || waited <= h->timeout_s) {
        nap();
        return;
    }
    abort_bounded(h->device, &comm, 1);
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
    CUDA_CHECK(cudaGetDevice(&h->device));
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

/* The exchange's NCCL calls, enqueued on the stream; the first failure's code (the group is
 * ended whatever happened inside it). NCCL matches the operations between two ranks in the order
 * they are posted. With one or two ranks on a torus, up == down, so both receives and both sends
 * go to the same peer: posting receives as (top, bottom) and sends as (last, first) makes the
 * peer's last row land in our top halo and its first row in our bottom halo, for self-exchange as
 * for a real neighbour. */
static ncclResult_t exchange_calls(const halo_nccl *h, const uint64_t *first_d,
                                   const uint64_t *last_d, uint64_t *top_d, uint64_t *bottom_d) {
    size_t count = (size_t)h->nwords;
    cudaStream_t s = h->stream;
    ncclResult_t rc = ncclGroupStart();
    if (rc != ncclSuccess) return rc;
    if (rc == ncclSuccess && h->up >= 0) rc = ncclRecv(top_d, count, ncclUint64, h->up, h->comm, s);
    if (rc == ncclSuccess && h->down >= 0)
        rc = ncclRecv(bottom_d, count, ncclUint64, h->down, h->comm, s);
    if (rc == ncclSuccess && h->down >= 0)
        rc = ncclSend(last_d, count, ncclUint64, h->down, h->comm, s);
    if (rc == ncclSuccess && h->up >= 0)
        rc = ncclSend(first_d, count, ncclUint64, h->up, h->comm, s);
    ncclResult_t end = ncclGroupEnd();
    return rc != ncclSuccess ? rc : end;
}

static void run_connect(nccl_job *job) {
    job->rc = exchange_calls(job->h, job->first, job->last, job->top, job->bottom);
}

/* The first exchange, which connects to each peer (the backend's warm-up, outside any capture):
 * on a helper thread, while this one polls NCCL's health and the clock. A peer that never posts
 * its first exchange aborts every rank after --timeout seconds, with a message naming it. */
static void connect_first(halo_nccl *h, const uint64_t *first_d, const uint64_t *last_d,
                          uint64_t *top_d, uint64_t *bottom_d) {
    static const char what[] = "the first halo exchange (NCCL connecting to the neighbours)";
    nccl_job *job = gol_xcalloc(1, sizeof *job); /* left to the thread if it overruns */
    *job = (nccl_job){.run = run_connect, .device = h->device, .h = h, .first = first_d,
                      .last = last_d, .top = top_d, .bottom = bottom_d};
    if (!job_start(job)) gol_die(__FILE__, __LINE__, "pthread_create", "system", what);
    for (double t0 = MPI_Wtime(); !job_done(job);) {
        ncclResult_t state = ncclSuccess;
        NCCL_CHECK(ncclCommGetAsyncError(h->comm, &state));
        if (state != ncclSuccess && state != ncclInProgress)
            gol_die_nccl(__FILE__, __LINE__, what, state);
        double waited = MPI_Wtime() - t0;
        if (h->timeout_s > 0 && waited > h->timeout_s) {
            char who[96];
            halo_name_neighbours(who, sizeof who, h->up, h->down);
            ncclComm_t comms[2] = {h->comm, h->init};
            abort_bounded(h->device, comms, 2);
            gol_abort_msg("%s did not finish in %.0f s (--timeout): neighbour %s never posted "
                          "its first exchange; aborting every rank",
                          what, waited, who);
        }
        nap();
    }
    if (job->rc != ncclSuccess) gol_die_nccl(__FILE__, __LINE__, what, job->rc);
    free(job);
    h->connected = 1;
}

/* Enqueues the whole exchange on the stream. The NVTX range is named for what it covers, the host
 * enqueueing (the exchange itself runs later, in stream order, and is timed with events by the
 * caller: ops.sampled). */
static void nccl_post(void *impl, const uint64_t *first_d, const uint64_t *last_d, uint64_t *top_d,
                      uint64_t *bottom_d) {
    halo_nccl *h = impl;
    trace_push("halo enqueue");
    if (!h->have_comm) {
        trace_pop();
        return;
    }
    if (!h->connected)
        connect_first(h, first_d, last_d, top_d, bottom_d);
    else
        NCCL_CHECK(exchange_calls(h, first_d, last_d, top_d, bottom_d));
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

/* The watchdog's way out: NCCL's kernels stop waiting on the silent peer, within
 * HALO_ABORT_GRACE_S. The results are not checked: MPI_Abort follows whatever they are. */
static void nccl_abort(void *impl) {
    halo_nccl *h = impl;
    if (!h->have_comm) return;
    h->have_comm = 0;
    ncclComm_t comms[2] = {h->comm, h->init};
    abort_bounded(h->device, comms, 2);
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
