/* The simulated GPU's NCCL (tests/cudasim/nccl.h). Ranks are separate processes of one node: a
 * communicator is a shared memory segment named by its unique id, with a byte ring for each
 * ordered pair of ranks. An exchange is one stream operation running its group's sends and
 * receives together, with NCCL's blocking semantics: a send moves no byte before its peer's
 * stream has reached the matching receive (matched in the order posted), so a receive never
 * posted stalls the sender's stream, as on a GPU. A peer that aborted or whose process is gone
 * fails the operation and sets the communicator's asynchronous error (ncclRemoteError); a peer
 * that is merely stopped is waited for, forever, as NCCL's kernels do. The first exchange with a
 * peer connects to it inside ncclGroupEnd, which waits for the peer's own first exchange.
 * A send and its receive are both a graph's or both eager, else the receiver's communicator fails.
 * Finalize and abort are collective, and so is a destroy without a finalize before it (NCCL's
 * destroy then finalizes); a destroy after a finalize is local. A nonblocking communicator in
 * progress refuses calls. One communicator's groups at a time hold a device's SMs (sms_take).
 * Settings: GOLMPI_SIM_NCCL_ERROR_RANK, GOLMPI_SIM_NCCL_ERROR_AFTER_S: that rank's communicators
 * get an asynchronous error (ncclSystemError) that many seconds after they are made. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "nccl.h"
#include "sim.h"

enum { MAX_RANKS = 64, MAX_SPLITS = 16, RING = 1 << 18, MAX_ENTRIES = 8 };

typedef struct chan {
    _Atomic uint64_t posted;        /* receives the receiver's stream has reached */
    _Atomic uint64_t written, read; /* bytes through the ring */
    char ring[RING];
} chan;

typedef struct shm_comm {
    _Atomic int joined;
    int pid[MAX_RANKS];
    char bus[MAX_RANKS][32];
    _Atomic int aborted[MAX_RANKS];
    _Atomic int connect[MAX_RANKS][MAX_RANKS]; /* [r][p]: r has begun its first exchange with p */
    _Atomic int split_arrived[MAX_SPLITS];
    _Atomic int finalized; /* ranks that finalized it (ncclCommFinalize, or a destroy without) */
    int split_color[MAX_SPLITS][MAX_RANKS], split_key[MAX_SPLITS][MAX_RANKS];
    chan ch[]; /* [from * nranks + to] */
} shm_comm;

struct ncclComm {
    char name[NCCL_UNIQUE_ID_BYTES];
    int nranks, rank, blocking, device;
    shm_comm *shm;
    _Atomic int async;                             /* ncclResult_t */
    _Atomic int aborted;                           /* this rank aborted it */
    _Atomic int pending;                           /* exchanges enqueued and not finished */
    uint64_t sent[MAX_RANKS], received[MAX_RANKS]; /* by the stream running its exchanges */
    uint64_t sends_done[MAX_RANKS], receives_done[MAX_RANKS]; /* whole messages through a ring */
    int connected[MAX_RANKS];
    int splits;
    int finalized;   /* this rank called ncclCommFinalize */
    double error_at; /* the injected asynchronous error, or 0 */
    char last_error[256];
};

typedef struct entry {
    int send; /* else receive */
    char *buf;
    size_t bytes;
    int peer;
    ncclComm_t comm;
    cudaStream_t stream;
    int captured; /* enqueued by a graph's launch: its peer's must be too */
    /* progress, on the worker */
    uint64_t seq;
    size_t moved; /* header and data bytes through the ring */
    uint64_t header;
    int done;
} entry;

typedef struct sim_group {
    entry e[MAX_ENTRIES];
    int n;
} sim_group;

static __thread int group_depth;
static __thread sim_group pending_group;
static char last_error[256];

static size_t shm_bytes(int nranks) {
    return sizeof(shm_comm) + (size_t)nranks * (size_t)nranks * sizeof(chan);
}

static void nap_ns(long ns) {
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
}

static void nap(void) { nap_ns(50000); }

static void say(ncclComm_t c, const char *fmt, const char *a, int x, int y) {
    snprintf(last_error, sizeof last_error, fmt, a, x, y);
    if (c) snprintf(c->last_error, sizeof c->last_error, "%s", last_error);
}

/* 1 when peer's process is gone or it aborted the communicator. */
static int peer_lost(ncclComm_t c, int peer) {
    if (atomic_load(&c->shm->aborted[peer])) return 1;
    return c->shm->pid[peer] > 0 && kill(c->shm->pid[peer], 0) != 0 && errno == ESRCH;
}

static void injected_error(ncclComm_t c) {
    if (c->error_at > 0 && sim_now() >= c->error_at && atomic_load(&c->async) == ncclSuccess) {
        say(c, "%s", "simulated network failure (GOLMPI_SIM_NCCL_ERROR_RANK)", 0, 0);
        atomic_store(&c->async, ncclSystemError);
    }
}

ncclResult_t ncclGetVersion(int *version) {
    *version = NCCL_VERSION_CODE;
    return ncclSuccess;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
    static _Atomic int counter;
    memset(id, 0, sizeof *id);
    snprintf(id->internal, sizeof id->internal, "/golmpi-sim-%d-%lx-%d", (int)getpid(),
             (unsigned long)(sim_now() * 1e6), atomic_fetch_add(&counter, 1));
    return ncclSuccess;
}

/* Joins the segment; every rank waits for all. The duplicate check is NCCL's own. */
static ncclResult_t join(ncclComm_t c) {
    int fd = shm_open(c->name, O_CREAT | O_RDWR, 0600);
    if (fd < 0 || ftruncate(fd, (off_t)shm_bytes(c->nranks)) != 0) {
        say(c, "shm_open %s failed (errno %d)", c->name, errno, 0);
        return ncclSystemError;
    }
    c->shm = mmap(NULL, shm_bytes(c->nranks), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (c->shm == MAP_FAILED) return ncclSystemError;
    c->shm->pid[c->rank] = (int)getpid();
    cudaDeviceGetPCIBusId(c->shm->bus[c->rank], 32, c->device);
    atomic_fetch_add(&c->shm->joined, 1);
    while (atomic_load(&c->shm->joined) < c->nranks) {
        if (atomic_load(&c->aborted)) return ncclInternalError;
        nap();
    }
    if (c->rank == 0) shm_unlink(c->name);
    for (int r = 0; r < c->nranks; r++)
        if (r != c->rank && strcmp(c->shm->bus[r], c->shm->bus[c->rank]) == 0) {
            snprintf(c->last_error, sizeof c->last_error,
                     "Duplicate GPU detected : rank %d and rank %d both on CUDA device %s", c->rank,
                     r, c->shm->bus[r]);
            snprintf(last_error, sizeof last_error, "%s", c->last_error);
            fprintf(stderr, "NCCL WARN %s\n", c->last_error);
            return ncclInvalidUsage;
        }
    return ncclSuccess;
}

static ncclComm_t comm_new(const char *name, int nranks, int rank, const ncclConfig_t *config) {
    ncclComm_t c = calloc(1, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", name);
    c->nranks = nranks;
    c->rank = rank;
    c->blocking = config ? config->blocking : 1;
    cudaGetDevice(&c->device);
    const char *er = getenv("GOLMPI_SIM_NCCL_ERROR_RANK");
    if (er && *er && atoi(er) == sim_rank()) {
        const char *after = getenv("GOLMPI_SIM_NCCL_ERROR_AFTER_S");
        c->error_at = sim_now() + (after ? atof(after) : 0.0);
    }
    return c;
}

typedef struct job {
    ncclComm_t comm, parent;
    ncclComm_t *out;
    int color, key;
} job;

static ncclResult_t split_join(job *j);

static void *background(void *arg) {
    job *j = arg;
    ncclResult_t rc = j->parent ? split_join(j) : join(j->comm);
    atomic_store(&(j->parent ? j->parent : j->comm)->async, rc);
    free(j);
    return NULL;
}

static ncclResult_t start(job *j, int blocking) {
    if (blocking) {
        ncclResult_t rc = j->parent ? split_join(j) : join(j->comm);
        free(j);
        return rc;
    }
    atomic_store(&(j->parent ? j->parent : j->comm)->async, ncclInProgress);
    pthread_t t;
    pthread_create(&t, NULL, background, j);
    pthread_detach(t);
    return ncclInProgress;
}

/* NCCL's ncclCommEnsureReady: a nonblocking communicator that still answers ncclInProgress (its
 * init, split or finalize under way) takes no other call but ncclCommGetAsyncError and
 * ncclCommAbort. */
static ncclResult_t ensure_ready(ncclComm_t c) {
    if (atomic_load(&c->async) != ncclInProgress) return ncclSuccess;
    say(c, "%s", "Attempt to use communicator before the previous operation returned ncclSuccess",
        0, 0);
    return ncclInvalidArgument;
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank,
                                    ncclConfig_t *config) {
    sim_init();
    if (nranks < 1 || nranks > MAX_RANKS || rank < 0 || rank >= nranks) return ncclInvalidArgument;
    ncclComm_t c = comm_new(id.internal, nranks, rank, config);
    *comm = c;
    job *j = calloc(1, sizeof *j);
    j->comm = c;
    ncclResult_t rc = start(j, c->blocking);
    if (c->blocking) atomic_store(&c->async, rc);
    return rc;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank) {
    return ncclCommInitRankConfig(comm, nranks, id, rank, NULL);
}

/* Every rank of the parent takes part: colours and keys through the parent's segment. */
static ncclResult_t split_join(job *j) {
    ncclComm_t p = j->parent;
    int round = p->splits++;
    if (round >= MAX_SPLITS) return ncclInternalError;
    shm_comm *sh = p->shm;
    sh->split_color[round][p->rank] = j->color;
    sh->split_key[round][p->rank] = j->key;
    atomic_fetch_add(&sh->split_arrived[round], 1);
    while (atomic_load(&sh->split_arrived[round]) < p->nranks) {
        if (atomic_load(&p->aborted)) return ncclInternalError;
        nap();
    }
    if (j->color == NCCL_SPLIT_NOCOLOR) return ncclSuccess;
    int n = 0, rank = 0;
    for (int r = 0; r < p->nranks; r++) {
        if (sh->split_color[round][r] != j->color) continue;
        n++;
        int k = sh->split_key[round][r];
        if (k < j->key || (k == j->key && r < p->rank)) rank++;
    }
    char name[NCCL_UNIQUE_ID_BYTES];
    snprintf(name, sizeof name, "%.100s.s%d.c%d", p->name, round, j->color);
    ncclComm_t c = comm_new(name, n, rank, NULL);
    c->blocking = j->comm->blocking;
    c->device = p->device; /* this thread's current device is not the rank's */
    free(j->comm);
    ncclResult_t rc = join(c);
    atomic_store(&c->async, rc);
    if (rc == ncclSuccess) __atomic_store_n(j->out, c, __ATOMIC_RELEASE);
    return rc;
}

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                           ncclConfig_t *config) {
    if (!comm) return ncclInvalidArgument;
    if (ensure_ready(comm) != ncclSuccess) return ncclInvalidArgument;
    *newcomm = NULL;
    job *j = calloc(1, sizeof *j);
    j->parent = comm;
    j->comm = comm_new("", 1, 0, config); /* carries the child's config */
    j->out = newcomm;
    j->color = color;
    j->key = key;
    return start(j, comm->blocking);
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *state) {
    if (!comm) return ncclInvalidArgument;
    injected_error(comm);
    *state = (ncclResult_t)atomic_load(&comm->async);
    return ncclSuccess;
}

/* ---- exchanges -------------------------------------------------------------------------- */

ncclResult_t ncclGroupStart(void) {
    if (group_depth++ == 0) pending_group.n = 0;
    return ncclSuccess;
}

static ncclResult_t add(int send, const void *buf, size_t count, ncclDataType_t type, int peer,
                        ncclComm_t comm, cudaStream_t stream) {
    size_t size = type == ncclInt8 || type == ncclUint8     ? 1
                  : type == ncclInt32 || type == ncclUint32 ? 4
                                                            : 8;
    if (!comm || peer < 0 || peer >= comm->nranks) return ncclInvalidArgument;
    if (ensure_ready(comm) != ncclSuccess) return ncclInvalidArgument;
    if (count && !sim_is_device(buf, count * size)) {
        say(comm, "%s: buffer %d is not device memory", send ? "ncclSend" : "ncclRecv", 0, 0);
        return ncclInvalidArgument;
    }
    if (pending_group.n == MAX_ENTRIES) return ncclInvalidUsage;
    pending_group.e[pending_group.n++] = (entry){.send = send,
                                                 .buf = (char *)buf,
                                                 .bytes = count * size,
                                                 .peer = peer,
                                                 .comm = comm,
                                                 .stream = stream};
    return ncclSuccess;
}

/* The first exchange with each peer: both sides must have begun theirs (NCCL's connection). All
 * the group's peers are asked at once, as NCCL connects them together. */
static ncclResult_t connect_peers(const sim_group *g) {
    for (int i = 0; i < g->n; i++) {
        ncclComm_t c = g->e[i].comm;
        atomic_store(&c->shm->connect[c->rank][g->e[i].peer], 1);
    }
    for (int i = 0; i < g->n; i++) {
        ncclComm_t c = g->e[i].comm;
        int p = g->e[i].peer;
        if (c->connected[p]) continue;
        while (!atomic_load(&c->shm->connect[p][c->rank])) {
            if (atomic_load(&c->aborted)) return ncclInternalError;
            if (peer_lost(c, p)) {
                say(c, "%s", "remote process exited or there was a network error", 0, 0);
                atomic_store(&c->async, ncclRemoteError);
                return ncclRemoteError;
            }
            nap();
        }
        c->connected[p] = 1;
    }
    return ncclSuccess;
}

static ncclResult_t submit(sim_group *g) {
    ncclResult_t rc = connect_peers(g);
    if (rc != ncclSuccess) return rc;
    struct CUstream_st *s = sim_stream_of(g->e[0].stream);
    sim_op *op = calloc(1, sizeof *op);
    op->kind = OP_NCCL;
    op->what = "an NCCL exchange (ncclGroupEnd)";
    op->group = sim_nccl_group_copy(g);
    for (int i = 0; i < g->n; i++)
        op->acc[op->nacc++] = (cudasim_access){g->e[i].buf, g->e[i].bytes,
                                               g->e[i].send ? CUDASIM_READ : CUDASIM_WRITE};
    sim_site_here(&op->site);
    sim_lock();
    cudaError_t e = sim_enqueue(s, op);
    sim_unlock();
    return e == cudaSuccess ? ncclSuccess : ncclUnhandledCudaError;
}

ncclResult_t ncclGroupEnd(void) {
    if (group_depth <= 0) return ncclInvalidUsage;
    if (--group_depth > 0) return ncclSuccess;
    sim_group g = pending_group;
    pending_group.n = 0;
    if (!g.n) return ncclSuccess;
    for (int i = 1; i < g.n; i++)
        if (g.e[i].stream != g.e[0].stream) return ncclInvalidUsage; /* one stream here */
    return submit(&g);
}

ncclResult_t ncclSend(const void *buf, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
    ncclGroupStart();
    ncclResult_t rc = add(1, buf, count, type, peer, comm, stream);
    ncclResult_t end = ncclGroupEnd();
    return rc != ncclSuccess ? rc : end;
}

ncclResult_t ncclRecv(void *buf, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
    ncclGroupStart();
    ncclResult_t rc = add(0, buf, count, type, peer, comm, stream);
    ncclResult_t end = ncclGroupEnd();
    return rc != ncclSuccess ? rc : end;
}

sim_group *sim_nccl_group_copy(const sim_group *g) {
    sim_group *c = malloc(sizeof *c);
    *c = *g;
    return c;
}

void sim_nccl_group_free(sim_group *g) { free(g); }

void sim_nccl_captured(sim_group *g) {
    for (int i = 0; i < g->n; i++)
        g->e[i].captured = 1;
}

void sim_nccl_enqueued(sim_group *g) {
    for (int i = 0; i < g->n; i++)
        atomic_fetch_add(&g->e[i].comm->pending, 1);
}

static chan *channel(ncclComm_t c, int from, int to) {
    return &c->shm->ch[(size_t)from * (size_t)c->nranks + (size_t)to];
}

/* Bytes [at, at + n) of the message stream (header, then data) into or out of the ring. */
static void ring_copy(chan *ch, uint64_t pos, char *mem, size_t n, int into_ring) {
    while (n) {
        size_t off = pos % RING, k = RING - off < n ? RING - off : n;
        if (into_ring)
            memcpy(ch->ring + off, mem, k);
        else
            memcpy(mem, ch->ring + off, k);
        pos += k;
        mem += k;
        n -= k;
    }
}

/* One step of a send or receive; 1 when it moved anything. */
static int step(entry *e) {
    ncclComm_t c = e->comm;
    int me = c->rank;
    chan *ch = e->send ? channel(c, me, e->peer) : channel(c, e->peer, me);
    size_t total = 8 + e->bytes;
    char *data = cudasim_ptr(e->buf);
    uint64_t w = atomic_load(&ch->written), r = atomic_load(&ch->read);
    size_t n;
    /* a channel is one byte stream: its messages go through it whole, one after another */
    if ((e->send ? c->sends_done : c->receives_done)[e->peer] != e->seq - 1) return 0;
    if (e->send) {
        if (atomic_load(&ch->posted) < e->seq) return 0; /* the receive is not posted yet */
        n = RING - (size_t)(w - r);
        if (n > total - e->moved) n = total - e->moved;
        if (!n) return 0;
        size_t hdr = e->moved < 8 ? 8 - e->moved : 0; /* the header first, then the data */
        if (hdr > n) hdr = n;
        if (hdr) ring_copy(ch, w, (char *)&e->header + e->moved, hdr, 1);
        if (n > hdr) ring_copy(ch, w + hdr, data + (e->moved + hdr - 8), n - hdr, 1);
        atomic_store(&ch->written, w + n);
    } else {
        n = (size_t)(w - r);
        if (n > total - e->moved) n = total - e->moved;
        if (!n) return 0;
        size_t hdr = e->moved < 8 ? 8 - e->moved : 0;
        if (hdr > n) hdr = n;
        if (hdr) ring_copy(ch, r, (char *)&e->header + e->moved, hdr, 0);
        if (n > hdr) ring_copy(ch, r + hdr, data + (e->moved + hdr - 8), n - hdr, 0);
        atomic_store(&ch->read, r + n);
        if (e->moved < 8 && e->moved + n >= 8 && e->header >> 63 != (uint64_t)e->captured) {
            say(c, "%s", e->captured ? "a graph-captured ncclRecv matched an eager ncclSend"
                                     : "an eager ncclRecv matched a graph-captured ncclSend",
                0, 0);
            atomic_store(&c->async, ncclInvalidUsage);
        } else if (e->moved < 8 && e->moved + n >= 8 && (e->header << 1 >> 1) != e->bytes) {
            say(c, "%s", "ncclRecv: message size differs from the matching ncclSend", 0, 0);
            atomic_store(&c->async, ncclInvalidUsage);
        }
    }
    e->moved += n;
    e->done = e->moved == total;
    if (e->done) (e->send ? c->sends_done : c->receives_done)[e->peer] = e->seq;
    return 1;
}

/* The SMs of each device, as this process's NCCL kernels hold them: a communicator's kernel,
 * which spins until its peer's side arrives, may leave none for another communicator's (NCCL: two
 * communicators used at once on separate streams can deadlock, unless every rank posts their
 * operations in the same order). The strict case is modelled: while a group of one communicator
 * runs on a device, a group of another waits to start, so two ranks that post in opposite orders
 * wait on each other for ever, as they may on a GPU. Groups of one communicator share the SMs. */
enum { MAX_DEVICES = 64 };
static pthread_mutex_t sms_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    ncclComm_t owner; /* the communicator whose groups run on the device, or NULL */
    int groups;       /* how many of them */
} sms[MAX_DEVICES];

static int sms_take(ncclComm_t c) {
    if (c->device < 0 || c->device >= MAX_DEVICES) return 1;
    pthread_mutex_lock(&sms_mu);
    int free = !sms[c->device].owner || sms[c->device].owner == c;
    if (free) sms[c->device].owner = c, sms[c->device].groups++;
    pthread_mutex_unlock(&sms_mu);
    return free;
}

static void sms_give(ncclComm_t c) {
    if (c->device < 0 || c->device >= MAX_DEVICES) return;
    pthread_mutex_lock(&sms_mu);
    if (--sms[c->device].groups == 0) sms[c->device].owner = NULL;
    pthread_mutex_unlock(&sms_mu);
}

static int comm_failed(ncclComm_t c) {
    injected_error(c);
    return atomic_load(&c->aborted) || atomic_load(&c->async) != ncclSuccess;
}

/* The exchange, on its stream's worker: once it has the SMs, the receives are posted, then every
 * entry moves as far as its peer lets it, until all are done or the communicator fails. */
void sim_nccl_run(sim_group *g) {
    ncclComm_t owner = g->e[0].comm;
    while (!sms_take(owner)) {
        if (comm_failed(owner)) {
            for (int i = 0; i < g->n; i++)
                atomic_fetch_sub(&g->e[i].comm->pending, 1);
            return;
        }
        nap();
    }
    for (int i = 0; i < g->n; i++) {
        entry *e = &g->e[i];
        ncclComm_t c = e->comm;
        e->header = e->bytes | (uint64_t)e->captured << 63; /* the size, and how it was enqueued */
        e->seq = e->send ? ++c->sent[e->peer] : ++c->received[e->peer];
        if (!e->send) atomic_store(&channel(c, e->peer, c->rank)->posted, e->seq);
    }
    long idle = 0;
    for (long spins = 0;; spins++) {
        int left = 0, moved = 0, failed = 0;
        for (int i = 0; i < g->n; i++) {
            entry *e = &g->e[i];
            if (e->done) continue;
            ncclComm_t c = e->comm;
            if (comm_failed(c)) {
                failed = 1;
                continue;
            }
            moved |= step(e);
            left += !e->done;
            if (!e->done && spins % 256 == 255 && peer_lost(c, e->peer)) {
                say(c, "%s", "remote process exited or there was a network error", 0, 0);
                atomic_store(&c->async, ncclRemoteError);
                failed = 1;
            }
        }
        if (!left || failed) break;
        /* a peer that is not there yet: back off, up to 1 ms, to leave the CPUs to the ranks
         * that run (they share them with every simulated device) */
        if (moved) idle = 0;
        else if (++idle > 64) nap_ns(idle < 1064 ? 1000 * (idle - 64) : 1000000);
    }
    sms_give(owner);
    for (int i = 0; i < g->n; i++)
        atomic_fetch_sub(&g->e[i].comm->pending, 1);
}

/* ---- teardown --------------------------------------------------------------------------- */

static void drain(ncclComm_t c) {
    while (atomic_load(&c->pending) > 0 && !atomic_load(&c->aborted))
        nap();
}

/* Finalize is collective over the node's ranks (here: all of them): it returns once every rank
 * has called it. A rank whose process is gone never will: ncclRemoteError. */
static ncclResult_t all_arrive(ncclComm_t c, _Atomic int *count) {
    atomic_fetch_add(count, 1);
    while (atomic_load(count) < c->nranks) {
        if (atomic_load(&c->aborted)) return ncclSuccess;
        for (int r = 0; r < c->nranks; r++)
            if (r != c->rank && peer_lost(c, r)) {
                say(c, "%s", "remote process exited or there was a network error", 0, 0);
                return ncclRemoteError;
            }
        nap();
    }
    return ncclSuccess;
}

static void *finalize_background(void *arg) {
    ncclComm_t c = arg;
    drain(c);
    atomic_store(&c->async, all_arrive(c, &c->shm->finalized));
    return NULL;
}

/* Flushes the exchanges enqueued: at once on a blocking communicator, in the background on a
 * nonblocking one (ncclInProgress until done). */
ncclResult_t ncclCommFinalize(ncclComm_t comm) {
    if (!comm) return ncclInvalidArgument;
    if (ensure_ready(comm) != ncclSuccess) return ncclInvalidArgument;
    comm->finalized = 1;
    if (comm->blocking) {
        drain(comm);
        return all_arrive(comm, &comm->shm->finalized);
    }
    atomic_store(&comm->async, ncclInProgress);
    pthread_t t;
    pthread_create(&t, NULL, finalize_background, comm);
    pthread_detach(t);
    return ncclInProgress;
}

/* Frees this rank's part, at once after a finalize; else it finalizes first, which is collective
 * (NCCL's documentation of ncclCommDestroy). */
ncclResult_t ncclCommDestroy(ncclComm_t comm) {
    if (!comm) return ncclInvalidArgument;
    if (ensure_ready(comm) != ncclSuccess) return ncclInvalidArgument;
    drain(comm);
    ncclResult_t rc = comm->shm && !comm->finalized ? all_arrive(comm, &comm->shm->finalized)
                                                     : ncclSuccess;
    if (rc != ncclSuccess) return rc;
    if (comm->shm) munmap(comm->shm, shm_bytes(comm->nranks));
    free(comm);
    return ncclSuccess;
}

/* Pending exchanges end with an error; the peers see this rank gone (ncclRemoteError). As NCCL's
 * abort synchronises the streams, it waits until its exchanges have left them: on a device that
 * stopped it waits forever. Like finalize and destroy it is collective over the node's ranks (NCCL's
 * documentation: every active rank must call it): it returns once every other rank has aborted
 * too or its process is gone, so a rank that is alive but never aborts (stopped, or waiting for
 * this one's MPI_Abort) keeps it waiting for ever. The memory stays: a stream may still name it. */
ncclResult_t ncclCommAbort(ncclComm_t comm) {
    if (!comm) return ncclSuccess;
    atomic_store(&comm->aborted, 1);
    if (comm->shm) atomic_store(&comm->shm->aborted[comm->rank], 1);
    while (atomic_load(&comm->pending) > 0)
        nap();
    for (int r = 0; comm->shm && r < comm->nranks; r++)
        while (r != comm->rank && !peer_lost(comm, r))
            nap();
    return ncclSuccess;
}

const char *ncclGetErrorString(ncclResult_t rc) {
    switch (rc) {
    case ncclSuccess:
        return "no error";
    case ncclUnhandledCudaError:
        return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError:
        return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError:
        return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument:
        return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage:
        return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError:
        return "remote process exited or there was a network error";
    case ncclInProgress:
        return "NCCL operation in progress";
    default:
        return "unknown result code";
    }
}

const char *ncclGetLastError(ncclComm_t comm) { return comm ? comm->last_error : last_error; }
