/* The CUDA backend: a bit-packed slab on one GPU per rank.
 *
 * Each generation forks from the compute stream: the comm stream computes the first and last owned
 * rows, then exchanges them through a device halo mode of halo/halo.h, ordered on the comm stream
 * (NCCL, or MPI through the host); the compute stream computes the rows in between at the same
 * time; the compute stream then waits for the comm stream (halo_done), so
 * the compute stream alone carries the order from one generation to the next. That single order
 * is what the CUDA graphs capture (one per buffer parity) and what frames and population wait on.
 *
 * Buffers: two slabs of (rows + 2) x nwords words, row 0 the top halo and row rows+1 the bottom
 * halo. Halo rows past a dead boundary are never written, so they stay zero in both buffers. */
#include <cuda_runtime_api.h>
#include <stdlib.h>

#include "core/check.h"
#include "core/trace.h"
#include "halo/halo.h"
#include "kernels/backend.h"
#include "kernels/device.h"
#include "kernels/life_cuda.h"

enum { FRAME_TIMERS = 64 }; /* frames a slot may have in flight before their timers are read */

typedef struct frame_timer {
    cudaEvent_t t0[FRAME_TIMERS], t1[FRAME_TIMERS];
    int head, count; /* ring of recorded, not yet harvested pairs */
} frame_timer;

typedef struct cuda_backend {
    gol_slab slab;
    gol_cuda_grid grid;
    int64_t row_words; /* nwords */
    size_t row_bytes;
    int device;

    uint64_t *buf_d[2];
    int cur; /* buf_d[cur] holds the current generation */

    cudaStream_t compute, comm, copy[2];
    cudaEvent_t fork, halo_done, gen_done;
    cudaEvent_t frame_read[2]; /* slot s finished reading the grid buffer */
    int frame_pending[2][2];   /* [slot][buffer]: compute must wait frame_read[slot] before writing */

    gol_halo *halo; /* a device mode, ordered on the comm stream */

    int use_graphs;
    cudaGraphExec_t graph[2]; /* graph[p]: one generation from buf_d[p] into buf_d[p ^ 1] */

    uint8_t *stage_d[2]; /* per slot, rows * width bytes, allocated on the first frame */
    frame_timer ftimer[2];

    unsigned long long *pop_d, *pop_h;
    cudaEvent_t halo_t0, halo_t1;
    double compute_s, halo_s, frame_s;
} cuda_backend;

static uint64_t *row_ptr(cuda_backend *cb, int b, int64_t row) {
    return cb->buf_d[b] + row * cb->row_words;
}

/* Waits for a stream; where the halo mode has an asynchronous error to watch (NCCL), it watches
 * it meanwhile, so a dead peer aborts the run with NCCL's message rather than hanging it. */
static void sync_stream(cuda_backend *cb, cudaStream_t s) {
    if (!halo_sync_stream(cb->halo, s)) CUDA_CHECK(cudaStreamSynchronize(s));
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
    int64_t rows = cb->slab.rows;
    halo_post(cb->halo, row_ptr(cb, b, 1), row_ptr(cb, b, rows), row_ptr(cb, b, 0),
              row_ptr(cb, b, rows + 1));
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

/* One generation from buffer p into p ^ 1. Capturable when the halo mode is (NCCL, none) and
 * timed is 0. timed brackets the exchange with events, the sample behind halo_s. */
static void enqueue_step(cuda_backend *cb, int p, int timed) {
    const uint64_t *src = cb->buf_d[p];
    uint64_t *dst = cb->buf_d[p ^ 1];
    fork_comm(cb);
    launch_life_edges(cb->grid, src, dst, cb->comm);
    /* queued before a host-side MPI exchange below, so the interior runs during it */
    launch_life_rows(cb->grid, src, dst, 2, cb->slab.rows, cb->compute);
    if (timed) CUDA_CHECK(cudaEventRecord(cb->halo_t0, cb->comm));
    exchange_halo(cb, p ^ 1);
    if (timed) CUDA_CHECK(cudaEventRecord(cb->halo_t1, cb->comm));
    join_comm(cb);
}

static void capture_graphs(cuda_backend *cb) {
    for (int p = 0; p < 2; p++) {
        cudaGraph_t graph;
        CUDA_CHECK(cudaStreamBeginCapture(cb->compute, cudaStreamCaptureModeThreadLocal));
        enqueue_step(cb, p, 0);
        CUDA_CHECK(cudaStreamEndCapture(cb->compute, &graph));
        CUDA_CHECK(cudaGraphInstantiate(&cb->graph[p], graph, 0));
        CUDA_CHECK(cudaGraphDestroy(graph));
        CUDA_CHECK(cudaGraphUpload(cb->graph[p], cb->compute));
    }
}

static size_t slab_bytes(const cuda_backend *cb) {
    return (size_t)(cb->slab.rows + 2) * cb->row_bytes;
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

static void create_events(cuda_backend *cb) {
    CUDA_CHECK(cudaEventCreateWithFlags(&cb->fork, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&cb->halo_done, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&cb->gen_done, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreate(&cb->halo_t0));
    CUDA_CHECK(cudaEventCreate(&cb->halo_t1));
    for (int s = 0; s < 2; s++) {
        CUDA_CHECK(cudaEventCreateWithFlags(&cb->frame_read[s], cudaEventDisableTiming));
        for (int k = 0; k < FRAME_TIMERS; k++) {
            CUDA_CHECK(cudaEventCreate(&cb->ftimer[s].t0[k]));
            CUDA_CHECK(cudaEventCreate(&cb->ftimer[s].t1[k]));
        }
    }
}

static void alloc_slabs(cuda_backend *cb) {
    for (int b = 0; b < 2; b++) {
        CUDA_CHECK(cudaMalloc((void **)&cb->buf_d[b], slab_bytes(cb)));
        CUDA_CHECK(cudaMemsetAsync(cb->buf_d[b], 0, slab_bytes(cb), cb->compute));
    }
    CUDA_CHECK(cudaMalloc((void **)&cb->pop_d, sizeof *cb->pop_d));
    CUDA_CHECK(cudaMallocHost((void **)&cb->pop_h, sizeof *cb->pop_h));
}

static void warm_up_and_capture(cuda_backend *cb, const gol_config *cfg) {
    /* Host MPI calls cannot live in a graph, so graphs are for capturable modes only. */
    cb->use_graphs = !cfg->no_graphs && halo_capturable(cb->halo);
    if (!halo_capturable(cb->halo) && !halo_sampled(cb->halo)) return;
    /* Warm-up: NCCL connects to each peer on first use, which must not happen inside a capture
     * or a timed region. Both parities, twice, on the all-dead grid. */
    for (int i = 0; i < 4; i++) enqueue_step(cb, i & 1, 0);
    sync_stream(cb, cb->compute);
    /* a rule with B0 makes cells out of nothing: start load from clean buffers anyway */
    for (int b = 0; b < 2; b++)
        CUDA_CHECK(cudaMemsetAsync(cb->buf_d[b], 0, slab_bytes(cb), cb->compute));
    if (cb->use_graphs) capture_graphs(cb);
    sync_stream(cb, cb->compute);
}

static void *cuda_create(const char *halo, const gol_slab *slab, const gol_config *cfg,
                         MPI_Comm comm) {
    const halo_mode *mode = halo_mode_find(halo, HALO_MEM_DEVICE);
    if (!mode)
        gol_die(__FILE__, __LINE__, "halo_mode_find", "golmpi", "no device halo mode of that name");
    cuda_backend *cb = gol_xcalloc(1, sizeof *cb);
    init_geometry(cb, slab);
    cb->device = device_select(comm); /* this rank's GPU, before anything touches one */
    create_streams(cb);               /* compute, comm (higher priority), two copy streams */
    create_events(cb);                /* fork and join, the halo sample, frame timers */
    alloc_slabs(cb);                  /* two zeroed grid buffers and the population counter */
    /* collective: the halo mode may connect to the neighbours (NCCL) */
    cb->halo = halo_create(mode, slab, comm, cb->comm, cfg->timeout_s);
    CUDA_CHECK(cudaStreamSynchronize(cb->compute));
    warm_up_and_capture(cb, cfg); /* warm-up exchanges, then graphs where the mode allows */
    return cb;
}

static void cuda_load(void *impl, const uint64_t *rows_h) {
    cuda_backend *cb = impl;
    wait_frames_on(cb, cb->cur);
    CUDA_CHECK(cudaMemcpyAsync(row_ptr(cb, cb->cur, 1), rows_h,
                               (size_t)cb->slab.rows * cb->row_bytes, cudaMemcpyHostToDevice,
                               cb->compute));
    /* The step exchanges the rows it has just computed, so the loaded state needs its own. */
    fork_comm(cb);
    exchange_halo(cb, cb->cur);
    join_comm(cb);
    sync_stream(cb, cb->compute);
}

static void cuda_store(void *impl, uint64_t *rows_h) {
    cuda_backend *cb = impl;
    CUDA_CHECK(cudaMemcpyAsync(rows_h, row_ptr(cb, cb->cur, 1),
                               (size_t)cb->slab.rows * cb->row_bytes, cudaMemcpyDeviceToHost,
                               cb->compute));
    sync_stream(cb, cb->compute);
}

static void cuda_advance(void *impl, int64_t generations) {
    cuda_backend *cb = impl;
    if (generations <= 0) return;
    double t0 = MPI_Wtime();
    /* The first generation of each call runs outside the graph with events around the exchange
     * (NCCL): a cheap sample of the exchange time, scaled to the call (a graph cannot be timed
     * inside). */
    int timed = halo_sampled(cb->halo);
    for (int64_t g = 0; g < generations; g++) {
        wait_frames_on(cb, cb->cur ^ 1);
        if (cb->use_graphs && !(timed && g == 0))
            CUDA_CHECK(cudaGraphLaunch(cb->graph[cb->cur], cb->compute));
        else
            enqueue_step(cb, cb->cur, timed && g == 0);
        cb->cur ^= 1;
        if ((g & 1023) == 1023) halo_poll(cb->halo);
    }
    sync_stream(cb, cb->compute);
    if (timed) {
        float ms = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&ms, cb->halo_t0, cb->halo_t1));
        cb->halo_s += 1e-3 * ms * (double)generations;
    }
    cb->compute_s += MPI_Wtime() - t0;
}

/* Adds the GPU time of finished frames; with wait set, blocks until the oldest is done. */
static void harvest_frame_timers(cuda_backend *cb, int slot, int wait) {
    frame_timer *ft = &cb->ftimer[slot];
    while (ft->count > 0) {
        int k = ft->head;
        if (wait)
            CUDA_CHECK(cudaEventSynchronize(ft->t1[k]));
        else if (cudaEventQuery(ft->t1[k]) != cudaSuccess)
            break; /* not ready (or an error that the next checked call will report) */
        float ms = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&ms, ft->t0[k], ft->t1[k]));
        cb->frame_s += 1e-3 * ms;
        ft->head = (ft->head + 1) % FRAME_TIMERS;
        ft->count--;
        if (wait) break;
    }
}

static void cuda_frame_begin(void *impl, int slot, gol_frame_format fmt, void *dst_h) {
    cuda_backend *cb = impl;
    int64_t rows = cb->slab.rows, width = cb->slab.width;
    trace_pushf("d2h slot %d", slot);
    if (!cb->stage_d[slot])
        CUDA_CHECK(cudaMalloc((void **)&cb->stage_d[slot], (size_t)(rows * width)));
    frame_timer *ft = &cb->ftimer[slot];
    harvest_frame_timers(cb, slot, 0);
    if (ft->count == FRAME_TIMERS) harvest_frame_timers(cb, slot, 1);
    int k = (ft->head + ft->count) % FRAME_TIMERS;
    ft->count++;

    cudaStream_t s = cb->copy[slot];
    CUDA_CHECK(cudaEventRecord(cb->gen_done, cb->compute));
    CUDA_CHECK(cudaStreamWaitEvent(s, cb->gen_done, 0));
    CUDA_CHECK(cudaEventRecord(ft->t0[k], s));
    const uint64_t *src = row_ptr(cb, cb->cur, 1);
    int64_t row_bytes = frame_row_bytes(width, fmt);
    if (fmt == GOL_FRAME_PACKED) {
        /* little-endian: a row's first ceil(width/8) bytes are its packed-lsb frame row */
        CUDA_CHECK(cudaMemcpy2DAsync(cb->stage_d[slot], (size_t)row_bytes, src, cb->row_bytes,
                                     (size_t)row_bytes, (size_t)rows, cudaMemcpyDeviceToDevice,
                                     s));
    } else {
        launch_unpack_u8(src, cb->stage_d[slot], rows, cb->row_words, width, s);
    }
    /* The grid buffer is free again once the slot's own copy exists; the D2H reads only that. */
    CUDA_CHECK(cudaEventRecord(cb->frame_read[slot], s));
    cb->frame_pending[slot][cb->cur] = 1;
    CUDA_CHECK(cudaMemcpyAsync(dst_h, cb->stage_d[slot], (size_t)(rows * row_bytes),
                               cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaEventRecord(ft->t1[k], s));
    trace_pop();
}

static void cuda_frame_wait(void *impl, int slot) {
    cuda_backend *cb = impl;
    sync_stream(cb, cb->copy[slot]);
    harvest_frame_timers(cb, slot, 0);
}

static void *cuda_host_alloc(void *impl, int64_t bytes) {
    (void)impl;
    void *p = NULL;
    CUDA_CHECK(cudaMallocHost(&p, (size_t)(bytes > 0 ? bytes : 1)));
    return p;
}

static void cuda_host_free(void *impl, void *p) {
    (void)impl;
    if (p) CUDA_CHECK(cudaFreeHost(p));
}

static int64_t cuda_population(void *impl) {
    cuda_backend *cb = impl;
    CUDA_CHECK(cudaMemsetAsync(cb->pop_d, 0, sizeof *cb->pop_d, cb->compute));
    launch_popcount(row_ptr(cb, cb->cur, 1), cb->slab.rows * cb->row_words, cb->pop_d,
                    cb->compute);
    CUDA_CHECK(cudaMemcpyAsync(cb->pop_h, cb->pop_d, sizeof *cb->pop_d, cudaMemcpyDeviceToHost,
                               cb->compute));
    sync_stream(cb, cb->compute);
    return (int64_t)*cb->pop_h;
}

static gol_backend_times cuda_times(const void *impl) {
    const cuda_backend *cb = impl;
    gol_backend_times t;
    t.compute_s = cb->compute_s;
    t.halo_s = halo_sampled(cb->halo) ? cb->halo_s : halo_seconds(cb->halo);
    t.frame_s = cb->frame_s;
    return t;
}

static void cuda_destroy(void *impl) {
    cuda_backend *cb = impl;
    if (!cb) return;
    CUDA_CHECK(cudaSetDevice(cb->device));
    CUDA_CHECK(cudaDeviceSynchronize());
    for (int p = 0; p < 2; p++)
        if (cb->graph[p]) CUDA_CHECK(cudaGraphExecDestroy(cb->graph[p]));
    halo_destroy(cb->halo);
    for (int b = 0; b < 2; b++) CUDA_CHECK(cudaFree(cb->buf_d[b]));
    for (int s = 0; s < 2; s++) {
        if (cb->stage_d[s]) CUDA_CHECK(cudaFree(cb->stage_d[s]));
        CUDA_CHECK(cudaEventDestroy(cb->frame_read[s]));
        for (int k = 0; k < FRAME_TIMERS; k++) {
            CUDA_CHECK(cudaEventDestroy(cb->ftimer[s].t0[k]));
            CUDA_CHECK(cudaEventDestroy(cb->ftimer[s].t1[k]));
        }
        CUDA_CHECK(cudaStreamDestroy(cb->copy[s]));
    }
    CUDA_CHECK(cudaFree(cb->pop_d));
    CUDA_CHECK(cudaFreeHost(cb->pop_h));
    CUDA_CHECK(cudaEventDestroy(cb->fork));
    CUDA_CHECK(cudaEventDestroy(cb->halo_done));
    CUDA_CHECK(cudaEventDestroy(cb->gen_done));
    CUDA_CHECK(cudaEventDestroy(cb->halo_t0));
    CUDA_CHECK(cudaEventDestroy(cb->halo_t1));
    CUDA_CHECK(cudaStreamDestroy(cb->compute));
    CUDA_CHECK(cudaStreamDestroy(cb->comm));
    free(cb);
}

const gol_backend_ops gol_backend_cuda_ops = {
    .name = "cuda",
    .create = cuda_create,
    .load = cuda_load,
    .store = cuda_store,
    .advance = cuda_advance,
    .frame_begin = cuda_frame_begin,
    .frame_wait = cuda_frame_wait,
    .host_alloc = cuda_host_alloc,
    .host_free = cuda_host_free,
    .population = cuda_population,
    .times = cuda_times,
    .destroy = cuda_destroy,
};
