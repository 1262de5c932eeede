/* The helper thread that tells the neighbours this rank is alive (halo/heartbeat.h). */
#include "halo/heartbeat.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/check.h"
#include "core/phase.h"
#include "core/poll.h"

/* A beat, and the last message a rank sends before it stops beating: a neighbour takes beats
 * until that one (MPI keeps the order of one sender's messages on one communicator). */
enum { TAG_BEAT = 21, TAG_LAST = 22, TAG_LOST = 23, TAG_HEARD = 24 };
enum { HOST_LEN = 64 };
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

    /* the guard (heartbeat_start_guard) only: every rank's host, and the notices of a lost
     * peer, on a communicator of their own that any rank may send to */
    bool guard;
    int users; /* halo modes that share it (heartbeat_start); under the main thread */
    int self, nranks;
    char (*hosts)[HOST_LEN];
    MPI_Comm lost_comm;
    MPI_Request lost_recv;
    int lost_in[2]; /* the lost rank, and who found it */
    int lost_out[2];
};

/* The guard of this process, shared with the halo modes that ask for a heartbeat. */
static gol_heartbeat *guard;

/* The helper's tick: a pace, not a poll (core/poll.h), since each tick does the helper's work
 * (beats, judging, notices) whatever came. */
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
        if (p->done || quiet <= hb->timeout_s + SILENCE_MARGIN_S) continue;
        char phase[64];
        gol_phase_describe(phase, sizeof phase);
        gol_abort_peer(p->rank, "%s: no sign of life from rank %d (host %s) for %.1f s (--timeout "
                       "%g): stopped answering; aborting every rank",
                       phase, p->rank, heartbeat_host(hb, p->rank), quiet, hb->timeout_s);
    }
}

/* ---- the guard's notices: a peer found lost ends every rank within a tick ---------------- */

static void post_lost_recv(gol_heartbeat *hb) {
    MPI_CHECK(MPI_Irecv(hb->lost_in, 2, MPI_INT, MPI_ANY_SOURCE, TAG_LOST, hb->lost_comm,
                        &hb->lost_recv));
}

/* gol_on_peer_lost's hook, on whichever thread takes the fatal path: one notice to each rank but
 * this one and the lost one. The sends are never waited for: the process is ending. */
static int tell_lost(void *arg, int lost) {
    gol_heartbeat *hb = arg;
    hb->lost_out[0] = lost;
    hb->lost_out[1] = hb->self;
    int told = 0;
    for (int r = 0; r < hb->nranks; r++) {
        if (r == hb->self || r == lost) continue;
        MPI_Request req;
        if (MPI_Isend(hb->lost_out, 2, MPI_INT, r, TAG_LOST, hb->lost_comm, &req) != MPI_SUCCESS)
            continue;
        MPI_Request_free(&req);
        told++;
    }
    return told;
}

/* The told ranks' words still owed; told drops as they come. */
typedef struct word_wait {
    gol_heartbeat *hb;
    int told;
} word_wait;

/* One ask of heard_back: takes every word that came; 1 once none is owed (or MPI failed: the
 * process is ending all the same). Another rank that found the same peer lost and told this one
 * counts too: it wrote its line before it told, and waits for its own word back, not for this
 * rank's. Its notice is taken by the open receive, tested here only on the helper's own thread,
 * which alone tests it otherwise. */
static int words_in(void *arg, double since) {
    (void)since;
    word_wait *w = arg;
    gol_heartbeat *hb = w->hb;
    while (w->told > 0) {
        int flag = 0, word[2];
        MPI_Status st;
        if (MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, hb->lost_comm, &flag, &st) != MPI_SUCCESS)
            return 1;
        if (flag) {
            if (MPI_Recv(word, 2, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, hb->lost_comm,
                         MPI_STATUS_IGNORE) != MPI_SUCCESS)
                return 1;
            w->told--;
            continue;
        }
        int noticed = 0;
        if (!pthread_equal(pthread_self(), hb->thread) || hb->lost_recv == MPI_REQUEST_NULL ||
            MPI_Test(&hb->lost_recv, &noticed, MPI_STATUS_IGNORE) != MPI_SUCCESS || !noticed)
            return 0;
        w->told--;
    }
    return 1;
}

/* The other half of the hook: each told rank's word that its line is written, for at most
 * within_s. */
static void heard_back(void *arg, int told, double within_s) {
    word_wait w = {arg, told};
    gol_poll_every(words_in, &w, within_s, TICK_S / 10);
}

/* After a told rank's line: its word back to the rank that told it. */
static void say_heard(void *arg) {
    gol_heartbeat *hb = arg;
    MPI_Request req;
    static int word = 1;
    if (MPI_Isend(&word, 1, MPI_INT, hb->lost_in[1], TAG_HEARD, hb->lost_comm, &req) ==
        MPI_SUCCESS)
        MPI_Wait(&req, MPI_STATUS_IGNORE); /* an int: eager */
}

/* A notice came: this rank ends too, naming the lost rank and who found it. */
static void take_notice(gol_heartbeat *hb) {
    if (!hb->guard || gol_telling()) return; /* a finder prints its own line, not a told one */
    int flag = 0;
    MPI_CHECK(MPI_Test(&hb->lost_recv, &flag, MPI_STATUS_IGNORE));
    if (!flag) return;
    int lost = hb->lost_in[0], by = hb->lost_in[1];
    char phase[64];
    gol_phase_describe(phase, sizeof phase);
    if (lost < 0) /* the finder's own line names what it lost */
        gol_abort_then(say_heard, hb, "%s: rank %d (host %s) found a peer stopped answering: "
                       "aborting every rank", phase, by, heartbeat_host(hb, by));
    gol_abort_then(say_heard, hb, "%s: rank %d (host %s) stopped answering, as rank %d (host %s) "
                   "found: aborting every rank", phase, lost, heartbeat_host(hb, lost), by,
                   heartbeat_host(hb, by));
}

static void *beat_main(void *arg) {
    gol_heartbeat *hb = arg;
    double last_beat = 0.0, since = MPI_Wtime(), last_tick = since;
    while (!stopping(hb)) {
        take_beats(hb);
        take_notice(hb);
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

/* The helper's stop in core/ending.h's registry, for the agreed end (gol_end_agreed): the guard
 * stops whatever halo still shares it. */
static void stop_hook(void *arg) {
    gol_heartbeat *hb = arg;
    hb->users = 0;
    heartbeat_stop(hb);
}

/* Every rank's thread level agrees (MPI_THREAD_MULTIPLE or no thread). Collective. */
static bool all_multiple(MPI_Comm comm) {
    int provided = MPI_THREAD_SINGLE, multiple, all = 0;
    MPI_CHECK(MPI_Query_thread(&provided));
    multiple = provided >= MPI_THREAD_MULTIPLE;
    MPI_CHECK(MPI_Allreduce(&multiple, &all, 1, MPI_INT, MPI_MIN, comm));
    return all != 0;
}

/* The state and the thread; the guard's parts are added before the thread starts. Collective
 * over comm (it duplicates comm, and the guard gathers every rank's host name). */
static gol_heartbeat *create(MPI_Comm comm, int up, int down, double timeout_s, bool as_guard) {
    gol_heartbeat *hb = gol_xcalloc(1, sizeof *hb);
    MPI_CHECK(MPI_Comm_dup(comm, &hb->comm));
    MPI_CHECK(MPI_Comm_rank(comm, &hb->self));
    MPI_CHECK(MPI_Comm_size(comm, &hb->nranks));
    hb->first = hb->self == 0;
    hb->last = hb->self == hb->nranks - 1;
    /* several beats per timeout, so one late beat is no silence; at most one a second */
    hb->timeout_s = timeout_s;
    hb->period_s = timeout_s / 8 < 1.0 ? timeout_s / 8 : 1.0;
    add_peer(hb, up, hb->self, true);
    add_peer(hb, down, hb->self, false);
    if (as_guard) {
        hb->guard = true;
        hb->hosts = gol_xcalloc((size_t)hb->nranks, sizeof *hb->hosts);
        char host[HOST_LEN] = "?";
        gethostname(host, sizeof host - 1);
        host[HOST_LEN - 1] = '\0';
        MPI_CHECK(MPI_Allgather(host, HOST_LEN, MPI_CHAR, hb->hosts, HOST_LEN, MPI_CHAR, comm));
        MPI_CHECK(MPI_Comm_dup(comm, &hb->lost_comm));
        post_lost_recv(hb);
        gol_on_peer_lost(tell_lost, heard_back, hb);
    }
    SYS_CHECK(pthread_mutex_init(&hb->mu, NULL) == 0, "pthread_mutex_init");
    int rc = pthread_create(&hb->thread, NULL, beat_main, hb);
    errno = rc;
    SYS_CHECK(rc == 0, "pthread_create(heartbeat)");
    gol_helper_add(stop_hook, hb); /* the agreed end stops it, if its owner did not */
    return hb;
}

gol_heartbeat *heartbeat_start_guard(MPI_Comm comm, double timeout_s) {
    if (!(timeout_s > 0) || !all_multiple(comm)) return NULL;
    int self, nranks;
    MPI_CHECK(MPI_Comm_rank(comm, &self));
    MPI_CHECK(MPI_Comm_size(comm, &nranks));
    /* a ring: every rank is watched by two others, whatever the boundary */
    guard = create(comm, (self + nranks - 1) % nranks, (self + 1) % nranks, timeout_s, true);
    return guard;
}

/* The guard beats to `rank` (or rank is no neighbour: < 0). */
static bool guard_covers(int rank) {
    if (rank < 0) return true;
    for (int i = 0; i < guard->npeers; i++)
        if (guard->peer[i].rank == rank) return true;
    return rank == guard->self;
}

gol_heartbeat *heartbeat_start(MPI_Comm comm, int up, int down, double timeout_s) {
    /* the guard's ring holds every halo's neighbours, on every rank alike: no second thread */
    if (guard && guard->timeout_s == timeout_s && guard_covers(up) && guard_covers(down)) {
        guard->users++;
        return guard;
    }
    if (!all_multiple(comm)) return NULL;
    return create(comm, up, down, timeout_s, false);
}

gol_heartbeat *heartbeat_guard(void) { return guard; }

const char *heartbeat_host(const gol_heartbeat *hb, int rank) {
    if (!hb || !hb->hosts || rank < 0 || rank >= hb->nranks) return "?";
    return hb->hosts[rank];
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

/* Every rank reaches the guard's stop before any stops beating: a non-blocking barrier, polled
 * while the helper still judges silence and takes notices, so a rank lost just before the end is
 * named by its neighbours, and every other rank hears of it, instead of leaving ranks that
 * already stopped their helper in MPI_Finalize with no one to tell them. */
static int met(void *req, double since) {
    (void)since;
    int done = 0;
    MPI_CHECK(MPI_Test(req, &done, MPI_STATUS_IGNORE));
    return done;
}

/* Collective over the guard's communicator: a barrier, polled. */
static void meet_all(gol_heartbeat *hb) {
    MPI_Request req;
    MPI_CHECK(MPI_Ibarrier(hb->lost_comm, &req));
    gol_poll_every(met, &req, 0, TICK_S / 20);
}

/* No notice can come any more once every neighbour said its last (each stops only after all of
 * its own neighbours did, so no rank is left to find one lost): the open receive goes.
 * Collective over the guard's communicator (it frees it). */
static void stop_guard(gol_heartbeat *hb) {
    gol_on_peer_lost(NULL, NULL, NULL);
    MPI_CHECK(MPI_Cancel(&hb->lost_recv));
    MPI_CHECK(MPI_Wait(&hb->lost_recv, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Comm_free(&hb->lost_comm));
    free(hb->hosts);
    guard = NULL;
}

/* One ask of drain: takes the beats that came; 1 once every neighbour said its last. A neighbour
 * silent for the timeout since the drain began aborts every rank. */
static int all_said_last(void *arg, double since) {
    gol_heartbeat *hb = arg;
    take_beats(hb);
    take_notice(hb);
    bool all_done = true;
    double now = MPI_Wtime();
    for (int i = 0; i < hb->npeers; i++) {
        hb_peer *p = &hb->peer[i];
        all_done = all_done && p->done;
        double quiet = now - (p->heard > since ? p->heard : since);
        if (!p->done && hb->timeout_s > 0 && quiet > hb->timeout_s)
            gol_abort_peer(p->rank, "%s: rank %d (host %s) sent no sign of life for %.1f s "
                           "(--timeout %g) while the run ended: stopped answering; aborting "
                           "every rank", gol_phase_name(gol_phase_now()), p->rank,
                           heartbeat_host(hb, p->rank), quiet, hb->timeout_s);
    }
    return all_done;
}

/* Takes beats until every neighbour's last message. */
static void drain(gol_heartbeat *hb) { gol_poll_every(all_said_last, hb, 0, TICK_S / 10); }

void heartbeat_stop(gol_heartbeat *hb) {
    if (!hb) return;
    if (hb == guard && hb->users > 0) { /* a halo mode's share: the guard goes on */
        hb->users--;
        return;
    }
    gol_helper_remove(stop_hook, hb);
    if (hb->guard) meet_all(hb);
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
    if (hb->guard) stop_guard(hb);
    pthread_mutex_destroy(&hb->mu);
    free(hb);
}
