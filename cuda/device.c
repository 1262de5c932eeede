#include "cuda/device.h"

#include <cuda_runtime_api.h>
#include <limits.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/check.h"
#include "core/gpu_share.h"

/* How long golmpi waits for an MPS control daemon to accept a connection: a hung daemon's full
 * queue must not hang the start-up (the driver itself would wait, but then MPS is no help). */
#define DEVICE_MPS_PROBE_S 1.0

/* Why cudaGetDeviceCount failed, in words that send the reader the right way. Without any NVIDIA
 * driver the runtime says "CUDA driver version is insufficient for CUDA runtime version", which
 * sends people after a driver upgrade on a machine that has no GPU at all; cudaDriverGetVersion
 * tells the two apart (0: no driver). An old driver keeps the runtime's words, with the
 * versions. */
static void no_device_reason(cudaError_t e, char *why, size_t why_len) {
    int driver = 0, runtime = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
    if (e == cudaErrorNoDevice || (e == cudaErrorInsufficientDriver && driver == 0)) {
        snprintf(why, why_len, "no NVIDIA driver or GPU found");
    } else if (e == cudaErrorInsufficientDriver && cudaRuntimeGetVersion(&runtime) == cudaSuccess) {
        snprintf(why, why_len, "%s (the driver supports CUDA %d.%d, this golmpi needs %d.%d)",
                 cudaGetErrorString(e), driver / 1000, driver % 1000 / 10, runtime / 1000,
                 runtime % 1000 / 10);
    } else {
        snprintf(why, why_len, "%s", cudaGetErrorString(e));
    }
    (void)cudaGetLastError(); /* the error is the answer, not a failure to carry forward */
}

/* The count, or 0 with the reason in why: no driver, no device, or a busy one. */
static int device_count_reason(char *why, size_t why_len) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        no_device_reason(e, why, why_len);
        return 0;
    }
    if (n <= 0) snprintf(why, why_len, "no CUDA device visible (CUDA_VISIBLE_DEVICES?)");
    return n > 0 ? n : 0;
}

int device_count_unchecked(void) {
    char why[256];
    return device_count_reason(why, sizeof why);
}

int device_local_rank(MPI_Comm comm) {
    MPI_Comm node;
    int local;
    MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_CHECK(MPI_Comm_rank(node, &local));
    MPI_CHECK(MPI_Comm_free(&node));
    return local;
}

int device_select(MPI_Comm comm) {
    int local = device_local_rank(comm);
    int n = 0;
    CUDA_CHECK(cudaGetDeviceCount(&n));
    int dev = local % n;
    CUDA_CHECK(cudaSetDevice(dev));
    return dev;
}

int device_cuda_available(MPI_Comm comm, char *why, size_t why_len) {
    char reason[256] = "";
    int have = device_count_reason(reason, sizeof reason) > 0;
    int all = 0;
    MPI_CHECK(MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, comm));
    if (all) {
        if (why && why_len) why[0] = '\0';
        return 1;
    }
    /* Name the first rank without a GPU, and its host and reason, so the message is actionable. */
    int rank, nranks, mine = have ? INT_MAX : 0, first = 0, missing = 0, one = !have;
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    MPI_CHECK(MPI_Comm_size(comm, &nranks));
    if (!have) mine = rank;
    MPI_CHECK(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm));
    MPI_CHECK(MPI_Allreduce(&one, &missing, 1, MPI_INT, MPI_SUM, comm));
    char detail[512] = "";
    if (rank == first) {
        char host[256] = "?";
        gethostname(host, sizeof host - 1);
        host[sizeof host - 1] = '\0';
        snprintf(detail, sizeof detail, "host %s: %s", host, reason);
    }
    MPI_CHECK(MPI_Bcast(detail, (int)sizeof detail, MPI_CHAR, first, comm));
    if (why && why_len)
        snprintf(why, why_len, "%d of %d rank(s) have no usable CUDA device (first: rank %d, %s)",
                 missing, nranks, first, detail);
    return 0;
}

int device_mps_running(void) {
    const char *dir = getenv("CUDA_MPS_PIPE_DIRECTORY");
    if (!dir || !*dir) dir = "/tmp/nvidia-mps";
    return gol_mps_probe(dir, DEVICE_MPS_PROBE_S) == GOL_MPS_OURS;
}

/* The name of device dev that tells GPUs apart, MIG slices included: its UUID (a MIG slice reports
 * its parent's PCI bus id, so ranks on separate slices would read as sharing one). The simulated
 * GPU (tests/cudasim) has no UUID in its properties; its bus id names it there. "" when unknown. */
static void device_key(int dev, char *key, size_t len) {
    key[0] = '\0';
#ifdef GOLMPI_CUDASIM_CUDA_RUNTIME_API_H
    if (cudaDeviceGetPCIBusId(key, (int)len, dev) != cudaSuccess) key[0] = '\0';
#else
    struct cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, dev) == cudaSuccess)
        gol_gpu_uuid_key((const unsigned char *)prop.uuid.bytes, key, len);
#endif
    (void)cudaGetLastError(); /* no key is an answer ("unknown"), not an error to carry forward */
}

int device_sharing(MPI_Comm comm, gol_gpu_share *share) {
    enum { KEY_LEN = 64 };
    MPI_Comm node;
    int local, nlocal;
    MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_CHECK(MPI_Comm_rank(node, &local));
    MPI_CHECK(MPI_Comm_size(node, &nlocal));
    /* The device's UUID names the GPU (or MIG slice) even when each rank sees a different
     * CUDA_VISIBLE_DEVICES list, where device indices would all read 0. */
    char key[KEY_LEN] = "";
    int n = device_count_unchecked();
    if (n > 0) device_key(local % n, key, KEY_LEN);
    char *all = gol_xmalloc((size_t)nlocal * KEY_LEN);
    MPI_CHECK(MPI_Allgather(key, KEY_LEN, MPI_CHAR, all, KEY_LEN, MPI_CHAR, node));
    int known; /* 0: a rank has no GPU, or one unknown: not safe for NCCL */
    int mine = gol_gpu_sharers(all, nlocal, KEY_LEN, local, &known);
    free(all);
    MPI_CHECK(MPI_Comm_free(&node));
    int every_known = 0, most = 0, served = 0;
    MPI_CHECK(MPI_Allreduce(&known, &every_known, 1, MPI_INT, MPI_MIN, comm));
    MPI_CHECK(MPI_Allreduce(&mine, &most, 1, MPI_INT, MPI_MAX, comm));
    /* MPS matters where ranks share a GPU; where none does, it says whether MPS runs everywhere */
    int here = mine > 1 || most == 1 ? device_mps_running() : 1;
    MPI_CHECK(MPI_Allreduce(&here, &served, 1, MPI_INT, MPI_MIN, comm));
    *share = (gol_gpu_share){.ranks_per_gpu = most, .ranks_on_gpu = mine, .mps = served != 0};
    return every_known;
}

int device_distinct_gpus(MPI_Comm comm) {
    gol_gpu_share share;
    int known = device_sharing(comm, &share);
    return known && share.ranks_per_gpu == 1;
}

void device_describe(int local_rank, char *text, size_t len) {
    char why[256] = "";
    int n = device_count_reason(why, sizeof why);
    if (n <= 0) {
        snprintf(text, len, "no GPU (%s)", why);
        return;
    }
    int dev = local_rank % n; /* as device_select chooses */
    struct cudaDeviceProp prop;
    char bus[32] = "?";
    if (cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(prop.name, sizeof prop.name, "?");
    }
    if (cudaDeviceGetPCIBusId(bus, (int)sizeof bus, dev) != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(bus, sizeof bus, "?");
    }
    snprintf(text, len, "GPU %d: %s, PCI %s", dev, prop.name, bus);
}

static void cuda_version_text(int v, char *text, size_t len) {
    snprintf(text, len, "%d.%d", v / 1000, v % 1000 / 10);
}

void device_versions(char *runtime, char *driver, char *nccl, size_t len) {
    int v = 0;
    if (cudaRuntimeGetVersion(&v) == cudaSuccess)
        cuda_version_text(v, runtime, len);
    else
        snprintf(runtime, len, "unknown");
    v = 0;
    if (cudaDriverGetVersion(&v) == cudaSuccess && v > 0)
        cuda_version_text(v, driver, len);
    else
        snprintf(driver, len, "none (no driver)");
    (void)cudaGetLastError();
    v = 0;
    /* NCCL_VERSION_CODE is major * 10000 + minor * 100 + patch since NCCL 2.9 */
    if (ncclGetVersion(&v) == ncclSuccess)
        snprintf(nccl, len, "%d.%d.%d", v / 10000, v / 100 % 100, v % 100);
    else
        snprintf(nccl, len, "unknown");
}

int device_nccl_shares_gpus(void) {
    /* NCCL up to 2.29 refuses two ranks on one GPU ("Duplicate GPU detected"); 2.30 accepts them
     * when the user opts in with NCCL_MULTI_RANK_GPU_ENABLE=1 */
    const char *opt_in = getenv("NCCL_MULTI_RANK_GPU_ENABLE");
    int v = 0;
    return opt_in && strcmp(opt_in, "1") == 0 && ncclGetVersion(&v) == ncclSuccess && v >= 23000;
}
