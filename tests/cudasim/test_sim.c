/* The simulated GPU itself against the semantics it claims (tests/cudasim/sim.h, docs/GPU.md):
 * one case a run, named on the command line; a case that must be reported (a race, a host access
 * to device memory) runs in a child and passes when the child exits 66 with the report.
 *     test_sim CASE          (mpiexec -n 2 test_sim nccl_* for the NCCL cases) */
#include <mpi.h>
#include <nccl.h>
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
    fill(a, d, BYTES, 2, 0.1);
    OK(cudaEventRecord(t1, a));
    OK(cudaEventRecord(quiet1, a));
    CHECK(cudaEventQuery(t1) == cudaErrorNotReady);
    CHECK(cudaEventElapsedTime(&ms, t0, t1) == cudaErrorNotReady);
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
        CHECK(ncclCommAbort(c) == ncclSuccess);
        OK(cudaStreamSynchronize(s));
    }
    MPI_Barrier(MPI_COMM_WORLD);
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
