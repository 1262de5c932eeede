/* The helper thread that tells the neighbours this rank is alive (halo/heartbeat.h). */
#include "halo/heartbeat.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "core/check.h"

/* A beat, and the last message a rank sends before it stops beating: a neighbour takes beats
 * until that one (MPI keeps the order of one sender's messages on one communicator). */
enum { TAG_BEAT = 21, TAG_LAST = 22 };
/* How often the thread looks for beats: often enough that a beat is seen well within a period,
 * seldom enough to cost nothing next to the generations. */
#define TICK_S 0.02
/* How much longer than --timeout the helper waits before it judges a neighbour on beats alone. */
#define SILENCE_MARGIN_S 1.0
/* A gap this long between two ticks means this process was not running (halo_mpi.c's POLL_GAP_S).
 */
#define GAP_S 1.0

typedef struct hb_peer {
    int rank;
    int64_t in, out;  /* one each way: the least exchanges posted that the sender knows of */
    MPI_Request recv; /* always one open, until the neighbour's last message */
    MPI_Request send; /* the previous beat; a new one only once it went */
    double heard;     /* MPI_Wtime of the last message taken; under mu */
    int64_t least;    /* its last message's value (0 before any); under mu */
    bool done;        /* its last message came */
    bool above, below; /* it is this rank's neighbour above, below, or both (two on a torus) */
} hb_peer;

struct gol_heartbeat {
    MPI_Comm comm; /* its own: beats never meet the rows or the collectives */
    int npeers;
    hb_peer peer[2];
    double period_s, timeout_s;
    pthread_t thread;
    pthread_mutex_t mu;
    bool stop; /* under mu */
    int64_t posted; /* this rank's exchanges posted (heartbeat_set_posted); atomic */
    bool first, last; /* rank 0, rank nranks - 1: where the chains of the least posted begin */
};

static void sleep_s(double s) {
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

static void post_recv(gol_heartbeat *hb, hb_peer *p) {
    MPI_CHECK(MPI_Irecv(&p->in, 1, MPI_INT64_T, p->rank, MPI_ANY_TAG, hb->comm, &p->recv));
}

/* Takes every message that came; notes when, and what it said. */
static void take_beats(gol_heartbeat *hb) {
    for (int i = 0; i < hb->npeers; i++) {
        hb_peer *p = &hb->peer[i];
        int flag = 1;
        while (!p->done && flag) {
            MPI_Status st;
            MPI_CHECK(MPI_Test(&p->recv, &flag, &st));
            if (!flag) break;
            double now = MPI_Wtime();
            pthread_mutex_lock(&hb->mu);
            p->heard = now;
            p->least = p->in;
            pthread_mutex_unlock(&hb->mu);
            if (st.MPI_TAG == TAG_LAST)
                p->done = true;
            else
                post_recv(hb, p);
        }
    }
}

/* The least exchanges posted that this rank knows of: its own, and what its neighbours last
 * said. The counts travel along the ranks as along a chain, never around a ring: up the ranks
 * from the last one (each rank sends above the least of itself and what came from below) and down
 * from rank 0 (the least of itself and what came from above). A rank that passed on what came
 * back to it around a torus would feed every rank's old counts back to all, and the least would
 * stay at the first value all shared, whatever every rank posted since. */
static int64_t least_known(gol_heartbeat *hb) {
    int64_t least = __atomic_load_n(&hb->posted, __ATOMIC_RELAXED);
    pthread_mutex_lock(&hb->mu);
    for (int i = 0; i < hb->npeers; i++)
        if (!hb->peer[i].done && hb->peer[i].least < least) least = hb->peer[i].least;
    pthread_mutex_unlock(&hb->mu);
    return least;
}

/* What this rank tells p: its own count, and what came from the other side of the chain. */
static int64_t least_for(gol_heartbeat *hb, const hb_peer *p) {
    int64_t least = __atomic_load_n(&hb->posted, __ATOMIC_RELAXED);
    if (p->above && p->below) return least; /* the only other rank: it knows the rest */
    pthread_mutex_lock(&hb->mu);
    for (int i = 0; i < hb->npeers; i++) {
        const hb_peer *q = &hb->peer[i];
        bool onward = p->above ? q->below && !hb->last : q->above && !hb->first;
        if (q != p && onward && !q->done && q->least < least) least = q->least;
    }
    pthread_mutex_unlock(&hb->mu);
    return least;
}

/* A beat to each neighbour whose previous beat went (a stopped neighbour gets no pile). */
static void send_beats(gol_heartbeat *hb, int tag) {
    for (int i = 0; i < hb->npeers; i++) {
        hb_peer *p = &hb->peer[i];
        int went = 1;
        if (p->send != MPI_REQUEST_NULL) MPI_CHECK(MPI_Test(&p->send, &went, MPI_STATUS_IGNORE));
        if (!went) continue;
        p->out = least_for(hb, p); /* the previous send is done with the buffer */
        MPI_CHECK(MPI_Isend(&p->out, 1, MPI_INT64_T, p->rank, tag, hb->comm, &p->send));
    }
}

static bool stopping(gol_heartbeat *hb) {
    pthread_mutex_lock(&hb->mu);
    bool stop = hb->stop;
    pthread_mutex_unlock(&hb->mu);
    return stop;
}

/* A neighbour whose beats stopped for the timeout and a little more is stopped, whatever this
 * rank's other threads wait on: a rank blocked in a collective or in its writer's wait (not in a
 * halo wait, which judges first) still learns it, so a stopped rank never leaves a chain of
 * ranks that each hear their living neighbour beat while all wait on it. The margin lets the halo
 * wait, which names the silent rank as the rows' sender, speak first where it waits. */
static void judge_silence(const gol_heartbeat *hb, double now, double since) {
    for (int i = 0; i < hb->npeers; i++) {
        const hb_peer *p = &hb->peer[i];
        double quiet = now - (p->heard > since ? p->heard : since);
        if (!p->done && quiet > hb->timeout_s + SILENCE_MARGIN_S)
            gol_abort_msg("no sign of life from rank %d for %.1f s (--timeout %g): stopped "
                          "answering; aborting every rank",
                          p->rank, quiet, hb->timeout_s);
    }
}

static void *beat_main(void *arg) {
    gol_heartbeat *hb = arg;
    double last_beat = 0.0, since = MPI_Wtime(), last_tick = since;
    while (!stopping(hb)) {
        take_beats(hb);
        double now = MPI_Wtime();
        /* a long gap between ticks: this process itself was stopped (or starved), and its
         * neighbours' silence over it is no evidence; their beats are still being taken */
        if (now - last_tick > GAP_S) since = now;
        last_tick = now;
        judge_silence(hb, now, since);
        if (now - last_beat >= hb->period_s) {
            send_beats(hb, TAG_BEAT);
            last_beat = now;
        }
        sleep_s(TICK_S);
    }
    return NULL;
}

static void add_peer(gol_heartbeat *hb, int rank, int self, bool above) {
    if (rank < 0 || rank == self) return;
    for (int i = 0; i < hb->npeers; i++)
        if (hb->peer[i].rank == rank) { /* two ranks on a torus: up == down */
            hb->peer[i].above = hb->peer[i].below = true;
            return;
        }
    hb_peer *p = &hb->peer[hb->npeers++];
    p->rank = rank;
    p->above = above;
    p->below = !above;
    p->send = MPI_REQUEST_NULL;
    post_recv(hb, p);
}

static void stop_hook(void *hb) { heartbeat_stop(hb); }

gol_heartbeat *heartbeat_start(MPI_Comm comm, int up, int down, double timeout_s) {
    int provided = MPI_THREAD_SINGLE, multiple, all_multiple = 0, self;
    MPI_CHECK(MPI_Query_thread(&provided));
    multiple = provided >= MPI_THREAD_MULTIPLE;
    MPI_CHECK(MPI_Allreduce(&multiple, &all_multiple, 1, MPI_INT, MPI_MIN, comm));
    if (!all_multiple) return NULL;
    gol_heartbeat *hb = gol_xcalloc(1, sizeof *hb);
    MPI_CHECK(MPI_Comm_dup(comm, &hb->comm));
    int nranks;
    MPI_CHECK(MPI_Comm_rank(comm, &self));
    MPI_CHECK(MPI_Comm_size(comm, &nranks));
    hb->first = self == 0;
    hb->last = self == nranks - 1;
    /* several beats per timeout, so one late beat is no silence; at most one a second */
    hb->timeout_s = timeout_s;
    hb->period_s = timeout_s / 8 < 1.0 ? timeout_s / 8 : 1.0;
    add_peer(hb, up, self, true);
    add_peer(hb, down, self, false);
    SYS_CHECK(pthread_mutex_init(&hb->mu, NULL) == 0, "pthread_mutex_init");
    int rc = pthread_create(&hb->thread, NULL, beat_main, hb);
    errno = rc;
    SYS_CHECK(rc == 0, "pthread_create(heartbeat)");
    gol_at_finalize(stop_hook, hb); /* a run that ends without unwinding stops it first */
    return hb;
}

double heartbeat_heard(gol_heartbeat *hb, int peer) {
    double heard = 0.0;
    if (!hb) return heard;
    pthread_mutex_lock(&hb->mu);
    for (int i = 0; i < hb->npeers; i++)
        if (hb->peer[i].rank == peer) heard = hb->peer[i].heard;
    pthread_mutex_unlock(&hb->mu);
    return heard;
}

void heartbeat_set_posted(gol_heartbeat *hb, int64_t posted) {
    if (hb) __atomic_store_n(&hb->posted, posted, __ATOMIC_RELAXED);
}

int64_t heartbeat_least_posted(gol_heartbeat *hb) { return hb ? least_known(hb) : -1; }

/* Takes beats until every neighbour's last message; a neighbour silent for the timeout aborts. */
static void drain(gol_heartbeat *hb) {
    double since = MPI_Wtime();
    for (;;) {
        take_beats(hb);
        bool all_done = true;
        double now = MPI_Wtime();
        for (int i = 0; i < hb->npeers; i++) {
            hb_peer *p = &hb->peer[i];
            all_done = all_done && p->done;
            double quiet = now - (p->heard > since ? p->heard : since);
            if (!p->done && hb->timeout_s > 0 && quiet > hb->timeout_s)
                gol_abort_msg("rank %d sent no sign of life for %.1f s (--timeout %g) while "
                              "the run ended: stopped answering; aborting every rank",
                              p->rank, quiet, hb->timeout_s);
        }
        if (all_done) return;
        sleep_s(TICK_S / 10);
    }
}

void heartbeat_stop(gol_heartbeat *hb) {
    if (!hb) return;
    gol_forget_at_finalize(stop_hook, hb);
    pthread_mutex_lock(&hb->mu);
    hb->stop = true;
    pthread_mutex_unlock(&hb->mu);
    SYS_CHECK(pthread_join(hb->thread, NULL) == 0, "pthread_join(heartbeat)");
    for (int i = 0; i < hb->npeers; i++)
        if (hb->peer[i].send != MPI_REQUEST_NULL)
            MPI_CHECK(MPI_Wait(&hb->peer[i].send, MPI_STATUS_IGNORE)); /* one int64: eager */
    send_beats(hb, TAG_LAST);
    drain(hb);
    for (int i = 0; i < hb->npeers; i++)
        MPI_CHECK(MPI_Wait(&hb->peer[i].send, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Comm_free(&hb->comm));
    pthread_mutex_destroy(&hb->mu);
    free(hb);
}
