/* The output pipeline: the main thread hands a chunk's frames to one writer thread per rank,
 * which makes every HDF5 call (HDF5 1.10 is not thread-safe) on a communicator of its own, so the
 * generation loop goes on while the chunk is written (DESIGN, Output). */
#include "io/output.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/check.h"
#include "core/trace.h"
#include "io/format.h"
#include "io/io_internal.h"
#include "io/output_guard.h"
#include "io/tuning.h"

#define OUTPUT_SLOTS 2

enum slot_state { SLOT_FREE, SLOT_QUEUED, SLOT_WRITING };

typedef struct output_slot {
    enum slot_state state;
    int64_t chunk;
    const void *frames_h;
    uint64_t ticket; /* submission order: the writer takes the oldest first */
    int64_t stop_at; /* -1, or the run stopped at this generation: the writer cuts its schedule */
    double wait_s;   /* the main thread's wait before this chunk was handed over */
} output_slot;

struct gol_output {
    char base[GOL_PATH_MAX];
    io_meta meta;
    gol_slab slab;
    gol_schedule sched;
    MPI_Comm comm; /* the writer's own: MPI-IO and its barriers never meet the main thread's */
    MPI_Comm main_comm; /* the caller's, for what the main thread agrees on (room on the disk) */
    io_tuning tuning;

    bool threaded; /* false when MPI gives less than MPI_THREAD_MULTIPLE: write synchronously */
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    output_slot slot[OUTPUT_SLOTS];
    uint64_t next_ticket;
    int64_t next_chunk; /* chunks must come in order: the index covers chunks [0, done) */
    /* main thread: the chunks it may hand over, and where the run stopped (-1: it did not). The
     * writer's schedule is cut when it takes the chunk handed over after the stop (output_stop_at) */
    int64_t nchunks, stop_at;
    const io_series *prior; /* the series this run continues, or NULL (the caller's) */
    bool stop;

    /* owned by whichever thread writes; read by the main thread only after the join */
    int64_t chunks_done;
    int collective; /* 1 while every frame write went collective */
    double write_s;
    xdmf_state *xdmf;     /* rank 0 */
    int64_t *population; /* rank 0: live cells of every frame of the schedule, as written */

    double wait_s; /* main thread */

    /* per chunk (output_on_chunk): the writer's time on the chunk it writes, and the main
     * thread's wait_s when the chunk was handed over (each slot's, passed to the writer) */
    output_chunk_done *chunk_done;
    void *chunk_ctx;
    double chunk_write_s;
    double wait_handed; /* main thread: wait_s at the last hand-over */
    int64_t delay_chunk; /* GOLMPI_DEBUG_WRITE_DELAY: this chunk's write is slowed; -1: none */
    double delay_s;
};

/* ---- the writer ------------------------------------------------------------------------ */

static double now_s(void) { return MPI_Wtime(); }

/* The chunk's generations and file name, from the schedule alone (gens: its frame count). */
static int64_t chunk_frames_and_name(const gol_output *o, int64_t chunk, int64_t **gens, char *name,
                                     size_t len) {
    const gol_schedule *s = &o->sched;
    int64_t first = schedule_chunk_first(s, chunk), n = schedule_chunk_frames(s, chunk);
    *gens = gol_xmalloc((size_t)n * sizeof **gens);
    for (int64_t f = 0; f < n; f++)
        (*gens)[f] = schedule_frame_generation(s, first + f);
    output_chunk_name(o->base, (*gens)[0], (*gens)[n - 1], name, len);
    return n;
}

/* The debug setting GOLMPI_DEBUG_WRITE_DELAY="chunk:seconds" makes the write of that chunk take
 * that much longer on every rank, as a slow disk would: tests/chunks.cmake checks that the wait
 * for the writer shows on the chunk that needed its slot. */
static void read_write_delay(gol_output *o) {
    const char *s = getenv("GOLMPI_DEBUG_WRITE_DELAY");
    long long c = -1;
    double sec = 0;
    o->delay_chunk = -1;
    if (!s || sscanf(s, "%lld:%lf", &c, &sec) != 2 || c < 0 || !(sec > 0)) return;
    o->delay_chunk = c;
    o->delay_s = sec;
    if (o->slab.rank == 0)
        fprintf(stderr, "golmpi: GOLMPI_DEBUG_WRITE_DELAY: chunk %lld is written %g s slower "
                        "(a debug setting)\n", c, sec);
}

static void write_delay(const gol_output *o, int64_t chunk) {
    if (chunk != o->delay_chunk) return;
    struct timespec ts = {(time_t)o->delay_s, (long)((o->delay_s - (time_t)o->delay_s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* The collective part, on whichever thread makes the HDF5 calls. After it, frames_h is free. */
static void write_chunk(gol_output *o, int64_t chunk, const void *frames_h) {
    double t0 = now_s();
    write_delay(o, chunk);
    int64_t *gens;
    char name[GOL_PATH_MAX + 64];
    int64_t n = chunk_frames_and_name(o, chunk, &gens, name, sizeof name);
    trace_pushf("write %s", io_basename(name));
    int64_t *pop = o->population ? o->population + schedule_chunk_first(&o->sched, chunk) : NULL;
    int collective =
        chunk_h5_write(o->comm, name, &o->meta, &o->slab, &o->tuning, n, gens, frames_h, pop);
    trace_pop();
    if (!collective) o->collective = 0;
    o->chunks_done = chunk + 1;
    free(gens);
    double dt = now_s() - t0;
    o->write_s += dt;
    o->chunk_write_s = dt;
}

/* Rank 0 only, after the chunk's buffer went back: the index and XMF now cover that chunk too. */
static void refresh_index(gol_output *o) {
    if (o->slab.rank != 0 || o->chunks_done == 0) return;
    double t0 = now_s();
    io_debug_slow_meta();
    int64_t *gens;
    char name[GOL_PATH_MAX + 64];
    int64_t n = chunk_frames_and_name(o, o->chunks_done - 1, &gens, name, sizeof name);
    trace_push("index");
    index_h5_write(o->base, &o->meta, &o->sched, o->chunks_done, o->population, o->prior);
    xdmf_add_chunk(o->xdmf, name, n, gens);
    xdmf_write(o->xdmf);
    trace_pop();
    free(gens);
    double dt = now_s() - t0;
    o->write_s += dt;
    o->chunk_write_s += dt;
}

/* The bytes of chunk c's file that bytes_written counts: its frames of every rank and their
 * generations. */
static int64_t chunk_bytes(const gol_output *o, int64_t c) {
    int64_t n = schedule_chunk_frames(&o->sched, c);
    return n * o->meta.height * o->meta.row_bytes + n * (int64_t)sizeof(int64_t);
}

/* After chunk `chunk`'s write and index refresh, on the thread that wrote it. */
static void report_chunk(gol_output *o, int64_t chunk, double wait_s) {
    if (o->chunk_done) o->chunk_done(o->chunk_ctx, chunk, o->chunk_write_s, wait_s,
                                     chunk_bytes(o, chunk));
}

static int oldest_queued(const gol_output *o) {
    int best = -1;
    for (int s = 0; s < OUTPUT_SLOTS; s++)
        if (o->slot[s].state == SLOT_QUEUED &&
            (best < 0 || o->slot[s].ticket < o->slot[best].ticket))
            best = s;
    return best;
}

static void *writer_main(void *arg) {
    gol_output *o = arg;
    trace_name_thread("hdf5-writer");
    /* a thread-safe HDF5 keeps this per thread: no error stacks printed from this one either */
    H5_CHECK(H5Eset_auto2(H5E_DEFAULT, NULL, NULL));
    pthread_mutex_lock(&o->mu);
    for (;;) {
        int s;
        while ((s = oldest_queued(o)) < 0 && !o->stop)
            pthread_cond_wait(&o->cv, &o->mu);
        if (s < 0) break; /* stop, and nothing left */
        o->slot[s].state = SLOT_WRITING;
        int64_t chunk = o->slot[s].chunk;
        if (o->slot[s].stop_at >= 0) o->sched = schedule_truncate(&o->sched, o->slot[s].stop_at);
        const void *frames_h = o->slot[s].frames_h;
        double wait_s = o->slot[s].wait_s;
        pthread_mutex_unlock(&o->mu);
        write_chunk(o, chunk, frames_h);
        pthread_mutex_lock(&o->mu);
        o->slot[s].state = SLOT_FREE; /* the index needs only the schedule, not the frames */
        pthread_cond_broadcast(&o->cv);
        pthread_mutex_unlock(&o->mu);
        refresh_index(o);
        report_chunk(o, chunk, wait_s);
        pthread_mutex_lock(&o->mu);
    }
    pthread_mutex_unlock(&o->mu);
    return NULL;
}

/* The writer on the node's cores that no rank runs on, when there are some (io_writer_cpus):
 * there its HDF5 calls, the page-cache copies and the population count take no time from the
 * generations. A set the system refuses (a cgroup narrower than the online cores) leaves the
 * writer where its rank runs. */
static void start_writer(gol_output *o, const cpu_set_t *cpus) {
    pthread_attr_t attr;
    SYS_CHECK(pthread_attr_init(&attr) == 0, "pthread_attr_init");
    int rc = cpus ? pthread_attr_setaffinity_np(&attr, sizeof *cpus, cpus) : 0;
    if (rc == 0) rc = pthread_create(&o->thread, &attr, writer_main, o);
    if (rc != 0 && cpus) rc = pthread_create(&o->thread, NULL, writer_main, o);
    pthread_attr_destroy(&attr);
    errno = rc;
    SYS_CHECK(rc == 0, "pthread_create(hdf5-writer)");
}

gol_output *output_open(const gol_config *cfg, const gol_slab *slab, const gol_schedule *sched,
                        MPI_Comm comm) {
    gol_output *o = gol_xcalloc(1, sizeof *o);
    config_output_base(cfg, o->base, sizeof o->base);
    o->slab = *slab;
    o->sched = *sched;
    io_meta *m = &o->meta;
    snprintf(m->rule, sizeof m->rule, "%s", cfg->rule_text);
    m->boundary = config_boundary_name(cfg->boundary);
    m->encoding = cfg->frame_format == GOL_FRAME_PACKED ? IO_ENCODING_PACKED : IO_ENCODING_U8;
    m->width = slab->width;
    m->height = slab->height;
    m->row_bytes = frame_row_bytes(slab->width, cfg->frame_format);
    m->seed = cfg->seed;
    m->density = cfg->density;
    m->ranks = slab->nranks;
    o->collective = 1;
    o->nchunks = schedule_chunks(sched);
    o->stop_at = -1;
    read_write_delay(o);
    MPI_CHECK(MPI_Comm_dup(comm, &o->comm));
    o->main_comm = comm;
    H5_CHECK(H5Eset_auto2(H5E_DEFAULT, NULL, NULL)); /* failures get our one message, no stack */
    if (slab->rank == 0) {
        o->xdmf = xdmf_create(o->base, m);
        o->population = gol_xcalloc((size_t)schedule_frames(sched), sizeof *o->population);
    }

    int provided = MPI_THREAD_SINGLE;
    MPI_CHECK(MPI_Query_thread(&provided));
    /* every rank must choose alike: a collective write cannot be threaded on some ranks only */
    int multiple = provided >= MPI_THREAD_MULTIPLE, all_multiple = 0;
    MPI_CHECK(MPI_Allreduce(&multiple, &all_multiple, 1, MPI_INT, MPI_MIN, comm));
    o->threaded = all_multiple;
    o->tuning = io_tuning_choose(slab, m->row_bytes, comm);
    cpu_set_t cpus;
    bool own_cpus = io_writer_cpus(comm, &cpus);
    if (o->threaded) {
        SYS_CHECK(pthread_mutex_init(&o->mu, NULL) == 0, "pthread_mutex_init");
        SYS_CHECK(pthread_cond_init(&o->cv, NULL) == 0, "pthread_cond_init");
        start_writer(o, own_cpus ? &cpus : NULL);
    }
    return o;
}

/* The writer finishes what it was handed, and is gone. */
static void join_writer(gol_output *o) {
    pthread_mutex_lock(&o->mu);
    o->stop = true; /* the writer drains the queue before it sees this */
    pthread_cond_broadcast(&o->cv);
    pthread_mutex_unlock(&o->mu);
    SYS_CHECK(pthread_join(o->thread, NULL) == 0, "pthread_join(hdf5-writer)");
}

/* A chunk is written only where it fits beside the chunk that may still be in flight (and 1 MiB
 * for the index and the metadata): a full disk is found here, on the main thread, before any
 * write fails, so every rank ends alike with one message, and neither HDF5 nor Open MPI's
 * MPI-IO prints its own. A disk filled by another program during a write still ends through
 * io_write_failed. */
static void room_or_exit(gol_output *o, int64_t chunk) {
    int64_t *gens;
    char name[GOL_PATH_MAX + 64];
    int64_t n = chunk_frames_and_name(o, chunk, &gens, name, sizeof name);
    free(gens);
    int64_t bytes = n * (o->meta.height * o->meta.row_bytes + (int64_t)sizeof(int64_t));
    bool in_flight = false;
    if (o->threaded) {
        pthread_mutex_lock(&o->mu);
        for (int s = 0; s < OUTPUT_SLOTS; s++)
            in_flight = in_flight || o->slot[s].state != SLOT_FREE;
        pthread_mutex_unlock(&o->mu);
    }
    int64_t need = bytes + (in_flight ? bytes : 0) + (1 << 20);
    char msg[1024];
    if (io_room_for(o->main_comm, name, need, msg, sizeof msg)) return;
    if (o->threaded) join_writer(o); /* the chunk in flight fits: it is finished and indexed */
    io_exit_all(o->main_comm, msg);
}

void output_write_chunk(gol_output *o, int slot, int64_t chunk, const void *frames_h) {
    if (slot < 0 || slot >= OUTPUT_SLOTS || chunk != o->next_chunk ||
        chunk >= o->nchunks)
        gol_die(__FILE__, __LINE__, "output_write_chunk", "golmpi",
                "chunks must be handed over in order, to slot 0 or 1");
    room_or_exit(o, chunk);
    o->next_chunk++;
    if (!o->threaded) {
        double t0 = now_s();
        if (o->stop_at >= 0) o->sched = schedule_truncate(&o->sched, o->stop_at);
        write_chunk(o, chunk, frames_h);
        refresh_index(o);
        o->wait_s += now_s() - t0; /* the main thread was held for the whole write */
        report_chunk(o, chunk, o->wait_s - o->wait_handed);
        o->wait_handed = o->wait_s;
        return;
    }
    output_wait_slot(o, slot); /* a slot handed over twice waits for its first write */
    pthread_mutex_lock(&o->mu);
    o->slot[slot].wait_s = o->wait_s - o->wait_handed;
    o->wait_handed = o->wait_s;
    o->slot[slot].state = SLOT_QUEUED;
    o->slot[slot].chunk = chunk;
    o->slot[slot].frames_h = frames_h;
    o->slot[slot].stop_at = o->stop_at;
    o->slot[slot].ticket = o->next_ticket++;
    pthread_cond_broadcast(&o->cv);
    pthread_mutex_unlock(&o->mu);
}

void output_wait_slot(gol_output *o, int slot) {
    if (!o->threaded) return;
    double t0 = now_s();
    pthread_mutex_lock(&o->mu);
    while (o->slot[slot].state != SLOT_FREE)
        pthread_cond_wait(&o->cv, &o->mu);
    pthread_mutex_unlock(&o->mu);
    o->wait_s += now_s() - t0;
}

/* Rank 0: the population series of the frames written, with their generations, to the caller. */
static void hand_over_series(gol_output *o, gol_output_stats *stats) {
    int64_t last = o->chunks_done - 1;
    stats->frames = last < 0 ? 0
                             : schedule_chunk_first(&o->sched, last) +
                                   schedule_chunk_frames(&o->sched, last);
    stats->population = o->population; /* the caller's now */
    o->population = NULL;
    stats->generations = NULL;
    if (!stats->population) return;
    stats->generations = gol_xmalloc((size_t)(stats->frames + 1) * sizeof(int64_t));
    for (int64_t f = 0; f < stats->frames; f++)
        stats->generations[f] = schedule_frame_generation(&o->sched, f);
}

void output_continue_series(gol_output *o, const io_series *prior) {
    o->prior = prior;
    if (!o->xdmf) return; /* rank 0 keeps the .xmf */
    char name[GOL_PATH_MAX + 64];
    for (int64_t c = 0, first = 0; c < prior->nchunks; first += prior->chunk_frames[c++]) {
        const int64_t *g = prior->generations + first;
        output_chunk_name(o->base, g[0], g[prior->chunk_frames[c] - 1], name, sizeof name);
        xdmf_add_chunk(o->xdmf, name, prior->chunk_frames[c], g);
    }
}

void output_on_chunk(gol_output *o, output_chunk_done *done, void *ctx) {
    o->chunk_done = done;
    o->chunk_ctx = ctx;
}

void output_stop_at(gol_output *o, int64_t g_stop) {
    /* the writer only reads o->sched until it takes a chunk handed over after this call */
    gol_schedule cut = schedule_truncate(&o->sched, g_stop);
    o->nchunks = schedule_chunks(&cut);
    o->stop_at = g_stop;
}

void output_close(gol_output *o, gol_output_stats *stats) {
    if (o->threaded) {
        double t0 = now_s();
        join_writer(o);
        o->wait_s += now_s() - t0;
        pthread_cond_destroy(&o->cv);
        pthread_mutex_destroy(&o->mu);
    }
    /* the index and XMF were refreshed after the last chunk, so they are final already, and the
     * output is free for the next run (output_check took the lock on rank 0) */
    if (o->slab.rank == 0) output_lock_release(o->base);
    int all_collective = 0;
    MPI_CHECK(MPI_Allreduce(&o->collective, &all_collective, 1, MPI_INT, MPI_MIN, o->comm));
    if (stats) {
        int64_t bytes = 0;
        for (int64_t c = 0; c < o->chunks_done; c++)
            bytes += chunk_bytes(o, c);
        stats->bytes_written = bytes;
        stats->files = o->chunks_done;
        stats->write_s = o->write_s;
        stats->wait_s = o->wait_s;
        stats->collective = o->chunks_done > 0 ? all_collective : 1;
        hand_over_series(o, stats);
    }
    free(o->population);
    io_tuning_free(&o->tuning);
    MPI_CHECK(MPI_Comm_free(&o->comm));
    xdmf_destroy(o->xdmf);
    free(o);
}
