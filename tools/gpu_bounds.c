/* golmpi-bounds: the bounds of this GPU that golmpi's kernels are rated against, measured or read
 * from the device itself rather than taken from a data sheet: its name, SM count and peak SM
 * clock (device attributes), and the device-to-device copy bandwidth (cudaMemcpyAsync timed with
 * events, counting the bytes read and the bytes written: what a one-generation pass moves).
 *
 *   golmpi-bounds [--device N] [--mib M]
 *
 * Prints one JSON object on stdout. Exit 0; 3 when there is no usable GPU (as golmpi); 2 on bad
 * arguments; 1 when a CUDA call fails. No MPI: one process, one device. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOUNDS_CHECK(call)                                                                       \
    do {                                                                                         \
        cudaError_t err_ = (call);                                                               \
        if (err_ != cudaSuccess) {                                                               \
            fprintf(stderr, "golmpi-bounds: %s:%d: %s: %s (%s)\n", __FILE__, __LINE__, #call,    \
                    cudaGetErrorName(err_), cudaGetErrorString(err_));                           \
            exit(1);                                                                             \
        }                                                                                        \
    } while (0)

static int attribute(enum cudaDeviceAttr what, int dev)
{
    int v = 0;
    BOUNDS_CHECK(cudaDeviceGetAttribute(&v, what, dev));
    return v;
}

/* Bytes moved per second by device-to-device copies of `bytes`: read plus written, the best of
 * five timings of eight copies each (the first copies warm the clocks up and are not counted). */
static double copy_bandwidth(int64_t bytes)
{
    void *a_d = NULL, *b_d = NULL;
    cudaEvent_t t0, t1;
    double best = 0.0;
    BOUNDS_CHECK(cudaMalloc(&a_d, (size_t)bytes));
    BOUNDS_CHECK(cudaMalloc(&b_d, (size_t)bytes));
    BOUNDS_CHECK(cudaMemset(a_d, 0x5a, (size_t)bytes));
    BOUNDS_CHECK(cudaEventCreate(&t0));
    BOUNDS_CHECK(cudaEventCreate(&t1));
    for (int i = 0; i < 4; i++)
        BOUNDS_CHECK(cudaMemcpyAsync(b_d, a_d, (size_t)bytes, cudaMemcpyDeviceToDevice, 0));
    for (int round = 0; round < 5; round++) {
        const int copies = 8;
        float ms = 0.0f;
        BOUNDS_CHECK(cudaEventRecord(t0, 0));
        for (int i = 0; i < copies; i++)
            BOUNDS_CHECK(cudaMemcpyAsync(b_d, a_d, (size_t)bytes, cudaMemcpyDeviceToDevice, 0));
        BOUNDS_CHECK(cudaEventRecord(t1, 0));
        BOUNDS_CHECK(cudaEventSynchronize(t1));
        BOUNDS_CHECK(cudaEventElapsedTime(&ms, t0, t1));
        double rate = 2.0 * (double)bytes * copies / (ms * 1e-3);
        if (rate > best)
            best = rate;
    }
    BOUNDS_CHECK(cudaEventDestroy(t0));
    BOUNDS_CHECK(cudaEventDestroy(t1));
    BOUNDS_CHECK(cudaFree(a_d));
    BOUNDS_CHECK(cudaFree(b_d));
    return best;
}

static long parse_arg(const char *flag, const char *text, long lo, long hi)
{
    char *end = NULL;
    long v = text ? strtol(text, &end, 10) : 0;
    if (!text || *text == '\0' || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "golmpi-bounds: %s needs a whole number from %ld to %ld\n", flag, lo, hi);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    int dev = 0, count = 0;
    int64_t mib = 1024;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--device") == 0)
            dev = (int)parse_arg("--device", i + 1 < argc ? argv[++i] : NULL, 0, 1023);
        else if (strcmp(argv[i], "--mib") == 0)
            mib = parse_arg("--mib", i + 1 < argc ? argv[++i] : NULL, 1, 1 << 20);
        else {
            fprintf(stderr, "usage: golmpi-bounds [--device N] [--mib M]\n");
            return 2;
        }
    }
    /* unchecked on purpose: without a driver this is an error, not a failure of the tool */
    if (cudaGetDeviceCount(&count) != cudaSuccess || count <= dev) {
        fprintf(stderr, "golmpi-bounds: no usable GPU (device %d of %d)\n", dev, count);
        return 3;
    }
    BOUNDS_CHECK(cudaSetDevice(dev));
    struct cudaDeviceProp prop;
    BOUNDS_CHECK(cudaGetDeviceProperties(&prop, dev));
    int sms = attribute(cudaDevAttrMultiProcessorCount, dev);
    int clock_khz = attribute(cudaDevAttrClockRate, dev);
    int mem_khz = attribute(cudaDevAttrMemoryClockRate, dev);
    int bus_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, dev);
    size_t free_b = 0, total_b = 0;
    BOUNDS_CHECK(cudaMemGetInfo(&free_b, &total_b));
    /* two buffers; leave most of the memory to whatever else runs */
    int64_t bytes = mib << 20;
    if (bytes > (int64_t)(free_b / 4))
        bytes = (int64_t)(free_b / 4) & ~(int64_t)0xfffff;
    double copy = copy_bandwidth(bytes);
    int runtime = 0, driver = 0;
    BOUNDS_CHECK(cudaRuntimeGetVersion(&runtime));
    BOUNDS_CHECK(cudaDriverGetVersion(&driver));
    /* the data sheet's peak from the memory clock and bus: DDR, so two transfers a clock */
    double peak = 2.0 * mem_khz * 1e3 * bus_bits / 8.0;
    printf("{\"device\": %d, \"name\": \"%s\", \"compute_capability\": \"%d.%d\", "
           "\"sm_count\": %d, \"sm_clock_hz\": %.0f, \"memory_bytes\": %zu, "
           "\"copy_bytes\": %lld, \"copy_bytes_per_s\": %.4e, \"memory_peak_bytes_per_s\": %.4e, "
           "\"cuda_runtime\": %d, \"cuda_driver\": %d}\n",
           dev, prop.name, prop.major, prop.minor, sms, clock_khz * 1e3, total_b, (long long)bytes,
           copy, peak, runtime, driver);
    return 0;
}
