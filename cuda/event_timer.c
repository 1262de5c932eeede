/* The event-timer ring (cuda/event_timer.h). */
#include "cuda/event_timer.h"

#include <stdlib.h>

#include "core/check.h"

enum { TIMER_RING = 64 }; /* timed stretches in flight before the oldest must be read */

struct event_timer {
    cuda_watch *watch; /* how a full ring waits for its oldest pair */
    cudaEvent_t t0[TIMER_RING], t1[TIMER_RING];
    int head, count; /* recorded pairs not yet read */
    double seconds;  /* the pairs read so far */
    double *into[TIMER_RING]; /* NULL, or where the pair's time also goes: its chunk's share */
};

/* Reads the timer's finished pairs; with wait set, waits (polling) for the oldest and reads it. */
static void harvest(event_timer *t, int wait) {
    while (t->count > 0) {
        int k = t->head;
        if (wait) {
            cuda_watch_wait_event(t->watch, t->t1[k], "a timed stretch of GPU work",
                                  cuda_watch_posted(t->watch));
        } else {
            cudaError_t e = cudaEventQuery(t->t1[k]);
            if (e == cudaErrorNotReady) break;
            CUDA_CHECK(e);
        }
        float ms = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&ms, t->t0[k], t->t1[k]));
        t->seconds += 1e-3 * ms;
        if (t->into[k]) *t->into[k] += 1e-3 * ms;
        t->head = (t->head + 1) % TIMER_RING;
        t->count--;
        if (wait) break;
    }
}

int event_timer_begin(event_timer *t, cudaStream_t s, double *into) {
    harvest(t, 0);
    if (t->count == TIMER_RING) harvest(t, 1);
    int k = (t->head + t->count) % TIMER_RING;
    CUDA_CHECK(cudaEventRecord(t->t0[k], s));
    t->into[k] = into;
    return k;
}

void event_timer_end(event_timer *t, int pair, cudaStream_t s) {
    CUDA_CHECK(cudaEventRecord(t->t1[pair], s));
    t->count++;
}

void event_timer_read(event_timer *t) { harvest(t, 0); }

double event_timer_seconds(const event_timer *t) { return t->seconds; }

event_timer *event_timer_create(cuda_watch *w) {
    event_timer *t = gol_xcalloc(1, sizeof *t);
    t->watch = w;
    for (int k = 0; k < TIMER_RING; k++) {
        CUDA_CHECK(cudaEventCreate(&t->t0[k]));
        CUDA_CHECK(cudaEventCreate(&t->t1[k]));
    }
    return t;
}

void event_timer_destroy(event_timer *t) {
    if (!t) return;
    for (int k = 0; k < TIMER_RING; k++) {
        CUDA_CHECK(cudaEventDestroy(t->t0[k]));
        CUDA_CHECK(cudaEventDestroy(t->t1[k]));
    }
    free(t);
}
