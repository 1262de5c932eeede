#include "src/run.h"

#include <string.h>

#include "core/check.h"
#include "src/progress.h"
#include "core/trace.h"

/* Advance to generation `to` in pieces, so that a long stretch without frames still shows
 * progress. */
static void advance_to(gol_backend *b, int64_t *g, int64_t to, gol_progress *prog) {
    int64_t piece = progress_piece(prog, to - *g);
    while (*g < to) {
        int64_t n = to - *g < piece ? to - *g : piece;
        backend_advance(b, n);
        *g += n;
        progress_update(prog, *g);
    }
}

static void run_no_output(gol_backend *b, const gol_schedule *sched, gol_progress *prog) {
    int64_t g = sched->g_start;
    trace_pushf("generations %lld-%lld", (long long)sched->g_start, (long long)sched->g_end);
    advance_to(b, &g, sched->g_end, prog);
    trace_pop();
}

static void run_with_output(gol_backend *b, const gol_setup *s, const gol_slab *slab,
                            MPI_Comm comm, gol_progress *prog, gol_output_stats *ostats) {
    const gol_schedule *sched = &s->sched;
    int64_t frame_bytes = slab->rows * frame_row_bytes(slab->width, s->cfg.frame_format);
    int64_t chunk_frames = schedule_chunk_frames(sched, 0);
    /* Two slots: the writer drains one while the generations fill the other. */
    void *slot_h[2];
    for (int i = 0; i < 2; i++) slot_h[i] = backend_host_alloc(b, chunk_frames * frame_bytes);

    gol_output *out = output_open(&s->cfg, slab, sched, comm);
    int64_t g = sched->g_start;
    for (int64_t c = 0; c < schedule_chunks(sched); c++) {
        int slot = (int)(c % 2);
        output_wait_slot(out, slot); /* its previous chunk is on disk */
        int64_t first = schedule_chunk_first(sched, c), n = schedule_chunk_frames(sched, c);
        trace_pushf("generations %lld-%lld", (long long)g,
                    (long long)schedule_frame_generation(sched, first + n - 1));
        for (int64_t f = 0; f < n; f++) {
            advance_to(b, &g, schedule_frame_generation(sched, first + f), prog);
            backend_frame_begin(b, slot, s->cfg.frame_format, (char *)slot_h[slot] + f * frame_bytes);
        }
        trace_pop();
        backend_frame_wait(b, slot);
        output_write_chunk(out, slot, c, slot_h[slot]);
    }
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

    MPI_CHECK(MPI_Barrier(comm));
    double t0 = MPI_Wtime();
    if (s->cfg.no_output)
        run_no_output(b, sched, prog);
    else
        run_with_output(b, s, slab, comm, prog, &res->output);
    int64_t pop = backend_population(b); /* also waits for the device to finish */
    double wall = MPI_Wtime() - t0;
    progress_end(prog);

    MPI_CHECK(MPI_Allreduce(&wall, &res->wall_s, 1, MPI_DOUBLE, MPI_MAX, comm));
    MPI_CHECK(MPI_Allreduce(&pop, &res->population, 1, MPI_INT64_T, MPI_SUM, comm));
    res->generations = sched->g_end - sched->g_start;
    res->frames = s->cfg.no_output ? 0 : schedule_frames(sched);
    res->times = backend_times(b);
}
