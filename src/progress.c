#include "src/progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/check.h"

struct gol_progress {
    int show; /* rank 0, not --quiet, --progress not 0 */
    int tty;  /* a live line on a terminal; plain lines in a batch log */
    double interval_s;
    int64_t g_start, g_end;
    int64_t piece; /* generations between updates: a multiple of the halo cycle */
    double cells, t0, last;
    int64_t last_gen; /* the generation of the last line: the current rate is since then */
    double last_line;
};

gol_progress *progress_start(const gol_config *cfg, const gol_schedule *sched, const gol_slab *slab,
                             int64_t cycle, int rank) {
    gol_progress *p = gol_xcalloc(1, sizeof *p);
    p->show = rank == 0 && !cfg->quiet && cfg->progress_s > 0;
    p->tty = isatty(STDERR_FILENO);
    p->interval_s = p->tty ? 0.5 : cfg->progress_s;
    p->g_start = sched->g_start;
    p->g_end = sched->g_end;
    p->cells = (double)slab->width * (double)slab->height;
    p->t0 = p->last = p->last_line = MPI_Wtime();
    p->last_gen = p->g_start;
    /* about a thousand pieces over the run, but never pieces so small that they cost speed */
    int64_t piece = (p->g_end - p->g_start) / 1000;
    if (piece < 16) piece = 16;
    if (cycle < 1) cycle = 1;
    p->piece = (piece + cycle - 1) / cycle * cycle;
    return p;
}

/* The pieces depend only on the schedule and the plan, never on whether this rank shows progress
 * or on its stderr: every rank cuts its advance calls alike, so a backend that does something per
 * call (the CUDA backend's timed sample) does it for the same generations on every rank. They end
 * on multiples of the piece counted from the run's start, as the backends' halo cycles do: counted
 * from wherever the last frame fell, every pass after a frame off the cycle was cut in two at
 * each piece's end (1.2x the compute time with --save-every 250 at depth 16, docs/PERFORMANCE.md),
 * where now only the pass a frame falls in is. */
int64_t progress_piece_end(const gol_progress *p, int64_t g, int64_t to) {
    int64_t end = p->g_start + ((g - p->g_start) / p->piece + 1) * p->piece;
    return end < to ? end : to;
}

/* The current rate: over the generations since the previous line, not since the start, so it
 * is not the summary's compute rate or whole-run rate (README, "What a run prints"). */
static void print_line(gol_progress *p, int64_t generation, double now) {
    double done = (double)(generation - p->g_start), total = (double)(p->g_end - p->g_start);
    double rate = (double)(generation - p->last_gen) * p->cells / (now - p->last_line + 1e-12);
    double eta = done > 0 ? (now - p->t0) * (total - done) / done : 0;
    double pct = total > 0 ? 100 * done / total : 100.0;
    p->last_gen = generation;
    p->last_line = now;
    if (p->tty)
        fprintf(stderr, "\rgeneration %lld/%lld  %5.1f%%  current rate %.3g cell updates/s  "
                        "ETA %.0f s   ",
                (long long)generation, (long long)p->g_end, pct, rate, eta);
    else
        fprintf(stderr,
                "golmpi: generation %lld/%lld (%.1f%%), current rate %.3g cell updates/s, "
                "ETA %.0f s\n",
                (long long)generation, (long long)p->g_end, pct, rate, eta);
    fflush(stderr);
}

void progress_update(gol_progress *p, int64_t generation) {
    if (!p->show) return;
    double now = MPI_Wtime();
    /* a batch log gets the last line too, so even a short run shows that it ran to the end */
    if (now - p->last < p->interval_s && generation < p->g_end) return;
    p->last = now;
    print_line(p, generation, now);
}

void progress_end(gol_progress *p) {
    if (p->show && p->tty) fprintf(stderr, "\n");
    free(p);
}
