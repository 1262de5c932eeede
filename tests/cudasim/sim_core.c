/* The simulated GPU's device, errors and reports (tests/cudasim/sim.h). Settings, read once:
 *   GOLMPI_SIM_DEVICES      devices of this node (default: one for every local rank)
 *   GOLMPI_SIM_SEED         adversarial schedule: each stream delays its operations at random
 *                           (seeded per stream), so that work not ordered runs in other orders
 *   GOLMPI_SIM_STALL_RANK, GOLMPI_SIM_STALL_AFTER_S
 *                           that rank's device stops making progress that many seconds in
 *   GOLMPI_SIM_REPORTS      a directory where each race report is also written, one file a rank */
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sim.h"

sim_state sim = {.lock = PTHREAD_MUTEX_INITIALIZER, .changed = PTHREAD_COND_INITIALIZER};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static __thread cudaError_t last_error = cudaSuccess;
static __thread int current_device = 0;

double sim_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void sim_lock(void) { pthread_mutex_lock(&sim.lock); }
void sim_unlock(void) { pthread_mutex_unlock(&sim.lock); }

static int env_int(const char *name, int fallback) {
    const char *v = getenv(name);
    return v && *v ? atoi(v) : fallback;
}

int sim_rank(void) {
    int r = env_int("OMPI_COMM_WORLD_RANK", -1);
    return r >= 0 ? r : env_int("PMIX_RANK", 0);
}

/* Any race reported makes the process exit non-zero, however it ends. */
static void exit_on_races(void) {
    if (sim.races) {
        fprintf(stderr, "cudasim: rank %d: %d race(s) reported; exit 66\n", sim_rank(), sim.races);
        _exit(66);
    }
}

static void on_fault(int sig, siginfo_t *info, void *ctx) {
    (void)ctx;
    if (sim_fault_report(info->si_addr)) {
        void *frames[32];
        int n = backtrace(frames, 32);
        fprintf(stderr, "cudasim: the faulting host access, innermost first:\n");
        sim_site site = {.n = n < SIM_SITE_FRAMES ? n : SIM_SITE_FRAMES};
        memcpy(site.frame, frames, (size_t)site.n * sizeof *frames);
        sim_site_print(&site, "    ");
        _exit(66);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void init_once(void) {
    const char *seed = getenv("GOLMPI_SIM_SEED");
    sim.seed = seed && *seed ? strtoull(seed, NULL, 0) : 0;
    sim.stall_at = 0;
    if (env_int("GOLMPI_SIM_STALL_RANK", -1) == sim_rank()) {
        const char *after = getenv("GOLMPI_SIM_STALL_AFTER_S");
        sim.stall_at = sim_now() + (after ? atof(after) : 0.0);
    }
    sim.slots = 0;
    sim_mem_init();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    atexit(exit_on_races);
    sim.null_stream = sim_stream_new(0, cudaStreamDefault, 0);
}

void sim_init(void) { pthread_once(&once, init_once); }

void sim_fatal(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "cudasim: rank %d: ", sim_rank());
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    _exit(66);
}

cudaError_t sim_error(cudaError_t e) {
    if (e != cudaSuccess) last_error = e;
    return e;
}

void sim_site_here(sim_site *site) {
    void *frames[SIM_SITE_FRAMES + 2];
    int n = backtrace(frames, SIM_SITE_FRAMES + 2);
    /* drop this function and the simulator's entry point */
    site->n = n > 2 ? n - 2 : 0;
    memcpy(site->frame, frames + 2, (size_t)site->n * sizeof *frames);
}

/* One line a frame: function and file:line, by addr2line on the object the frame lies in. */
void sim_site_print(const sim_site *site, const char *indent) {
    for (int i = 0; i < site->n; i++) {
        Dl_info info;
        char cmd[1024], line[512] = "", fn[256] = "";
        if (!dladdr(site->frame[i], &info) || !info.dli_fname) continue;
        uintptr_t off = (uintptr_t)site->frame[i] - (uintptr_t)info.dli_fbase - 1;
        snprintf(cmd, sizeof cmd, "addr2line -f -C -e '%s' 0x%lx 2>/dev/null", info.dli_fname,
                 (unsigned long)off);
        FILE *p = popen(cmd, "r");
        if (p) {
            if (fgets(fn, sizeof fn, p) && fgets(line, sizeof line, p)) {
                fn[strcspn(fn, "\n")] = '\0';
                line[strcspn(line, "\n")] = '\0';
            }
            pclose(p);
        }
        if (strstr(line, "cudasim/")) continue; /* the simulator's own frames say nothing */
        fprintf(stderr, "%s%s at %s\n", indent, fn[0] ? fn : "?", line[0] ? line : info.dli_fname);
    }
}

/* ---- the device ------------------------------------------------------------------------- */

static int device_count(void) {
    int n = env_int("GOLMPI_SIM_DEVICES", 0);
    if (n <= 0) n = env_int("OMPI_COMM_WORLD_LOCAL_SIZE", 1);
    return n > 0 ? n : 1;
}

cudaError_t cudaGetDeviceCount(int *count) {
    sim_init();
    *count = device_count();
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
    sim_init();
    if (device < 0 || device >= device_count()) return sim_error(cudaErrorInvalidDevice);
    current_device = device;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int *device) {
    sim_init();
    *device = current_device;
    return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int *version) {
    *version = CUDART_VERSION;
    return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int *version) {
    *version = CUDART_VERSION;
    return cudaSuccess;
}

enum { SIM_SMS = 4, SIM_BLOCKS_PER_SM = 2 };

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device) {
    if (device < 0 || device >= device_count()) return sim_error(cudaErrorInvalidDevice);
    memset(prop, 0, sizeof *prop);
    snprintf(prop->name, sizeof prop->name, "cudasim simulated GPU %d", device);
    prop->totalGlobalMem = (size_t)8 << 30;
    prop->multiProcessorCount = SIM_SMS;
    prop->major = 9;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device) {
    if (device < 0 || device >= device_count()) return sim_error(cudaErrorInvalidDevice);
    switch (attr) {
    case cudaDevAttrMaxPitch:
        *value = 2147483647;
        break;
    case cudaDevAttrClockRate:
        *value = 1980000;
        break;
    case cudaDevAttrMultiProcessorCount:
        *value = SIM_SMS;
        break;
    case cudaDevAttrMemoryClockRate:
        *value = 2619000;
        break;
    case cudaDevAttrGlobalMemoryBusWidth:
        *value = 5120;
        break;
    default:
        return sim_error(cudaErrorInvalidValue);
    }
    return cudaSuccess;
}

/* A device's bus id names it across the node's processes: NCCL's duplicate check reads it. */
cudaError_t cudaDeviceGetPCIBusId(char *bus_id, int len, int device) {
    if (device < 0 || device >= device_count()) return sim_error(cudaErrorInvalidDevice);
    snprintf(bus_id, (size_t)len, "0000:%02x:00.0", 0x10 + device);
    return cudaSuccess;
}

cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest) {
    *least = 0;
    *greatest = -5;
    return cudaSuccess;
}

int cudasim_blocks_per_sm(void) { return SIM_BLOCKS_PER_SM; }

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, const void *func,
                                                          int block_size, size_t smem) {
    (void)func;
    (void)smem;
    if (block_size <= 0) return sim_error(cudaErrorInvalidValue);
    *blocks = SIM_BLOCKS_PER_SM;
    return cudaSuccess;
}

cudaError_t cudaGetLastError(void) {
    cudaError_t e = last_error;
    last_error = cudaSuccess;
    return e;
}

cudaError_t cudaPeekAtLastError(void) { return last_error; }

static const struct {
    cudaError_t e;
    const char *name, *text;
} errors[] = {
    {cudaSuccess, "cudaSuccess", "no error"},
    {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
    {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
    {cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error"},
    {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
    {cudaErrorInvalidDevicePointer, "cudaErrorInvalidDevicePointer", "invalid device pointer"},
    {cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection",
     "invalid copy direction for memcpy"},
    {cudaErrorInsufficientDriver, "cudaErrorInsufficientDriver",
     "CUDA driver version is insufficient for CUDA runtime version"},
    {cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
    {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
    {cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
    {cudaErrorIllegalAddress, "cudaErrorIllegalAddress",
     "an illegal memory access was encountered"},
    {cudaErrorLaunchFailure, "cudaErrorLaunchFailure", "unspecified launch failure"},
    {cudaErrorStreamCaptureUnsupported, "cudaErrorStreamCaptureUnsupported",
     "operation not permitted when stream is capturing"},
    {cudaErrorStreamCaptureInvalidated, "cudaErrorStreamCaptureInvalidated",
     "operation failed due to a previous error during capture"},
    {cudaErrorStreamCaptureMerge, "cudaErrorStreamCaptureMerge",
     "operation would result in a merge of separate capture sequences"},
    {cudaErrorStreamCaptureUnmatched, "cudaErrorStreamCaptureUnmatched",
     "capture was not ended in the same stream as it began"},
    {cudaErrorStreamCaptureUnjoined, "cudaErrorStreamCaptureUnjoined",
     "capturing stream has unjoined work"},
    {cudaErrorStreamCaptureIsolation, "cudaErrorStreamCaptureIsolation",
     "dependency created on uncaptured work in another stream"},
    {cudaErrorCapturedEvent, "cudaErrorCapturedEvent",
     "operation not permitted on an event last recorded in a capturing stream"},
    {cudaErrorStreamCaptureWrongThread, "cudaErrorStreamCaptureWrongThread",
     "attempt to terminate a thread-local capture sequence from another thread"},
    {cudaErrorUnknown, "cudaErrorUnknown", "unknown error"},
};

const char *cudaGetErrorName(cudaError_t e) {
    for (size_t i = 0; i < sizeof errors / sizeof *errors; i++)
        if (errors[i].e == e) return errors[i].name;
    return "cudaErrorUnknown";
}

const char *cudaGetErrorString(cudaError_t e) {
    for (size_t i = 0; i < sizeof errors / sizeof *errors; i++)
        if (errors[i].e == e) return errors[i].text;
    return "unknown error";
}
