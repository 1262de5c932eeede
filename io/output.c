/* The output pipeline: the main thread hands a chunk's frames to one writer thread per rank,
 * which makes every HDF5 call (HDF5 1.10 is not thread-safe) on a communicator of its own, so the
 * generation loop goes on while the chunk is written (DESIGN, Output). How a frame's rows reach
 * the disk is io/chunk_h5.c's chunk_h5_write_frame, as io_tuning_choose (io/tuning.c) chose once:
 * O_DIRECT pwrite into the dataset where every rank's rows are 4 MiB or more and page-aligned,
 * else H5Dwrite through MPI-IO. */
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
#include "core/cudasim_hooks.h"
#include "core/phase.h"
#include "core/poll.h"
#include "core/trace.h"
#include "io/format.h"
#include "io/io_internal.h"
#include "io/output_guard.h"
#include "io/tuning.h"

#define OUTPUT_SLOTS 2
/* The main thread's nap while it waits for the writer to give a slot back. */
#define SLOT_NAP_S 100e-6

enum slot_state { SLOT_FREE, SLOT_QUEUED, SLOT_WRITING };

/* The writer state of a slot (the driver's host buffer of a chunk): QUEUED from its chunk's first
 * frame on; the writer takes it (WRITING), writes each frame as `ready` grows, and ends the file
 * once `complete` says no more frames come. */
typedef struct writer_state {
    enum slot_state state;
    int64_t chunk;
    const void *frames_h; /* the chunk's frames, one after the other */
    int64_t ready;        /* frames handed over so far */
    bool complete;        /* its last frame is among them */
    uint64_t ticket;      /* submission order: the writer takes the oldest first */
    int64_t stop_at; /* -1, or the run stopped at this generation: the writer cuts its schedule */
    double wait_s;   /* the main thread's wait before this chunk was handed over */
} writer_state;

struct gol_output {
    char base[GOL_PATH_MAX];
    io_meta meta;
    gol_slab slab;
    gol_schedule sched;
    MPI_Comm comm; /* the writer's own: MPI-IO and its barriers never meet the main thread's */
    MPI_Comm main_comm; /* the caller's, for what the main thread agrees on (room on the disk) */
    double timeout_s;   /* --timeout: the deadline of an agreed end (io_exit_all) */
    io_tuning tuning;

    bool threaded; /* false when MPI gives less than MPI_THREAD_MULTIPLE: write synchronously */
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    writer_state writer[OUTPUT_SLOTS]; /* the writer's state of each slot */
    uint64_t next_ticket;
    /* main thread: the frame it expects next (frames come in order: the index covers chunks
     * [0, done)), the schedule as the main thread knows it (cut when the run stops), and where the
     * run stopped (-1: it did not). The writer's own o->sched is cut when it ends the chunk whose
     * last frame came after the stop (output_stop_at). */
    int64_t next_chunk, next_frame;
    gol_schedule handed;
    int64_t stop_at;
    const io_series *prior; /* the series this run continues, or NULL (the caller's) */
    bool stop;

    /* owned by whichever thread writes; read by the main thread only after the join */
    chunk_h5 *file;      /* the chunk file being written */
    int64_t file_frames; /* the frames it was made for */
    int64_t file_written;              /* the frames written into it */
    char file_name[GOL_PATH_MAX + 64]; /* the name it was made for, for the trace's ranges */
    int64_t chunks_done;
    int collective, direct; /* 1 while every frame write went that way on this rank */
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

static void stop_writer(void *o);

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

/* A sleep, not a poll (core/poll.h): the slow disk it plays waits on nothing. */
static void write_delay(const gol_output *o, int64_t chunk) {
    if (chunk != o->delay_chunk) return;
    struct timespec ts = {(time_t)o->delay_s, (long)((o->delay_s - (time_t)o->delay_s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* The collective part, on whichever thread makes the HDF5 calls, in three steps: the file when
 * the chunk's first frame comes, each frame as it comes, and the rest when the last has. Each
 * step's time goes to write_s and to the chunk's. */
static void begin_chunk(gol_output *o, int64_t chunk) {
    gol_phase_enter(GOL_PHASE_CHUNK_WRITE, -1);
    double t0 = now_s();
    o->chunk_write_s = 0.0;
    write_delay(o, chunk);
    int64_t *gens;
    char *name = o->file_name;
    o->file_frames = chunk_frames_and_name(o, chunk, &gens, name, sizeof o->file_name);
    o->file_written = 0;
    free(gens);
    trace_pushf("create %s", io_basename(name));
    o->file = chunk_h5_create(o->comm, name, &o->meta, &o->slab, &o->tuning, o->file_frames);
    trace_pop();
    double dt = now_s() - t0;
    o->write_s += dt;
    o->chunk_write_s += dt;
}

static void write_frame(gol_output *o, const void *frame_h) {
    double t0 = now_s();
    trace_pushf("write %s frame %lld", io_basename(o->file_name), (long long)o->file_written++);
    chunk_h5_write_frame(o->file, frame_h);
    trace_pop();
    double dt = now_s() - t0;
    o->write_s += dt;
    o->chunk_write_s += dt;
}

/* stop_at >= 0: the run stopped at that generation, in this chunk or just after it, so the chunk
 * may end with fewer frames than its file was made for: that file goes, and the frames the slot
 * holds are written again into one of the right size (only ever at a stop). After it, frames_h
 * is free. */
static void end_chunk(gol_output *o, int64_t chunk, const void *frames_h, int64_t stop_at) {
    gol_phase_enter(GOL_PHASE_CHUNK_END, -1);
    double t0 = now_s();
    if (stop_at >= 0) o->sched = schedule_truncate(&o->sched, stop_at);
    int64_t *gens;
    char name[GOL_PATH_MAX + 64];
    int64_t n = chunk_frames_and_name(o, chunk, &gens, name, sizeof name);
    trace_pushf("finish %s", io_basename(name));
    int64_t *pop = o->population ? o->population + schedule_chunk_first(&o->sched, chunk) : NULL;
    enum io_transfer how;
    if (n == o->file_frames) {
        how = chunk_h5_finish(o->file, name, gens, frames_h, pop);
    } else {
        chunk_h5_abandon(o->file);
        how = chunk_h5_write(o->comm, name, &o->meta, &o->slab, &o->tuning, n, gens, frames_h, pop);
    }
    o->file = NULL;
    trace_pop();
    o->collective &= how == IO_TRANSFER_COLLECTIVE;
    o->direct &= how == IO_TRANSFER_DIRECT;
    o->chunks_done = chunk + 1;
    free(gens);
    double dt = now_s() - t0;
    o->write_s += dt;
    o->chunk_write_s += dt;
}

/* Rank 0 only, after the chunk's buffer went back: the index and XMF now cover that chunk too. */
static void refresh_index(gol_output *o) {
    if (o->slab.rank != 0 || o->chunks_done == 0) return;
    gol_phase_enter(GOL_PHASE_INDEX, -1);
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
        if (o->writer[s].state == SLOT_QUEUED &&
            (best < 0 || o->writer[s].ticket < o->writer[best].ticket))
            best = s;
    return best;
}

static int64_t frame_bytes(const gol_output *o) { return o->slab.rows * o->meta.row_bytes; }

static const void *slot_frame(const gol_output *o, const writer_state *ws, int64_t f) {
    return (const char *)ws->frames_h + f * frame_bytes(o);
}

/* Called with o->mu held, which it gives up while it writes: slot s's chunk, frame by frame as the
 * main thread hands them over, then its end, its index and its report. */
static void write_slot(gol_output *o, int s) {
    writer_state *ws = &o->writer[s];
    ws->state = SLOT_WRITING;
    int64_t chunk = ws->chunk;
    const void *frames_h = ws->frames_h;
    pthread_mutex_unlock(&o->mu);
    begin_chunk(o, chunk);
    for (int64_t f = 0;; f++) {
        pthread_mutex_lock(&o->mu);
        while (ws->ready <= f && !ws->complete)
            pthread_cond_wait(&o->cv, &o->mu);
        bool more = f < ws->ready;
        pthread_mutex_unlock(&o->mu);
        if (!more) break;
        cudasim_host_acquire(ws); /* the frame the main thread saw copied */
        cudasim_host_access(slot_frame(o, ws, f), (size_t)frame_bytes(o), CUDASIM_READ);
        write_frame(o, slot_frame(o, ws, f));
    }
    /* complete: stop_at and wait_s were set with it, and stay until the slot is free */
    double wait_s = ws->wait_s;
    cudasim_host_access(frames_h, (size_t)(ws->ready * frame_bytes(o)), CUDASIM_READ);
    end_chunk(o, chunk, frames_h, ws->stop_at);
    cudasim_host_release(ws); /* its reads are done: the main thread's output_wait_slot */
    pthread_mutex_lock(&o->mu);
    ws->state = SLOT_FREE; /* the index needs only the schedule, not the frames */
    pthread_cond_broadcast(&o->cv);
    pthread_mutex_unlock(&o->mu);
    refresh_index(o);
    report_chunk(o, chunk, wait_s);
    gol_phase_writer_idle();
    pthread_mutex_lock(&o->mu);
}

static void *writer_main(void *arg) {
    gol_output *o = arg;
    trace_name_thread("hdf5-writer");
    cudasim_host_thread(); /* its reads of the slots race with GPU copies into them */
    /* a thread-safe HDF5 keeps this per thread: no error stacks printed from this one either */
    H5_CHECK(H5Eset_auto2(H5E_DEFAULT, NULL, NULL));
    pthread_mutex_lock(&o->mu);
    for (;;) {
        int s;
        while ((s = oldest_queued(o)) < 0 && !o->stop)
            pthread_cond_wait(&o->cv, &o->mu);
        if (s < 0) break; /* stop, and nothing left */
        write_slot(o, s);
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
    o->direct = 1;
    o->handed = *sched;
    o->stop_at = -1;
    read_write_delay(o);
    MPI_CHECK(MPI_Comm_dup(comm, &o->comm));
    o->main_comm = comm;
    o->timeout_s = cfg->timeout_s;
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
        gol_helper_add(stop_writer, o);
    }
    return o;
}

/* The slots [first, end) of one wait for the writer. */
typedef struct slots_wait {
    gol_output *o;
    int first, end;
} slots_wait;

/* One ask: no slot of the wait is in the writer's hands. The writer's collective writes wait on
 * every rank's frames, so a rank whose GPU (or NCCL) stopped holds every writer: between asks
 * the watchdogs of host waits (core/check.h's gol_watch_poll) look at this rank's own GPU; a rank
 * that stopped answering is the heartbeat's to find. */
static int slots_free(void *arg, double since) {
    const slots_wait *w = arg;
    gol_output *o = w->o;
    bool busy = false;
    pthread_mutex_lock(&o->mu);
    for (int s = w->first; s < w->end; s++)
        busy = busy || o->writer[s].state != SLOT_FREE;
    pthread_mutex_unlock(&o->mu); /* the watchdogs never touch the output */
    if (busy) gol_watch_poll(since);
    return !busy;
}

/* Main thread: until the writer is done with the slots [first, end). Only the main thread hands
 * slots over, so a slot found free stays free. The nap is short next to a chunk's write. */
static void wait_slots(gol_output *o, int first, int end) {
    slots_wait w = {o, first, end};
    gol_poll_every(slots_free, &w, 0, SLOT_NAP_S);
    for (int s = first; s < end; s++)
        cudasim_host_acquire(&o->writer[s]); /* the writer's reads of it are done */
}

/* The writer finishes what it was handed, and is gone: the slots are waited for with the
 * watchdogs; what is left after them (rank 0's index) waits on no other rank. */
static void join_writer(gol_output *o) {
    gol_helper_remove(stop_writer, o);
    wait_slots(o, 0, OUTPUT_SLOTS);
    pthread_mutex_lock(&o->mu);
    o->stop = true; /* the writer drains the queue before it sees this */
    pthread_cond_broadcast(&o->cv);
    pthread_mutex_unlock(&o->mu);
    SYS_CHECK(pthread_join(o->thread, NULL) == 0, "pthread_join(hdf5-writer)");
}

/* The writer's stop in core/ending.h's registry: an agreed end before output_close
 * (io_exit_all) joins it the same way. */
static void stop_writer(void *o) { join_writer(o); }

/* A chunk is written only where it fits beside the chunk that may still be in flight (and 1 MiB
 * for the index and the metadata): a full disk is found here, on the main thread, before any
 * write fails, so every rank ends alike with one message, and neither HDF5 nor Open MPI's
 * MPI-IO prints its own. A disk filled by another program during a write still ends through
 * io_write_failed. Collective over the output's communicator (io_room_for's MPI_Bcast, and
 * io_exit_all's barrier when the room is short). */
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
            in_flight = in_flight || o->writer[s].state != SLOT_FREE;
        pthread_mutex_unlock(&o->mu);
    }
    int64_t need = bytes + (in_flight ? bytes : 0) + (1 << 20);
    char msg[1024];
    if (io_room_for(o->main_comm, name, need, msg, sizeof msg)) return;
    /* the agreed end stops the writer first: the chunk in flight fits, and is finished and
     * indexed before the lock goes */
    io_exit_all(o->main_comm, msg, o->timeout_s);
}

/* Without a writer thread: the same steps, on the main thread, as the frames come. */
static void write_frame_here(gol_output *o, int64_t chunk, int64_t f, bool last,
                             const void *frames_h, const void *frame_h) {
    double t0 = now_s();
    if (f == 0) begin_chunk(o, chunk);
    write_frame(o, frame_h);
    if (last) {
        end_chunk(o, chunk, frames_h, o->stop_at);
        refresh_index(o);
    }
    o->wait_s += now_s() - t0; /* the main thread was held for the whole write */
    if (!last) return;
    gol_phase_writer_idle();
    report_chunk(o, chunk, o->wait_s - o->wait_handed);
    o->wait_handed = o->wait_s;
}

void output_write_frame(gol_output *o, int slot, int64_t chunk, int64_t f, const void *frames_h) {
    const gol_schedule *s = &o->handed;
    if (slot < 0 || slot >= OUTPUT_SLOTS || chunk != o->next_chunk || f != o->next_frame ||
        chunk >= schedule_chunks(s))
        gol_die(__FILE__, __LINE__, "output_write_frame", "golmpi",
                "frames must be handed over in order, to slot 0 or 1");
    bool last = f == schedule_chunk_frames(s, chunk) - 1;
    o->next_frame = last ? 0 : f + 1;
    o->next_chunk += last;
    const void *frame_h = (const char *)frames_h + f * o->slab.rows * o->meta.row_bytes;
    if (f == 0) room_or_exit(o, chunk);
    if (!o->threaded) {
        write_frame_here(o, chunk, f, last, frames_h, frame_h);
        return;
    }
    pthread_mutex_lock(&o->mu);
    writer_state *ws = &o->writer[slot];
    if (f == 0 && ws->state != SLOT_FREE) /* the caller waits for it: output_wait_slot */
        gol_die(__FILE__, __LINE__, "output_write_frame", "golmpi",
                "a slot must be free (output_wait_slot) before its chunk's first frame");
    if (f == 0) {
        ws->state = SLOT_QUEUED;
        ws->chunk = chunk;
        ws->frames_h = frames_h;
        ws->ready = 0;
        ws->complete = false;
        ws->ticket = o->next_ticket++;
    }
    ws->ready = f + 1;
    cudasim_host_release(ws); /* the frame's copy, which the caller saw done */
    if (last) {
        ws->complete = true;
        ws->stop_at = o->stop_at;
        ws->wait_s = o->wait_s - o->wait_handed;
        o->wait_handed = o->wait_s;
    }
    pthread_cond_broadcast(&o->cv);
    pthread_mutex_unlock(&o->mu);
}

void output_wait_slot(gol_output *o, int slot) {
    if (!o->threaded) return;
    double t0 = now_s();
    wait_slots(o, slot, slot + 1);
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
    /* the writer cuts its own o->sched when it ends the chunk whose last frame comes next */
    o->handed = schedule_truncate(&o->handed, g_stop);
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
    int mine[2] = {o->collective, o->direct}, all[2];
    MPI_CHECK(MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MIN, o->comm));
    if (stats) {
        int64_t bytes = 0;
        for (int64_t c = 0; c < o->chunks_done; c++)
            bytes += chunk_bytes(o, c);
        stats->bytes_written = bytes;
        stats->files = o->chunks_done;
        stats->write_s = o->write_s;
        stats->wait_s = o->wait_s;
        stats->transfer = all[0] || o->chunks_done == 0 ? IO_TRANSFER_COLLECTIVE
                          : all[1]                      ? IO_TRANSFER_DIRECT
                                                        : IO_TRANSFER_INDEPENDENT;
        hand_over_series(o, stats);
    }
    free(o->population);
    io_tuning_free(&o->tuning);
    MPI_CHECK(MPI_Comm_free(&o->comm));
    xdmf_destroy(o->xdmf);
    free(o);
}
