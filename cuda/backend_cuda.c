/* The CUDA backend: a bit-packed slab on one GPU per rank. This file is the algorithm of a pass;
 * its other jobs are units of their own: the watchdog and every host wait (cuda/cuda_watch.h),
 * frames out (cuda/cuda_frames.h), where the time goes (cuda/cuda_times.h), the cycles'
 * graphs (cuda/cuda_graph.h), and the decisions that need no GPU (cuda/cuda_sizes.h,
 * cuda_account.h, cuda_pass_split.h, cuda_share.h, cuda_cadence.h, cuda_stall.h).
 *
 * Buffers: two slabs of rows + 2k rows of nwords words (k: the halo depth of core/depth.h), rows
 * numbered as in core/depth.h: row 0 the first owned row, -k..-1 the halo above, rows..rows+k-1
 * the halo below. Halo rows past a dead boundary are never written, so they stay zero.
 *
 * A generation's path, as on the CPU backend: the halo rows are exchanged every k generations
 * counted from the load (a cycle), and the generations between run in passes of up to the
 * kernel shape's gens_max (cuda_advance, the one loop, and enqueue_pass below it). A pass inside
 * a cycle is one launch of every row on the compute stream. The pass that ends a cycle forks the
 * comm stream off the compute stream; the comm stream computes the two edge bands and exchanges
 * them through the halo mode (halo/halo.h: NCCL on the stream, or MPI through the host); the
 * compute stream computes the rows in between meanwhile, waiting for neither, then joins the
 * bands alone. Work that reads the halo rows or overwrites the rows sent (the next unsplit pass,
 * a load) joins the exchange first. With a capturable mode and graphs on, a whole cycle (k
 * generations, its exchange included) is one graph launch, captured per buffer at create
 * (warm_up_and_capture): the host makes one call a cycle, none inside it. The timed samples and
 * the cycles a frame or a load cuts run eagerly, on every rank alike (cuda_advance).
 *
 * The host never blocks in a CUDA call that cannot see a dead peer: every wait polls through the
 * watchdog, at most a bounded number of generations is queued ahead of the GPU (a mark every few
 * generations), and after --timeout seconds without progress every rank is aborted. */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/backend_ops.h"
#include "core/check.h"
#include "core/depth.h"
#include "core/random_start.h"
#include "core/trace.h"
#include "halo/halo.h"
#include "cuda/cuda_frames.h"
#include "cuda/cuda_graph.h"
#include "cuda/cuda_mem.h"
#include "cuda/cuda_sizes.h"
#include "cuda/cuda_account.h"
#include "cuda/cuda_pass_split.h"
#include "cuda/cuda_share.h"
#include "cuda/cuda_times.h"
#include "cuda/cuda_watch.h"
#include "cuda/device.h"
#include "cuda/init_cuda.h"
#include "cuda/life_cuda.h"
#include "cuda/shape_choice.h"

typedef struct cuda_backend {
    gol_slab slab;
    gol_cuda_grid grid; /* the slab's shape and rule, for the launchers */
    int64_t row_words;  /* nwords */
    size_t row_bytes;
    int device;
    int launch_ranks; /* ranks running kernels on this GPU side by side (MPS) */
    int shape;        /* the multi-generation kernel's shape (cuda/life_geometry.h) */
    shape_choice_result choice; /* the shape create chose, and why (cuda/shape_choice.h) */
    int pass_max;     /* generations a pass at most: the shape's gens_max */
    int64_t depth;    /* k: halo rows a side, exchanged every k generations */

    uint64_t *buf_d[2];
    int cur_buf;       /* buf_d[cur_buf]: the current generation, which the next pass reads */
    int64_t halo_left; /* halo rows of buf_d[cur_buf] still valid; the pass that uses them up ends
                        * with the exchange, which sets it back to depth (never 0 after a load) */
    int64_t owed;      /* generations asked, not yet queued: fewer than halo_left (cuda_advance) */

    cudaStream_t compute, comm; /* the interior; the edge bands and the exchange (outranks it) */
    cudaEvent_t fork;       /* on compute: what the comm stream's bands wait for */
    cudaEvent_t bands_done; /* on comm: a pass's bands, which the next pass reads */
    cudaEvent_t halo_done;  /* on comm: the last exchange */
    int halo_pending;       /* the compute stream has not waited for halo_done since */
    gol_halo *halo;      /* a device mode, ordered on the comm stream */
    int graphed;         /* whole cycles replay from graphs: a capturable mode, graphs on */
    cuda_graphs *graphs; /* the cycle from each buffer, captured at create; NULL: all eager */

    cuda_watch *watch;    /* every host wait, and the bound on the work in flight */
    cuda_frames *frames;  /* frames out: copy streams, stages */
    cuda_times *times;    /* where the time goes */
    cuda_mem_account mem; /* everything cudaMalloc'ed here */
    unsigned long long *pop_d, *pop_h;
} cuda_backend;

/* Row `row` of buffer b (0: the first owned row, -k the topmost halo row). */
static uint64_t *row_ptr(cuda_backend *cb, int b, int64_t row) {
    return cb->buf_d[b] + (row + cb->depth) * cb->row_words;
}

/* Until all of stream s's work so far is done, polling (cuda/cuda_watch.h). */
static void wait_stream(cuda_backend *cb, cudaStream_t s, const char *what) {
    cuda_watch_wait_stream(cb->watch, s, what, cuda_watch_posted(cb->watch));
}

/* ---- The pass ---- */

/* The comm stream waits for the compute stream's work so far: the bands read the rows the last
 * pass wrote there, and overwrite rows it read. */
static void fork_comm(cuda_backend *cb) {
    CUDA_CHECK(cudaEventRecord(cb->fork, cb->compute));
    CUDA_CHECK(cudaStreamWaitEvent(cb->comm, cb->fork, 0));
}

/* The compute stream waits for the bands just queued on the comm stream (the owned rows they
 * wrote), not for the exchange queued after them. */
static void join_comm(cuda_backend *cb) {
    CUDA_CHECK(cudaStreamWaitEvent(cb->compute, cb->bands_done, 0));
}

/* The compute stream waits for the last exchange, when it has not yet: before work that reads
 * the halo rows it wrote (an unsplit pass, a graph's pass) or overwrites the rows it sends. */
static void join_halo(cuda_backend *cb) {
    if (!cb->halo_pending) return;
    CUDA_CHECK(cudaStreamWaitEvent(cb->compute, cb->halo_done, 0));
    cb->halo_pending = 0;
}

/* Halo rows of buffer b from its owned edge rows, enqueued on the comm stream (halo/halo.h's
 * halo_post and halo_wait call the mode's ops: nccl_post's ncclSend/ncclRecv in halo/halo_nccl.c,
 * whose wait does nothing, or MPI through the host in halo/halo_mpi_staged.c, which runs host
 * calls here while the interior already queued runs),
 * then the event the compute stream joins when it needs them (join_halo). timed: the two events
 * that bracket it (cuda_times_sample), or NULL. */
static void exchange_halo(cuda_backend *cb, int b, cudaEvent_t *timed) {
    int64_t rows = cb->slab.rows, k = cb->depth; /* k rows each way, one message */
    if (timed) CUDA_CHECK(cudaEventRecord(timed[0], cb->comm));
    halo_post(cb->halo, row_ptr(cb, b, 0), row_ptr(cb, b, rows - k), row_ptr(cb, b, -k),
              row_ptr(cb, b, rows));
    halo_wait(cb->halo);
    if (timed) CUDA_CHECK(cudaEventRecord(timed[1], cb->comm));
    if (cb->slab.up < 0 && cb->slab.down < 0) return; /* nothing moved */
    CUDA_CHECK(cudaEventRecord(cb->halo_done, cb->comm));
    cb->halo_pending = 1;
}

/* Rows [lo, hi) of the generation n after buf_d[p]'s, into buf_d[p ^ 1], on stream s (an empty
 * range launches nothing). A pass of one generation runs the one-generation kernel, which reads
 * rows lo - 1 and hi: valid halo rows, or zero past a dead boundary. A longer pass runs the
 * multi-generation kernel, told that rows past a dead boundary are dead at every generation; no
 * pass reads further than 2k rows past the owned ones. */
static void pass_rows(cuda_backend *cb, int p, gol_rows r, int n, cudaStream_t s) {
    if (r.lo >= r.hi) return;
    const uint64_t *src = row_ptr(cb, p, 0);
    uint64_t *dst = row_ptr(cb, p ^ 1, 0);
    if (n == 1) {
        launch_life_rows(cb->grid, src, dst, r.lo, r.hi, s);
        return;
    }
    const int64_t rows = cb->slab.rows, reach = 2 * cb->depth + 1;
    int64_t live_lo = cb->slab.up < 0 ? 0 : -reach;
    int64_t live_hi = cb->slab.down < 0 ? rows : rows + reach;
    launch_life_deep(cb->grid, src, dst, r.lo, r.hi, n, cb->shape, live_lo, live_hi,
                     cb->launch_ranks, s);
}

/* Generations of the next pass with n owed in the cycle: the shape's gens_max at most. Every
 * cycle is cut so, eager or captured. */
static int64_t pass_gens(const cuda_backend *cb, int64_t n) {
    return n < cb->pass_max ? n : cb->pass_max;
}

/* Passes in a whole cycle. */
static int64_t cycle_passes(const cuda_backend *cb) {
    return (cb->depth + cb->pass_max - 1) / cb->pass_max;
}

static void enqueue_pass(cuda_backend *cb, int p, int n, int64_t halo_left, cudaEvent_t *timed);
static void replay_cycle(cuda_backend *cb);
static void run_passes(cuda_backend *cb, int64_t n);

/* The one advance loop, at every depth, the way the jacobi loop of NVIDIA's nccl_overlap reads:
 * the generations asked are owed, and every cycle they complete is queued now: a whole cycle (one
 * that starts at its exchange) replayed from its graph, in one launch with no host call inside;
 * else its passes eagerly (run_passes), up to pass_max generations each, the last with the
 * exchange. What is left, less than the rest of a cycle, stays owed until the next call or an op
 * that needs the state (settle). So the passes, the graphs and the timed samples fall on the
 * same generations on every rank however the ranks cut their calls, and NCCL meets the same
 * exchange, captured or eager, on every rank. No synchronisation at the end: the next call, a
 * frame or the population queues behind it, and the host waits only where it needs a result. */
static void cuda_advance(void *impl, int64_t generations) {
    cuda_backend *cb = impl;
    if (generations <= 0) return;
    if (cb->halo_left <= 0) /* no halo rows yet: a pass of 0 generations, forever */
        gol_die(__FILE__, __LINE__, "cuda_advance", "golmpi",
                "advance before any load or random start (an internal error)");
    cb->owed += generations;
    int t = cuda_times_advance_begin(cb->times, cb->compute);
    while (cb->owed >= cb->halo_left) { /* the rest of a cycle, exchange included */
        if (cb->graphs && cb->halo_left == cb->depth && !cuda_times_sample_next(cb->times))
            replay_cycle(cb);
        else
            run_passes(cb, cb->halo_left);
    }
    cuda_times_advance_end(cb->times, t, cb->compute);
}

/* The owed generations, queued now in eager passes: before every op that reads, copies or
 * replaces the grid. Those ops fall on the same generations on every rank (the schedule's), so
 * this partial cycle is cut alike everywhere. */
static void settle(cuda_backend *cb) {
    if (cb->owed == 0) return;
    int t = cuda_times_advance_begin(cb->times, cb->compute);
    run_passes(cb, cb->owed);
    cuda_times_advance_end(cb->times, t, cb->compute);
}

/* A pass of n generations was queued (ends: with the cycle's exchange): the buffers flip. */
static void passed(cuda_backend *cb, int64_t n, int ends) {
    cuda_times_passed(cb->times, ends);
    cb->halo_left = ends ? cb->depth : cb->halo_left - n;
    cb->cur_buf ^= 1;
    cb->owed -= n;
    for (int64_t i = 0; i < n; i++) cuda_watch_generation(cb->watch);
}

/* The compute stream waits for any frame still copying out of a buffer that the next `passes`
 * passes write: the other buffer, and from two passes on both. */
static void before_writes(cuda_backend *cb, int64_t passes) {
    cuda_frames_before_write(cb->frames, cb->cur_buf ^ 1);
    if (passes > 1) cuda_frames_before_write(cb->frames, cb->cur_buf);
}

/* n owed generations (n <= halo_left) in eager passes of up to pass_max, the exchange at the
 * cycle's end; a timed sample's exchange is bracketed by its events. */
static void run_passes(cuda_backend *cb, int64_t n) {
    while (n > 0) {
        int64_t g = pass_gens(cb, n);
        const int ends = g == cb->halo_left;
        before_writes(cb, 1);
        enqueue_pass(cb, cb->cur_buf, (int)g, cb->halo_left, cuda_times_sample(cb->times, ends));
        passed(cb, g, ends);
        n -= g;
    }
}

/* One pass of n generations (n <= halo_left, n <= pass_max) from buffer p into p ^ 1, with
 * halo_left halo rows a side at its start (core/depth.h's gol_pass). A pass that does not end the
 * cycle, or has no neighbour, is one launch of every row on the compute stream, after the last
 * exchange (it reads the halo rows). A pass that ends the cycle (n == halo_left) splits
 * (cuda_pass_split): fork; the edge bands on the comm stream, then their exchange; the interior
 * on the compute stream, queued before the exchange and waiting for neither; the compute stream
 * then joins the bands only, so the next pass's interior never waits for this exchange.
 * Capturable when the halo mode is and timed is NULL. */
static void enqueue_pass(cuda_backend *cb, int p, int n, int64_t halo_left, cudaEvent_t *timed) {
    const gol_pass ps = {.rows = cb->slab.rows, .halo_left = halo_left, .gens = n,
                         .dead_top = cb->slab.up < 0, .dead_bottom = cb->slab.down < 0, .tile = 0};
    if (n < halo_left || (ps.dead_top && ps.dead_bottom)) {
        join_halo(cb);
        pass_rows(cb, p, pass_whole_rows(&ps, n), n, cb->compute);
        if (n == halo_left) exchange_halo(cb, p ^ 1, timed); /* no neighbour: nothing moves */
        return;
    }
    const cuda_pass_rows split = cuda_pass_split(&ps, cb->depth);
    fork_comm(cb);
    if (split.edges)
        launch_life_edges(cb->grid, row_ptr(cb, p, 0), row_ptr(cb, p ^ 1, 0), cb->comm);
    else
        for (int side = 0; side < 2; side++) pass_rows(cb, p, split.band[side], n, cb->comm);
    CUDA_CHECK(cudaEventRecord(cb->bands_done, cb->comm));
    /* queued before a host-side MPI exchange below, so the interior runs during it */
    pass_rows(cb, p, split.interior, n, cb->compute);
    exchange_halo(cb, p ^ 1, timed);
    join_comm(cb);
}

/* A whole cycle's passes from buffer p, as run_passes cuts them (passes of pass_max, then the
 * rest, the last with the exchange), every one eager and untimed: the graphs' contents, and the
 * shapes' timing. Returns the buffer the cycle ends in. */
static int enqueue_cycle(cuda_backend *cb, int p) {
    for (int64_t left = cb->depth; left > 0; p ^= 1) {
        int n = (int)pass_gens(cb, left);
        enqueue_pass(cb, p, n, left, NULL);
        left -= n;
    }
    return p;
}

/* A cycle from buffer p, for the capture (cuda/cuda_graph.h): joined back whole, as a capture
 * must end, so a replay is ordered after the last one's exchange. */
static void capture_cycle(void *impl, int p) {
    enqueue_cycle(impl, p);
    join_halo(impl);
}

/* The cycle from the current buffer, one launch of its graph in g, after the last eager exchange
 * (the graph's bands run on lanes of their own). Its exchange counts as posted (the watchdog's
 * needs). */
static void launch_cycle(cuda_backend *cb, const cuda_graphs *g) {
    join_halo(cb);
    cuda_graphs_replay(g, cb->cur_buf, cb->compute);
    halo_replayed(cb->halo);
}

/* A whole cycle from the current buffer, replayed from the graph captured at create: the passes
 * and the exchange of enqueue_cycle in one launch, after the frames still copying a buffer it
 * writes; then each pass counted as run_passes counts it. */
static void replay_cycle(cuda_backend *cb) {
    before_writes(cb, cycle_passes(cb));
    launch_cycle(cb, cb->graphs);
    for (int64_t left = cb->depth; left > 0;) {
        int64_t n = pass_gens(cb, left);
        passed(cb, n, n == left);
        left -= n;
    }
}

/* ---- Create ---- */

/* Generations of a full cycle's last pass: passes of pass_max, then the rest. */
static int cycle_last_pass(const cuda_backend *cb) {
    return (int)((cb->depth - 1) % cb->pass_max + 1);
}

/* The multi-generation kernel's shape from here on, and the passes it allows. */
static void use_shape(cuda_backend *cb, int shape) {
    cb->shape = shape;
    cb->pass_max = gol_shapes[shape].gens_max;
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

/* The compute and comm streams and the events that fork and join them. */
static void create_streams(cuda_backend *cb) {
    /* The comm stream outranks the interior so the edge rows and the exchange, which are on the
     * critical path to the next generation, are never queued behind interior blocks. */
    int least, greatest;
    CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    CUDA_CHECK(cudaStreamCreateWithPriority(&cb->compute, cudaStreamNonBlocking, least));
    CUDA_CHECK(cudaStreamCreateWithPriority(&cb->comm, cudaStreamNonBlocking, greatest));
    trace_name_stream(cb->compute, "compute");
    trace_name_stream(cb->comm, "comm");
    CUDA_CHECK(cudaEventCreateWithFlags(&cb->fork, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&cb->bands_done, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&cb->halo_done, cudaEventDisableTiming));
}

/* Two zeroed grid buffers and the population counter. With the frame slots (cuda_frames_create),
 * exactly cuda_device_bytes, which the backend's own account confirms, so the host-tested plan is
 * what a GPU gets. */
static void alloc_slabs(cuda_backend *cb, const gol_plan *plan) {
    int64_t bytes = cuda_slab_bytes(cb->slab.rows, cb->depth, cb->row_words);
    for (int b = 0; b < 2; b++) {
        cb->buf_d[b] = cuda_mem_alloc(&cb->mem, bytes, b ? "grid buffer 1" : "grid buffer 0");
        CUDA_CHECK(cudaMemsetAsync(cb->buf_d[b], 0, (size_t)bytes, cb->compute));
    }
    cb->pop_d = cuda_mem_alloc(&cb->mem, sizeof *cb->pop_d, "population counter");
    CUDA_CHECK(cudaMallocHost((void **)&cb->pop_h, sizeof *cb->pop_h));
    if (cb->mem.bytes != cuda_device_bytes(cb->slab.rows, cb->depth, cb->row_words, cb->slab.width,
                                           plan->frame_format, plan->output))
        gol_die(__FILE__, __LINE__, "alloc_slabs", "golmpi",
                "device allocations differ from cuda/cuda_sizes.c's cuda_device_bytes");
}

/* Both frame slots now, not at their first frame, when NCCL work would be queued. */
static cuda_frames *create_frames(cuda_backend *cb, const gol_plan *plan) {
    int64_t stage = plan->output
                        ? cuda_frame_stage_bytes(cb->slab.rows, cb->slab.width, plan->frame_format)
                        : 0;
    return cuda_frames_create(&cb->slab, stage, cb->compute, cb->watch, &cb->mem);
}

/* Full cycles from the current buffer, as the run will queue them: replayed from g, or eager
 * where g is NULL. */
static void run_cycles(cuda_backend *cb, const cuda_graphs *g, int64_t cycles) {
    for (int64_t c = 0; c < cycles; c++) {
        if (!g) {
            cb->cur_buf = enqueue_cycle(cb, cb->cur_buf);
            continue;
        }
        launch_cycle(cb, g);
        cb->cur_buf ^= (int)(cycle_passes(cb) & 1);
    }
}

/* cuda/shape_choice.h's timer: seconds a generation of `shape` on this rank's slab, on
 * whatever the buffers hold (zeroed at create, zeroed again after the choice): one full cycle to
 * warm up, then at least SHAPE_CHOICE_TIMED_GENS generations of full cycles between two events
 * on the compute stream, each exchange included (so collective: every rank times the same shapes
 * in the same order), queued as the run will queue them: where the run replays graphs, from the
 * shape's own cycle graphs, captured here and dropped after, so the host's part of a pass, which
 * a graph removes, does not decide the choice. The shape in use is left as it was. */
static double cuda_time_shape(void *ctx, int shape) {
    cuda_backend *cb = ctx;
    const int kept = cb->shape;
    const int64_t cycles = (SHAPE_CHOICE_TIMED_GENS + cb->depth - 1) / cb->depth;
    cudaEvent_t ev[2];
    for (int i = 0; i < 2; i++) CUDA_CHECK(cudaEventCreate(&ev[i]));
    use_shape(cb, shape);
    join_halo(cb); /* a capture cannot wait on an exchange queued outside it */
    cuda_graphs *g = cb->graphed ? cuda_graphs_capture(cb->compute, capture_cycle, cb) : NULL;
    run_cycles(cb, g, 1);
    join_halo(cb);
    CUDA_CHECK(cudaEventRecord(ev[0], cb->compute));
    run_cycles(cb, g, cycles);
    join_halo(cb); /* the last exchange is part of the time */
    CUDA_CHECK(cudaEventRecord(ev[1], cb->compute));
    cuda_watch_wait_event(cb->watch, ev[1], "timing a kernel shape", cuda_watch_posted(cb->watch));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, ev[0], ev[1]));
    for (int i = 0; i < 2; i++) CUDA_CHECK(cudaEventDestroy(ev[i]));
    cuda_graphs_destroy(g);
    use_shape(cb, kept);
    return 1e-3 * ms / (double)(cycles * cb->depth);
}

/* The run-time choice of the kernel's shape (cuda/shape_choice.h: --kernel's, the wisdom's,
 * timed here with cuda_time_shape, or the model's), after the warm-up and before the capture.
 * Collective: it may time every shape, exchanges included. */
static void choose_shape(cuda_backend *cb, const gol_plan *plan, const gol_config *cfg,
                         MPI_Comm comm) {
    shape_choice_gpu gpu;
    shape_choice_gpu_of(cb->device, &gpu);
    cb->choice = shape_choice_make(plan, cfg, comm, &gpu, cuda_time_shape, cb);
    use_shape(cb, cb->choice.shape);
}

/* Warm-up: NCCL connects to each peer on first use, which must not happen inside a capture or a
 * timed region, and which the halo mode bounds by --timeout (a peer that never posts its first
 * exchange aborts every rank). Both parities, twice, on the all-dead grid. Then the kernel's
 * shape (choose_shape, which may time each on these buffers), and, with a capturable mode and
 * graphs on, the capture of the cycle from each buffer (cuda/cuda_graph.h). */
static void warm_up_and_capture(cuda_backend *cb, const gol_plan *plan, const gol_config *cfg,
                                MPI_Comm comm) {
    if (halo_capturable(cb->halo) || halo_sampled(cb->halo)) {
        for (int i = 0; i < 4; i++)
            enqueue_pass(cb, i & 1, cycle_last_pass(cb), cycle_last_pass(cb), NULL);
        join_halo(cb);
        wait_stream(cb, cb->compute, "the warm-up exchanges");
    }
    choose_shape(cb, plan, cfg, comm);
    /* a rule with B0 makes cells out of nothing: start load from clean buffers anyway */
    int64_t bytes = cuda_slab_bytes(cb->slab.rows, cb->depth, cb->row_words);
    for (int b = 0; b < 2; b++)
        CUDA_CHECK(cudaMemsetAsync(cb->buf_d[b], 0, (size_t)bytes, cb->compute));
    if (cb->graphed) cb->graphs = cuda_graphs_capture(cb->compute, capture_cycle, cb);
    wait_stream(cb, cb->compute, "the graph capture");
}

static void *cuda_create(const gol_plan *plan, const gol_config *cfg, MPI_Comm comm) {
    const gol_slab *slab = &plan->slab;
    cuda_backend *cb = gol_xcalloc(1, sizeof *cb);
    init_geometry(cb, slab);
    cb->depth = plan->depth;
    cb->launch_ranks = cuda_launch_ranks(&plan->gpu);
    /* the warm-up's shape: --kernel's, or baseline until choose_shape */
    use_shape(cb, plan->kernel_shape >= 0 ? plan->kernel_shape : GOL_SHAPE_BASELINE);
    cb->device = device_select(comm); /* this rank's GPU, before anything touches one */
    create_streams(cb);               /* compute, comm (higher priority), fork and join */
    cb->watch = cuda_watch_create(slab, cfg->timeout_s, cb->compute); /* marks, the watchdog */
    cuda_watch_add_stream(cb->watch, cb->comm);
    cb->frames = create_frames(cb, plan); /* two copy streams and stages */
    alloc_slabs(cb, plan);                /* zeroed grid buffers, population counter */
    /* collective: the halo mode may connect to the neighbours (NCCL) */
    cb->halo = halo_create(plan->halo, slab, cb->depth, comm, cb->comm, cfg->timeout_s);
    cuda_watch_set_halo(cb->watch, cb->halo);
    cb->graphed = !cfg->no_graphs && halo_capturable(cb->halo);
    cb->times = cuda_times_create(cb->halo, cb->depth, cb->watch);
    wait_stream(cb, cb->compute, "zeroing the grid buffers");
    /* collective: warm-up exchanges, the kernel's shape, then graphs where the mode allows */
    warm_up_and_capture(cb, plan, cfg, comm);
    return cb;
}

/* ---- Load, store, frames, counts ---- */

/* Once the owned rows of the current buffer are queued (a load, the random start): the step
 * exchanges the rows it has just computed, so a new state needs its own halo rows. */
static void finish_load(cuda_backend *cb, const char *what) {
    fork_comm(cb);
    exchange_halo(cb, cb->cur_buf, NULL);
    join_halo(cb);
    wait_stream(cb, cb->compute, what);
    cuda_times_loaded(cb->times);
    cb->halo_left = cb->depth; /* a full cycle before the next exchange */
}

static void cuda_load(void *impl, const uint64_t *rows_h) {
    cuda_backend *cb = impl;
    settle(cb);
    cuda_frames_before_write(cb->frames, cb->cur_buf);
    join_halo(cb); /* the last exchange sends rows the load overwrites */
    /* rows_h is pageable: the copy may wait on the stream's work with no deadline, so that work
     * is waited for first, polling */
    wait_stream(cb, cb->compute, "the generations before a load");
    CUDA_CHECK(cudaMemcpyAsync(row_ptr(cb, cb->cur_buf, 0), rows_h,
                               (size_t)cb->slab.rows * cb->row_bytes, cudaMemcpyHostToDevice,
                               cb->compute));
    finish_load(cb, "loading the grid");
}

/* The random start made on the device (cuda/init_cuda.h), no host rows and no copy; the
 * density's threshold is the host's, as on the CPU. Then the halo rows, as after a load. */
static void cuda_init_random(void *impl, uint64_t seed, double density) {
    cuda_backend *cb = impl;
    settle(cb);
    cuda_frames_before_write(cb->frames, cb->cur_buf);
    join_halo(cb); /* the last exchange sends rows this overwrites */
    launch_init_random(init_run_key(seed), init_threshold(density), cb->slab.row0, cb->slab.rows,
                       cb->slab.width, cb->row_words, row_ptr(cb, cb->cur_buf, 0), cb->compute);
    finish_load(cb, "the random start");
}

static void cuda_store(void *impl, uint64_t *rows_h) {
    cuda_backend *cb = impl;
    settle(cb);
    /* rows_h is pageable: a copy into it returns only once done, after the stream's earlier work
     * (NCCL's included), with no deadline; so that work is waited for first, polling, and the
     * copy then waits on nothing but itself */
    wait_stream(cb, cb->compute, "the generations before storing the grid");
    CUDA_CHECK(cudaMemcpyAsync(rows_h, row_ptr(cb, cb->cur_buf, 0),
                               (size_t)cb->slab.rows * cb->row_bytes, cudaMemcpyDeviceToHost,
                               cb->compute));
    wait_stream(cb, cb->compute, "storing the grid");
}

static void cuda_frame_begin(void *impl, int slot, gol_frame_format fmt, void *dst_h) {
    cuda_backend *cb = impl;
    settle(cb);
    cuda_frames_begin(cb->frames, slot, fmt, row_ptr(cb, cb->cur_buf, 0), cb->cur_buf, dst_h);
}

static void cuda_frame_wait(void *impl, int slot) {
    cuda_backend *cb = impl;
    cuda_frames_wait(cb->frames, slot);
}

static void *cuda_host_alloc(void *impl, int64_t bytes) {
    (void)impl;
    return cuda_frames_slot_alloc(bytes);
}

static void cuda_host_free(void *impl, void *p) {
    (void)impl;
    cuda_frames_slot_free(p);
}

/* Waits for every generation queued: the timers of the compute stream are then all readable. */
static int64_t cuda_population(void *impl) {
    cuda_backend *cb = impl;
    settle(cb);
    CUDA_CHECK(cudaMemsetAsync(cb->pop_d, 0, sizeof *cb->pop_d, cb->compute));
    launch_popcount(row_ptr(cb, cb->cur_buf, 0), cb->slab.rows * cb->row_words, cb->pop_d,
                    cb->compute);
    CUDA_CHECK(cudaMemcpyAsync(cb->pop_h, cb->pop_d, sizeof *cb->pop_d, cudaMemcpyDeviceToHost,
                               cb->compute));
    wait_stream(cb, cb->compute, "the population count");
    cuda_times_read(cb->times);
    return (int64_t)*cb->pop_h;
}

static void cuda_chunk_begin(void *impl, int64_t chunk) {
    cuda_backend *cb = impl;
    cuda_times_chunk_begin(cb->times, chunk);
}

static gol_backend_times cuda_chunk_times(void *impl, int64_t chunk, int slot) {
    cuda_backend *cb = impl;
    return cuda_times_chunk(cb->times, chunk, slot, cuda_frames_seconds(cb->frames, slot));
}

/* As of the last wait for the compute stream (the population, at the end of a run). */
static gol_backend_times cuda_run_times(const void *impl) {
    const cuda_backend *cb = impl;
    gol_backend_times t = cuda_times_total(cb->times);
    t.frame_s = cuda_frames_seconds(cb->frames, 0) + cuda_frames_seconds(cb->frames, 1);
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
    settle(cb); /* every generation asked is computed, as every rank does */
    /* all of this backend's work is on its four streams: wait for them, polling */
    wait_stream(cb, cb->compute, "the last generations");
    wait_stream(cb, cb->comm, "the last exchange");
    cuda_frames_destroy(cb->frames); /* waits for the copy streams first */
    cuda_graphs_destroy(cb->graphs);
    cuda_times_destroy(cb->times);
    cuda_watch_set_halo(cb->watch, NULL); /* host waits from here on look at no exchange */
    halo_destroy(cb->halo);
    int64_t bytes = cuda_slab_bytes(cb->slab.rows, cb->depth, cb->row_words);
    for (int b = 0; b < 2; b++) cuda_mem_free(&cb->mem, cb->buf_d[b], bytes);
    cuda_mem_free(&cb->mem, cb->pop_d, sizeof *cb->pop_d);
    CUDA_CHECK(cudaFreeHost(cb->pop_h));
    cuda_watch_destroy(cb->watch);
    CUDA_CHECK(cudaEventDestroy(cb->fork));
    CUDA_CHECK(cudaEventDestroy(cb->bands_done));
    CUDA_CHECK(cudaEventDestroy(cb->halo_done));
    CUDA_CHECK(cudaStreamDestroy(cb->compute));
    CUDA_CHECK(cudaStreamDestroy(cb->comm));
    free(cb);
}

static const struct shape_choice_result *cuda_shape_choice(const void *impl) {
    const cuda_backend *cb = impl;
    return &cb->choice;
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
    .times = cuda_run_times,
    .held = cuda_held,
    .chunk_begin = cuda_chunk_begin,
    .chunk_times = cuda_chunk_times,
    .kernel = cuda_kernel,
    .shape_choice = cuda_shape_choice,
    .destroy = cuda_destroy,
};
