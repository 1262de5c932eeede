#include "core/phase.h"

#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const names[GOL_PHASE_COUNT] = {
    [GOL_PHASE_NONE] = "none",
    [GOL_PHASE_STARTUP] = "startup",
    [GOL_PHASE_WIREUP] = "wireup",
    [GOL_PHASE_FIRST_EXCHANGE] = "first_exchange",
    [GOL_PHASE_EXCHANGE] = "exchange",
    [GOL_PHASE_COMPUTE] = "compute",
    [GOL_PHASE_VOTE] = "vote",
    [GOL_PHASE_HANDOVER] = "handover",
    [GOL_PHASE_CHUNK_WRITE] = "chunk_write",
    [GOL_PHASE_CHUNK_END] = "chunk_end",
    [GOL_PHASE_INDEX] = "index",
    [GOL_PHASE_RENAME] = "rename",
    [GOL_PHASE_CHECKPOINT] = "checkpoint",
    [GOL_PHASE_REPORT] = "report",
    [GOL_PHASE_FINALIZE] = "finalize",
};

/* The writer's phases go to its lane, whichever thread runs them. */
static int lane_of(gol_phase p) {
    return p == GOL_PHASE_CHUNK_WRITE || p == GOL_PHASE_CHUNK_END || p == GOL_PHASE_INDEX ||
           p == GOL_PHASE_RENAME;
}

/* Written by one thread each, read by any (the heartbeat's message): plain atomics suffice. */
static int lane_phase[2], lane_peer[2];

/* GOLMPI_DEBUG_HOLD="phase:rank[:n]", read once; junk is ignored, as the other debug settings. */
static struct {
    gol_phase phase;
    int rank;
    long entries; /* the entry that holds (1: the first) */
    long seen;    /* entries so far; atomic */
} hold = {GOL_PHASE_NONE, -1, 0, 0};
static pthread_once_t hold_once = PTHREAD_ONCE_INIT;

static void hold_read(void) {
    const char *s = getenv("GOLMPI_DEBUG_HOLD");
    char name[32];
    int rank = -1, used = 0;
    long n = 1;
    if (!s || sscanf(s, "%31[a-z_]:%d%n", name, &rank, &used) != 2 || rank < 0) return;
    if (s[used] == ':' && (sscanf(s + used + 1, "%ld", &n) != 1 || n < 1)) return;
    if (s[used] != '\0' && s[used] != ':') return;
    for (int p = GOL_PHASE_STARTUP; p < GOL_PHASE_COUNT; p++)
        if (strcmp(name, names[p]) == 0) {
            hold.phase = (gol_phase)p;
            hold.rank = rank;
            hold.entries = n;
        }
}

/* The hook: a test sees the line, then stops or kills this process in this very phase. */
static void hold_here(gol_phase phase) {
    pthread_once(&hold_once, hold_read);
    if (phase != hold.phase) return;
    int inited = 0, rank = -1;
    MPI_Initialized(&inited);
    if (inited) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != hold.rank || __atomic_add_fetch(&hold.seen, 1, __ATOMIC_RELAXED) != hold.entries)
        return;
    fprintf(stderr, "golmpi: debug: rank %d holding at %s\n", rank, names[phase]);
    fflush(stderr);
    for (;;)
        pause(); /* a handled signal (SIGTERM's stop request) wakes it: it holds on */
}

void gol_phase_enter(gol_phase phase, int peer) {
    int lane = lane_of(phase);
    __atomic_store_n(&lane_peer[lane], peer, __ATOMIC_RELAXED);
    __atomic_store_n(&lane_phase[lane], (int)phase, __ATOMIC_RELAXED);
    hold_here(phase);
}

void gol_phase_writer_idle(void) {
    __atomic_store_n(&lane_phase[1], (int)GOL_PHASE_NONE, __ATOMIC_RELAXED);
}

const char *gol_phase_name(gol_phase phase) {
    return phase >= 0 && phase < GOL_PHASE_COUNT ? names[phase] : "?";
}

gol_phase gol_phase_now(void) {
    return (gol_phase)__atomic_load_n(&lane_phase[0], __ATOMIC_RELAXED);
}

void gol_phase_describe(char *buf, int len) {
    int main_p = __atomic_load_n(&lane_phase[0], __ATOMIC_RELAXED);
    int writer_p = __atomic_load_n(&lane_phase[1], __ATOMIC_RELAXED);
    if (writer_p != GOL_PHASE_NONE)
        snprintf(buf, (size_t)len, "%s / %s", names[main_p], names[writer_p]);
    else
        snprintf(buf, (size_t)len, "%s", names[main_p]);
}
