/* halo/ is the layer below the backends (cpu/, cuda/): moving the edge rows between neighbouring
 * ranks.
 *
 * The one halo-exchange interface: a mode (one file in halo/ filling a halo_ops, one line in the
 * table in halo/halo.c) copies each rank's first and last owned rows into its neighbours' halo
 * rows, on host memory for the CPU backend or on device memory for the CUDA backend. With a deep
 * halo (core/depth.h) an exchange moves k rows each way, still one message per neighbour and
 * direction: the k rows are contiguous in the slab. */
#ifndef GOLMPI_HALO_H
#define GOLMPI_HALO_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/decomp.h"

/* Which memory a mode's rows live in; a mode may work on both. */
enum { HALO_MEM_HOST = 1, HALO_MEM_DEVICE = 2 };

/* What a mode provides. impl is the mode's own state. Device modes order their work on a CUDA
 * stream, passed as void * (a cudaStream_t) so that host users of this header need no CUDA
 * types; host modes get NULL and ignore it. */
typedef struct halo_ops {
    /* Sets the exchange up for this slab over comm. Collective over comm; may block (it may
     * connect to the neighbours). The CUDA device must already be chosen for device modes.
     * timeout_s (--timeout; 0: forever) bounds how long a wait may wait on a neighbour before it
     * aborts every rank, naming the neighbour. depth (1..slab->rows): the rows each message
     * carries. */
    void *(*create)(const gol_slab *slab, int64_t depth, MPI_Comm comm, void *stream,
                    double timeout_s);
    /* Starts one exchange: top <- last owned row of the rank above, bottom <- first owned row of
     * the rank below, and the mirror sends of first and last. Rows are slab->nwords words. With
     * `depth` rows a message (create), each pointer is the first of that many consecutive rows:
     * first: the first owned rows (sent up), last: the last ones (sent down), top: the halo rows
     * above, bottom: the halo rows below. Past a dead boundary the halo rows are not touched (the
     * caller keeps them zero). Collective with the
     * neighbours: every rank posts the same number of exchanges. Host modes do not block; device
     * modes enqueue on the stream after the work already there (the edge rows) and may block the
     * host until those rows are ready. Opens the NVTX range of the exchange, if any: "halo" where
     * the host takes part in it (MPI), "halo enqueue" where the host only enqueues it (NCCL). */
    void (*post)(void *impl, const uint64_t *first, const uint64_t *last, uint64_t *top,
                 uint64_t *bottom);
    /* Ends the exchange that post started. Host modes block until the halo rows are written;
     * device modes return once work enqueued on the stream afterwards sees them (stream order),
     * and may block the host meanwhile. Not collective itself, but it waits for the neighbours'
     * posts. Closes the NVTX range of the exchange, if post left it open. */
    void (*wait)(void *impl);
    /* Host seconds spent in post and wait so far. Local; never blocks. */
    double (*seconds)(const void *impl);
    /* Frees the mode's state. Collective over the comm given to create; may block (it flushes
     * outstanding operations). */
    void (*destroy)(void *impl);

    /* What the CUDA backend also needs. */

    /* 1 when post and wait only enqueue stream work and make no host MPI calls, so an exchange
     * may be captured into a CUDA graph (after warm-up exchanges outside any capture). */
    int capturable;
    /* 1 when post only enqueues, so seconds() cannot see the exchange: the caller samples it with
     * stream events around post and wait (some eager generations, scaled); seconds() is 0. Such
     * an exchange runs in the stream's order, so a neighbour that stops answering stalls the
     * stream itself: the caller's waits on the stream must poll and watch the clock. */
    int sampled;
    /* Health poll: aborts with the library's message when an asynchronous error is pending (a
     * dead peer, a network failure). Local and cheap; never blocks. NULL: nothing to watch. */
    void (*poll)(void *impl);
    /* Starts tearing the exchange down (ncclCommAbort: NCCL's kernels stop spinning on a
     * neighbour that stopped answering) and returns at once, so that a rank whose watchdog fired
     * aborts instead of hanging in the teardown: the teardown runs on a helper thread, and NCCL's
     * is collective over the node's ranks, which a missing peer never joins. Only exiting may
     * follow (MPI_Abort); no other op, not even destroy. Local. NULL: nothing outlives the
     * process's own abort (the host MPI modes). */
    void (*abort)(void *impl);
    /* Signs of life apart from the rows (halo/heartbeat.h), for a caller whose waits on the
     * stream must tell a slow neighbour from a stopped one (sampled modes). heard: MPI_Wtime()
     * when peer was last heard from, 0 when never or peer is no neighbour. least_posted: the
     * fewest exchanges any rank had posted, as the heartbeats last told (a lower bound, a few
     * beat periods late); -1 when unknown. Local; never block. NULL (or no heartbeat: --timeout
     * 0, no peer, MPI without threads): 0 and -1. */
    double (*heard)(void *impl, int peer);
    int64_t (*least_posted)(void *impl);
    /* Told how many exchanges this rank has posted so far (halo_posts), after each post and each
     * replay of a captured one, for its heartbeat to tell the others. Local; never blocks. NULL:
     * nothing to tell. */
    void (*posted)(void *impl, int64_t posts);
} halo_ops;

/* The longest the agreed end (every rank tears down) waits for the library's teardown. */
#define HALO_ABORT_GRACE_S 5.0

/* One line of the table of modes in halo/halo.c. */
typedef struct halo_mode {
    const char *name;    /* what --halo takes */
    int mem;             /* HALO_MEM_HOST, HALO_MEM_DEVICE, or both */
    bool hidden;         /* accepted by --halo, but not listed in --help or messages */
    const halo_ops *ops; /* NULL where this build lacks the mode (device modes without CUDA) */
} halo_mode;

/* The mode called name that works on mem and is built in; NULL if there is none ("auto" is not a
 * mode: the backend resolves it). */
const halo_mode *halo_mode_find(const char *name, int mem);
/* Whether --halo may name it: a mode of any memory, hidden or not built in included. */
bool halo_mode_known(const char *name);
/* The visible mode names, each once, in table order, joined by sep ("mpi, nccl"): for --help and
 * for the message that refuses an unknown name. Truncates to len. */
void halo_mode_names(char *buf, size_t len, const char *sep);

/* One exchange set up for one slab: the mode's ops and its state. */
typedef struct gol_halo gol_halo;

/* The calls below dispatch to the mode's ops; their contracts are stated there. */
gol_halo *halo_create(const halo_mode *mode, const gol_slab *slab, int64_t depth, MPI_Comm comm,
                      void *stream, double timeout_s);
void halo_post(gol_halo *h, const uint64_t *first, const uint64_t *last, uint64_t *top,
               uint64_t *bottom);
void halo_wait(gol_halo *h);
double halo_seconds(const gol_halo *h);
/* Messages this rank has sent so far: one per neighbour (up, down; a rank that is its own
 * neighbour counts itself) per post. Local; never blocks. */
int64_t halo_messages(const gol_halo *h);
bool halo_capturable(const gol_halo *h);
bool halo_sampled(const gol_halo *h);
void halo_poll(gol_halo *h); /* nothing when the mode has no poll */
/* Only on the way to a fatal abort: tells every other rank first (core/check.h's
 * gol_tell_others), then tears the exchange down; nothing more when the mode has no abort. */
void halo_abort(gol_halo *h);
double halo_heard(gol_halo *h, int peer); /* 0 when the mode has no heard */
int64_t halo_least_posted(gol_halo *h);   /* -1 when the mode has no least_posted */
/* Exchanges this rank has posted so far: posts, and replays of captured ones. Local; never
 * blocks. */
int64_t halo_posts(const gol_halo *h);
/* The caller enqueued one exchange by replaying a graph it captured (post was not called): it
 * counts in halo_posts as a post, and the host passes through the exchange phase (core/phase.h)
 * as a post and its wait would. Local; never blocks (but for a debug hold at that phase). */
void halo_replayed(gol_halo *h);
void halo_destroy(gol_halo *h); /* NULL: nothing */

/* The neighbours an exchange waits on, for a message: "rank 3 (above) or rank 5 (below)",
 * "rank 3 (above and below)", "rank 5 (below)" (up, down: -1 for none; not both). */
void halo_name_neighbours(char *buf, size_t len, int up, int down);
/* The host of rank `peer` of the run's communicator, as the run's guard learned it (halo/
 * heartbeat.h), for a message that names a lost peer; "?" without a guard. Local. */
const char *halo_peer_host(int peer);

#endif
