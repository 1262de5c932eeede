#include "src/progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/check.h"

struct gol_progress {
    int show;
    int64_t g_start, g_end;
    double cells, t0, last;
};

gol_progress *progress_start(const gol_config *cfg, const gol_schedule *sched,
                             const gol_slab *slab, int rank) {
    gol_progress *p = gol_xcalloc(1, sizeof *p);
    p->show = rank == 0 && !cfg->quiet && isatty(STDERR_FILENO);
    p->g_start = sched->g_start;
    p->g_end = sched->g_end;
    p->cells = (double)slab->width * (double)slab->height;
    p->t0 = p->last = MPI_Wtime();
    return p;
}

int64_t progress_piece(const gol_progress *p, int64_t remaining) {
    /* about a hundred updates over the run, but never pieces so small that they cost speed */
    int64_t piece = (p->g_end - p->g_start) / 100;
    if (piece < 16) piece = 16;
    return p->show && piece < remaining ? piece : remaining;
}

void progress_update(gol_progress *p, int64_t generation) {
    if (!p->show) return;
    double now = MPI_Wtime();
    if (now - p->last < 0.5 && generation < p->g_end) return;
    p->last = now;
    double done = (double)(generation - p->g_start), total = (double)(p->g_end - p->g_start);
    double rate = done * p->cells / (now - p->t0 + 1e-12);
    double eta = done > 0 ? (now - p->t0) * (total - done) / done : 0;
    fprintf(stderr, "\rgeneration %lld/%lld  %5.1f%%  %.3g cell updates/s  ETA %.0f s   ",
            (long long)generation, (long long)p->g_end, total > 0 ? 100 * done / total : 100.0,
            rate, eta);
    fflush(stderr);
}

void progress_end(gol_progress *p) {
    if (p->show) fprintf(stderr, "\n");
    free(p);
}
