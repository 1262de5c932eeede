/* The simulated GPU's race check (tests/cudasim/sim.h): every range an operation touches is kept,
 * with the operation's stream slot and tick, until every later operation is sure to be ordered
 * after it. A new operation's ranges are checked against those kept: the same bytes, one side a
 * write, and the old operation's tick not in the new one's clock is a race. The check is made at
 * enqueue, where CUDA's order is fixed, so it does not depend on how the schedule went. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

typedef struct record {
    uintptr_t lo, hi;
    int mode, slot;
    uint32_t tick;
    const char *what;
    sim_site site;
} record;

static record *records;
static int nrecords, cap, gc_at = 256;

enum { REPORTS_PRINTED = 5 };

static void report(const record *old, const sim_op *op, const cudasim_access *a, int slot) {
    sim.races++;
    if (sim.races > REPORTS_PRINTED) return;
    uintptr_t lo = a->p ? (uintptr_t)a->p : 0, hi = lo + a->bytes;
    if (old->lo > lo) lo = old->lo;
    if (old->hi < hi) hi = old->hi;
    fprintf(stderr,
            "cudasim: rank %d: RACE on %s memory [%#lx, %#lx): neither operation is ordered "
            "before the other (no stream order, event wait or host synchronisation between "
            "them)\n  %s (%s, stream slot %d, op %u), enqueued at:\n",
            sim_rank(), sim_is_device((void *)lo, 1) ? "device" : "pinned host", (unsigned long)lo,
            (unsigned long)hi, op->what, a->mode & CUDASIM_WRITE ? "writes" : "reads", slot,
            op->tick);
    sim_site_print(&op->site, "    ");
    fprintf(stderr, "  %s (%s, stream slot %d, op %u), enqueued at:\n", old->what,
            old->mode & CUDASIM_WRITE ? "writes" : "reads", old->slot, old->tick);
    sim_site_print(&old->site, "    ");
    const char *dir = getenv("GOLMPI_SIM_REPORTS");
    if (dir && *dir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/race.rank%d", dir, sim_rank());
        FILE *f = fopen(path, "a");
        if (f) {
            fprintf(f, "%s vs %s on [%#lx, %#lx)\n", op->what, old->what, (unsigned long)lo,
                    (unsigned long)hi);
            fclose(f);
        }
    }
}

/* Kept ranges every stream and the host have passed: no later operation can race with them. */
static void collect(void) {
    int kept = 0;
    for (int i = 0; i < nrecords; i++) {
        record *r = &records[i];
        int passed = sim.host.c[r->slot] >= r->tick;
        for (int k = 0; k < sim.slots && passed; k++)
            if (sim.streams[k] && sim.streams[k]->vc.c[r->slot] < r->tick) passed = 0;
        if (!passed) records[kept++] = *r;
    }
    nrecords = kept;
    gc_at = 2 * nrecords > 256 ? 2 * nrecords : 256;
}

static void keep(const sim_op *op, const cudasim_access *a, int slot, const sim_vc *vc) {
    uintptr_t lo = (uintptr_t)a->p, hi = lo + a->bytes;
    /* an earlier touch inside this one and ordered before it says nothing more, unless it
     * wrote and this only reads */
    int kept = 0;
    for (int i = 0; i < nrecords; i++) {
        record *r = &records[i];
        int inside = r->lo >= lo && r->hi <= hi;
        int covered =
            vc->c[r->slot] >= r->tick && ((a->mode & CUDASIM_WRITE) || !(r->mode & CUDASIM_WRITE));
        if (!(inside && covered)) records[kept++] = *r;
    }
    nrecords = kept;
    if (nrecords == cap) {
        cap = cap ? 2 * cap : 1024;
        records = realloc(records, (size_t)cap * sizeof *records);
    }
    records[nrecords++] = (record){.lo = lo,
                                   .hi = hi,
                                   .mode = a->mode,
                                   .slot = slot,
                                   .tick = op->tick,
                                   .what = op->what,
                                   .site = op->site};
}

void sim_race_check(int slot, const sim_op *op, const sim_vc *vc) {
    for (int k = 0; k < op->nacc; k++) {
        const cudasim_access *a = &op->acc[k];
        if (!a->bytes) continue;
        if (!sim_is_device(a->p, a->bytes) && !sim_is_pinned(a->p, a->bytes)) continue;
        uintptr_t lo = (uintptr_t)a->p, hi = lo + a->bytes;
        for (int i = 0; i < nrecords; i++) {
            const record *r = &records[i];
            if (r->hi <= lo || r->lo >= hi) continue;
            if (!((r->mode | a->mode) & CUDASIM_WRITE)) continue;
            if (vc->c[r->slot] >= r->tick) continue;
            report(r, op, a, slot);
            break;
        }
    }
    for (int k = 0; k < op->nacc; k++) {
        const cudasim_access *a = &op->acc[k];
        if (a->bytes && (sim_is_device(a->p, a->bytes) || sim_is_pinned(a->p, a->bytes)))
            keep(op, a, slot, vc);
    }
    if (nrecords > gc_at) collect();
}

/* Freed memory: what was kept of it goes (a new allocation there is new memory). */
void sim_race_forget(const void *p, size_t bytes) {
    uintptr_t lo = (uintptr_t)p, hi = lo + bytes;
    int kept = 0;
    for (int i = 0; i < nrecords; i++)
        if (records[i].hi <= lo || records[i].lo >= hi) records[kept++] = records[i];
    nrecords = kept;
}

/* ---- host threads of their own (cudasim.h) ------------------------------------------------ */

/* A declared thread's clock slot (-1: the thread is the host, sim.host), its clock, its accesses.
 */
static __thread int thread_slot = -1;
static __thread sim_vc *thread_vc;
static __thread uint32_t thread_tick;

enum { MAX_TOKENS = 64 };
static struct {
    const void *token;
    sim_vc vc;
} tokens[MAX_TOKENS];
static int ntokens;

/* Under the lock: the clock released under token (made on first use). */
static sim_vc *token_vc(const void *token) {
    for (int i = 0; i < ntokens; i++)
        if (tokens[i].token == token) return &tokens[i].vc;
    if (ntokens == MAX_TOKENS) sim_fatal("more than %d hand-over tokens", MAX_TOKENS);
    tokens[ntokens].token = token;
    memset(&tokens[ntokens].vc, 0, sizeof tokens[ntokens].vc);
    return &tokens[ntokens++].vc;
}

void cudasim_host_thread(void) {
    sim_init();
    sim_lock();
    if (thread_slot < 0) {
        if (sim.slots == SIM_HOST_SLOT) sim_fatal("more than %d clock slots", SIM_HOST_SLOT);
        thread_slot = sim.slots++;
        thread_vc = calloc(1, sizeof *thread_vc);
    }
    sim_unlock();
}

void cudasim_host_access(const void *p, size_t bytes, int mode) {
    if (thread_slot < 0 || !bytes) return;
    sim_op op = {.kind = OP_KERNEL, .what = "a host thread's access (cudasim_host_access)"};
    op.acc[0] = (cudasim_access){p, bytes, mode};
    op.nacc = 1;
    sim_site_here(&op.site);
    sim_lock();
    op.tick = ++thread_tick;
    thread_vc->c[thread_slot] = op.tick;
    sim_race_check(thread_slot, &op, thread_vc);
    sim_unlock();
}

void cudasim_host_release(const void *token) {
    sim_init();
    sim_lock();
    sim_vc_join(token_vc(token), thread_slot < 0 ? &sim.host : thread_vc);
    sim_unlock();
}

void cudasim_host_acquire(const void *token) {
    sim_init();
    sim_lock();
    if (thread_slot < 0)
        sim_host_sees(token_vc(token));
    else
        sim_vc_join(thread_vc, token_vc(token));
    sim_unlock();
}
