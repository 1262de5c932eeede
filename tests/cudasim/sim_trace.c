/* The simulated GPU's trace of stream order (sim_trace.h). GOLMPI_SIM_TRACE=DIR: every operation
 * enqueued on a stream (graph replays included: a launch enqueues its items) is one line of
 * DIR/trace.rank<r>, in enqueue order:
 *   op SLOT TICK PRIORITY INTERNAL KIND NAME | W ADDR BYTES ... | vc SLOT:TICK ...
 * SLOT and TICK place it (its stream's clock slot, its position there), PRIORITY and INTERNAL
 * its stream (INTERNAL 1: a graph's own lane), KIND one of kernel copy set record wait nccl mark
 * (a graph launch's end), NAME
 * its name with spaces as '_'; then the byte ranges it touches (W: r, w or rw) and its vector
 * clock, the nonzero entries: operation A is ordered before B exactly when B's clock holds A's
 * slot at A's tick or later (sim.h), the relation the race check uses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_trace.h"

static FILE *trace;
static int opened;

static FILE *trace_file(void) {
    if (opened) return trace;
    opened = 1;
    const char *dir = getenv("GOLMPI_SIM_TRACE");
    if (!dir || !*dir) return NULL;
    char path[4096];
    snprintf(path, sizeof path, "%s/trace.rank%d", dir, sim_rank());
    trace = fopen(path, "w");
    if (!trace) sim_fatal("GOLMPI_SIM_TRACE: cannot write %s", path);
    return trace;
}

void sim_trace_op(const struct CUstream_st *s, const sim_op *op, const sim_vc *vc) {
    static const char *kinds[] = {"kernel", "copy", "set", "record", "wait", "nccl", "mark"};
    FILE *f = trace_file();
    if (!f) return;
    fprintf(f, "op %d %u %d %d %s ", s->slot, op->tick, s->priority, s->internal, kinds[op->kind]);
    for (const char *c = op->what ? op->what : "?"; *c; c++)
        fputc(*c == ' ' ? '_' : *c, f);
    fputs(" |", f);
    for (int k = 0; k < op->nacc; k++) {
        const cudasim_access *a = &op->acc[k];
        if (!a->bytes) continue;
        const char *m = a->mode == (CUDASIM_READ | CUDASIM_WRITE) ? "rw"
                        : a->mode & CUDASIM_WRITE                 ? "w"
                                                                  : "r";
        fprintf(f, " %s %#lx %zu", m, (unsigned long)(uintptr_t)a->p, a->bytes);
    }
    fputs(" | vc", f);
    for (int i = 0; i < sim.slots; i++)
        if (vc->c[i]) fprintf(f, " %d:%u", i, vc->c[i]);
    fputc('\n', f);
    fflush(f);
}
