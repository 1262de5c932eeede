/* Halo mode "nccl" on device memory: NCCL point-to-point on the comm stream. The exchange is only
 * enqueued: it runs in stream order, so it can be captured into a CUDA graph. Needs the CUDA
 * device already chosen.
 *
 * create is collective over comm (its ranks are the NCCL ranks): rank 0 makes the unique id,
 * MPI_Bcast, MPI_Barrier, then a nonblocking ncclCommInitRankConfig that is polled, so a failure
 * on one rank aborts with NCCL's message instead of hanging, and a rank that never joins aborts
 * every rank after --timeout seconds. The exchanges then run on a blocking communicator split off
 * that one (also polled): NCCL launches every group of a nonblocking communicator from a new
 * thread, a host cost on every eager exchange, where a blocking one enqueues in the calling
 * thread. With one rank and a dead boundary there is no peer and no communicator.
 *
 * No NCCL call that can block on a peer or on the GPU keeps a rank from MPI_Abort. The first
 * exchange connects to each peer inside ncclGroupEnd, which on the blocking communicator waits
 * for the peer's own first exchange: it runs on a helper thread, watched against --timeout
 * (watched_exchange), so a peer stuck before its first exchange makes its neighbours abort every
 * rank, naming it. ncclCommAbort frees device memory and synchronises streams, and can block
 * there (NVIDIA/nccl issues 549, 1317), and it is collective over the node's ranks: it too runs
 * on a helper thread, waited for only at the agreed end, at most HALO_ABORT_GRACE_S
 * (abort_within). A captured exchange, inside which NCCL registers the buffers with the peers,
 * runs on a watched helper thread too.
 *
 * With a timeout and a peer, a heartbeat (halo/heartbeat.h) runs as in the host MPI mode: a
 * stopped neighbour is judged by silence wherever this rank waits (the stop vote, its writer),
 * and the backend's watchdog asks it (ops.heard, ops.least_posted) whether a stalled stream waits
 * on a neighbour that is merely slow. An agreed end while the communicators live (io_exit_all)
 * aborts them first: they are registered with the helpers that gol_end_agreed stops. With --timeout 0 the setup waits for the peers
 * forever, but still ends on NCCL's asynchronous error and on a split that finished without its
 * communicator. */
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "core/poll.h"
#include "core/trace.h"
#include "halo/halo.h"
#include "halo/heartbeat.h"

typedef struct halo_nccl {
    ncclComm_t init; /* nonblocking: set up with polling; kept until destroy */
    ncclComm_t comm; /* blocking, split off init: the exchanges */
    int have_comm;   /* no peer at all (one rank, dead boundary): nothing to exchange */
    int connected;   /* the first exchange, which connects to the peers, is done */
    int device; /* the CUDA device, for the helper threads (the current device is per thread) */
    int rank, up, down;
    int64_t msg_words; /* words per message: the `depth` rows of one side */
    cudaStream_t stream;
    double timeout_s;  /* --timeout, for the setup; 0: forever */
    gol_heartbeat *hb; /* with a timeout and a peer: signs of life apart from the GPU's */
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

static int job_finished(void *job, double since) {
    (void)since;
    return job_done(job);
}

static void run_abort(nccl_job *job) {
    for (int i = 0; i < job->ncomms; i++)
        (void)ncclCommAbort(job->comms[i]);
}

/* ncclCommAbort of the communicators on a helper thread, waited for at most wait_s: only exiting
 * follows, which must be reached whatever NCCL does. The results change nothing. NCCL's abort is
 * collective over the node's ranks (every active rank must call it), so it can return only where
 * every rank aborts: the agreed end (exit_hook) waits for it, HALO_ABORT_GRACE_S at most. A rank
 * that aborts because a peer is missing (abort_alone) does not wait: that peer, stopped or never
 * started, will not call it, nor will the ranks told to wait for this one's MPI_Abort. The call
 * still stops NCCL's kernels on this GPU first. */
static void abort_within(int device, const ncclComm_t *comms, int ncomms, double wait_s) {
    nccl_job *job = gol_xcalloc(1, sizeof *job); /* left to the thread: see nccl_job */
    job->run = run_abort;
    job->device = device;
    memcpy(job->comms, comms, (size_t)ncomms * sizeof *comms);
    job->ncomms = ncomms;
    if (!job_start(job)) return;
    if (wait_s > 0) gol_poll_until(job_finished, job, wait_s);
}

static void abort_alone(int device, const ncclComm_t *comms, int ncomms) {
    abort_within(device, comms, ncomms, 0);
}

/* Past --timeout seconds of setup (since t0), some rank never took part: abort every rank. */
static void setup_deadline(const halo_nccl *h, ncclComm_t comm, double t0, const char *what) {
    double waited = MPI_Wtime() - t0;
    if (h->timeout_s <= 0 || waited <= h->timeout_s) return;
    abort_alone(h->device, &comm, 1);
    gol_abort_msg("NCCL setup (%s) did not finish in %.0f s (--timeout): some rank did not take "
                  "part or cannot be reached; aborting every rank",
                  what, waited);
}

/* One wait of the setup: the communicator, what it is for, and NCCL's answer so far. */
typedef struct setup_wait {
    halo_nccl *h;
    ncclComm_t comm;
    ncclComm_t *child;    /* split_blocking: where NCCL stores the child */
    const nccl_job *job; /* watched_exchange: the exchange on the helper thread */
    const char *what;
    ncclResult_t state;
} setup_wait;

static int comm_ready(void *arg, double since) {
    setup_wait *w = arg;
    NCCL_CHECK(ncclCommGetAsyncError(w->comm, &w->state));
    if (w->state != ncclInProgress) return 1;
    setup_deadline(w->h, w->comm, since, w->what);
    return 0;
}

/* NCCL answers ncclInProgress until a nonblocking communicator's background work is done; poll so a
 * failure anywhere surfaces as NCCL's own error instead of a silent hang. */
static void wait_ready(halo_nccl *h, ncclComm_t comm, const char *what) {
    setup_wait w = {.h = h, .comm = comm, .what = what, .state = ncclInProgress};
    gol_poll_until(comm_ready, &w, 0);
    if (w.state != ncclSuccess) gol_die_nccl(__FILE__, __LINE__, what, w.state);
}

/* The parent's background work is done: the child is stored at once, or never (then even
 * --timeout 0, which waits forever for the peers, must end: nothing is left to wait for). */
static int child_stored(void *arg, double since) {
    setup_wait *w = arg;
    if ((w->h->comm = __atomic_load_n(w->child, __ATOMIC_ACQUIRE))) return 1;
    ncclResult_t state = ncclSuccess;
    NCCL_CHECK(ncclCommGetAsyncError(w->comm, &state));
    if (state != ncclSuccess && state != ncclInProgress)
        gol_die_nccl(__FILE__, __LINE__, w->what, state);
    if (state == ncclSuccess && MPI_Wtime() - since > HALO_ABORT_GRACE_S)
        gol_die(__FILE__, __LINE__, w->what, "NCCL",
                "the split finished without making the communicator");
    setup_deadline(w->h, w->comm, since, w->what);
    return 0;
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
    setup_wait w = {.h = h, .comm = h->init, .child = &child, .what = what};
    gol_poll_until(child_stored, &w, 0);
    wait_ready(h, h->comm, what);
}

/* Both communicators aborted, waited for at most wait_s (abort_within). */
static void tear_down(halo_nccl *h, double wait_s) {
    if (!h->have_comm) return;
    h->have_comm = 0;
    ncclComm_t comms[2] = {h->comm, h->init};
    abort_within(h->device, comms, 2, wait_s);
}

/* The agreed end: every rank aborts, so the abort can finish, and is waited for. */
static void exit_hook(void *impl) { tear_down(impl, HALO_ABORT_GRACE_S); }

static void *nccl_create(const gol_slab *slab, int64_t depth, MPI_Comm comm, void *stream,
                         double timeout_s) {
    halo_nccl *h = gol_xcalloc(1, sizeof *h);
    h->up = slab->up;
    h->down = slab->down;
    h->msg_words = slab->nwords * depth;
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
    /* an agreed end (io_exit_all) must not leave the communicators alive with work queued on
     * them: torn down first (registered before the heartbeat, so run after it: the last
     * registered runs first) */
    gol_helper_add(exit_hook, h);
    /* the GPU's marks cannot tell a neighbour whose host is slow (rank 0's disk) from one that
     * stopped, and a rank may wait on the host (the stop vote, its writer) next to one: the
     * heartbeat judges silence, as in the host MPI mode */
    if (timeout_s > 0) h->hb = heartbeat_start(comm, h->up, h->down, timeout_s);
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
    size_t count = (size_t)h->msg_words;
    cudaStream_t s = h->stream;
    ncclResult_t rc = ncclGroupStart();
    if (rc != ncclSuccess) return rc;
    if (h->up >= 0) rc = ncclRecv(top_d, count, ncclUint64, h->up, h->comm, s);
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

/* One look of watched_exchange: 1 once the helper thread's exchange returned; NCCL's health, and
 * past --timeout an abort of every rank naming the neighbours. */
static int connected(void *arg, double since) {
    setup_wait *w = arg;
    const nccl_job *job = w->job;
    if (job_done(job)) return 1;
    halo_nccl *h = w->h;
    ncclResult_t state = ncclSuccess;
    NCCL_CHECK(ncclCommGetAsyncError(h->comm, &state));
    if (state != ncclSuccess && state != ncclInProgress)
        gol_die_nccl(__FILE__, __LINE__, w->what, state);
    double waited = MPI_Wtime() - since;
    if (h->timeout_s > 0 && waited > h->timeout_s) {
        char who[96];
        halo_name_neighbours(who, sizeof who, h->up, h->down);
        tear_down(h, 0); /* a peer is missing: not waited for (abort_within) */
        /* the one neighbour, where only one can owe it, is the lost rank the others hear */
        int lost = h->up >= 0 && h->down >= 0 && h->up != h->down ? -1
                   : h->up >= 0                                  ? h->up
                                                                 : h->down;
        gol_abort_peer(lost, "%s did not finish in %.0f s (--timeout): neighbour %s never "
                       "posted its side of it; aborting every rank",
                       w->what, waited, who);
    }
    return 0;
}

/* An exchange whose ncclGroupEnd may wait on the peers with no deadline: the first (the backend's
 * warm-up, outside any capture), which connects to each peer, and a captured one, inside which
 * NCCL registers the rows' buffers with the peers. On a helper thread, while this one polls
 * NCCL's health and the clock (connected); a peer that never posts its side aborts every rank
 * after --timeout seconds, with a message naming it. A captured exchange enqueued from the helper
 * thread is still captured: capture belongs to the stream, and the thread-local capture mode only
 * forbids unsafe calls on the capturing thread. */
static void watched_exchange(halo_nccl *h, const char *what, const uint64_t *first_d,
                             const uint64_t *last_d, uint64_t *top_d, uint64_t *bottom_d) {
    nccl_job *job = gol_xcalloc(1, sizeof *job); /* left to the thread if it overruns */
    *job = (nccl_job){.run = run_connect,
                      .device = h->device,
                      .h = h,
                      .first = first_d,
                      .last = last_d,
                      .top = top_d,
                      .bottom = bottom_d};
    if (!job_start(job)) gol_die(__FILE__, __LINE__, "pthread_create", "system", what);
    setup_wait w = {.h = h, .job = job, .what = what};
    gol_poll_until(connected, &w, 0);
    if (job->rc != ncclSuccess) gol_die_nccl(__FILE__, __LINE__, what, job->rc);
    free(job);
}

/* 1 while the exchange's stream is being captured into a graph (cuda/cuda_graph.c's cuda_graphs_capture). */
static int capturing(const halo_nccl *h) {
    enum cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    CUDA_CHECK(cudaStreamIsCapturing(h->stream, &status));
    return status == cudaStreamCaptureStatusActive;
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
    if (!h->connected) {
        watched_exchange(h, "the first halo exchange (NCCL connecting to the neighbours)", first_d,
                         last_d, top_d, bottom_d);
        h->connected = 1;
    } else if (capturing(h)) {
        watched_exchange(h, "the capture of a halo exchange (NCCL registering its buffers)",
                         first_d, last_d, top_d, bottom_d);
    } else {
        NCCL_CHECK(exchange_calls(h, first_d, last_d, top_d, bottom_d));
    }
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

/* The watchdog's way out: a peer is missing, so the abort is not waited for (abort_within);
 * MPI_Abort follows at once. */
static void nccl_abort(void *impl) { tear_down(impl, 0); }

static double nccl_heard(void *impl, int peer) {
    return heartbeat_heard(((halo_nccl *)impl)->hb, peer);
}

static int64_t nccl_least_posted(void *impl) {
    return heartbeat_least_posted(((halo_nccl *)impl)->hb);
}

static void nccl_posted(void *impl, int64_t posts) {
    heartbeat_set_posted(((halo_nccl *)impl)->hb, posts);
}

static void nccl_destroy(void *impl) {
    halo_nccl *h = impl;
    if (!h) return;
    if (h->have_comm) {
        gol_helper_remove(exit_hook, h);
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
    heartbeat_stop(h->hb); /* after the teardown, which it watches for silence */
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
    .heard = nccl_heard,
    .least_posted = nccl_least_posted,
    .posted = nccl_posted,
};
