#include "src/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "src/progress.h"
#include "core/trace.h"

/* How this rank cuts its advance calls: the progress pieces, which depend only on the schedule and
 * so are the same on every rank, unless the debug setting GOLMPI_DEBUG_PIECE="rank:n" gives rank
 * `rank` pieces of n generations. That setting exists for tests/integration.py's "pieces" case
 * only: a backend must give the same cells however each rank cuts its calls (the CUDA backend's
 * eager and graph-replayed generations must line up across ranks by construction, not because
 * the pieces happen to agree). */
typedef struct advance_cut {
    gol_progress *prog;
    int64_t debug_piece; /* 0: the progress pieces */
} advance_cut;

static int64_t debug_piece(int rank) {
    const char *s = getenv("GOLMPI_DEBUG_PIECE");
    int who = -1;
    long long n = 0;
    if (!s || sscanf(s, "%d:%lld", &who, &n) != 2 || who != rank || n <= 0) return 0;
    fprintf(stderr, "golmpi: GOLMPI_DEBUG_PIECE: rank %d advances in pieces of %lld generations "
                    "(a debug setting)\n", rank, n);
    return (int64_t)n;
}

/* Advance to generation `to` in pieces, so that a long stretch without frames still shows
 * progress. */
static void advance_to(gol_backend *b, int64_t *g, int64_t to, const advance_cut *cut) {
    int64_t piece = cut->debug_piece ? cut->debug_piece : progress_piece(cut->prog, to - *g);
    while (*g < to) {
        int64_t n = to - *g < piece ? to - *g : piece;
        backend_advance(b, n);
        *g += n;
        progress_update(cut->prog, *g);
    }
}

static void run_no_output(gol_backend *b, const gol_schedule *sched, const advance_cut *cut) {
    int64_t g = sched->g_start;
    trace_pushf("generations %lld-%lld", (long long)sched->g_start, (long long)sched->g_end);
    advance_to(b, &g, sched->g_end, cut);
    trace_pop();
}

/* Chunk c's frames are in its slot's host buffer once the backend says so; then the writer takes
 * them. */
static void hand_over(gol_backend *b, gol_output *out, int64_t c, void *const slot_h[2]) {
    int slot = (int)(c % 2);
    backend_frame_wait(b, slot);
    output_write_chunk(out, slot, c, slot_h[slot]);
}

/* Chunk c's frames go into slot c % 2. Chunk c is handed to the writer only once the generations
 * up to chunk c + 1's first frame are queued: waiting for a chunk's last frame then never leaves a
 * GPU without work (a backend that computes on the host, the CPU, has the same overlap as
 * before: chunk c is written while chunk c + 1 computes). A slot is refilled only after the
 * writer is done with the chunk before last, just before its first frame. */
static void run_with_output(gol_backend *b, const gol_setup *s, const gol_slab *slab,
                            MPI_Comm comm, const advance_cut *cut, gol_output_stats *ostats) {
    const gol_schedule *sched = &s->sched;
    int64_t frame_bytes = slab->rows * frame_row_bytes(slab->width, s->cfg.frame_format);
    int64_t chunk_frames = schedule_chunk_frames(sched, 0), nchunks = schedule_chunks(sched);
    /* Two slots: the writer drains one while the generations fill the other. */
    void *slot_h[2];
    for (int i = 0; i < 2; i++) slot_h[i] = backend_host_alloc(b, chunk_frames * frame_bytes);

    gol_output *out = output_open(&s->cfg, slab, sched, comm);
    int64_t g = sched->g_start;
    for (int64_t c = 0; c < nchunks; c++) {
        int slot = (int)(c % 2);
        int64_t first = schedule_chunk_first(sched, c), n = schedule_chunk_frames(sched, c);
        trace_pushf("generations %lld-%lld", (long long)g,
                    (long long)schedule_frame_generation(sched, first + n - 1));
        for (int64_t f = 0; f < n; f++) {
            advance_to(b, &g, schedule_frame_generation(sched, first + f), cut);
            if (f == 0) {
                if (c > 0) hand_over(b, out, c - 1, slot_h);
                output_wait_slot(out, slot); /* the chunk before last is on disk */
            }
            backend_frame_begin(b, slot, s->cfg.frame_format,
                                (char *)slot_h[slot] + f * frame_bytes);
        }
        trace_pop();
    }
    hand_over(b, out, nchunks - 1, slot_h);
    output_close(out, ostats);
    for (int i = 0; i < 2; i++) backend_host_free(b, slot_h[i]);
}

void run_generations(gol_backend *b, const gol_setup *s, const gol_slab *slab, MPI_Comm comm,
                     gol_run_result *res) {
    memset(res, 0, sizeof *res);
    const gol_schedule *sched = &s->sched;
    int rank;
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    gol_progress *prog = progress_start(&s->cfg, sched, slab, rank);
    advance_cut cut = {prog, debug_piece(rank)};

    MPI_CHECK(MPI_Barrier(comm));
    double t0 = MPI_Wtime();
    if (s->cfg.no_output)
        run_no_output(b, sched, &cut);
    else
        run_with_output(b, s, slab, comm, &cut, &res->output);
    int64_t pop = backend_population(b); /* also waits for the device to finish */
    double wall = MPI_Wtime() - t0;
    progress_end(prog);

    MPI_CHECK(MPI_Allreduce(&wall, &res->wall_s, 1, MPI_DOUBLE, MPI_MAX, comm));
    MPI_CHECK(MPI_Allreduce(&pop, &res->population, 1, MPI_INT64_T, MPI_SUM, comm));
    res->generations = sched->g_end - sched->g_start;
    res->frames = s->cfg.no_output ? 0 : schedule_frames(sched);
    res->times = backend_times(b);
}
