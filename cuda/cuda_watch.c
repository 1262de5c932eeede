/* The CUDA backend's watchdog (cuda/cuda_watch.h). */
#include "cuda/cuda_watch.h"

#include <mpi.h>
#include <stdlib.h>

#include "core/check.h"
#include "core/poll.h"
#include "cuda/cuda_cadence.h"
#include "cuda/cuda_stall.h"

struct cuda_watch {
    int rank, up, down; /* the slab's: who a stall can involve */
    double timeout_s;   /* --timeout; 0: never abort */
    cudaStream_t compute;
    /* every stream of the backend (compute first): what a host wait outside it may wait on */
    cudaStream_t streams[CUDA_WATCH_STREAMS];
    int nstreams;
    gol_halo *halo; /* NULL: not made yet, or being destroyed */
    /* generations in flight (cuda/cuda_cadence.h): a mark every CUDA_MARK_EVERY generations */
    cudaEvent_t mark[CUDA_MARK_RING];
    int64_t queued; /* generations queued since create */
    int64_t marks_recorded, marks_done;
    int64_t mark_posts[CUDA_MARK_RING]; /* exchanges posted when each mark was recorded */
    /* when a mark last passed, when a stall was last found excused (a neighbour behind), when
     * the watchdog last looked, when it was made */
    double progress_at, excused_at, last_look, created_at;
};

/* The marks the GPU has passed, retired in order (one stream: they complete in order). */
static void retire_marks(cuda_watch *w) {
    int moved = 0;
    while (w->marks_done < w->marks_recorded) {
        cudaError_t e = cudaEventQuery(w->mark[w->marks_done % CUDA_MARK_RING]);
        if (e == cudaErrorNotReady) break;
        CUDA_CHECK(e);
        w->marks_done++;
        moved = 1;
    }
    if (moved) w->progress_at = MPI_Wtime();
}

/* What a stall that involves a neighbour does once this rank's line is out: the others are told
 * (silent: the lost rank, or -1), then the exchange's teardown is started, so that NCCL's kernels
 * stop spinning on the silent peer (halo_abort does not wait for it: ncclCommAbort is collective,
 * and the silent peer never joins it). */
typedef struct teardown {
    gol_halo *halo;
    int silent;
} teardown;

static void tell_and_tear_down(void *arg) {
    const teardown *t = arg;
    gol_tell_others(t->silent); /* before the teardown, which the others would see fail */
    halo_abort(t->halo);
}

/* The watchdog fired: MPI_Abort, within a bounded time whatever NCCL does. The line comes first,
 * printed and logged: a neighbour that finds the same loss by its heartbeat aborts every rank
 * after at most its own telling, and must not cut this rank short of its line. A stall of this
 * GPU alone skips the teardown: ncclCommAbort synchronises streams and would block on it.
 * silent: the neighbour that sent no sign of life for --timeout, or -1; alive: both neighbours
 * answer and every rank had posted the exchanges waited for. */
static void __attribute__((noreturn))
stalled(cuda_watch *w, const char *what, double waited, int silent, int alive) {
    char msg[512];
    const int on_stream = halo_sampled(w->halo);
    if (silent >= 0)
        cuda_silent_message(msg, sizeof msg, silent, halo_peer_host(silent), w->up, w->down,
                            waited, what);
    else
        cuda_stall_message(msg, sizeof msg, w->rank, w->up, w->down, on_stream, waited, what,
                           alive);
    if (cuda_stall_is_local(w->rank, w->up, w->down, on_stream)) gol_abort_msg("%s", msg);
    teardown t = {w->halo, silent};
    gol_abort_then(tell_and_tear_down, &t, "%s", msg);
}

/* Why the GPU passed no mark for --timeout while the host waited on work that needs the first
 * `needed` exchanges: STALL_DEAD (this GPU stopped, or, every rank having posted them and both
 * neighbours answering, a GPU or NCCL's transport did), STALL_SLOW (some rank has not posted
 * them yet: a host busy elsewhere, such as rank 0 on a slow disk; keep waiting) or STALL_SILENT
 * (*silent: a neighbour sent no sign of life for --timeout). Without a heartbeat (no peer on the
 * stream, MPI without threads) the marks alone judge: STALL_DEAD. */
enum { STALL_DEAD, STALL_SLOW, STALL_SILENT };
static int stall_cause(cuda_watch *w, int64_t needed, double now, int *silent) {
    if (cuda_stall_is_local(w->rank, w->up, w->down, halo_sampled(w->halo))) return STALL_DEAD;
    int64_t least = halo_least_posted(w->halo);
    if (least < 0) return STALL_DEAD;
    const int peers[2] = {w->up, w->down};
    for (int i = 0; i < 2; i++) {
        if (peers[i] < 0 || peers[i] == w->rank) continue;
        double heard = halo_heard(w->halo, peers[i]);
        if (now - (heard > w->created_at ? heard : w->created_at) > w->timeout_s) {
            *silent = peers[i];
            return STALL_SILENT;
        }
    }
    return least < needed ? STALL_SLOW : STALL_DEAD;
}

/* A stall of the exchange that no neighbour's silence explains may come from a rank lost further
 * along the ring: its own neighbours name it after --timeout + 1 s (the guard's rule) and tell
 * every rank within a beat, so such a verdict waits that long again, and a told rank's line
 * names the lost rank and its host. Seconds added to --timeout. */
enum { CUDA_DEAD_MARGIN_S = 1 };
static double dead_margin(const cuda_watch *w, int cause) {
    if (cause != STALL_DEAD) return 0.0;
    return cuda_stall_is_local(w->rank, w->up, w->down, halo_sampled(w->halo)) ? 0.0
                                                                             : CUDA_DEAD_MARGIN_S;
}

/* One look of THE watchdog, from a host wait that began at `since` on work needing the first
 * `needed` exchanges: NCCL's health, the marks, and once no mark passed for --timeout seconds,
 * the cause at every look (stall_cause): a slow rank excuses the stall, and only --timeout
 * seconds after the last excuse does MPI_Abort follow. A gap of over a second since the last look
 * in this wait means this process was not running (stopped, then continued): it counts as an
 * excuse too. */
static void look(cuda_watch *w, const char *what, int64_t needed, double since) {
    halo_poll(w->halo);
    double now = MPI_Wtime();
    if (w->last_look > since && now - w->last_look > 1.0) w->excused_at = now;
    w->last_look = now;
    retire_marks(w);
    double from = since > w->progress_at ? since : w->progress_at;
    if (w->timeout_s <= 0 || now - from <= w->timeout_s) return;
    int silent = -1, cause = stall_cause(w, needed, now, &silent);
    if (cause == STALL_SLOW) w->excused_at = now;
    from = from > w->excused_at ? from : w->excused_at;
    if (now - from <= w->timeout_s + dead_margin(w, cause)) return;
    stalled(w, what, now - from, silent, cause == STALL_DEAD && halo_least_posted(w->halo) >= 0);
}

/* One wait of cuda_watch_wait_*: the thing awaited (an event or a stream) and its query. */
typedef struct watched {
    cuda_watch *w;
    cudaError_t (*query)(void *);
    void *obj;
    const char *what;
    int64_t needed;
} watched;

static int watched_done(void *arg, double since) {
    watched *x = arg;
    cudaError_t e = x->query(x->obj);
    if (e == cudaSuccess) return 1;
    if (e != cudaErrorNotReady) CUDA_CHECK(e);
    look(x->w, x->what, x->needed, since);
    return 0;
}

static cudaError_t query_event(void *ev) { return cudaEventQuery((cudaEvent_t)ev); }
static cudaError_t query_stream(void *s) { return cudaStreamQuery((cudaStream_t)s); }

void cuda_watch_wait_event(cuda_watch *w, cudaEvent_t ev, const char *what, int64_t needed) {
    watched x = {w, query_event, (void *)ev, what, needed};
    gol_poll_until(watched_done, &x, 0);
}

void cuda_watch_wait_stream(cuda_watch *w, cudaStream_t s, const char *what, int64_t needed) {
    watched x = {w, query_stream, (void *)s, what, needed};
    gol_poll_until(watched_done, &x, 0);
}

int64_t cuda_watch_posted(const cuda_watch *w) { return halo_posts(w->halo); }

/* 1 when some stream of the backend still holds work. */
static int work_queued(const cuda_watch *w) {
    for (int i = 0; i < w->nstreams; i++) {
        cudaError_t e = cudaStreamQuery(w->streams[i]);
        if (e == cudaErrorNotReady) return 1;
        CUDA_CHECK(e);
    }
    return 0;
}

/* The watchdog for host waits outside this backend (core/check.h's gol_watch_poll: the stop vote,
 * the writer's slot, the staged MPI exchange's wait for its rows): the same looks while any of
 * the backend's streams holds work. Every stream, not the compute stream alone: the staged
 * exchange waits on the comm stream's edge rows and copies while the compute stream may already
 * be empty, and a GPU stopped then must still be found. */
static void watch_hook(void *impl, double since) {
    cuda_watch *w = impl;
    if (!w->halo) return; /* still being made */
    if (work_queued(w)) {
        look(w, "the generations queued before a host wait", cuda_watch_posted(w), since);
        return;
    }
    halo_poll(w->halo);
    w->progress_at = MPI_Wtime(); /* nothing queued: nothing can stall */
}

void cuda_watch_generation(cuda_watch *w) {
    w->queued++;
    if (!cuda_mark_due(w->queued)) return;
    /* a GPU that keeps up never makes the wait below poll: look at NCCL's health here too */
    halo_poll(w->halo);
    int64_t m = w->marks_recorded, back = cuda_mark_to_wait(m);
    if (back >= w->marks_done)
        cuda_watch_wait_event(w, w->mark[back % CUDA_MARK_RING], "the generations in flight",
                              w->mark_posts[back % CUDA_MARK_RING]);
    retire_marks(w); /* mark `back` and every earlier one: a slot is reused only once retired */
    CUDA_CHECK(cudaEventRecord(w->mark[m % CUDA_MARK_RING], w->compute));
    w->mark_posts[m % CUDA_MARK_RING] = cuda_watch_posted(w);
    w->marks_recorded++;
}

cuda_watch *cuda_watch_create(const gol_slab *slab, double timeout_s, cudaStream_t compute) {
    cuda_watch *w = gol_xcalloc(1, sizeof *w);
    w->rank = slab->rank;
    w->up = slab->up;
    w->down = slab->down;
    w->timeout_s = timeout_s;
    w->compute = compute;
    cuda_watch_add_stream(w, compute);
    for (int m = 0; m < CUDA_MARK_RING; m++)
        CUDA_CHECK(cudaEventCreateWithFlags(&w->mark[m], cudaEventDisableTiming));
    w->created_at = w->progress_at = MPI_Wtime();
    gol_watch_add(watch_hook, w); /* host waits elsewhere (the stop vote, the writer) look too */
    return w;
}

void cuda_watch_set_halo(cuda_watch *w, gol_halo *halo) { w->halo = halo; }

void cuda_watch_add_stream(cuda_watch *w, cudaStream_t s) {
    if (w->nstreams == CUDA_WATCH_STREAMS)
        gol_die(__FILE__, __LINE__, "cuda_watch_add_stream", "golmpi",
                "more streams than CUDA_WATCH_STREAMS (an internal error)");
    w->streams[w->nstreams++] = s;
}

void cuda_watch_remove_stream(cuda_watch *w, cudaStream_t s) {
    for (int i = 0; i < w->nstreams; i++)
        if (w->streams[i] == s) {
            w->streams[i] = w->streams[--w->nstreams];
            return;
        }
}

void cuda_watch_destroy(cuda_watch *w) {
    if (!w) return;
    gol_watch_remove(watch_hook, w);
    for (int m = 0; m < CUDA_MARK_RING; m++) CUDA_CHECK(cudaEventDestroy(w->mark[m]));
    free(w);
}
