/* The simulated GPU's streams and events (tests/cudasim/sim.h). Each stream is a worker thread
 * that runs its operations in order; streams are unordered with each other except through events
 * (an event wait holds the worker until the record it names has been passed). The launch queue is
 * bounded (SIM_QUEUE_DEPTH). The clocks of sim.h are kept here, at enqueue, where the order is
 * decided. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim.h"
#include "sim_trace.h"

void sim_vc_join(sim_vc *into, const sim_vc *from) {
    for (int i = 0; i < sim.slots; i++)
        if (from->c[i] > into->c[i]) into->c[i] = from->c[i];
    if (from->c[SIM_HOST_SLOT] > into->c[SIM_HOST_SLOT])
        into->c[SIM_HOST_SLOT] = from->c[SIM_HOST_SLOT];
}

/* Under the lock. */
void sim_host_sees(const sim_vc *vc) {
    sim_vc_join(&sim.host, vc);
    sim_pinned_release();
}

static uint64_t next_random(uint64_t *state) {
    uint64_t x = *state += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static void nap_us(long us) {
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* The adversarial schedule: before an operation, a delay drawn from the stream's own sequence:
 * mostly none or a yield, one in eight up to 1 ms, one in 64 up to 5 ms, so that the streams'
 * interleaving changes from seed to seed (and work that is not ordered shows in the result)
 * while a run of many small operations stays short. */
static void adversarial_delay(struct CUstream_st *s) {
    if (!sim.seed) return;
    uint64_t r = next_random(&s->rng), wait = r >> 40;
    if (r % 64 == 0)
        nap_us((long)(wait % 5000));
    else if (r % 8 == 1)
        nap_us((long)(wait % 1000));
    else if (r % 4 == 2)
        sched_yield();
}

static void copy_2d(sim_op *op) {
    char *dst = sim_worker_ptr(op->dst);
    const char *src = sim_worker_ptr(op->src);
    for (size_t r = 0; r < op->height; r++)
        memcpy(dst + r * op->dpitch, src + r * op->spitch, op->width);
}

static void run_op(sim_op *op) {
    switch (op->kind) {
    case OP_KERNEL:
        op->body(op->arg);
        break;
    case OP_COPY:
        copy_2d(op);
        break;
    case OP_SET:
        memset(sim_worker_ptr(op->dst), op->value, op->width);
        break;
    case OP_NCCL:
        sim_nccl_run(op->group);
        break;
    case OP_RECORD:
    case OP_WAIT:
    case OP_MARK:
        break;
    }
}

static void free_op(sim_op *op) {
    if (op->staged) free((void *)op->src);
    free(op->after);
    free(op->arg);
    if (op->group) sim_nccl_group_free(op->group);
    free(op);
}

/* Under the lock: 1 when the head may run now. */
static int head_ready(struct CUstream_st *s) {
    sim_op *op = s->head;
    if (!op) return 0;
    if (sim.stall_at > 0 && sim_now() >= sim.stall_at) { /* the device stopped */
        if (!sim.stall_said++) fputs(SIM_STALL_LINE, stderr);
        return 0;
    }
    for (int i = 0; i < op->nafter; i++)
        if (op->after[i].stream->done < op->after[i].tick) return 0;
    return op->kind != OP_WAIT || op->event->completed >= op->record;
}

/* Under the lock: a stream's clock slot goes to the next stream made. */
static void release_slot(struct CUstream_st *s) {
    sim.streams[s->slot] = NULL;
    sim.slot_tick[s->slot] = s->tick;
    sim.free_slots[sim.nfree++] = s->slot;
}

/* Under the lock: 1 when the worker has nothing more to do. A destroyed stream's work still runs,
 * in order and with its waits, as CUDA's does; a graph's lane freed with work that cannot run now
 * (a stopped device) gives it up. */
static int worker_done(const struct CUstream_st *s) {
    return s->quit && (!s->head || !s->destroyed);
}

static void *worker(void *arg) {
    struct CUstream_st *s = arg;
    sim_lock();
    for (;;) {
        int ready;
        while (!(ready = head_ready(s)) && !worker_done(s)) {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += 2000000;
            if (until.tv_nsec >= 1000000000) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000;
            }
            pthread_cond_timedwait(&sim.changed, &sim.lock, &until);
        }
        if (!ready) break;
        sim_op *op = s->head;
        sim_unlock();
        adversarial_delay(s);
        run_op(op);
        sim_lock();
        s->head = op->next;
        if (!s->head) s->tail = NULL;
        s->done = op->tick;
        if (op->kind == OP_RECORD && op->record > op->event->completed) {
            op->event->completed = op->record;
            op->event->seconds = sim_now();
        }
        if (op->kind == OP_WAIT) op->event->waiters--;
        if (op->kind == OP_RECORD || op->kind == OP_WAIT) sim_event_release(op->event);
        if (op->holds_slot) sim.queued--;
        free_op(op);
        pthread_cond_broadcast(&sim.changed);
    }
    /* a graph's lane freed with work that will never run (a stopped device) */
    for (sim_op *op = s->head; op; op = op->next)
        if (op->holds_slot) sim.queued--;
    if (s->destroyed) release_slot(s); /* cudaStreamDestroy returned long ago */
    sim_unlock();
    return NULL;
}

struct CUstream_st *sim_stream_new(int priority, unsigned flags, int internal) {
    struct CUstream_st *s = calloc(1, sizeof *s);
    sim_lock();
    /* A destroyed stream's slot is taken again, its ticks going on from where they stopped: the
     * new stream's work then counts as ordered after the old one's, which a program destroying
     * a stream only after waiting for it makes true. */
    if (sim.nfree) {
        s->slot = sim.free_slots[--sim.nfree];
        s->tick = s->done = sim.slot_tick[s->slot];
        s->vc.c[s->slot] = s->tick;
    } else {
        if (sim.slots == SIM_HOST_SLOT) sim_fatal("more than %d streams at once", SIM_HOST_SLOT);
        s->slot = sim.slots++;
    }
    sim.streams[s->slot] = s;
    s->priority = priority;
    s->flags = flags;
    s->internal = internal;
    s->rng = sim.seed * 0x2545f4914f6cdd1dull + (uint64_t)s->slot * 7919 + (uint64_t)sim_rank();
    sim_unlock();
    pthread_create(&s->worker, NULL, worker, s);
    return s;
}

void sim_stream_free(struct CUstream_st *s) {
    sim_lock();
    s->quit = 1;
    pthread_cond_broadcast(&sim.changed);
    sim_unlock();
    pthread_join(s->worker, NULL);
    sim_lock();
    release_slot(s);
    sim_unlock();
    free(s);
}

struct CUstream_st *sim_stream_of(cudaStream_t s) {
    sim_init();
    return s ? s : sim.null_stream;
}

/* Under the lock: the legacy default stream (NULL) and the blocking streams (created without
 * cudaStreamNonBlocking) wait for each other's earlier work, as CUDA's do. */
static void legacy_order(struct CUstream_st *s, sim_op *op) {
    if (s->flags & cudaStreamNonBlocking) return;
    for (int i = 0; i < sim.slots; i++) {
        struct CUstream_st *t = sim.streams[i];
        if (!t || t == s || (t->flags & cudaStreamNonBlocking) || t->internal) continue;
        if (s != sim.null_stream && t != sim.null_stream) continue;
        if (t->done >= t->tick) {
            sim_vc_join(&s->vc, &t->vc); /* done already: ordered, nothing to wait for */
            continue;
        }
        op->after = realloc(op->after, (size_t)(op->nafter + 1) * sizeof *op->after);
        op->after[op->nafter++] = (struct sim_after){t, t->tick};
        sim_vc_join(&s->vc, &t->vc);
    }
}

/* Under the lock: one entry of the launch queue. When it is full the calling thread blocks until
 * the device makes room (on a stopped device, forever), as any CUDA call may. */
void sim_queue_take(void) {
    if (sim.queued >= SIM_QUEUE_DEPTH && !sim.queue_full_said++) fputs(SIM_QUEUE_FULL_LINE, stderr);
    while (sim.queued >= SIM_QUEUE_DEPTH)
        pthread_cond_wait(&sim.changed, &sim.lock);
    sim.queued++;
}

/* Under the lock: the operation joins the stream, after the host's program order (everything the
 * host saw complete before this call is ordered before it), unless a capture takes it. */
cudaError_t sim_enqueue(struct CUstream_st *s, sim_op *op) {
    if (!op->site.n) sim_site_here(&op->site);
    if (sim_capture_add(s, op)) return cudaSuccess;
    if (!sim.graph_launch) { /* a graph's nodes share the one entry its launch took */
        sim_queue_take();
        op->holds_slot = 1;
    }
    if (op->kind == OP_NCCL) sim_nccl_enqueued(op->group);
    sim_vc_join(&s->vc, &sim.host);
    legacy_order(s, op);
    op->tick = ++s->tick;
    s->vc.c[s->slot] = op->tick;
    sim_race_check(s->slot, op, &s->vc);
    sim_trace_op(s, op, &s->vc);
    sim_pinned_hold(op, s->slot);
    op->next = NULL;
    if (s->tail)
        s->tail->next = op;
    else
        s->head = op;
    s->tail = op;
    pthread_cond_broadcast(&sim.changed);
    return cudaSuccess;
}

/* Under the lock: until s has passed tick (the host blocks, as a synchronising call does). */
void sim_wait_stream(struct CUstream_st *s, uint32_t tick) {
    while (s->done < tick)
        pthread_cond_wait(&sim.changed, &sim.lock);
}

void sim_sync_all(void) {
    sim_lock();
    for (int i = 0; i < sim.slots; i++) {
        struct CUstream_st *s = sim.streams[i];
        if (!s) continue;
        sim_wait_stream(s, s->tick);
        sim_host_sees(&s->vc);
    }
    sim_unlock();
}

/* ---- the API ---------------------------------------------------------------------------- */

cudaError_t cudaStreamCreate(cudaStream_t *s) { return cudaStreamCreateWithPriority(s, 0, 0); }

cudaError_t cudaStreamCreateWithPriority(cudaStream_t *s, unsigned flags, int priority) {
    sim_init();
    if (priority > 0) priority = 0;
    if (priority < -5) priority = -5;
    *s = sim_stream_new(priority, flags, 0);
    return cudaSuccess;
}

cudaError_t cudaStreamGetPriority(cudaStream_t s, int *priority) {
    *priority = sim_stream_of(s)->priority;
    return cudaSuccess;
}

/* As CUDA's: returns at once; the work already queued still runs, then the worker gives the slot
 * back. The stream itself is never freed: an operation of a blocking stream may still name it
 * (struct sim_after). */
cudaError_t cudaStreamDestroy(cudaStream_t s) {
    if (!s) return sim_error(cudaErrorInvalidResourceHandle);
    sim_lock();
    s->quit = s->destroyed = 1;
    pthread_detach(s->worker);
    pthread_cond_broadcast(&sim.changed);
    sim_unlock();
    return cudaSuccess;
}

/* A query that finds the work not done yet costs the asking thread a moment: the simulated device
 * runs on the same CPUs as the host threads that poll it (golmpi's waits poll every 20 us), and
 * would otherwise lose them to the polling. */
static cudaError_t not_ready(void) {
    nap_us(200);
    return cudaErrorNotReady;
}

/* Under the lock: a synchronise or query of a capturing stream, or of any stream from a thread
 * that may make no unsafe call (sim_capture_unsafe), is refused and invalidates the capture. */
static cudaError_t capture_forbids(struct CUstream_st *s) {
    if (!s->capture) return sim_error(sim_capture_unsafe());
    sim_capture_invalidate(s);
    return sim_error(cudaErrorStreamCaptureUnsupported);
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
    struct CUstream_st *s = sim_stream_of(stream);
    sim_lock();
    cudaError_t e = capture_forbids(s);
    if (e == cudaSuccess) {
        sim_wait_stream(s, s->tick);
        sim_host_sees(&s->vc);
    }
    sim_unlock();
    return e;
}

cudaError_t cudaStreamQuery(cudaStream_t stream) {
    struct CUstream_st *s = sim_stream_of(stream);
    sim_lock();
    cudaError_t e = capture_forbids(s);
    if (e == cudaSuccess) {
        if (s->done >= s->tick)
            sim_host_sees(&s->vc);
        else
            e = cudaErrorNotReady;
    }
    sim_unlock();
    return e == cudaErrorNotReady ? not_ready() : e;
}

/* Refused while any stream of the device captures, from any thread (sim_capture_device_wide). */
cudaError_t cudaDeviceSynchronize(void) {
    sim_init();
    sim_lock();
    cudaError_t e = sim_capture_unsafe();
    if (e == cudaSuccess) e = sim_capture_device_wide();
    sim_unlock();
    if (e != cudaSuccess) return sim_error(e);
    sim_sync_all();
    return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *e) { return cudaEventCreateWithFlags(e, 0); }

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned flags) {
    sim_init();
    *e = calloc(1, sizeof **e);
    (*e)->flags = flags;
    return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t e) {
    if (!e) return sim_error(cudaErrorInvalidResourceHandle);
    /* as CUDA's: returns at once; a record or wait still queued completes, then it is freed */
    sim_lock();
    e->destroyed = 1;
    sim_event_release(e);
    sim_unlock();
    return cudaSuccess;
}

void sim_event_release(struct CUevent_st *e) {
    if (e->destroyed && e->completed >= e->recorded && !e->waiters) free(e);
}

/* Under the lock: cudaEventRecord's work. */
cudaError_t sim_event_record(struct CUstream_st *s, struct CUevent_st *e) {
    cudaError_t rc;
    if (s->capture) {
        rc = sim_capture_record(s, e);
    } else {
        e->capture = NULL;
        e->captured_last = 0;
        sim_op *op = calloc(1, sizeof *op);
        op->kind = OP_RECORD;
        op->what = "cudaEventRecord";
        op->event = e;
        op->record = ++e->recorded;
        rc = sim_enqueue(s, op);
        e->vc = s->vc;
    }
    return rc;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t stream) {
    if (!e) return sim_error(cudaErrorInvalidResourceHandle);
    struct CUstream_st *s = sim_stream_of(stream);
    sim_lock();
    cudaError_t rc = sim_event_record(s, e);
    sim_unlock();
    return sim_error(rc);
}

/* Under the lock: cudaStreamWaitEvent's work. The record current at the call is the one waited
 * for; an event never recorded: nothing. */
cudaError_t sim_stream_wait_event(struct CUstream_st *s, struct CUevent_st *e) {
    cudaError_t rc = cudaSuccess;
    if (s->capture || e->capture) {
        rc = sim_capture_wait(s, e);
    } else if (e->captured_last) {
        rc = cudaErrorInvalidValue; /* an H200, CUDA 13: cudaErrorInvalidValue, not CapturedEvent */
    } else if (e->recorded) {
        sim_vc_join(&s->vc, &e->vc);
        sim_op *op = calloc(1, sizeof *op);
        op->kind = OP_WAIT;
        op->what = "cudaStreamWaitEvent";
        op->event = e;
        op->record = e->recorded;
        e->waiters++;
        rc = sim_enqueue(s, op);
    }
    return rc;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t e, unsigned flags) {
    (void)flags;
    if (!e) return sim_error(cudaErrorInvalidResourceHandle);
    struct CUstream_st *s = sim_stream_of(stream);
    sim_lock();
    cudaError_t rc = sim_stream_wait_event(s, e);
    sim_unlock();
    return sim_error(rc);
}

/* Under the lock: whether the host may query or synchronise e now. Not an event of a capture going
 * on (it marks no work yet), not from a thread that may make no unsafe call (refused, and that
 * capture is invalidated), not an event last recorded in a capture that has ended. */
static cudaError_t event_usable(struct CUevent_st *e) {
    if (e->capture) return cudaErrorStreamCaptureUnsupported;
    cudaError_t rc = sim_capture_unsafe();
    if (rc != cudaSuccess) return rc;
    return e->captured_last ? cudaErrorInvalidValue : cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t e) {
    if (!e) return sim_error(cudaErrorInvalidResourceHandle);
    sim_lock();
    cudaError_t rc = event_usable(e);
    if (rc != cudaSuccess)
        ;
    else if (e->completed < e->recorded)
        rc = cudaErrorNotReady;
    else
        sim_host_sees(&e->vc);
    sim_unlock();
    if (rc == cudaErrorNotReady) return not_ready();
    return sim_error(rc);
}

cudaError_t cudaEventSynchronize(cudaEvent_t e) {
    if (!e) return sim_error(cudaErrorInvalidResourceHandle);
    sim_lock();
    cudaError_t rc = event_usable(e);
    if (rc != cudaSuccess) {
        sim_unlock();
        return sim_error(rc);
    }
    while (e->completed < e->recorded)
        pthread_cond_wait(&sim.changed, &sim.lock);
    sim_host_sees(&e->vc);
    sim_unlock();
    return cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end) {
    if (!start || !end) return sim_error(cudaErrorInvalidResourceHandle);
    if ((start->flags | end->flags) & cudaEventDisableTiming)
        return sim_error(cudaErrorInvalidResourceHandle);
    sim_lock();
    cudaError_t rc = cudaSuccess;
    if (!start->recorded || !end->recorded)
        rc = cudaErrorInvalidResourceHandle;
    else if (start->completed < start->recorded || end->completed < end->recorded)
        rc = cudaErrorNotReady;
    else
        *ms = (float)(1e3 * (end->seconds - start->seconds));
    sim_unlock();
    return sim_error(rc);
}

/* ---- copies ----------------------------------------------------------------------------- */

/* The kind against the pointers: CUDA refuses a device pointer where it expects host memory. */
static int kind_fits(const void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind) {
    int dd = sim_is_device(dst, bytes), sd = sim_is_device(src, bytes);
    switch (kind) {
    case cudaMemcpyHostToDevice:
        return dd && !sd;
    case cudaMemcpyDeviceToHost:
        return !dd && sd;
    case cudaMemcpyDeviceToDevice:
        return dd && sd;
    case cudaMemcpyHostToHost:
        return !dd && !sd;
    case cudaMemcpyDefault:
        return 1;
    }
    return 0;
}

static cudaError_t copy_2d_async(void *dst, size_t dpitch, const void *src, size_t spitch,
                                 size_t width, size_t height, enum cudaMemcpyKind kind,
                                 cudaStream_t stream, int sync) {
    struct CUstream_st *s = sim_stream_of(stream);
    size_t dspan = height ? (height - 1) * dpitch + width : 0;
    size_t sspan = height ? (height - 1) * spitch + width : 0;
    if (height > 1 && (dpitch < width || spitch < width)) return sim_error(cudaErrorInvalidValue);
    if (!width || !height) return cudaSuccess;
    if (!kind_fits(dst, src, dspan, kind) || !kind_fits(dst, src, sspan, kind))
        return sim_error(cudaErrorInvalidMemcpyDirection);
    sim_op *op = calloc(1, sizeof *op);
    *op = (sim_op){.kind = OP_COPY,
                   .what = "cudaMemcpy",
                   .dst = dst,
                   .src = src,
                   .width = width,
                   .height = height,
                   .dpitch = dpitch,
                   .spitch = spitch};
    /* the ranges as the race check sees them: each row of a copy of a few rows (the halo's, far
     * apart), else the rows' whole span (a frame's, whose pitches hold only the rest of a row) */
    if (height <= 3) {
        for (size_t r = 0; r < height; r++) {
            op->acc[op->nacc++] = (cudasim_access){(char *)dst + r * dpitch, width, CUDASIM_WRITE};
            op->acc[op->nacc++] =
                (cudasim_access){(const char *)src + r * spitch, width, CUDASIM_READ};
        }
    } else {
        op->acc[op->nacc++] = (cudasim_access){dst, dspan, CUDASIM_WRITE};
        op->acc[op->nacc++] = (cudasim_access){src, sspan, CUDASIM_READ};
    }
    /* Pageable host memory. A copy into it returns only once done (so once the stream's earlier
     * work is), and so does a copy from host memory to host memory, pinned or not. A copy out of
     * it to the device stages the source at the call, so the caller may reuse it at once, and
     * returns without waiting for anything: neither the stream's earlier work nor the copy
     * itself is done, or seen by the host, when it returns. A capture refuses a copy to or from
     * pageable memory (and is invalidated): a graph's copy node moves device or pinned memory. */
    int pageable_dst = !sim_is_device(dst, dspan) && !sim_is_pinned(dst, dspan);
    int pageable_src = !sim_is_device(src, sspan) && !sim_is_pinned(src, sspan);
    if (!sim_is_device(dst, dspan) && !sim_is_device(src, sspan)) sync = 1;
    sim_site_here(&op->site);
    sim_lock();
    if (s->capture && (pageable_dst || pageable_src)) {
        sim_capture_invalidate(s);
        sim_unlock();
        free(op);
        return sim_error(cudaErrorStreamCaptureUnsupported);
    }
    if (pageable_src && !pageable_dst && !sync) {
        char *staged = malloc(sspan);
        memcpy(staged, src, sspan);
        op->src = staged;
        op->staged = 1;
    }
    int capturing = s->capture != NULL;
    cudaError_t rc = sim_enqueue(s, op);
    if (rc == cudaSuccess && (sync || pageable_dst) && !capturing) {
        sim_wait_stream(s, s->tick);
        sim_host_sees(&s->vc);
    }
    sim_unlock();
    return sim_error(rc);
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                            cudaStream_t s) {
    return copy_2d_async(dst, bytes, src, bytes, bytes, 1, kind, s, 0);
}

cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch,
                              size_t width, size_t height, enum cudaMemcpyKind kind,
                              cudaStream_t s) {
    return copy_2d_async(dst, dpitch, src, spitch, width, height, kind, s, 0);
}

/* The legacy default stream, and the host waits for it. */
cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind) {
    if (sim_capture_refuses()) return cudaErrorStreamCaptureUnsupported;
    return copy_2d_async(dst, bytes, src, bytes, bytes, 1, kind, NULL, 1);
}

static cudaError_t set_async(void *p, int value, size_t bytes, cudaStream_t stream, int sync) {
    struct CUstream_st *s = sim_stream_of(stream);
    if (!bytes) return cudaSuccess;
    if (!sim_is_device(p, bytes)) return sim_error(cudaErrorInvalidValue);
    sim_op *op = calloc(1, sizeof *op);
    *op = (sim_op){
        .kind = OP_SET, .what = "cudaMemset", .dst = p, .value = value, .width = bytes, .nacc = 1};
    op->acc[0] = (cudasim_access){p, bytes, CUDASIM_WRITE};
    sim_site_here(&op->site);
    sim_lock();
    cudaError_t rc = sim_enqueue(s, op);
    if (rc == cudaSuccess && sync && !s->capture) {
        sim_wait_stream(s, s->tick);
        sim_host_sees(&s->vc);
    }
    sim_unlock();
    return sim_error(rc);
}

cudaError_t cudaMemsetAsync(void *p, int value, size_t bytes, cudaStream_t s) {
    return set_async(p, value, bytes, s, 0);
}

cudaError_t cudaMemset(void *p, int value, size_t bytes) {
    if (sim_capture_refuses()) return cudaErrorStreamCaptureUnsupported;
    return set_async(p, value, bytes, NULL, 1);
}

cudaError_t cudasim_launch(cudaStream_t stream, const char *name, const cudasim_access *acc,
                           int nacc, void (*body)(void *), const void *arg, size_t arg_bytes) {
    struct CUstream_st *s = sim_stream_of(stream);
    if (nacc > 8) return sim_error(cudaErrorInvalidValue);
    sim_op *op = calloc(1, sizeof *op);
    *op = (sim_op){.kind = OP_KERNEL, .what = name, .body = body, .nacc = nacc};
    op->arg = malloc(arg_bytes ? arg_bytes : 1);
    op->arg_bytes = arg_bytes;
    memcpy(op->arg, arg, arg_bytes);
    memcpy(op->acc, acc, (size_t)nacc * sizeof *acc);
    for (int i = 0; i < nacc; i++)
        if (acc[i].bytes && !sim_is_device(acc[i].p, acc[i].bytes) &&
            !sim_is_pinned(acc[i].p, acc[i].bytes)) {
            free_op(op);
            return sim_error(cudaErrorIllegalAddress); /* a kernel reaches device memory only */
        }
    sim_site_here(&op->site);
    sim_lock();
    cudaError_t rc = sim_enqueue(s, op);
    sim_unlock();
    return sim_error(rc);
}
