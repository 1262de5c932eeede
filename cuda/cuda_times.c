/* Where the CUDA backend's time goes (cuda/cuda_times.h). */
#include "cuda/cuda_times.h"

#include <stdlib.h>

#include "core/check.h"
#include "cuda/cuda_cadence.h"
#include "cuda/event_timer.h"

/* Per chunk: the advance calls' GPU time, and where the counters stood when the chunk began. */
typedef struct chunk_share {
    int64_t chunk; /* advance calls queued now belong to it */
    double compute_s[GOL_CHUNKS_OPEN];
    int64_t exchanges[GOL_CHUNKS_OPEN]; /* t->exchanges when the chunk began */
    double halo_s[GOL_CHUNKS_OPEN];     /* halo_seconds when the chunk began (modes on the host) */
    double frame_read_s[2];             /* the slot's frame seconds when its last chunk was read */
} chunk_share;

struct cuda_times {
    gol_halo *halo;
    int64_t depth;
    cuda_watch *watch;
    event_timer *advance; /* advance calls, on the compute stream */
    /* the sample */
    cudaEvent_t sample_ev[2];
    int sample_pending;
    int64_t samples;
    double sample_s;
    int64_t exchanges, exchanges_since_load; /* exchanges after a pass */
    /* the sampled halo's estimate already charged to chunks, and the exchanges it covered: the
     * run's estimate is theirs plus the rest at the mean now, so the chunks add up to it */
    double halo_charged_s;
    int64_t exchanges_charged;
    double halo_load_s; /* a mode on the host: its seconds up to the last load's exchange */
    chunk_share share;
};

cuda_times *cuda_times_create(gol_halo *h, int64_t k, cuda_watch *w) {
    cuda_times *t = gol_xcalloc(1, sizeof *t);
    t->halo = h;
    t->depth = k;
    t->watch = w;
    t->advance = event_timer_create(w);
    for (int i = 0; i < 2; i++) CUDA_CHECK(cudaEventCreate(&t->sample_ev[i]));
    return t;
}

void cuda_times_destroy(cuda_times *t) {
    if (!t) return;
    event_timer_destroy(t->advance);
    for (int i = 0; i < 2; i++) CUDA_CHECK(cudaEventDestroy(t->sample_ev[i]));
    free(t);
}

int cuda_times_advance_begin(cuda_times *t, cudaStream_t s) {
    return event_timer_begin(t->advance, s,
                             &t->share.compute_s[t->share.chunk % GOL_CHUNKS_OPEN]);
}

void cuda_times_advance_end(cuda_times *t, int pair, cudaStream_t s) {
    event_timer_end(t->advance, pair, s);
}

/* The previous sample, once its events are done (with wait set: waited for, polling). */
static void read_sample(cuda_times *t, int wait) {
    if (!t->sample_pending) return;
    if (wait) {
        cuda_watch_wait_event(t->watch, t->sample_ev[1], "the timed halo exchange",
                              cuda_watch_posted(t->watch));
    } else {
        cudaError_t e = cudaEventQuery(t->sample_ev[1]);
        if (e == cudaErrorNotReady) return;
        CUDA_CHECK(e);
    }
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, t->sample_ev[0], t->sample_ev[1]));
    t->sample_s += 1e-3 * ms;
    t->samples++;
    t->sample_pending = 0;
}

int cuda_times_sample_next(const cuda_times *t) {
    return halo_sampled(t->halo) && cuda_halo_sample_due(t->exchanges_since_load * t->depth);
}

cudaEvent_t *cuda_times_sample(cuda_times *t, int ends) {
    if (!ends || !cuda_times_sample_next(t)) return NULL;
    read_sample(t, 1); /* long done: the marks bound what is queued */
    t->sample_pending = 1;
    return t->sample_ev;
}

void cuda_times_passed(cuda_times *t, int ends) {
    t->exchanges += ends;
    t->exchanges_since_load += ends;
}

void cuda_times_loaded(cuda_times *t) {
    t->exchanges_since_load = 0; /* the samples count from here, alike on every rank */
    /* the generations' exchanges are the run's halo time, not this one: as on the CPU */
    t->halo_load_s = halo_seconds(t->halo);
}

void cuda_times_read(cuda_times *t) {
    event_timer_read(t->advance);
    read_sample(t, 0);
}

/* The mean sampled exchange times n exchanges: halo_s of the summary for n = every exchange. */
static double halo_estimate(const cuda_times *t, int64_t n) {
    return t->samples ? t->sample_s / (double)t->samples * (double)n : 0.0;
}

void cuda_times_chunk_begin(cuda_times *t, int64_t chunk) {
    chunk_share *sh = &t->share;
    int i = (int)(chunk % GOL_CHUNKS_OPEN);
    sh->chunk = chunk;
    sh->compute_s[i] = 0.0;
    sh->exchanges[i] = t->exchanges;
    sh->halo_s[i] = halo_sampled(t->halo) ? 0.0 : halo_seconds(t->halo);
}

/* After the chunk's last frame is in: its advance calls, which that frame waited for, are done,
 * and so read now. The halo of a sampled mode is the chunk's exchanges times the mean sample so
 * far (the summary's estimate uses the mean at the end); of a mode on the host, the host time of
 * the exchanges queued while the chunk was. */
gol_backend_times cuda_times_chunk(cuda_times *t, int64_t chunk, int slot, double slot_frame_s) {
    chunk_share *sh = &t->share;
    cuda_times_read(t);
    int i = (int)(chunk % GOL_CHUNKS_OPEN), next = (int)((chunk + 1) % GOL_CHUNKS_OPEN);
    int open = chunk == sh->chunk; /* no later chunk began: the counters now are its end */
    int64_t exchanges = (open ? t->exchanges : sh->exchanges[next]) - sh->exchanges[i];
    gol_backend_times r = {.compute_s = sh->compute_s[i]};
    if (halo_sampled(t->halo)) {
        r.halo_s = halo_estimate(t, exchanges);
        t->halo_charged_s += r.halo_s;
        t->exchanges_charged += exchanges;
    } else {
        r.halo_s = (open ? halo_seconds(t->halo) : sh->halo_s[next]) - sh->halo_s[i];
    }
    r.frame_s = slot_frame_s - sh->frame_read_s[slot];
    sh->frame_read_s[slot] = slot_frame_s;
    return r;
}

/* compute_s: GPU time of the advance calls on the compute stream (kernels, the exchange's wait
 * that the interior did not hide, and any wait for a frame still reading a buffer). halo_s: the
 * mean sampled exchange, times the exchanges (one a generation at depth 1, one a cycle at depth
 * k). */
gol_backend_times cuda_times_total(const cuda_times *t) {
    gol_backend_times r = {.halo_messages = halo_messages(t->halo)};
    r.compute_s = event_timer_seconds(t->advance);
    if (halo_sampled(t->halo))
        r.halo_s = t->halo_charged_s + halo_estimate(t, t->exchanges - t->exchanges_charged);
    else
        r.halo_s = halo_seconds(t->halo) - t->halo_load_s;
    return r;
}
