/* The simulated GPU itself against the semantics it claims (tests/cudasim/sim.h, docs/GPU.md):
 * one case a run, named on the command line; a case that must be reported (a race, a host access
 * to device memory) runs in a child and passes when the child exits 66 with the report.
 *     test_sim CASE          (mpiexec -n 2 test_sim nccl_* for the NCCL cases) */
#include <mpi.h>
#include <nccl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cuda_runtime_api.h"
#include "cudasim.h"

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                        \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)
#define OK(call) CHECK((call) == cudaSuccess)

enum { BYTES = 4 * 4096 };

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A kernel that sleeps, then fills its range with a byte: work with a duration. */
typedef struct fill_arg {
    char *p;
    size_t bytes;
    int value;
    double sleep_s;
} fill_arg;

static void fill_body(void *a) {
    const fill_arg *f = a;
    struct timespec ts = {0, (long)(f->sleep_s * 1e9)};
    nanosleep(&ts, NULL);
    memset(cudasim_ptr(f->p), f->value, f->bytes);
}

static void fill(cudaStream_t s, void *p, size_t bytes, int value, double sleep_s) {
    fill_arg a = {p, bytes, value, sleep_s};
    cudasim_access acc = {p, bytes, CUDASIM_WRITE};
    OK(cudasim_launch(s, "fill", &acc, 1, fill_body, &a, sizeof a));
}

static void read_kernel(cudaStream_t s, const void *p, size_t bytes) {
    fill_arg a = {NULL, 0, 0, 0.0};
    cudasim_access acc = {p, bytes, CUDASIM_READ};
    OK(cudasim_launch(s, "read", &acc, 1, fill_body, &a, sizeof a));
}

/* A gate: a kernel that holds its stream until the host opens it, so that the work behind it is
 * undone for certain while the host makes its calls, however loaded the machine. It says when it
 * passed (gate_passed). */
static atomic_int gate_is_open, gate_passed;

static void gate_body(void *a) {
    (void)a;
    while (!atomic_load(&gate_is_open))
        sched_yield();
    atomic_store(&gate_passed, 1);
}

static void gate_closed(cudaStream_t s) {
    int unused = 0;
    atomic_store(&gate_is_open, 0);
    atomic_store(&gate_passed, 0);
    OK(cudasim_launch(s, "gate", NULL, 0, gate_body, &unused, sizeof unused));
}

static void gate_open(void) { atomic_store(&gate_is_open, 1); }

/* A case whose failure is a call that blocks for ever ends here instead, naming it. */
static const char *blocked_in;

static void on_alarm(int sig) {
    (void)sig;
    fprintf(stderr, "FAIL: still blocked after 60 s in %s\n", blocked_in);
    _exit(1);
}

static void fail_if_blocked(const char *where) {
    blocked_in = where;
    signal(SIGALRM, on_alarm);
    alarm(60);
}

static void two_streams(cudaStream_t *a, cudaStream_t *b) {
    OK(cudaStreamCreateWithPriority(a, cudaStreamNonBlocking, 0));
    OK(cudaStreamCreateWithPriority(b, cudaStreamNonBlocking, -1));
}

/* ---- cases that must pass ---------------------------------------------------------------- */

static void ordered_by_event(void) {
    cudaStream_t a, b;
    cudaEvent_t e;
    char *d;
    two_streams(&a, &b);
    OK(cudaMalloc((void **)&d, BYTES));
    OK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    fill(a, d, BYTES, 1, 0.05);
    OK(cudaEventRecord(e, a));
    OK(cudaStreamWaitEvent(b, e, 0));
    char h[BYTES];
    OK(cudaMemcpyAsync(h, d, BYTES, cudaMemcpyDeviceToHost, b)); /* pageable: returns when done */
    CHECK(h[0] == 1 && h[BYTES - 1] == 1);
}

static void timing(void) {
    cudaStream_t a, b;
    cudaEvent_t t0, t1, quiet0, quiet1;
    char *d;
    float ms = 0;
    two_streams(&a, &b);
    OK(cudaMalloc((void **)&d, BYTES));
    OK(cudaEventCreate(&t0));
    OK(cudaEventCreate(&t1));
    OK(cudaEventCreateWithFlags(&quiet0, cudaEventDisableTiming));
    OK(cudaEventCreateWithFlags(&quiet1, cudaEventDisableTiming));
    CHECK(cudaEventElapsedTime(&ms, t0, t1) == cudaErrorInvalidResourceHandle); /* never recorded */
    OK(cudaEventRecord(t0, a));
    OK(cudaEventRecord(quiet0, a));
    gate_closed(a);
    fill(a, d, BYTES, 2, 0.1);
    OK(cudaEventRecord(t1, a));
    OK(cudaEventRecord(quiet1, a));
    CHECK(cudaEventQuery(t1) == cudaErrorNotReady);
    CHECK(cudaEventElapsedTime(&ms, t0, t1) == cudaErrorNotReady);
    gate_open();
    OK(cudaEventSynchronize(t1));
    OK(cudaEventSynchronize(quiet1));
    OK(cudaEventElapsedTime(&ms, t0, t1));
    CHECK(ms >= 90.0f);
    CHECK(cudaEventElapsedTime(&ms, quiet0, quiet1) == cudaErrorInvalidResourceHandle);
    (void)cudaGetLastError();
}

/* cudaFree waits for the device; a pageable copy returns only once done; copy kinds are checked */
static void memory(void) {
    cudaStream_t a, b;
    char *d, *pinned, h[16];
    two_streams(&a, &b);
    OK(cudaMalloc((void **)&d, BYTES));
    OK(cudaMallocHost((void **)&pinned, BYTES));
    CHECK(cudaMemcpy(pinned, h, 16, cudaMemcpyHostToDevice) == cudaErrorInvalidMemcpyDirection);
    CHECK(cudaMemcpy(d, d, 16, cudaMemcpyDeviceToHost) == cudaErrorInvalidMemcpyDirection);
    (void)cudaGetLastError();
    fill(a, d, BYTES, 3, 0.05);
    OK(cudaMemcpyAsync(pinned, d, BYTES, cudaMemcpyDeviceToHost, a));
    OK(cudaStreamSynchronize(a));
    CHECK(pinned[BYTES - 1] == 3); /* the host reads a pinned buffer once it saw the copy done */
    fill(b, d, BYTES, 4, 0.1);
    double t = now();
    OK(cudaFree(d));
    CHECK(now() - t >= 0.09);
    OK(cudaFreeHost(pinned));
}

static void capture_rules(void) {
    cudaStream_t a, b;
    cudaEvent_t fork, join;
    cudaGraph_t g;
    char *d;
    two_streams(&a, &b);
    OK(cudaMalloc((void **)&d, BYTES));
    OK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    OK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
    /* a synchronise on a capturing stream is refused and spoils the capture */
    OK(cudaStreamBeginCapture(a, cudaStreamCaptureModeThreadLocal));
    CHECK(cudaStreamSynchronize(a) == cudaErrorStreamCaptureUnsupported);
    CHECK(cudaStreamEndCapture(a, &g) == cudaErrorStreamCaptureInvalidated);
    /* a fork never joined back */
    OK(cudaStreamBeginCapture(a, cudaStreamCaptureModeThreadLocal));
    OK(cudaEventRecord(fork, a));
    OK(cudaStreamWaitEvent(b, fork, 0));
    fill(b, d, 16, 5, 0);
    CHECK(cudaStreamEndCapture(a, &g) == cudaErrorStreamCaptureUnjoined);
    (void)cudaGetLastError();
    /* fork and join: the graph runs as captured, every launch */
    OK(cudaStreamBeginCapture(a, cudaStreamCaptureModeThreadLocal));
    OK(cudaEventRecord(fork, a));
    OK(cudaStreamWaitEvent(b, fork, 0));
    fill(b, d, BYTES / 2, 6, 0.02);
    fill(a, d + BYTES / 2, BYTES / 2, 7, 0);
    OK(cudaEventRecord(join, b));
    OK(cudaStreamWaitEvent(a, join, 0));
    OK(cudaStreamEndCapture(a, &g));
    char h[BYTES];
    memset(h, 0, sizeof h);
    OK(cudaMemcpy(h, d, BYTES, cudaMemcpyDeviceToHost));
    CHECK(h[0] != 6); /* captured, not run */
    cudaGraphExec_t x;
    OK(cudaGraphInstantiate(&x, g, cudaGraphInstantiateFlagUseNodePriority));
    OK(cudaGraphDestroy(g));
    for (int i = 0; i < 2; i++)
        OK(cudaGraphLaunch(x, a));
    OK(cudaStreamSynchronize(a));
    OK(cudaMemcpy(h, d, BYTES, cudaMemcpyDeviceToHost));
    CHECK(h[0] == 6 && h[BYTES - 1] == 7);
    OK(cudaGraphExecDestroy(x));
}

/* A graph's copies between pinned host memory and the device read and write the host memory as
 * it is at each replay, not as it was at the capture; a graph replayed many times, then
 * destroyed, frees what it holds once (cudasim_graph_replays_asan runs this under
 * AddressSanitizer). */
static void graph_replays(void) {
    enum { REPLAYS = 6 };
    cudaStream_t a, b;
    cudaEvent_t fork, join;
    cudaGraph_t g;
    cudaGraphExec_t x;
    char *d, *in, *out;
    two_streams(&a, &b);
    OK(cudaMalloc((void **)&d, BYTES));
    OK(cudaMallocHost((void **)&in, BYTES));
    OK(cudaMallocHost((void **)&out, BYTES));
    OK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    OK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
    memset(in, 0, BYTES);
    OK(cudaStreamBeginCapture(a, cudaStreamCaptureModeThreadLocal));
    OK(cudaMemcpyAsync(d, in, BYTES, cudaMemcpyHostToDevice, a));
    OK(cudaEventRecord(fork, a));
    OK(cudaStreamWaitEvent(b, fork, 0));
    OK(cudaMemcpyAsync(out, d, BYTES / 2, cudaMemcpyDeviceToHost, b));
    OK(cudaMemcpyAsync(out + BYTES / 2, d + BYTES / 2, BYTES / 2, cudaMemcpyDeviceToHost, a));
    OK(cudaEventRecord(join, b));
    OK(cudaStreamWaitEvent(a, join, 0));
    OK(cudaStreamEndCapture(a, &g));
    OK(cudaGraphInstantiate(&x, g, 0));
    OK(cudaGraphDestroy(g));
    for (int i = 1; i <= REPLAYS; i++) {
        memset(in, i, BYTES);
        OK(cudaGraphLaunch(x, a));
        OK(cudaStreamSynchronize(a));
        CHECK(out[0] == i && out[BYTES - 1] == i);
    }
    OK(cudaGraphExecDestroy(x));
    OK(cudaFreeHost(in));
    OK(cudaFreeHost(out));
    OK(cudaFree(d));
}

/* A graph launch is one submission of the launch queue, however many nodes it holds: behind a
 * closed gate, 1023 launches of a graph of two lanes fit beside the gate in the 1024 entries
 * (counted per operation, eight a launch, the queue is full at the 128th, and the host blocks for
 * ever). */
static void graph_one_entry(void) {
    enum { LAUNCHES = 1023 };
    cudaStream_t a, b;
    cudaEvent_t fork, join;
    cudaGraph_t g;
    cudaGraphExec_t x;
    char *d;
    two_streams(&a, &b);
    OK(cudaMalloc((void **)&d, BYTES));
    OK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    OK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
    OK(cudaStreamBeginCapture(a, cudaStreamCaptureModeThreadLocal));
    OK(cudaEventRecord(fork, a));
    OK(cudaStreamWaitEvent(b, fork, 0));
    fill(b, d, BYTES / 2, 1, 0);
    fill(a, d + BYTES / 2, BYTES / 2, 2, 0);
    OK(cudaEventRecord(join, b));
    OK(cudaStreamWaitEvent(a, join, 0));
    OK(cudaStreamEndCapture(a, &g));
    OK(cudaGraphInstantiate(&x, g, 0));
    OK(cudaGraphDestroy(g));
    gate_closed(a);
    fail_if_blocked("cudaGraphLaunch: each launch took more than one entry of the launch queue");
    for (int i = 0; i < LAUNCHES; i++)
        OK(cudaGraphLaunch(x, a));
    alarm(0);
    CHECK(!atomic_load(&gate_passed)); /* no launch waited for the device */
    gate_open();
    OK(cudaStreamSynchronize(a));
    char h[BYTES];
    OK(cudaMemcpy(h, d, BYTES, cudaMemcpyDeviceToHost));
    CHECK(h[0] == 1 && h[BYTES - 1] == 2);
    OK(cudaGraphExecDestroy(x));
}

static void *record_past_the_queue(void *e) {
    OK(cudaEventRecord((cudaEvent_t)e, NULL));
    return (void *)(intptr_t)atomic_load(&gate_passed);
}

/* The launch queue is bounded (sim.h: 1024 submissions): behind a closed gate, the calls that
 * fill it return with the gate closed, and a call past it (on another thread, while this one
 * opens the gate) returns only once the device made room, which it makes only past the gate. */
static void queue_bound(void) {
    cudaStream_t a, b;
    cudaEvent_t e;
    two_streams(&a, &b);
    OK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    gate_closed(a);
    fail_if_blocked("cudaEventRecord: the launch queue holds fewer than 1024 submissions");
    for (int i = 0; i < 1023; i++) /* with the gate, the 1024 */
        OK(cudaEventRecord(e, a));
    alarm(0);
    CHECK(!atomic_load(&gate_passed));
    pthread_t t;
    void *passed;
    pthread_create(&t, NULL, record_past_the_queue, e);
    struct timespec ts = {0, 50000000}; /* where an unbounded queue has returned already */
    nanosleep(&ts, NULL);
    gate_open();
    pthread_join(t, &passed);
    CHECK(passed); /* the call past the queue returned only after the gate */
    OK(cudaStreamSynchronize(a));
}

/* ---- cases that must be reported (in a child: exit 66) ----------------------------------- */

/* a write on one stream, a read on another, nothing between: reported even where the write was
 * long done before the read was queued, as here */
static void race_two_streams(void) {
    cudaStream_t a, b;
    char *d;
    two_streams(&a, &b);
    OK(cudaMalloc((void **)&d, BYTES));
    fill(a, d, BYTES, 1, 0.0);
    struct timespec ts = {0, 100000000};
    nanosleep(&ts, NULL);
    read_kernel(b, d, BYTES);
    OK(cudaDeviceSynchronize());
}

/* cudaStreamWaitEvent waits on the record current at the call, not on a later one */
static void race_later_record(void) {
    cudaStream_t a, b;
    cudaEvent_t e;
    char *d;
    two_streams(&a, &b);
    OK(cudaMalloc((void **)&d, BYTES));
    OK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    OK(cudaEventRecord(e, a));
    OK(cudaStreamWaitEvent(b, e, 0));
    fill(a, d, BYTES, 1, 0.05);
    OK(cudaEventRecord(e, a)); /* after the wait: orders nothing for b */
    read_kernel(b, d, BYTES);
    OK(cudaDeviceSynchronize());
}

static void host_reads_device(void) {
    char *d;
    OK(cudaMalloc((void **)&d, BYTES));
    printf("%d\n", ((volatile char *)d)[10]);
}

static void host_reads_copy_in_flight(void) {
    cudaStream_t a, b;
    char *d, *pinned;
    two_streams(&a, &b);
    OK(cudaMalloc((void **)&d, BYTES));
    OK(cudaMallocHost((void **)&pinned, BYTES));
    fill(a, d, BYTES, 1, 0.0);
    OK(cudaMemcpyAsync(pinned, d, BYTES, cudaMemcpyDeviceToHost, a));
    struct timespec ts = {0, 100000000}; /* long done by then: the host just never asked */
    nanosleep(&ts, NULL);
    printf("%d\n", ((volatile char *)pinned)[10]);
}

/* ---- NCCL, two ranks ---------------------------------------------------------------------- */

static ncclComm_t nccl_comm(int nranks, int rank, ncclResult_t *rc) {
    ncclUniqueId id;
    if (rank == 0) CHECK(ncclGetUniqueId(&id) == ncclSuccess);
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    ncclComm_t c;
    *rc = ncclCommInitRank(&c, nranks, id, rank);
    return c;
}

static void nccl_duplicate_gpu(int rank, int nranks) {
    OK(cudaSetDevice(0)); /* GOLMPI_SIM_DEVICES=1: both ranks on device 0 */
    ncclResult_t rc;
    nccl_comm(nranks, rank, &rc);
    CHECK(rc == ncclInvalidUsage);
    CHECK(strstr(ncclGetLastError(NULL), "Duplicate GPU detected") != NULL);
}

/* Whether a send or receive was captured into a graph must agree between the peers: a captured
 * send against an eager receive fails the receiver's communicator (ncclInvalidUsage). */
static void nccl_captured_eager(int rank, int nranks) {
    OK(cudaSetDevice(rank));
    ncclResult_t rc;
    ncclComm_t c = nccl_comm(nranks, rank, &rc);
    CHECK(rc == ncclSuccess);
    cudaStream_t s;
    OK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, 0));
    uint64_t *d;
    OK(cudaMalloc((void **)&d, 64 * sizeof *d));
    fill(s, d, 64 * sizeof *d, 1, 0);
    OK(cudaStreamSynchronize(s));
    if (rank == 0) {
        cudaGraph_t g;
        cudaGraphExec_t x;
        OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
        CHECK(ncclSend(d, 64, ncclUint64, 1, c, s) == ncclSuccess);
        OK(cudaStreamEndCapture(s, &g));
        OK(cudaGraphInstantiate(&x, g, 0));
        OK(cudaGraphLaunch(x, s));
        OK(cudaStreamSynchronize(s));
    } else {
        CHECK(ncclRecv(d, 64, ncclUint64, 0, c, s) == ncclSuccess);
        OK(cudaStreamSynchronize(s));
        ncclResult_t state;
        CHECK(ncclCommGetAsyncError(c, &state) == ncclSuccess);
        CHECK(state == ncclInvalidUsage);
        CHECK(strstr(ncclGetLastError(c), "graph-captured ncclSend") != NULL);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Rank 1 calls call(comm) late: 1 on rank 0 when its own call returned only after rank 1's began
 * (one clock for the node's processes), whatever the load. */
static int ended_after_late_call(int rank, struct timespec late, ncclResult_t (*call)(ncclComm_t),
                                 ncclComm_t comm) {
    double began = 0;
    if (rank == 1) {
        nanosleep(&late, NULL);
        began = now();
    }
    CHECK(call(comm) == ncclSuccess);
    double ended = now();
    if (rank == 1) MPI_Send(&began, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
    if (rank == 0) MPI_Recv(&began, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return rank != 0 || ended >= began;
}

/* Rank 1 calls call(comm) only once rank 0's call returned (or, where rank 0's waits for it, after
 * 2 s): 1 on rank 0 when its call returned before rank 1's began. */
static int ended_before_peer_call(int rank, ncclResult_t (*call)(ncclComm_t), ncclComm_t comm) {
    double began = 0, ended = 0;
    if (rank == 0) {
        CHECK(call(comm) == ncclSuccess);
        ended = now();
        MPI_Send(&ended, 1, MPI_DOUBLE, 1, 3, MPI_COMM_WORLD);
        MPI_Recv(&began, 1, MPI_DOUBLE, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        return ended < began;
    }
    MPI_Request req;
    int arrived = 0;
    MPI_Irecv(&ended, 1, MPI_DOUBLE, 0, 3, MPI_COMM_WORLD, &req);
    for (double t0 = now(); !arrived && now() - t0 < 2.0;) {
        MPI_Test(&req, &arrived, MPI_STATUS_IGNORE);
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    began = now();
    CHECK(call(comm) == ncclSuccess);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Send(&began, 1, MPI_DOUBLE, 0, 4, MPI_COMM_WORLD);
    return 1;
}

/* Teardown: ncclCommFinalize is collective, it returns once every rank has called it; a
 * ncclCommDestroy after it is local, it only frees this rank's part (NCCL's documentation of
 * ncclCommDestroy). A nonblocking communicator answering ncclInProgress takes no call but
 * ncclCommGetAsyncError and ncclCommAbort (ncclInvalidArgument, NCCL's ncclCommEnsureReady). */
static void nccl_teardown(int rank, int nranks) {
    const struct timespec late = {0, 300000000};
    OK(cudaSetDevice(rank));
    ncclUniqueId id;
    if (rank == 0) CHECK(ncclGetUniqueId(&id) == ncclSuccess);
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclComm_t c, child = NULL;
    int go = 1;
    /* rank 1 begins only once rank 0 has tried the split: rank 0's init is in progress then */
    if (rank == 1) MPI_Recv(&go, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    ncclResult_t rc = ncclCommInitRankConfig(&c, nranks, id, rank, &config);
    CHECK(rc == ncclInProgress || rc == ncclSuccess);
    if (rank == 0) {
        CHECK(ncclCommSplit(c, 0, rank, &child, NULL) == ncclInvalidArgument);
        MPI_Send(&go, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
    }
    ncclResult_t state = ncclInProgress;
    while (state == ncclInProgress)
        CHECK(ncclCommGetAsyncError(c, &state) == ncclSuccess);
    CHECK(state == ncclSuccess);
    /* a blocking communicator split off it: finalize and destroy wait for the late rank */
    ncclConfig_t blocking = NCCL_CONFIG_INITIALIZER;
    CHECK(ncclCommSplit(c, 0, rank, &child, &blocking) == ncclInProgress);
    for (state = ncclInProgress; state == ncclInProgress;)
        CHECK(ncclCommGetAsyncError(c, &state) == ncclSuccess);
    while (!__atomic_load_n(&child, __ATOMIC_ACQUIRE))
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(ended_after_late_call(rank, late, ncclCommFinalize, child));
    CHECK(ended_before_peer_call(rank, ncclCommDestroy, child));
    /* the nonblocking one: in progress until the late rank finalizes too, meanwhile unusable */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) MPI_Recv(&go, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    rc = ncclCommFinalize(c);
    if (rank == 0) {
        CHECK(rc == ncclInProgress);
        CHECK(ncclCommDestroy(c) == ncclInvalidArgument);
        CHECK(strstr(ncclGetLastError(c), "before the previous operation") != NULL);
        MPI_Send(&go, 1, MPI_INT, 1, 2, MPI_COMM_WORLD);
    }
    for (state = rc; state == ncclInProgress;)
        CHECK(ncclCommGetAsyncError(c, &state) == ncclSuccess);
    CHECK(state == ncclSuccess);
    CHECK(ncclCommDestroy(c) == ncclSuccess);
}

/* A send completes only once its peer posted the receive; an abort unblocks what waits. */
static void nccl_blocking(int rank, int nranks) {
    OK(cudaSetDevice(rank));
    ncclResult_t rc;
    ncclComm_t c = nccl_comm(nranks, rank, &rc);
    CHECK(rc == ncclSuccess);
    cudaStream_t s;
    OK(cudaStreamCreate(&s));
    uint64_t *d;
    OK(cudaMalloc((void **)&d, 64 * sizeof *d));
    fill(s, d, 64 * sizeof *d, rank + 1, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    double t = now();
    if (rank == 0) {
        CHECK(ncclSend(d, 64, ncclUint64, 1, c, s) == ncclSuccess);
        OK(cudaStreamSynchronize(s));
        CHECK(now() - t >= 0.25); /* rank 1 posts its receive 0.3 s late */
    } else {
        struct timespec ts = {0, 300000000};
        nanosleep(&ts, NULL);
        CHECK(ncclRecv(d, 64, ncclUint64, 0, c, s) == ncclSuccess);
        uint64_t h[64];
        OK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
        CHECK(h[63] == 0x0101010101010101ull);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) { /* a receive never matched: the stream stalls until the abort */
        CHECK(ncclRecv(d, 64, ncclUint64, 1, c, s) == ncclSuccess);
        CHECK(cudaStreamQuery(s) == cudaErrorNotReady);
    }
    CHECK(ncclCommAbort(c) == ncclSuccess); /* collective (nccl_abort_collective): both ranks */
    OK(cudaStreamSynchronize(s));
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Abort is collective too: ncclCommAbort returns only once every other rank of the node has
 * aborted (or its process is gone), however late; golmpi's fault paths therefore never wait for
 * it (halo/halo_nccl.c). */
static void nccl_abort_collective(int rank, int nranks) {
    const struct timespec late = {0, 300000000};
    OK(cudaSetDevice(rank));
    ncclResult_t rc;
    ncclComm_t c = nccl_comm(nranks, rank, &rc);
    CHECK(rc == ncclSuccess);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(ended_after_late_call(rank, late, ncclCommAbort, c));
}

/* Two communicators on two streams compete for the device's SMs: posted in the same order on
 * both ranks their exchanges finish (the streams synchronise); posted in opposite orders (rank 0
 * A then B, rank 1 B then A, each second one 0.2 s later, so that the first has the SMs) each
 * rank's first holds the SMs while it waits for the peer's side, which waits for the SMs on the
 * peer: neither finishes until both communicators are aborted (a GPU may deadlock so; the
 * simulator always does). The 0.2 s orders the two posts on one rank: on a machine so loaded
 * that the second group starts first, the two finish and the case fails. A deadlock, once there,
 * never ends, so the verdict 0.4 s later does not rest on time. */
static void nccl_sm_order(int rank, int nranks) {
    OK(cudaSetDevice(rank));
    ncclResult_t rc;
    ncclComm_t comms[2];
    cudaStream_t streams[2];
    uint64_t *d[2];
    for (int i = 0; i < 2; i++) {
        comms[i] = nccl_comm(nranks, rank, &rc);
        CHECK(rc == ncclSuccess);
        OK(cudaStreamCreateWithPriority(&streams[i], cudaStreamNonBlocking, 0));
        OK(cudaMalloc((void **)&d[i], 64 * sizeof *d[i]));
    }
    const struct timespec later = {0, 200000000};
    for (int opposite = 0; opposite < 2; opposite++) {
        MPI_Barrier(MPI_COMM_WORLD);
        for (int k = 0; k < 2; k++) {
            int i = opposite && rank == 1 ? 1 - k : k; /* which communicator this rank posts */
            if (rank == 0) CHECK(ncclSend(d[i], 64, ncclUint64, 1, comms[i], streams[i]) == ncclSuccess);
            else CHECK(ncclRecv(d[i], 64, ncclUint64, 0, comms[i], streams[i]) == ncclSuccess);
            if (k == 0 && opposite) nanosleep(&later, NULL);
        }
        if (!opposite) {
            fail_if_blocked("two communicators posted in the same order");
            for (int i = 0; i < 2; i++)
                OK(cudaStreamSynchronize(streams[i]));
            alarm(0);
            continue;
        }
        nanosleep(&later, NULL);
        nanosleep(&later, NULL);
        CHECK(cudaStreamQuery(streams[0]) == cudaErrorNotReady);
        CHECK(cudaStreamQuery(streams[1]) == cudaErrorNotReady);
    }
    for (int i = 0; i < 2; i++) /* collective: both ranks, in the same order */
        CHECK(ncclCommAbort(comms[i]) == ncclSuccess);
    for (int i = 0; i < 2; i++)
        OK(cudaStreamSynchronize(streams[i]));
}

static const struct {
    const char *name;
    void (*run)(void);
    int reported; /* 1: the simulator must report it (exit 66) */
} cases[] = {
    {"ordered_by_event", ordered_by_event, 0},
    {"timing", timing, 0},
    {"memory", memory, 0},
    {"capture_rules", capture_rules, 0},
    {"graph_replays", graph_replays, 0},
    {"graph_one_entry", graph_one_entry, 0},
    {"queue_bound", queue_bound, 0},
    {"race_two_streams", race_two_streams, 1},
    {"race_later_record", race_later_record, 1},
    {"host_reads_device", host_reads_device, 1},
    {"host_reads_copy_in_flight", host_reads_copy_in_flight, 1},
};

static int reported(void (*run)(void)) {
    pid_t pid = fork();
    if (pid == 0) {
        run();
        exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 66;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: test_sim CASE\n");
        return 2;
    }
    if (strncmp(argv[1], "nccl_", 5) == 0) {
        int rank, nranks;
        MPI_Init(&argc, &argv);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &nranks);
        if (strcmp(argv[1], "nccl_duplicate_gpu") == 0)
            nccl_duplicate_gpu(rank, nranks);
        else if (strcmp(argv[1], "nccl_blocking") == 0)
            nccl_blocking(rank, nranks);
        else if (strcmp(argv[1], "nccl_captured_eager") == 0)
            nccl_captured_eager(rank, nranks);
        else if (strcmp(argv[1], "nccl_teardown") == 0)
            nccl_teardown(rank, nranks);
        else if (strcmp(argv[1], "nccl_abort_collective") == 0)
            nccl_abort_collective(rank, nranks);
        else if (strcmp(argv[1], "nccl_sm_order") == 0)
            nccl_sm_order(rank, nranks);
        else
            CHECK(!"an NCCL case");
        printf("rank %d: %s passed\n", rank, argv[1]);
        MPI_Finalize();
        return 0;
    }
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        if (strcmp(argv[1], cases[i].name) != 0) continue;
        if (cases[i].reported) {
            CHECK(reported(cases[i].run));
            printf("%s: reported, as it must be\n", argv[1]);
        } else {
            cases[i].run();
            printf("%s passed\n", argv[1]);
        }
        return 0;
    }
    fprintf(stderr, "test_sim: no case %s\n", argv[1]);
    return 2;
}
