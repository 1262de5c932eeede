#include "src/run.h"

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "core/phase.h"
#include "core/poll.h"
#include "core/trace.h"
#include "src/progress.h"

/* The pieces a run advances in (progress_piece_end: the same on every rank, from the schedule
 * alone), and what happens at each piece's end: the progress line, then the stop vote. */
typedef struct stop_vote stop_vote;
typedef struct run_pieces {
    gol_progress *prog;  /* where each piece ends, and the line it updates */
    stop_vote *vote;     /* the ranks' vote on a stop, at each piece's end */
    int64_t debug_piece; /* GOLMPI_DEBUG_PIECE: this rank's calls cut finer; 0: not */
} run_pieces;

/* The debug setting GOLMPI_DEBUG_PIECE="rank:n" cuts rank `rank`'s advance calls into at most n
 * generations, inside the same pieces (the ranks still vote at the same generations). It exists
 * for tests/integration.py's "pieces" case only: a backend must give the same cells however each
 * rank cuts its calls (the CUDA backend's eager and graph-replayed generations must line up
 * across ranks by construction, not because the pieces happen to agree). */
static int64_t debug_piece(int rank) {
    const char *s = getenv("GOLMPI_DEBUG_PIECE");
    int who = -1;
    long long n = 0;
    if (!s || sscanf(s, "%d:%lld", &who, &n) != 2 || who != rank || n <= 0) return 0;
    fprintf(stderr,
            "golmpi: GOLMPI_DEBUG_PIECE: rank %d advances in pieces of %lld generations "
            "(a debug setting)\n",
            rank, n);
    return (int64_t)n;
}

/* ---- stopping on a signal (DESIGN: Checkpoint and resume) ---------------------------------- */

/* Set by the handler and only read here: the handler does nothing else. */
static volatile sig_atomic_t stop_requested;

void run_stop_on_signal(int signo) {
    (void)signo;
    stop_requested = 1;
}

/* The ranks vote at every piece boundary, which depends only on the schedule and so falls on the
 * same generations on every rank: a non-blocking MAX of the flag, started at one boundary and
 * completed at the next, so no rank ever waits on the vote while it has generations to compute.
 * The run stops at the boundary where the vote that says "stop" completes: one signalled rank is
 * enough, and every rank stops at the same generation. */
struct stop_vote {
    MPI_Comm comm; /* its own, so the vote never meets another collective */
    MPI_Request req;
    int mine, all;
    bool stopped; /* agreed: no more generations */
};

/* One ask of vote_wait: the vote completed; else the watchdogs of host waits (core/check.h's
 * gol_watch_poll), since the vote waits on every rank, and a rank up to 80 generations ahead of
 * its GPU must still see that GPU, or NCCL, stop (the CUDA backend's watchdog); a rank that
 * stopped answering is the heartbeat's to find, wherever this one waits. */
static int vote_done(void *req, double since) {
    int done = 0;
    MPI_CHECK(MPI_Test(req, &done, MPI_STATUS_IGNORE));
    if (!done) gol_watch_poll(since);
    return done;
}

/* MPI_Wait, polled (core/poll.h). The vote usually completed long ago: the first ask returns. */
static void vote_wait(MPI_Request *req) { gol_poll_until(vote_done, req, 0); }

/* Collective over comm (it duplicates comm for the vote). */
static void vote_begin(stop_vote *v, MPI_Comm comm) {
    MPI_CHECK(MPI_Comm_dup(comm, &v->comm));
    v->req = MPI_REQUEST_NULL;
    v->mine = v->all = 0;
    v->stopped = false;
}

/* Collective, at a piece boundary: sets v->stopped when the ranks agreed to stop here. */
static void vote_at_boundary(stop_vote *v) {
    if (v->req != MPI_REQUEST_NULL) {
        gol_phase_enter(GOL_PHASE_VOTE, -1);
        vote_wait(&v->req);
        if (v->all) {
            v->stopped = true;
            gol_phase_enter(GOL_PHASE_CHECKPOINT, -1); /* the last frame and its chunk's end */
            return;
        }
    }
    v->mine = stop_requested != 0;
    MPI_CHECK(MPI_Iallreduce(&v->mine, &v->all, 1, MPI_INT, MPI_MAX, v->comm, &v->req));
}

/* Collective over the vote's communicator (it frees it). */
static void vote_end(stop_vote *v) {
    if (v->req != MPI_REQUEST_NULL) vote_wait(&v->req);
    MPI_CHECK(MPI_Comm_free(&v->comm));
}

/* Generations *g to end, in backend calls: one, or as many as GOLMPI_DEBUG_PIECE cuts.
 * backend_advance is the backend's ops->advance (backend/backend.c): cuda_advance in
 * cuda/backend_cuda.c, whose pass ends a cycle with the exchange, or cpu_advance in
 * cpu/backend_cpu.c, which posts it at a cycle's start. */
static void advance_piece(gol_backend *b, int64_t *g, int64_t end, int64_t debug_piece) {
    while (*g < end) {
        int64_t n = end - *g;
        if (debug_piece && debug_piece < n) n = debug_piece;
        backend_advance(b, n);
        *g += n;
    }
}

/* A piece ended at generation g: the progress line, then the vote (collective). */
static void piece_done(const run_pieces *p, int64_t g) {
    progress_update(p->prog, g);
    vote_at_boundary(p->vote);
}

/* Advance to generation `to` in pieces, so that a long stretch without frames still shows
 * progress, and a stop can be agreed on. When the ranks agree to stop (vote->stopped), *g is the
 * generation they stopped at, `to` or before. */
static void advance_to(gol_backend *b, int64_t *g, int64_t to, const run_pieces *p) {
    while (*g < to && !p->vote->stopped) {
        advance_piece(b, g, progress_piece_end(p->prog, *g, to), p->debug_piece);
        piece_done(p, *g);
    }
}

/* Returns the generation the run ended at: g_end, or where the ranks agreed to stop. */
static int64_t run_no_output(gol_backend *b, const gol_schedule *sched, const run_pieces *pieces) {
    int64_t g = sched->g_start;
    trace_pushf("generations %lld-%lld", (long long)sched->g_start, (long long)sched->g_end);
    advance_to(b, &g, sched->g_end, pieces);
    trace_pop();
    return g;
}

/* The frame the driver began last and has not handed to the writer yet (none: chunk < 0). */
typedef struct pending_frame {
    int64_t chunk, f;
} pending_frame;

/* A frame is in its slot's host buffer once the backend says so; then the writer takes it. The
 * backend's share of a chunk is read at its last frame, which waited for its generations. */
static void hand_over(gol_backend *b, gol_output *out, gol_chunk_log *log,
                      const gol_schedule *sched, pending_frame *p, void *const slot_h[2]) {
    if (p->chunk < 0) return;
    gol_phase_enter(GOL_PHASE_HANDOVER, -1);
    int64_t c = p->chunk;
    int slot = (int)(c % 2);
    backend_frame_wait(b, slot);
    if (p->f == schedule_chunk_frames(sched, c) - 1)
        chunk_log_backend(log, c, backend_chunk_times(b, c, slot));
    output_write_frame(out, slot, c, p->f, slot_h[slot]);
    p->chunk = -1;
}

void run_slots_alloc(gol_backend *b, const gol_plan *plan, void *slot_h[2]) {
    /* Two slots: the writer drains one while the generations fill the other. */
    for (int i = 0; i < 2; i++)
        slot_h[i] = backend_host_alloc(b, plan_slot_bytes(plan));
}

/* Chunk c's frames go into slot c % 2, and each frame goes to the writer as soon as it is in
 * (DESIGN, Output): at once on the CPU, and on a device once the generations up to the next frame
 * are queued (plan->frame_lag), so waiting for a frame never leaves the device without work. The
 * writer writes each frame while the next computes, so only the last frame's write and the
 * chunk's end are left when the generations are done, whatever --chunk is. A slot is refilled
 * only after the writer is done with the chunk before last, just before its first frame.
 *
 * When the ranks agree to stop, the generation they stopped at becomes the run's last frame: the
 * schedule is cut there (*sched), so the loops end with it, in a shorter last chunk. */
static void run_with_output(gol_backend *b, const gol_run_inputs *in, MPI_Comm comm,
                            const run_pieces *pieces, void *const slot_h[2], gol_schedule *sched,
                            gol_run_result *res) {
    const gol_plan *plan = in->plan;
    int64_t frame_bytes = plan->slab.rows * frame_row_bytes(plan->slab.width, plan->frame_format);
    gol_output *out = output_open(in->cfg, &plan->slab, sched, comm);
    if (in->series) output_continue_series(out, in->series);
    gol_chunk_log *log = chunk_log_open(sched, in->cfg->profile, comm);
    chunk_log_attach(log, out);
    pending_frame pending = {-1, 0};
    int64_t g = sched->g_start;
    for (int64_t c = 0; c < schedule_chunks(sched); c++) {
        int slot = (int)(c % 2);
        int64_t first = schedule_chunk_first(sched, c), n = schedule_chunk_frames(sched, c);
        backend_chunk_begin(b, c);
        chunk_log_begin(log, c, g);
        trace_pushf("generations %lld-%lld", (long long)g,
                    (long long)schedule_frame_generation(sched, first + n - 1));
        for (int64_t f = 0; f < schedule_chunk_frames(sched, c); f++) {
            advance_to(b, &g, schedule_frame_generation(sched, first + f), pieces);
            if (pieces->vote->stopped && g < sched->g_end) {
                *sched = schedule_truncate(sched, g); /* frame first + f is the last */
                output_stop_at(out, g);
            }
            hand_over(b, out, log, sched, &pending, slot_h); /* the frame before: lag 1 */
            if (f == 0) {
                gol_phase_enter(GOL_PHASE_HANDOVER, -1);
                trace_pushf("wait slot %d", slot);
                output_wait_slot(out, slot); /* the chunk before last is on disk */
                trace_pop();
            }
            /* CUDA: cuda_frame_begin (cuda/backend_cuda.c) queues the owed generations, then
             * cuda/cuda_frames.c copies the frame to the slot on the slot's copy stream */
            backend_frame_begin(b, slot, plan->frame_format,
                                (char *)slot_h[slot] + f * frame_bytes);
            pending = (pending_frame){c, f};
            if (plan->frame_lag == 0) hand_over(b, out, log, sched, &pending, slot_h);
        }
        trace_pop();
    }
    hand_over(b, out, log, sched, &pending, slot_h);
    output_close(out, &res->output);
    chunk_log_close(log, &res->output, in->cfg->stats[0] != '\0', &res->chunks);
}

void run_generations(gol_backend *b, const gol_run_inputs *in, MPI_Comm comm,
                     gol_run_result *res) {
    const gol_schedule *planned = in->sched;
    memset(res, 0, sizeof *res);
    res->sched = *planned; /* cut short if the ranks agree to stop */
    int rank;
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    gol_progress *prog = progress_start(in->cfg, planned, &in->plan->slab, in->plan->depth, rank);
    stop_vote vote;
    vote_begin(&vote, comm);
    run_pieces pieces = {prog, &vote, debug_piece(rank)};

    /* the frame slots before the clock starts, as the backend's other memory: a backend may touch
     * them as it allocates (pinned memory is; the CPU's pages are placed where they are used) */
    void *slot_h[2] = {NULL, NULL};
    if (in->plan->output) run_slots_alloc(b, in->plan, slot_h);
    MPI_CHECK(MPI_Barrier(comm));
    double t0 = MPI_Wtime();
    if (!in->plan->output)
        res->sched = schedule_truncate(planned, run_no_output(b, planned, &pieces));
    else
        run_with_output(b, in, comm, &pieces, slot_h, &res->sched, res);
    int64_t pop = backend_population(b); /* also waits for the device to finish */
    double wall = MPI_Wtime() - t0;
    vote_end(&vote);
    progress_end(prog);
    for (int i = 0; i < 2; i++)
        backend_host_free(b, slot_h[i]);

    MPI_CHECK(MPI_Allreduce(&wall, &res->wall_s, 1, MPI_DOUBLE, MPI_MAX, comm));
    MPI_CHECK(MPI_Allreduce(&pop, &res->population, 1, MPI_INT64_T, MPI_SUM, comm));
    res->stopped = res->sched.g_end < planned->g_end;
    res->generations = res->sched.g_end - res->sched.g_start;
    res->frames = in->plan->output ? schedule_frames(&res->sched) : 0;
    res->times = backend_times(b);
}
