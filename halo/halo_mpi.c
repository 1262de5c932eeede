/* Halo mode "mpi" on host memory: non-blocking MPI. post posts the receives and sends, the caller
 * computes the interior, wait waits. The CPU backend's mode; the GPU's MPI mode builds on it.
 *
 * With a timeout, wait polls instead of blocking in MPI_Waitall: a neighbour that stops answering
 * (stopped, hung, its node gone quiet) would otherwise hold this rank, and through it every rank,
 * forever. It judges silence, not slowness: a neighbour counts as stopped only once it was
 * expected in this exchange and neither its rows nor its heartbeat (halo/heartbeat.h) came for
 * --timeout, so a neighbour busy in its own I/O is waited for. Past that it names the silent
 * neighbours and aborts every rank. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/check.h"
#include "core/poll.h"
#include "core/trace.h"
#include "halo/halo.h"
#include "halo/heartbeat.h"

/* Tags name the direction a row travels, so that with two ranks on a torus (up == down) the row
 * sent up and the row sent down still land in the right halos. */
enum { TAG_TO_UP = 11, TAG_TO_DOWN = 12 };

/* A gap this long between two polls means this rank itself was not running (stopped, then
 * continued, as mpiexec does before it kills): that time is no neighbour's silence. */
#define POLL_GAP_S 1.0

typedef struct halo_mpi {
    MPI_Comm comm;
    int up, down;
    MPI_Datatype row; /* one row of words: a message of k rows is k of them */
    int count;        /* rows per message, the halo depth (<= GOL_HALO_DEPTH_MAX) */
    MPI_Request req[4];
    int peer[4];     /* the rank (in comm) each request talks to */
    bool is_recv[4]; /* a receive (the peer's row did not arrive) or a send (not taken) */
    int nreq;
    double timeout_s; /* 0: MPI_Waitall, forever */
    gol_heartbeat *hb; /* with a timeout: the neighbours' signs of life apart from the rows */
    double seconds;
    char up_host[64], down_host[64]; /* the neighbours' host names, for the message on silence */
} halo_mpi;

/* Each rank learns its neighbours' host names once, so that the rank that finds one silent can
 * name its host too: on a cluster, that is the node lost or cut off. */
static void learn_peer_hosts(halo_mpi *h) {
    char mine[64] = "?";
    gethostname(mine, sizeof mine - 1);
    int up = h->up >= 0 ? h->up : MPI_PROC_NULL, down = h->down >= 0 ? h->down : MPI_PROC_NULL;
    strcpy(h->up_host, "?");
    strcpy(h->down_host, "?");
    MPI_CHECK(MPI_Sendrecv(mine, sizeof mine, MPI_CHAR, up, 13, h->down_host, sizeof h->down_host,
                           MPI_CHAR, down, 13, h->comm, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Sendrecv(mine, sizeof mine, MPI_CHAR, down, 14, h->up_host, sizeof h->up_host,
                           MPI_CHAR, up, 14, h->comm, MPI_STATUS_IGNORE));
    h->up_host[sizeof h->up_host - 1] = h->down_host[sizeof h->down_host - 1] = '\0';
}

static void *mpi_create(const gol_slab *slab, int64_t depth, MPI_Comm comm, void *stream,
                        double timeout_s) {
    (void)stream;
    halo_mpi *h = gol_xcalloc(1, sizeof *h);
    MPI_CHECK(MPI_Comm_dup(comm, &h->comm));
    h->up = slab->up;
    h->down = slab->down;
    /* a row of 2^31 words would be 2^37 cells, beyond our limits */
    MPI_CHECK(MPI_Type_contiguous((int)slab->nwords, MPI_UINT64_T, &h->row));
    MPI_CHECK(MPI_Type_commit(&h->row));
    h->count = (int)depth;
    h->timeout_s = timeout_s;
    learn_peer_hosts(h);
    if (timeout_s > 0) h->hb = heartbeat_start(comm, h->up, h->down, timeout_s);
    return h;
}

/* The exchange with one neighbour: its rows into halo_row on, ours (from own_row) to it. */
static void post_peer(halo_mpi *h, int peer, uint64_t *halo_row, int recv_tag,
                      const uint64_t *own_row, int send_tag) {
    h->peer[h->nreq] = peer;
    h->is_recv[h->nreq] = true;
    MPI_CHECK(MPI_Irecv(halo_row, h->count, h->row, peer, recv_tag, h->comm, &h->req[h->nreq++]));
    h->peer[h->nreq] = peer;
    h->is_recv[h->nreq] = false;
    MPI_CHECK(MPI_Isend(own_row, h->count, h->row, peer, send_tag, h->comm, &h->req[h->nreq++]));
}

static void mpi_post(void *impl, const uint64_t *first, const uint64_t *last, uint64_t *top,
                     uint64_t *bottom) {
    halo_mpi *h = impl;
    double t0 = MPI_Wtime();
    trace_push("halo");
    h->nreq = 0;
    if (h->up >= 0) post_peer(h, h->up, top, TAG_TO_DOWN, first, TAG_TO_UP);
    if (h->down >= 0) post_peer(h, h->down, bottom, TAG_TO_UP, last, TAG_TO_DOWN);
    h->seconds += MPI_Wtime() - t0;
}

/* The distinct peers of the open requests of one kind (receives or sends) that were quiet past the
 * timeout, into names. */
static int open_peers(const halo_mpi *h, bool is_recv, const double quiet[4], int names[4]) {
    int n = 0;
    for (int i = 0; i < h->nreq; i++) {
        if (h->req[i] == MPI_REQUEST_NULL || h->is_recv[i] != is_recv) continue;
        if (quiet[i] <= h->timeout_s) continue;
        bool seen = false;
        for (int j = 0; j < n; j++)
            seen = seen || names[j] == h->peer[i];
        if (!seen) names[n++] = h->peer[i];
    }
    return n;
}

/* Names the neighbours that stopped answering: those whose rows did not arrive ("no halo row
 * arrived from rank 2 (below)"), or else, when every row arrived, those that did not take ours
 * (a large row waits for its receiver). Returns the first of them. */
static int say_silent(const halo_mpi *h, const double quiet[4], char *buf, size_t len) {
    int names[4];
    bool rows_missing = true;
    int n = open_peers(h, true, quiet, names);
    if (n == 0) {
        rows_missing = false;
        n = open_peers(h, false, quiet, names);
    }
    size_t used = (size_t)snprintf(
        buf, len, "%s rank%s",
        rows_missing ? "no halo row arrived from" : "no halo row was taken by", n > 1 ? "s" : "");
    for (int j = 0; j < n && used < len; j++) {
        const char *where = h->up == h->down    ? "above and below"
                            : names[j] == h->up ? "above"
                                                : "below";
        const char *host = names[j] == h->up ? h->up_host : h->down_host;
        used += (size_t)snprintf(buf + used, len - used, "%s%d (host %s, %s)", j ? " and " : " ",
                                 names[j], host, where);
    }
    return n > 0 ? names[0] : -1; /* the one the other ranks are told of */
}

/* Adds dt to how long each open request's peer has been quiet, unless the peer was heard from
 * since the last look (heard: when, per request); returns the longest quiet time. */
static double note_quiet(const halo_mpi *h, double quiet[4], double heard[4], double dt) {
    double longest = 0.0;
    for (int i = 0; i < h->nreq; i++) {
        if (h->req[i] == MPI_REQUEST_NULL) continue;
        double now_heard = heartbeat_heard(h->hb, h->peer[i]);
        if (now_heard > heard[i]) {
            heard[i] = now_heard;
            quiet[i] = 0.0;
        } else {
            quiet[i] += dt;
        }
        if (quiet[i] > longest) longest = quiet[i];
    }
    return longest;
}

/* One wait: the requests still open, and how long each one's peer has been quiet. */
typedef struct open_wait {
    halo_mpi *h;
    int open;
    double last, quiet[4], heard[4]; /* last: the previous look */
} open_wait;

/* One look of wait_polling: 1 once every request is done; aborts every rank with a message once a
 * peer still owing one was quiet (no rows, no heartbeat) for the timeout. */
static int requests_done(void *arg, double since) {
    open_wait *w = arg;
    halo_mpi *h = w->h;
    (void)since;
    if (w->open == 0) return 1;
    int ndone = 0, done_idx[4];
    MPI_CHECK(MPI_Testsome(h->nreq, h->req, &ndone, done_idx, MPI_STATUSES_IGNORE));
    if (ndone == MPI_UNDEFINED) return 1; /* no request left open */
    w->open -= ndone;
    if (w->open == 0) return 1;
    double now = MPI_Wtime();
    double longest =
        note_quiet(h, w->quiet, w->heard, now - w->last < POLL_GAP_S ? now - w->last : 0.0);
    w->last = now;
    if (longest > h->timeout_s) {
        char silent[400];
        int lost = say_silent(h, w->quiet, silent, sizeof silent);
        gol_abort_peer(lost, "%s for %.1f s (--timeout %g), nor any sign of life: stopped "
                       "answering; aborting every rank",
                       silent, longest, h->timeout_s);
    }
    return 0;
}

/* MPI_Testsome until every request is done, polled (core/poll.h), or a peer still owing one was
 * quiet for the timeout. Testsome, not Testall: Testall leaves every request open until all are
 * done, and the message must say which neighbour is silent. */
static void wait_polling(halo_mpi *h) {
    open_wait w = {.h = h, .open = h->nreq, .last = MPI_Wtime()};
    for (int i = 0; i < h->nreq; i++)
        w.heard[i] = heartbeat_heard(h->hb, h->peer[i]);
    gol_poll_until(requests_done, &w, 0);
}

static void mpi_wait(void *impl) {
    halo_mpi *h = impl;
    double t0 = MPI_Wtime();
    if (h->timeout_s > 0)
        wait_polling(h);
    else
        MPI_CHECK(MPI_Waitall(h->nreq, h->req, MPI_STATUSES_IGNORE));
    h->nreq = 0;
    trace_pop();
    h->seconds += MPI_Wtime() - t0;
}

static double mpi_seconds(const void *impl) { return ((const halo_mpi *)impl)->seconds; }

static void mpi_destroy(void *impl) {
    halo_mpi *h = impl;
    if (!h) return;
    heartbeat_stop(h->hb);
    MPI_CHECK(MPI_Type_free(&h->row));
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
    .abort = NULL, /* MPI_Abort ends the host MPI exchange with the process */
};
