/* The simulated GPU's strict rules against the runtime this program is built with, call by call
 * (docs/GPU.md, "the simulated GPU"): built with nvcc it checks NVIDIA's runtime on a real GPU
 * (ctest cuda_sim_rules, exit 77 without one); built for the simulator (GOLMPI_CUDA_SIM) it checks
 * tests/cudasim against the same table (ctest cudasim_gpu_rules). One table for both, so the
 * simulator and the runtime cannot drift apart unseen: a rule the GPU does not keep fails here
 * on the GPU, naming the call and the code it returned.
 *     test_gpu_rules
 * Exit 0: every rule held; 1: some did not (each printed); 77: no GPU. */
#include <cuda_runtime.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef GOLMPI_CUDA_SIM
#include "cudasim.h"
#endif

static int failures;

/* One rule: a call's code against the one the rule says. */
static void expect(const char *rule, cudaError_t got, cudaError_t want) {
    if (got == want) {
        printf("ok   %s: %s\n", rule, cudaGetErrorName(got));
        return;
    }
    printf("FAIL %s: %s, the rule says %s\n", rule, cudaGetErrorName(got), cudaGetErrorName(want));
    failures++;
}

static void expect_true(const char *rule, int holds, const char *detail) {
    printf("%s %s: %s\n", holds ? "ok  " : "FAIL", rule, detail);
    failures += !holds;
}

/* A setup call that must succeed: without it the rules after it mean nothing. */
#define SETUP(call)                                                                                \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            printf("FAIL setup %s: %s\n", #call, cudaGetErrorName(e_));                            \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* ---- work of a known duration on a stream --------------------------------------------------- */

#ifdef GOLMPI_CUDA_SIM
static void sleep_body(void *arg) {
    double s = *(const double *)arg;
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

static void busy(cudaStream_t s, double seconds) {
    cudasim_access none = {NULL, 0, CUDASIM_READ};
    SETUP(cudasim_launch(s, "busy", &none, 0, sleep_body, &seconds, sizeof seconds));
}
#else
__global__ void spin_kernel(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
}

static void busy(cudaStream_t s, double seconds) {
    spin_kernel<<<1, 1, 0, s>>>((unsigned long long)(seconds * 1e9));
    SETUP(cudaGetLastError());
}
#endif

/* ---- a gate: stream work that waits for the host --------------------------------------------- */

/* The gate holds its stream until the host opens it, so the work behind it is undone for certain
 * while the host makes the calls a rule is about, however loaded the machine: no rule depends on
 * how long anything takes. A call that wrongly waits for the work would hang; the gate opens by
 * itself after GATE_S, so that the rule fails instead. */
enum { GATE_S = 20 };
static volatile int *gate_flag; /* pinned host memory, which the GPU reads */

#ifdef GOLMPI_CUDA_SIM
static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void gate_body(void *arg) {
    volatile int *flag = *(volatile int *const *)arg;
    double t0 = now();
    while (!*flag && now() - t0 < GATE_S)
        sched_yield();
}

static void gate_closed(cudaStream_t s) {
    cudasim_access none = {NULL, 0, CUDASIM_READ};
    volatile int *flag = gate_flag;
    *gate_flag = 0;
    SETUP(cudasim_launch(s, "gate", &none, 0, gate_body, &flag, sizeof flag));
}
#else
__global__ void gate_kernel(volatile int *flag, unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (!*flag && t - t0 < ns);
}

static void gate_closed(cudaStream_t s) {
    *gate_flag = 0;
    gate_kernel<<<1, 1, 0, s>>>(gate_flag, (unsigned long long)GATE_S * 1000000000ull);
    SETUP(cudaGetLastError());
}
#endif

static void gate_open(void) { *gate_flag = 1; }

static void nap_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

static cudaStream_t new_stream(void) {
    cudaStream_t s;
    SETUP(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, 0));
    return s;
}

/* ---- the rules ------------------------------------------------------------------------------ */

/* A host-to-device copy from pageable memory returns without waiting for the stream's earlier
 * work (nor for itself), having taken the source: the buffer may be reused at once. */
static void pageable_copy(void) {
    static const size_t sizes[] = {4096, 1 << 20};
    cudaStream_t s = new_stream();
    cudaEvent_t ahead;
    char *d, *h = (char *)malloc(1 << 20), *back = (char *)malloc(1 << 20);
    SETUP(cudaMalloc((void **)&d, 1 << 20));
    SETUP(cudaEventCreateWithFlags(&ahead, cudaEventDisableTiming));
    for (int i = 0; i < 2; i++) {
        char rule[128];
        size_t n = sizes[i];
        memset(h, 10 + i, n);
        gate_closed(s);
        SETUP(cudaEventRecord(ahead, s));
        SETUP(cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, s));
        cudaError_t q = cudaEventQuery(ahead);
        memset(h, 99, n);
        gate_open();
        snprintf(rule, sizeof rule,
                 "pageable copy to the device, %zu bytes: returned with the work ahead undone", n);
        expect(rule, q, cudaErrorNotReady);
        SETUP(cudaStreamSynchronize(s));
        SETUP(cudaMemcpy(back, d, n, cudaMemcpyDeviceToHost));
        snprintf(rule, sizeof rule, "pageable copy to the device, %zu bytes: source taken at the call",
                 n);
        expect_true(rule, back[0] == 10 + i && back[n - 1] == 10 + i, "the bytes copied");
    }
    SETUP(cudaFree(d));
    SETUP(cudaEventDestroy(ahead));
    SETUP(cudaStreamDestroy(s));
    free(h);
    free(back);
}

enum unsafe { EVENT_QUERY, EVENT_SYNC, STREAM_QUERY, STREAM_SYNC, MALLOC, MALLOC_HOST, FREE_HOST,
              UNSAFE_CALLS };
static const char *const unsafe_names[] = {"cudaEventQuery (event outside the capture)",
                                           "cudaEventSynchronize (event outside the capture)",
                                           "cudaStreamQuery (stream not capturing)",
                                           "cudaStreamSynchronize (stream not capturing)",
                                           "cudaMalloc", "cudaMallocHost", "cudaFreeHost"};

static void *query_elsewhere(void *s) {
    return (void *)(intptr_t)cudaStreamQuery((cudaStream_t)s);
}

/* On the capturing thread (thread-local and global mode) each unsafe call is refused with
 * cudaErrorStreamCaptureUnsupported and invalidates the capture; another thread may make one in
 * thread-local mode, not in global mode. */
static void capture_unsafe_calls(void) {
    static const enum cudaStreamCaptureMode modes[] = {cudaStreamCaptureModeThreadLocal,
                                                       cudaStreamCaptureModeGlobal};
    static const char *const mode_names[] = {"thread-local", "global"};
    cudaStream_t a = new_stream(), b = new_stream();
    cudaEvent_t outside;
    cudaGraph_t g;
    SETUP(cudaEventCreateWithFlags(&outside, cudaEventDisableTiming));
    SETUP(cudaEventRecord(outside, b));
    SETUP(cudaStreamSynchronize(b));
    for (int m = 0; m < 2; m++) {
        for (int call = 0; call < UNSAFE_CALLS; call++) {
            char rule[160];
            void *p = NULL, *pinned = NULL;
            if (call == FREE_HOST) SETUP(cudaMallocHost(&pinned, 64));
            SETUP(cudaStreamBeginCapture(a, modes[m]));
            busy(a, 0.0);
            cudaError_t e = call == EVENT_QUERY    ? cudaEventQuery(outside)
                            : call == EVENT_SYNC   ? cudaEventSynchronize(outside)
                            : call == STREAM_QUERY ? cudaStreamQuery(b)
                            : call == STREAM_SYNC  ? cudaStreamSynchronize(b)
                            : call == MALLOC       ? cudaMalloc(&p, 64)
                            : call == MALLOC_HOST  ? cudaMallocHost(&p, 64)
                                                   : cudaFreeHost(pinned);
            snprintf(rule, sizeof rule, "%s capture: %s on the capturing thread", mode_names[m],
                     unsafe_names[call]);
            expect(rule, e, cudaErrorStreamCaptureUnsupported);
            cudaError_t end = cudaStreamEndCapture(a, &g);
            snprintf(rule, sizeof rule, "%s capture: ended after %s", mode_names[m],
                     unsafe_names[call]);
            expect(rule, end, cudaErrorStreamCaptureInvalidated);
            if (end == cudaSuccess) SETUP(cudaGraphDestroy(g));
            if (e == cudaSuccess && call == MALLOC) SETUP(cudaFree(p));
            if (e == cudaSuccess && call == MALLOC_HOST) SETUP(cudaFreeHost(p));
            if (call == FREE_HOST && e != cudaSuccess) SETUP(cudaFreeHost(pinned));
            (void)cudaGetLastError();
        }
        SETUP(cudaStreamBeginCapture(a, modes[m]));
        busy(a, 0.0);
        pthread_t t;
        void *rc;
        pthread_create(&t, NULL, query_elsewhere, b);
        pthread_join(t, &rc);
        char rule[160];
        snprintf(rule, sizeof rule, "%s capture: cudaStreamQuery on another thread", mode_names[m]);
        expect(rule, (cudaError_t)(intptr_t)rc,
               m == 0 ? cudaSuccess : cudaErrorStreamCaptureUnsupported);
        cudaError_t end = cudaStreamEndCapture(a, &g);
        snprintf(rule, sizeof rule, "%s capture: ended after another thread's query",
                 mode_names[m]);
        expect(rule, end, m == 0 ? cudaSuccess : cudaErrorStreamCaptureInvalidated);
        if (end == cudaSuccess) SETUP(cudaGraphDestroy(g));
        (void)cudaGetLastError();
    }
    SETUP(cudaEventDestroy(outside));
    SETUP(cudaStreamDestroy(a));
    SETUP(cudaStreamDestroy(b));
}

/* After the capture ends, an event last recorded inside it is refused until recorded again. */
static void event_after_capture(void) {
    cudaStream_t a = new_stream(), b = new_stream();
    cudaEvent_t fork, join;
    cudaGraph_t g;
    SETUP(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    SETUP(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
    SETUP(cudaEventRecord(join, a));
    SETUP(cudaStreamSynchronize(a));
    SETUP(cudaStreamBeginCapture(a, cudaStreamCaptureModeThreadLocal));
    SETUP(cudaEventRecord(fork, a));
    SETUP(cudaStreamWaitEvent(b, fork, 0));
    busy(b, 0.0);
    SETUP(cudaEventRecord(join, b));
    SETUP(cudaStreamWaitEvent(a, join, 0));
    SETUP(cudaStreamEndCapture(a, &g));
    /* cudaErrorInvalidValue, measured on an H200 (CUDA 13.0, driver 580), not the
     * cudaErrorCapturedEvent one might read into the documentation */
    expect("event last recorded in an ended capture: cudaEventQuery", cudaEventQuery(join),
           cudaErrorInvalidValue);
    expect("event last recorded in an ended capture: cudaEventSynchronize",
           cudaEventSynchronize(join), cudaErrorInvalidValue);
    expect("event last recorded in an ended capture: cudaStreamWaitEvent",
           cudaStreamWaitEvent(b, join, 0), cudaErrorInvalidValue);
    (void)cudaGetLastError();
    SETUP(cudaEventRecord(join, b));
    expect("the same event recorded again: cudaStreamWaitEvent", cudaStreamWaitEvent(a, join, 0),
           cudaSuccess);
    expect("the same event recorded again: cudaEventSynchronize", cudaEventSynchronize(join),
           cudaSuccess);
    SETUP(cudaGraphDestroy(g));
    SETUP(cudaEventDestroy(fork));
    SETUP(cudaEventDestroy(join));
    SETUP(cudaStreamDestroy(a));
    SETUP(cudaStreamDestroy(b));
}

/* cudaStreamDestroy returns at once with work queued; the work still completes. */
static void destroy_returns(void) {
    cudaStream_t s = new_stream();
    cudaEvent_t done;
    SETUP(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    gate_closed(s);
    SETUP(cudaEventRecord(done, s));
    SETUP(cudaStreamDestroy(s));
    cudaError_t q = cudaEventQuery(done);
    gate_open();
    expect("cudaStreamDestroy returned with the stream's work undone", q, cudaErrorNotReady);
    expect("the destroyed stream's work completes", cudaEventSynchronize(done), cudaSuccess);
    SETUP(cudaEventDestroy(done));
}

/* The work a destroyed stream still holds runs in its order, its event waits included: a set
 * queued behind a wait on another stream's set lands after it. */
static void destroy_keeps_order(void) {
    cudaStream_t a = new_stream(), b = new_stream();
    cudaEvent_t e, done;
    char *d, h[16];
    SETUP(cudaMalloc((void **)&d, sizeof h));
    SETUP(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    SETUP(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    gate_closed(b);
    SETUP(cudaMemsetAsync(d, 1, sizeof h, b));
    SETUP(cudaEventRecord(e, b));
    SETUP(cudaStreamWaitEvent(a, e, 0));
    SETUP(cudaMemsetAsync(d, 2, sizeof h, a));
    SETUP(cudaEventRecord(done, a));
    SETUP(cudaStreamDestroy(a));
    nap_ms(50); /* time for a destroyed stream's work to run early, where it would */
    gate_open();
    SETUP(cudaEventSynchronize(done));
    SETUP(cudaStreamSynchronize(b));
    SETUP(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    expect_true("a destroyed stream's work keeps its event wait", h[0] == 2 && h[15] == 2,
                h[0] == 2 ? "the waiting set landed last" : "the waiting set ran before the one it waits for");
    SETUP(cudaFree(d));
    SETUP(cudaEventDestroy(e));
    SETUP(cudaEventDestroy(done));
    SETUP(cudaStreamDestroy(b));
}

static void *open_gate_later(void *arg) {
    (void)arg;
    nap_ms(100); /* after the copy was called, where a copy that did not wait has returned */
    gate_open();
    return NULL;
}

/* A copy from host memory to host memory is fully synchronous: it returns once done, so once
 * the stream's earlier work is. */
static void host_to_host_copy(void) {
    enum { N = 4096 };
    cudaStream_t s = new_stream();
    cudaEvent_t ahead;
    char *h = (char *)malloc(N), *pinned;
    SETUP(cudaMallocHost((void **)&pinned, N));
    SETUP(cudaEventCreateWithFlags(&ahead, cudaEventDisableTiming));
    memset(h, 5, N);
    gate_closed(s);
    SETUP(cudaEventRecord(ahead, s));
    pthread_t t;
    pthread_create(&t, NULL, open_gate_later, NULL);
    SETUP(cudaMemcpyAsync(pinned, h, N, cudaMemcpyHostToHost, s));
    cudaError_t q = cudaEventQuery(ahead);
    pthread_join(t, NULL);
    expect("pageable-to-pinned host copy returned with the work ahead done", q, cudaSuccess);
    SETUP(cudaStreamSynchronize(s));
    expect_true("pageable-to-pinned host copy: the bytes copied", pinned[0] == 5 && pinned[N - 1] == 5,
                "the bytes copied");
    SETUP(cudaFreeHost(pinned));
    SETUP(cudaEventDestroy(ahead));
    SETUP(cudaStreamDestroy(s));
    free(h);
}

/* A capture of a copy to or from pageable memory. The simulator refuses it and invalidates the
 * capture: golmpi's own stricter policy (docs/GPU.md), since a graph's copy node would move the
 * host bytes when the graph runs, not at the capture. A GPU accepts it: on an H200 (CUDA 13.0,
 * driver 580) both directions returned cudaSuccess and the capture ended cleanly, so on a GPU
 * this checks that, and the simulator's refusal stays a policy, not CUDA's rule. Where the
 * capture is accepted, the graph of the copy to the device runs after the host bytes changed:
 * the device must hold the bytes as they are when the graph runs. */
/* Graph g copies n pageable bytes from h to d: run after h changed, d must hold the new bytes. */
static void replay_reads_host_now(cudaGraph_t g, cudaStream_t s, char *d, char *h, size_t n) {
    cudaGraphExec_t x;
    char back[64], detail[64];
    memset(h, 7, n);
    SETUP(cudaGraphInstantiate(&x, g, 0));
    SETUP(cudaGraphLaunch(x, s));
    SETUP(cudaStreamSynchronize(s));
    SETUP(cudaMemcpy(back, d + n - sizeof back, sizeof back, cudaMemcpyDeviceToHost));
    snprintf(detail, sizeof detail, "the device holds %d and %d (7: the bytes at the launch)",
             back[0], back[sizeof back - 1]);
    expect_true("a graph's copy from pageable memory reads the host bytes when the graph runs",
                back[0] == 7 && back[sizeof back - 1] == 7, detail);
    SETUP(cudaGraphExecDestroy(x));
}

static void capture_pageable_copy(void) {
    enum { N = 4096 };
    static const char *const names[] = {"a capture: copy from pageable memory to the device",
                                        "a capture: copy from the device to pageable memory"};
    cudaStream_t s = new_stream();
    cudaGraph_t g;
    char *d, *h = (char *)malloc(N);
    memset(h, 1, N);
    SETUP(cudaMalloc((void **)&d, N));
    for (int dir = 0; dir < 2; dir++) {
        char rule[160];
        SETUP(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
        cudaError_t e = dir == 0 ? cudaMemcpyAsync(d, h, N, cudaMemcpyHostToDevice, s)
                                 : cudaMemcpyAsync(h, d, N, cudaMemcpyDeviceToHost, s);
#ifdef GOLMPI_CUDA_SIM
        const cudaError_t copy_rc = cudaErrorStreamCaptureUnsupported,
                          end_rc = cudaErrorStreamCaptureInvalidated;
#else
        const cudaError_t copy_rc = cudaSuccess, end_rc = cudaSuccess;
#endif
        expect(names[dir], e, copy_rc);
        cudaError_t end = cudaStreamEndCapture(s, &g);
        snprintf(rule, sizeof rule, "%s: the capture ended", names[dir]);
        expect(rule, end, end_rc);
        if (end == cudaSuccess && dir == 0) replay_reads_host_now(g, s, d, h, N);
        if (end == cudaSuccess) SETUP(cudaGraphDestroy(g));
        (void)cudaGetLastError();
    }
    SETUP(cudaFree(d));
    SETUP(cudaStreamDestroy(s));
    free(h);
}

static void *device_sync_elsewhere(void *arg) {
    (void)arg;
    return (void *)(intptr_t)cudaDeviceSynchronize();
}

/* cudaDeviceSynchronize while any stream of the device captures is refused, from any thread
 * and in any mode, and invalidates the capture (Programming Guide: a device handle encompasses
 * the capture). */
static void device_sync_capturing(void) {
    cudaStream_t a = new_stream();
    cudaGraph_t g;
    SETUP(cudaStreamBeginCapture(a, cudaStreamCaptureModeThreadLocal));
    busy(a, 0.0);
    pthread_t t;
    void *rc;
    pthread_create(&t, NULL, device_sync_elsewhere, NULL);
    pthread_join(t, &rc);
    expect("thread-local capture: cudaDeviceSynchronize on another thread",
           (cudaError_t)(intptr_t)rc, cudaErrorStreamCaptureUnsupported);
    cudaError_t end = cudaStreamEndCapture(a, &g);
    expect("thread-local capture: ended after another thread's cudaDeviceSynchronize", end,
           cudaErrorStreamCaptureInvalidated);
    if (end == cudaSuccess) SETUP(cudaGraphDestroy(g));
    (void)cudaGetLastError();
    SETUP(cudaStreamDestroy(a));
}

int main(void) {
    int n = 0;
    /* unchecked: without a driver it fails, which means no GPU here */
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        printf("no GPU: skipped\n");
        return 77;
    }
    SETUP(cudaSetDevice(0));
    SETUP(cudaMallocHost((void **)&gate_flag, sizeof *gate_flag));
    pageable_copy();
    capture_unsafe_calls();
    event_after_capture();
    destroy_returns();
    destroy_keeps_order();
    host_to_host_copy();
    capture_pageable_copy();
    device_sync_capturing();
    printf("%s: %d rule(s) not kept\n", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
