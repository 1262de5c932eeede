/* The CUDA backend: a bit-packed slab on one GPU per rank.
 *
 * Buffers: two slabs of rows + 2k rows of nwords words (k: the halo depth of core/depth.h, 1 or
 * more), numbered as in core/depth.h and kernels/life_cuda.h: row 0 the first owned row, -k..-1
 * the halo above, rows..rows+k-1 the halo below. Halo rows past a dead boundary are never
 * written, so they stay zero in both buffers.
 *
 * The path of a generation, as on the CPU backend: the halo rows are exchanged every k generations
 * counted from the load, and the generations between run in passes of up to GOL_DEEP_MAX
 * (cuda_advance, the one loop). A pass (enqueue_pass) forks from the compute stream: the comm
 * stream computes the two edge bands (the rows each end sends, and the halo rows still valid) and,
 * when the pass ends a cycle, exchanges them through a device halo mode of halo/halo.h, ordered on
 * the comm stream (NCCL, or MPI through the host); the compute stream computes the rows in between
 * at the same time, then waits for the comm stream (halo_done), so the compute stream alone
 * carries the order from one pass to the next: what frames and the population wait on. A pass of
 * one generation (all of them at depth 1) runs the one-generation kernels, a longer one the
 * multi-generation kernel (pass_rows).
 *
 * CUDA graphs: NCCL requires every rank to launch, for the same exchange, the graph of the same
 * collective capture. At depth k > 1 the passes of a cycle, and so the buffer each ends in,
 * depend on where this rank cuts its calls (frames, progress, GOLMPI_DEBUG_PIECE): those passes
 * run eagerly, exchange included, and are long (k generations a cycle) so the launches hide. At
 * depth 1 every pass is one generation ending a cycle, the same pass from the same buffer on every
 * rank under any cut: each runs from the graph of its buffer parity (pass_graph), captured once
 * at create on every rank, but the timed samples, which run eagerly on every rank at the same
 * exchanges (counted from the load).
 *
 * The host never blocks in a CUDA call that cannot see a dead peer: every wait polls (the halo's
 * health poll, the progress marks, the clock), at most a bounded number of generations is queued
 * ahead of the GPU, and after --timeout seconds without progress every rank is aborted
 * (stalled): MPI_Abort is reached within a bounded time whatever NCCL does, since the exchange's
 * teardown is bounded (halo.h's abort) and skipped when this GPU alone stopped. Sizes, marks and
 * samples are decided in kernels/cuda_plan.c, tested on the host. */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/check.h"
#include "core/depth.h"
#include "core/random_start.h"
#include "core/trace.h"
#include "halo/halo.h"
#include "kernels/backend.h"
#include "kernels/cuda_plan.h"
#include "kernels/device.h"
#include "kernels/init_cuda.h"
#include "kernels/life_cuda.h"

enum { TIMER_RING = 64 }; /* timed stretches in flight before the oldest must be read */
enum { CHUNKS_OPEN = 4 };  /* a ring over the chunks begun and not yet read (at most 2) */

/* A ring of event pairs timing stretches of one stream's work (frames, advance calls): GPU time,
 * read once both events are done, never by blocking the host. */
typedef struct event_timer {
    cudaEvent_t t0[TIMER_RING], t1[TIMER_RING];
    int head, count; /* recorded pairs not yet read */
    double seconds;  /* the pairs read so far */
    double *into[TIMER_RING]; /* NULL, or where the pair's time also goes: its chunk's share */
} event_timer;

/* Per chunk (backend_chunk_times): the advance calls' GPU time by chunk, and where the host-side
 * counters stood when each chunk began. */
typedef struct chunk_share {
    int64_t chunk; /* advance calls queued now belong to it */
    double compute_s[CHUNKS_OPEN];
    int64_t exchanges[CHUNKS_OPEN]; /* cb->exchanges when the chunk began */
    double halo_s[CHUNKS_OPEN];     /* halo_seconds when the chunk began (modes on the host) */
    double frame_read_s[2];         /* ftimer[slot].seconds when the slot's last chunk was read */
} chunk_share;

typedef struct cuda_backend {
    gol_slab slab;
    gol_cuda_grid grid;
    int64_t row_words; /* nwords */
    size_t row_bytes;
    int device;
    double timeout_s; /* --timeout: no progress for that long aborts every rank; 0: never */

    uint64_t *buf_d[2];
    int cur; /* buf_d[cur] holds the current generation */

    cudaStream_t compute, comm, copy[2];
    cudaEvent_t fork, halo_done, gen_done;
    cudaEvent_t frame_read[2]; /* slot s finished reading the grid buffer */
    int frame_pending[2][2];   /* [slot][buffer]: compute must wait frame_read[slot] before writing */

    gol_halo *halo; /* a device mode, ordered on the comm stream */
    int64_t depth;  /* k: halo rows a side, exchanged every k generations */
    int64_t valid;  /* halo rows of buf_d[cur] still valid; the cycle's exchange comes at 0 */

    /* depth 1: pass_graph[p], the pass from buf_d[p], exchange included (none: depth > 1, graphs
     * off, or a mode of host calls) */
    cudaGraphExec_t pass_graph[2];

    /* generations in flight (kernels/cuda_plan.h): a mark every CUDA_MARK_EVERY generations */
    cudaEvent_t mark[CUDA_MARK_RING];
    int64_t queued; /* generations queued by advance since create */
    int64_t marks_recorded, marks_done;
    int64_t mark_posts[CUDA_MARK_RING]; /* exchanges posted when each mark was recorded */
    int64_t frame_posts[2];             /* exchanges posted when each slot's frame began */
    /* the watchdog (watch): when a mark last passed, when a stall was last found excused (a
     * neighbour behind), when it last looked, when the backend was made */
    double progress_at, excused_at, last_look, created_at;

    uint8_t *stage_d[2]; /* per slot, for the plan's frame format: allocated at create */
    int64_t stage_bytes[2];
    cuda_mem_account mem; /* everything cudaMalloc'ed here */
    event_timer ftimer[2], atimer; /* frames per slot; advance calls on the compute stream */

    unsigned long long *pop_d, *pop_h;
    /* the halo sample: one eager generation every CUDA_HALO_SAMPLE_EVERY after a load */
    cudaEvent_t halo_t0, halo_t1;
    int sample_pending;
    int64_t samples;
    int64_t exchanges, exchanges_since_load; /* exchanges after a pass */
    double sample_s;
    /* the sampled halo's estimate already charged to chunks, and the exchanges it covered: the
     * run's estimate is theirs plus the rest at the mean now, so the chunks add up to it */
    double halo_charged_s;
    int64_t exchanges_charged;
    double halo_load_s; /* a mode on the host: its seconds up to the last load's exchange */
    chunk_share share;
} cuda_backend;

/* Row `row` of buffer b (0: the first owned row, -k the topmost halo row). */
static uint64_t *row_ptr(cuda_backend *cb, int b, int64_t row) {
    return cb->buf_d[b] + (row + cb->depth) * cb->row_words;
}

static void *dev_alloc(cuda_backend *cb, int64_t bytes, const char *what) {
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, (size_t)bytes);
    if (e != cudaSuccess) {
        char call[192];
        snprintf(call, sizeof call, "cudaMalloc(%s: %lld bytes; the backend holds %lld already)",
                 what, (long long)bytes, (long long)cb->mem.bytes);
        gol_die_cuda(__FILE__, __LINE__, call, cudaGetErrorName(e), cudaGetErrorString(e));
    }
    cuda_account_alloc(&cb->mem, bytes);
    return p;
}

static void dev_free(cuda_backend *cb, void *p, int64_t bytes) {
    if (!p) return;
    CUDA_CHECK(cudaFree(p));
    cuda_account_free(&cb->mem, bytes);
}

/* The marks the GPU has passed, retired in order (one stream: they complete in order). 1 when
 * any was: the GPU is making progress. */
static int retire_marks(cuda_backend *cb) {
    int moved = 0;
    while (cb->marks_done < cb->marks_recorded) {
        cudaError_t e = cudaEventQuery(cb->mark[cb->marks_done % CUDA_MARK_RING]);
        if (e == cudaErrorNotReady) break;
        CUDA_CHECK(e);
        cb->marks_done++;
        moved = 1;
    }
    if (moved) cb->progress_at = MPI_Wtime();
    return moved;
}

/* The watchdog fired: MPI_Abort, within a bounded time whatever NCCL does. A stall that involves
 * a neighbour first tears the exchange down, so that NCCL's kernels stop spinning on the silent
 * peer (halo_abort returns within HALO_ABORT_GRACE_S even if ncclCommAbort blocks); a stall of
 * this GPU alone skips that: ncclCommAbort synchronises streams and would block on it. silent: the
 * neighbour that sent no sign of life for --timeout, or -1; alive: both neighbours answer and
 * every rank had posted the exchanges waited for. */
static void __attribute__((noreturn))
stalled(cuda_backend *cb, const char *what, double waited, int silent, int alive) {
    char msg[512];
    const gol_slab *s = &cb->slab;
    const int on_stream = halo_sampled(cb->halo);
    if (silent >= 0)
        cuda_silent_message(msg, sizeof msg, silent, s->up, s->down, waited, what);
    else
        cuda_stall_message(msg, sizeof msg, s->rank, s->up, s->down, on_stream, waited, what,
                           alive);
    if (!cuda_stall_is_local(s->rank, s->up, s->down, on_stream)) halo_abort(cb->halo);
    gol_abort_msg("%s", msg);
}

/* Why the GPU passed no mark for --timeout while the host waited on work that needs the first
 * `needed` exchanges: STALL_DEAD (this GPU stopped, or, every rank having posted them and both
 * neighbours answering, a GPU or NCCL's transport did), STALL_SLOW (some rank has not posted
 * them yet: a host busy elsewhere, such as rank 0 on a slow disk; keep waiting) or STALL_SILENT
 * (*silent: a neighbour sent no sign of life for --timeout). Without a heartbeat (no peer on the
 * stream, MPI without threads) the marks alone judge: STALL_DEAD. */
enum { STALL_DEAD, STALL_SLOW, STALL_SILENT };
static int stall_cause(cuda_backend *cb, int64_t needed, double now, int *silent) {
    const gol_slab *s = &cb->slab;
    if (cuda_stall_is_local(s->rank, s->up, s->down, halo_sampled(cb->halo))) return STALL_DEAD;
    int64_t least = halo_least_posted(cb->halo);
    if (least < 0) return STALL_DEAD;
    const int peers[2] = {s->up, s->down};
    for (int i = 0; i < 2; i++) {
        if (peers[i] < 0 || peers[i] == s->rank) continue;
        double heard = halo_heard(cb->halo, peers[i]);
        if (now - (heard > cb->created_at ? heard : cb->created_at) > cb->timeout_s) {
            *silent = peers[i];
            return STALL_SILENT;
        }
    }
    return least < needed ? STALL_SLOW : STALL_DEAD;
}

/* One look of THE watchdog, from a host wait that began at `since` on work needing the first
 * `needed` exchanges: NCCL's health, the marks, and once no mark passed for --timeout seconds,
 * the cause at every look (stall_cause): a slow rank excuses the stall, and only --timeout
 * seconds after the last excuse does MPI_Abort follow. A gap of over a second since the last look
 * in this wait means this process was not running (stopped, then continued): it counts as an
 * excuse too. */
static void watch(cuda_backend *cb, const char *what, int64_t needed, double since) {
    halo_poll(cb->halo);
    double now = MPI_Wtime();
    if (cb->last_look > since && now - cb->last_look > 1.0) cb->excused_at = now;
    cb->last_look = now;
    retire_marks(cb);
    double from = since > cb->progress_at ? since : cb->progress_at;
    if (cb->timeout_s <= 0 || now - from <= cb->timeout_s) return;
    int silent = -1, cause = stall_cause(cb, needed, now, &silent);
    if (cause == STALL_SLOW) cb->excused_at = now;
    from = from > cb->excused_at ? from : cb->excused_at;
    if (now - from <= cb->timeout_s) return;
    stalled(cb, what, now - from, silent, cause == STALL_DEAD && halo_least_posted(cb->halo) >= 0);
}

/* Exchanges this rank has posted: what work queued now needs at most. */
static int64_t posted(const cuda_backend *cb) { return halo_posts(cb->halo); }

static cudaError_t query_event(void *ev) { return cudaEventQuery((cudaEvent_t)ev); }
static cudaError_t query_stream(void *s) { return cudaStreamQuery((cudaStream_t)s); }

/* THE host wait of this backend: until query says done, polling. A blocking CUDA wait would never
 * see a dead peer: NCCL's kernels spin on it forever. Meanwhile the watchdog looks (watch): the
 * awaited work needs the first `needed` exchanges. Spins briefly, then sleeps 20 us between
 * polls. */
static void poll_until(cuda_backend *cb, cudaError_t (*query)(void *), void *obj, const char *what,
                       int64_t needed) {
    double since = MPI_Wtime();
    for (long spins = 0;; spins++) {
        cudaError_t e = query(obj);
        if (e == cudaSuccess) return;
        if (e != cudaErrorNotReady) CUDA_CHECK(e);
        watch(cb, what, needed, since);
        if (spins >= 64) {
            struct timespec ts = {0, 20000};
            nanosleep(&ts, NULL);
        }
    }
}

static void wait_event(cuda_backend *cb, cudaEvent_t ev, const char *what, int64_t needed) {
    poll_until(cb, query_event, (void *)ev, what, needed);
}

static void wait_stream(cuda_backend *cb, cudaStream_t s, const char *what) {
    poll_until(cb, query_stream, (void *)s, what, posted(cb));
}

/* The watchdog for host waits outside this backend (core/check.h's gol_watch_poll: the stop vote,
 * the writer's slot, the staged MPI exchange's wait for its rows): the same looks, on the work
 * queued on the compute stream, while there is some. */
static void watch_hook(void *impl, double since) {
    cuda_backend *cb = impl;
    if (!cb->halo) return; /* still being made */
    cudaError_t e = cudaStreamQuery(cb->compute);
    if (e == cudaErrorNotReady) {
        watch(cb, "the generations queued before a host wait", posted(cb), since);
        return;
    }
    CUDA_CHECK(e);
    halo_poll(cb->halo);
    cb->progress_at = MPI_Wtime(); /* nothing queued: nothing can stall */
}

/* Reads the timer's finished pairs; with wait set, waits (polling) for the oldest and reads it. */
static void timer_harvest(cuda_backend *cb, event_timer *t, int wait) {
    while (t->count > 0) {
        int k = t->head;
        if (wait) {
            wait_event(cb, t->t1[k], "a timed stretch of GPU work", posted(cb));
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

/* Starts a timed stretch on stream s; returns its pair for timer_end. */
static int timer_begin(cuda_backend *cb, event_timer *t, cudaStream_t s) {
    timer_harvest(cb, t, 0);
    if (t->count == TIMER_RING) timer_harvest(cb, t, 1);
    int k = (t->head + t->count) % TIMER_RING;
    CUDA_CHECK(cudaEventRecord(t->t0[k], s));
    return k;
}

static void timer_end(event_timer *t, int k, cudaStream_t s) {
    CUDA_CHECK(cudaEventRecord(t->t1[k], s));
    t->count++;
}

/* The previous halo sample, once its events are done (with wait set: waited for, polling). */
static void harvest_halo_sample(cuda_backend *cb, int wait) {
    if (!cb->sample_pending) return;
    if (wait) {
        wait_event(cb, cb->halo_t1, "the timed halo exchange", posted(cb));
    } else {
        cudaError_t e = cudaEventQuery(cb->halo_t1);
        if (e == cudaErrorNotReady) return;
        CUDA_CHECK(e);
    }
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, cb->halo_t0, cb->halo_t1));
    cb->sample_s += 1e-3 * ms;
    cb->samples++;
    cb->sample_pending = 0;
}

/* Before the grid buffer b is written, every frame still reading it must be done. */
static void wait_frames_on(cuda_backend *cb, int b) {
    for (int s = 0; s < 2; s++) {
        if (!cb->frame_pending[s][b]) continue;
        /* the slot's latest event also covers its earlier frames: one copy stream, in order */
        CUDA_CHECK(cudaStreamWaitEvent(cb->compute, cb->frame_read[s], 0));
        cb->frame_pending[s][b] = 0;
    }
}

/* Halo rows of buffer b from its owned edge rows, enqueued on the comm stream. The MPI mode runs
 * host calls here, while the interior kernel already queued on the compute stream runs. The mode
 * opens and closes the NVTX "halo" range of the exchange. */
static void exchange_halo(cuda_backend *cb, int b) {
    int64_t rows = cb->slab.rows, k = cb->depth; /* k rows each way, one message */
    halo_post(cb->halo, row_ptr(cb, b, 0), row_ptr(cb, b, rows - k), row_ptr(cb, b, -k),
              row_ptr(cb, b, rows));
    halo_wait(cb->halo);
}

static void fork_comm(cuda_backend *cb) {
    CUDA_CHECK(cudaEventRecord(cb->fork, cb->compute));
    CUDA_CHECK(cudaStreamWaitEvent(cb->comm, cb->fork, 0));
}

static void join_comm(cuda_backend *cb) {
    CUDA_CHECK(cudaEventRecord(cb->halo_done, cb->comm));
    CUDA_CHECK(cudaStreamWaitEvent(cb->compute, cb->halo_done, 0));
}

/* Rows [lo, hi) of the generation n after buf_d[p]'s, into buf_d[p ^ 1], on stream s (an empty
 * range launches nothing). A pass
 * of one generation runs the one-generation kernel, which reads rows lo - 1 and hi: valid halo
 * rows, or zero past a dead boundary. A longer pass runs the multi-generation kernel, told that
 * rows past a dead boundary are dead at every generation; no pass reads further than 2k rows past
 * the owned ones. */
static void pass_rows(cuda_backend *cb, int p, int64_t lo, int64_t hi, int n, cudaStream_t s) {
    if (lo >= hi) return;
    const uint64_t *src = row_ptr(cb, p, 0);
    uint64_t *dst = row_ptr(cb, p ^ 1, 0);
    if (n == 1) {
        launch_life_rows(cb->grid, src, dst, lo, hi, s);
        return;
    }
    const int64_t rows = cb->slab.rows, reach = 2 * cb->depth + 1;
    int64_t live_lo = cb->slab.up < 0 ? 0 : -reach;
    int64_t live_hi = cb->slab.down < 0 ? rows : rows + reach;
    launch_life_deep(cb->grid, src, dst, lo, hi, n, live_lo, live_hi, s);
}

/* One pass of n generations (n <= valid, n <= GOL_DEEP_MAX) from buffer p into p ^ 1, valid halo
 * rows a side at its start (core/depth.h's gol_pass): the comm stream computes the edge bands
 * and, when the pass ends the cycle (valid == n), exchanges them; the compute stream computes the
 * rows in between meanwhile (the cut: cuda_plan.h's cuda_pass_cut). Capturable when the halo mode
 * is and timed is 0; timed brackets the exchange with events. */
static void enqueue_pass(cuda_backend *cb, int p, int n, int64_t valid, int timed) {
    const gol_pass ps = {.rows = cb->slab.rows, .valid = valid, .gens = n,
                         .dead_top = cb->slab.up < 0, .dead_bottom = cb->slab.down < 0, .tile = 0};
    const cuda_pass_rows cut = cuda_pass_cut(&ps, cb->depth);
    fork_comm(cb);
    if (cut.edges)
        launch_life_edges(cb->grid, row_ptr(cb, p, 0), row_ptr(cb, p ^ 1, 0), cb->comm);
    else
        for (int side = 0; side < 2; side++)
            pass_rows(cb, p, cut.band[side].lo, cut.band[side].hi, n, cb->comm);
    /* queued before a host-side MPI exchange below, so the interior runs during it */
    pass_rows(cb, p, cut.interior.lo, cut.interior.hi, n, cb->compute);
    if (valid == n) {
        if (timed) CUDA_CHECK(cudaEventRecord(cb->halo_t0, cb->comm));
        exchange_halo(cb, p ^ 1);
        if (timed) CUDA_CHECK(cudaEventRecord(cb->halo_t1, cb->comm));
    }
    join_comm(cb);
}

/* Depth 1: the graph of the pass from buffer p, exchange included, on the compute stream. */
static cudaGraphExec_t capture_pass(cuda_backend *cb, int p) {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CUDA_CHECK(cudaStreamBeginCapture(cb->compute, cudaStreamCaptureModeThreadLocal));
    enqueue_pass(cb, p, 1, 1, 0);
    CUDA_CHECK(cudaStreamEndCapture(cb->compute, &graph));
    /* node priorities kept: the comm stream's kernels outrank the interior's in replays too */
    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, cudaGraphInstantiateFlagUseNodePriority));
    CUDA_CHECK(cudaGraphDestroy(graph));
    CUDA_CHECK(cudaGraphUpload(exec, cb->compute));
    return exec;
}

/* Generations of a full cycle's last pass: passes of GOL_DEEP_MAX, then the rest. */
static int cycle_last_pass(const cuda_backend *cb) {
    return (int)((cb->depth - 1) % GOL_DEEP_MAX + 1);
}

/* The slab's shape, for the launchers. */
static void init_geometry(cuda_backend *cb, const gol_slab *slab) {
    cb->slab = *slab;
    cb->row_words = slab->nwords;
    cb->row_bytes = (size_t)slab->nwords * sizeof(uint64_t);
    cb->grid.rows = slab->rows;
    cb->grid.nwords = slab->nwords;
    cb->grid.width = slab->width;
    cb->grid.torus = slab->boundary == GOL_BOUNDARY_TORUS;
    cb->grid.rule = slab->rule;
}

static void create_streams(cuda_backend *cb) {
    /* The comm stream outranks the interior so the edge rows and the exchange, which are on the
     * critical path to the next generation, are never queued behind interior blocks. */
    int least, greatest;
    CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    CUDA_CHECK(cudaStreamCreateWithPriority(&cb->compute, cudaStreamNonBlocking, least));
    CUDA_CHECK(cudaStreamCreateWithPriority(&cb->comm, cudaStreamNonBlocking, greatest));
    for (int s = 0; s < 2; s++)
        CUDA_CHECK(cudaStreamCreateWithPriority(&cb->copy[s], cudaStreamNonBlocking, least));
    trace_name_stream(cb->compute, "compute");
    trace_name_stream(cb->comm, "comm");
    trace_name_stream(cb->copy[0], "copy0");
    trace_name_stream(cb->copy[1], "copy1");
}

static void create_timer(event_timer *t) {
    for (int k = 0; k < TIMER_RING; k++) {
        CUDA_CHECK(cudaEventCreate(&t->t0[k]));
        CUDA_CHECK(cudaEventCreate(&t->t1[k]));
    }
}

static void destroy_timer(event_timer *t) {
    for (int k = 0; k < TIMER_RING; k++) {
        CUDA_CHECK(cudaEventDestroy(t->t0[k]));
        CUDA_CHECK(cudaEventDestroy(t->t1[k]));
    }
}

static void create_events(cuda_backend *cb) {
    CUDA_CHECK(cudaEventCreateWithFlags(&cb->fork, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&cb->halo_done, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&cb->gen_done, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreate(&cb->halo_t0));
    CUDA_CHECK(cudaEventCreate(&cb->halo_t1));
    for (int m = 0; m < CUDA_MARK_RING; m++)
        CUDA_CHECK(cudaEventCreateWithFlags(&cb->mark[m], cudaEventDisableTiming));
    create_timer(&cb->atimer);
    for (int s = 0; s < 2; s++) {
        CUDA_CHECK(cudaEventCreateWithFlags(&cb->frame_read[s], cudaEventDisableTiming));
        create_timer(&cb->ftimer[s]);
    }
}

/* Two zeroed grid buffers, the population counter and, when the plan takes frames, both frame
 * slots: exactly cuda_device_bytes, which the backend's own account confirms, so the host-tested
 * plan is what a GPU gets. */
static void alloc_slabs(cuda_backend *cb, const gol_plan *plan) {
    int64_t bytes = cuda_slab_bytes(cb->slab.rows, cb->depth, cb->row_words);
    for (int b = 0; b < 2; b++) {
        cb->buf_d[b] = dev_alloc(cb, bytes, b ? "grid buffer 1" : "grid buffer 0");
        CUDA_CHECK(cudaMemsetAsync(cb->buf_d[b], 0, (size_t)bytes, cb->compute));
    }
    cb->pop_d = dev_alloc(cb, sizeof *cb->pop_d, "population counter");
    CUDA_CHECK(cudaMallocHost((void **)&cb->pop_h, sizeof *cb->pop_h));
    /* both frame slots now, not at their first frame, when NCCL work would be queued */
    int64_t stage = plan->output
                        ? cuda_frame_stage_bytes(cb->slab.rows, cb->slab.width, plan->frame_format)
                        : 0;
    for (int s = 0; s < 2 && stage > 0; s++) {
        cb->stage_d[s] = dev_alloc(cb, stage, s ? "frame staging slot 1" : "frame staging slot 0");
        cb->stage_bytes[s] = stage;
    }
    if (cb->mem.bytes != cuda_device_bytes(cb->slab.rows, cb->depth, cb->row_words, cb->slab.width,
                                           plan->frame_format, plan->output))
        gol_die(__FILE__, __LINE__, "alloc_slabs", "golmpi",
                "device allocations differ from kernels/cuda_plan.c's cuda_device_bytes");
}

static void warm_up_and_capture(cuda_backend *cb, const gol_config *cfg) {
    if (!halo_capturable(cb->halo) && !halo_sampled(cb->halo)) return;
    /* Warm-up: NCCL connects to each peer on first use, which must not happen inside a capture
     * or a timed region, and which the halo mode bounds by --timeout (a peer that never posts
     * its first exchange aborts every rank). Both parities, twice, on the all-dead grid. */
    for (int i = 0; i < 4; i++)
        enqueue_pass(cb, i & 1, cycle_last_pass(cb), cycle_last_pass(cb), 0);
    wait_stream(cb, cb->compute, "the warm-up exchanges");
    /* a rule with B0 makes cells out of nothing: start load from clean buffers anyway */
    int64_t bytes = cuda_slab_bytes(cb->slab.rows, cb->depth, cb->row_words);
    for (int b = 0; b < 2; b++)
        CUDA_CHECK(cudaMemsetAsync(cb->buf_d[b], 0, (size_t)bytes, cb->compute));
    /* Host MPI calls cannot live in a graph, so graphs are for capturable modes only. Both
     * parities on every rank, in the same order: the collective captures NCCL pairs. */
    if (!cfg->no_graphs && halo_capturable(cb->halo) && cb->depth == 1)
        for (int p = 0; p < 2; p++) cb->pass_graph[p] = capture_pass(cb, p);
    wait_stream(cb, cb->compute, "the graph capture");
}

static void *cuda_create(const gol_plan *plan, const gol_config *cfg, MPI_Comm comm) {
    const gol_slab *slab = &plan->slab;
    cuda_backend *cb = gol_xcalloc(1, sizeof *cb);
    init_geometry(cb, slab);
    cb->timeout_s = cfg->timeout_s;
    cb->depth = plan->depth;
    cb->device = device_select(comm); /* this rank's GPU, before anything touches one */
    create_streams(cb);               /* compute, comm (higher priority), two copy streams */
    create_events(cb);                /* fork and join, marks, the halo sample, timers */
    alloc_slabs(cb, plan);            /* zeroed grid buffers, population counter, frame slots */
    cb->created_at = cb->progress_at = MPI_Wtime();
    gol_watch_add(watch_hook, cb); /* host waits elsewhere (the stop vote, the writer) watch too */
    /* collective: the halo mode may connect to the neighbours (NCCL) */
    cb->halo = halo_create(plan->halo, slab, cb->depth, comm, cb->comm, cfg->timeout_s);
    wait_stream(cb, cb->compute, "zeroing the grid buffers");
    warm_up_and_capture(cb, cfg); /* warm-up exchanges, then graphs where the mode allows */
    return cb;
}

/* Once the owned rows of the current buffer are queued (a load, the random start): the step
 * exchanges the rows it has just computed, so a new state needs its own halo rows. */
static void finish_load(cuda_backend *cb, const char *what) {
    fork_comm(cb);
    exchange_halo(cb, cb->cur);
    join_comm(cb);
    wait_stream(cb, cb->compute, what);
    cb->exchanges_since_load = 0; /* the halo samples count from here, alike on every rank */
    cb->valid = cb->depth; /* a full cycle before the next exchange */
    /* the generations' exchanges are the run's halo time, not this one: as on the CPU */
    cb->halo_load_s = halo_seconds(cb->halo);
}

static void cuda_load(void *impl, const uint64_t *rows_h) {
    cuda_backend *cb = impl;
    wait_frames_on(cb, cb->cur);
    /* rows_h is pageable: the copy may wait on the stream's work with no deadline, so that work
     * is waited for first, polling */
    wait_stream(cb, cb->compute, "the generations before a load");
    CUDA_CHECK(cudaMemcpyAsync(row_ptr(cb, cb->cur, 0), rows_h,
                               (size_t)cb->slab.rows * cb->row_bytes, cudaMemcpyHostToDevice,
                               cb->compute));
    finish_load(cb, "loading the grid");
}

/* The random start made on the device (kernels/init_cuda.h), no host rows and no copy; the
 * density's threshold is the host's, as on the CPU. Then the halo rows, as after a load. */
static void cuda_init_random(void *impl, uint64_t seed, double density) {
    cuda_backend *cb = impl;
    wait_frames_on(cb, cb->cur);
    launch_init_random(init_run_key(seed), init_threshold(density), cb->slab.row0, cb->slab.rows,
                       cb->slab.width, cb->row_words, row_ptr(cb, cb->cur, 0), cb->compute);
    finish_load(cb, "the random start");
}

static void cuda_store(void *impl, uint64_t *rows_h) {
    cuda_backend *cb = impl;
    /* rows_h is pageable: a copy into it returns only once done, after the stream's earlier work
     * (NCCL's included), with no deadline; so that work is waited for first, polling, and the
     * copy then waits on nothing but itself */
    wait_stream(cb, cb->compute, "the generations before storing the grid");
    CUDA_CHECK(cudaMemcpyAsync(rows_h, row_ptr(cb, cb->cur, 0),
                               (size_t)cb->slab.rows * cb->row_bytes, cudaMemcpyDeviceToHost,
                               cb->compute));
    wait_stream(cb, cb->compute, "storing the grid");
}

/* After each generation queued: every CUDA_MARK_EVERY, wait (polling) for the mark
 * CUDA_MARKS_AHEAD back, then record a new one, so the host never runs far ahead of the GPU and
 * never blocks in a launch whose queue is full (kernels/cuda_plan.h). */
static void bound_in_flight(cuda_backend *cb) {
    cb->queued++;
    if (!cuda_mark_due(cb->queued)) return;
    /* a GPU that keeps up never makes the wait below poll: look at NCCL's health here too */
    halo_poll(cb->halo);
    int64_t m = cb->marks_recorded, w = cuda_mark_to_wait(m);
    if (w >= cb->marks_done)
        wait_event(cb, cb->mark[w % CUDA_MARK_RING], "the generations in flight",
                   cb->mark_posts[w % CUDA_MARK_RING]);
    retire_marks(cb); /* mark w and every earlier one: a slot is reused only once retired */
    CUDA_CHECK(cudaEventRecord(cb->mark[m % CUDA_MARK_RING], cb->compute));
    cb->mark_posts[m % CUDA_MARK_RING] = posted(cb);
    cb->marks_recorded++;
}

/* The one advance loop, at every depth: passes of up to GOL_DEEP_MAX generations, cut where the
 * call ends and where the cycle does, so the exchanges fall every k generations from the load,
 * and the timed ones every CUDA_HALO_SAMPLE_EVERY generations' worth of exchanges, whatever the
 * calls' cuts. No synchronisation at the end: the next call, a frame or the
 * population queues behind it, and the host waits only where it needs a result. The GPU time of
 * the call is timed with events (compute_s). */
static void cuda_advance(void *impl, int64_t generations) {
    cuda_backend *cb = impl;
    if (generations <= 0) return;
    if (cb->valid <= 0) /* no halo rows yet: a pass of 0 generations, forever */
        gol_die(__FILE__, __LINE__, "cuda_advance", "golmpi",
                "advance before any load or random start (an internal error)");
    int t = timer_begin(cb, &cb->atimer, cb->compute);
    cb->atimer.into[t] = &cb->share.compute_s[cb->share.chunk % CHUNKS_OPEN];
    while (generations > 0) {
        int64_t n = generations < cb->valid ? generations : cb->valid;
        if (n > GOL_DEEP_MAX) n = GOL_DEEP_MAX;
        wait_frames_on(cb, cb->cur ^ 1);
        const int ends = n == cb->valid; /* the pass ends the cycle with its exchange */
        const int sample = ends && halo_sampled(cb->halo) &&
                           cuda_halo_sample_due(cb->exchanges_since_load * cb->depth);
        if (sample) harvest_halo_sample(cb, 1); /* long done: the marks bound what is queued */
        if (cb->pass_graph[cb->cur] && !sample) { /* depth 1: n == valid == 1 */
            CUDA_CHECK(cudaGraphLaunch(cb->pass_graph[cb->cur], cb->compute));
            halo_replayed(cb->halo); /* its exchange counts as posted (the watchdog's needs) */
        } else {
            enqueue_pass(cb, cb->cur, (int)n, cb->valid, sample);
        }
        cb->sample_pending |= sample;
        cb->exchanges += ends;
        cb->exchanges_since_load += ends;
        cb->valid = ends ? cb->depth : cb->valid - n;
        cb->cur ^= 1;
        generations -= n;
        for (int64_t i = 0; i < n; i++) bound_in_flight(cb);
    }
    timer_end(&cb->atimer, t, cb->compute);
}

/* Slot s's staging buffer holds frames of `bytes`: allocated at create for the plan's format
 * (alloc_stages), never here, where a cudaMalloc, and a cudaFree that synchronises the device,
 * would wait on NCCL work queued with no deadline. */
static void check_stage(const cuda_backend *cb, int slot, int64_t bytes) {
    if (bytes > cb->stage_bytes[slot])
        gol_die(__FILE__, __LINE__, "cuda_frame_begin", "golmpi",
                "a frame larger than the plan's frame format (no staging slot allocated for it)");
}

static void cuda_frame_begin(void *impl, int slot, gol_frame_format fmt, void *dst_h) {
    cuda_backend *cb = impl;
    int64_t rows = cb->slab.rows, width = cb->slab.width;
    trace_pushf("d2h slot %d", slot);
    check_stage(cb, slot, cuda_frame_stage_bytes(rows, width, fmt));
    cudaStream_t s = cb->copy[slot];
    CUDA_CHECK(cudaEventRecord(cb->gen_done, cb->compute));
    CUDA_CHECK(cudaStreamWaitEvent(s, cb->gen_done, 0));
    int k = timer_begin(cb, &cb->ftimer[slot], s);
    const uint64_t *src = row_ptr(cb, cb->cur, 0);
    size_t frame_row = (size_t)frame_row_bytes(width, fmt);
    /* The frame in the slot first, on the device (a pass or so of memory traffic): then the grid
     * buffer is free again (frame_read), and the compute stream never waits for the copy to the
     * host, which reads only the slot. */
    if (fmt == GOL_FRAME_PACKED) /* little-endian: a grid row begins with its packed frame row */
        CUDA_CHECK(cudaMemcpy2DAsync(cb->stage_d[slot], frame_row, src, cb->row_bytes, frame_row,
                                     (size_t)rows, cudaMemcpyDeviceToDevice, s));
    else
        launch_unpack_u8(src, cb->stage_d[slot], rows, cb->row_words, width, s);
    CUDA_CHECK(cudaEventRecord(cb->frame_read[slot], s));
    CUDA_CHECK(cudaMemcpyAsync(dst_h, cb->stage_d[slot], (size_t)rows * frame_row,
                               cudaMemcpyDeviceToHost, s));
    cb->frame_pending[slot][cb->cur] = 1;
    cb->frame_posts[slot] = posted(cb);
    timer_end(&cb->ftimer[slot], k, s);
    trace_pop();
}

static void cuda_frame_wait(void *impl, int slot) {
    cuda_backend *cb = impl;
    poll_until(cb, query_stream, (void *)cb->copy[slot],
               slot ? "the frames of slot 1" : "the frames of slot 0", cb->frame_posts[slot]);
    timer_harvest(cb, &cb->ftimer[slot], 0);
}

/* A frame slot starts on a page, which the writer's O_DIRECT path needs (io/tuning.h), and
 * cudaMallocHost does not promise one: so a page more is taken, the slot starts on the first page
 * boundary inside the block past a pointer's room, and the block's own address is kept there,
 * just before the slot, for the free. */
enum { SLOT_ALIGN = 4096 };
static void *cuda_host_alloc(void *impl, int64_t bytes) {
    (void)impl;
    char *block = NULL;
    CUDA_CHECK(cudaMallocHost((void **)&block, (size_t)bytes + SLOT_ALIGN));
    uintptr_t at = ((uintptr_t)block + sizeof block + SLOT_ALIGN - 1) / SLOT_ALIGN * SLOT_ALIGN;
    char *slot = block + (at - (uintptr_t)block);
    memcpy(slot - sizeof block, &block, sizeof block);
    return slot;
}

static void cuda_host_free(void *impl, void *p) {
    (void)impl;
    if (!p) return;
    char *block;
    memcpy(&block, (char *)p - sizeof block, sizeof block);
    CUDA_CHECK(cudaFreeHost(block));
}

/* Waits for every generation queued: the timers of the compute stream are then all readable. */
static int64_t cuda_population(void *impl) {
    cuda_backend *cb = impl;
    CUDA_CHECK(cudaMemsetAsync(cb->pop_d, 0, sizeof *cb->pop_d, cb->compute));
    launch_popcount(row_ptr(cb, cb->cur, 0), cb->slab.rows * cb->row_words, cb->pop_d,
                    cb->compute);
    CUDA_CHECK(cudaMemcpyAsync(cb->pop_h, cb->pop_d, sizeof *cb->pop_d, cudaMemcpyDeviceToHost,
                               cb->compute));
    wait_stream(cb, cb->compute, "the population count");
    timer_harvest(cb, &cb->atimer, 0);
    harvest_halo_sample(cb, 0);
    return (int64_t)*cb->pop_h;
}

/* The mean sampled exchange times n exchanges: halo_s of the summary for n = every exchange. */
static double halo_estimate(const cuda_backend *cb, int64_t n) {
    return cb->samples ? cb->sample_s / (double)cb->samples * (double)n : 0.0;
}

static void cuda_chunk_begin(void *impl, int64_t chunk) {
    cuda_backend *cb = impl;
    chunk_share *sh = &cb->share;
    int i = (int)(chunk % CHUNKS_OPEN);
    sh->chunk = chunk;
    sh->compute_s[i] = 0.0;
    sh->exchanges[i] = cb->exchanges;
    sh->halo_s[i] = halo_sampled(cb->halo) ? 0.0 : halo_seconds(cb->halo);
}

/* After the chunk's last frame is in: its advance calls, which that frame waited for, are done,
 * and so read now. The halo of a sampled mode is the chunk's exchanges times the mean sample so
 * far (the summary's estimate uses the mean at the end); of a mode on the host, the host time of
 * the exchanges queued while the chunk was. */
static gol_backend_times cuda_chunk_times(void *impl, int64_t chunk, int slot) {
    cuda_backend *cb = impl;
    chunk_share *sh = &cb->share;
    timer_harvest(cb, &cb->atimer, 0);
    harvest_halo_sample(cb, 0);
    int i = (int)(chunk % CHUNKS_OPEN), next = (int)((chunk + 1) % CHUNKS_OPEN);
    int open = chunk == sh->chunk; /* no later chunk began: the counters now are its end */
    int64_t exchanges = (open ? cb->exchanges : sh->exchanges[next]) - sh->exchanges[i];
    gol_backend_times t = {.compute_s = sh->compute_s[i]};
    if (halo_sampled(cb->halo)) {
        t.halo_s = halo_estimate(cb, exchanges);
        cb->halo_charged_s += t.halo_s;
        cb->exchanges_charged += exchanges;
    } else {
        t.halo_s = (open ? halo_seconds(cb->halo) : sh->halo_s[next]) - sh->halo_s[i];
    }
    t.frame_s = cb->ftimer[slot].seconds - sh->frame_read_s[slot];
    sh->frame_read_s[slot] = cb->ftimer[slot].seconds;
    return t;
}

/* compute_s: GPU time of the advance calls on the compute stream (kernels, the exchange's wait
 * that the interior did not hide, and any wait for a frame still reading a buffer). halo_s: the
 * mean sampled exchange, times the exchanges (one a generation at depth 1, one a cycle at depth
 * k). Both as of the last wait for the compute stream (the population, at the end of a run). */
static gol_backend_times cuda_times(const void *impl) {
    const cuda_backend *cb = impl;
    gol_backend_times t = {.halo_messages = halo_messages(cb->halo)};
    t.compute_s = cb->atimer.seconds;
    if (halo_sampled(cb->halo))
        t.halo_s = cb->halo_charged_s + halo_estimate(cb, cb->exchanges - cb->exchanges_charged);
    else
        t.halo_s = halo_seconds(cb->halo) - cb->halo_load_s;
    t.frame_s = cb->ftimer[0].seconds + cb->ftimer[1].seconds;
    return t;
}

/* The device bytes its account holds; the pinned halo rows are the halo mode's. */
static gol_mem_need cuda_held(const void *impl) {
    const cuda_backend *cb = impl;
    gol_mem_need n = {0, cb->mem.bytes};
    return n;
}

static void cuda_destroy(void *impl) {
    cuda_backend *cb = impl;
    if (!cb) return;
    CUDA_CHECK(cudaSetDevice(cb->device));
    gol_watch_remove(watch_hook, cb);
    /* all of this backend's work is on its four streams: wait for them, polling */
    wait_stream(cb, cb->compute, "the last generations");
    wait_stream(cb, cb->comm, "the last exchange");
    for (int s = 0; s < 2; s++) wait_stream(cb, cb->copy[s], "the last frames");
    for (int p = 0; p < 2; p++)
        if (cb->pass_graph[p]) CUDA_CHECK(cudaGraphExecDestroy(cb->pass_graph[p]));
    halo_destroy(cb->halo);
    int64_t bytes = cuda_slab_bytes(cb->slab.rows, cb->depth, cb->row_words);
    for (int b = 0; b < 2; b++) dev_free(cb, cb->buf_d[b], bytes);
    for (int s = 0; s < 2; s++) {
        dev_free(cb, cb->stage_d[s], cb->stage_bytes[s]);
        CUDA_CHECK(cudaEventDestroy(cb->frame_read[s]));
        destroy_timer(&cb->ftimer[s]);
        CUDA_CHECK(cudaStreamDestroy(cb->copy[s]));
    }
    dev_free(cb, cb->pop_d, sizeof *cb->pop_d);
    CUDA_CHECK(cudaFreeHost(cb->pop_h));
    destroy_timer(&cb->atimer);
    for (int m = 0; m < CUDA_MARK_RING; m++) CUDA_CHECK(cudaEventDestroy(cb->mark[m]));
    CUDA_CHECK(cudaEventDestroy(cb->fork));
    CUDA_CHECK(cudaEventDestroy(cb->halo_done));
    CUDA_CHECK(cudaEventDestroy(cb->gen_done));
    CUDA_CHECK(cudaEventDestroy(cb->halo_t0));
    CUDA_CHECK(cudaEventDestroy(cb->halo_t1));
    CUDA_CHECK(cudaStreamDestroy(cb->compute));
    CUDA_CHECK(cudaStreamDestroy(cb->comm));
    free(cb);
}

/* Depth 1 runs the one-generation kernels, a deeper halo the multi-generation kernel. */
static const char *cuda_kernel(const void *impl) {
    const cuda_backend *c = impl;
    return c->depth > 1 ? "multi-generation" : "one-generation";
}

const gol_backend_ops gol_backend_cuda_ops = {
    .name = "cuda",
    .frame_lag = 1, /* frames are copied on a stream: waited for after the next generations queue */
    .need = cuda_need,
    .create = cuda_create,
    .load = cuda_load,
    .init_random = cuda_init_random,
    .store = cuda_store,
    .advance = cuda_advance,
    .frame_begin = cuda_frame_begin,
    .frame_wait = cuda_frame_wait,
    .host_alloc = cuda_host_alloc,
    .host_free = cuda_host_free,
    .population = cuda_population,
    .times = cuda_times,
    .held = cuda_held,
    .chunk_begin = cuda_chunk_begin,
    .chunk_times = cuda_chunk_times,
    .kernel = cuda_kernel,
    .destroy = cuda_destroy,
};
