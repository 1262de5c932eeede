/* Halo mode "mpi" on device memory: the host MPI mode (halo/halo_mpi.c) for the GPU. The edge rows
 * go through pinned host buffers, or, when MPIX_Query_cuda_support() says MPI is CUDA-aware, MPI
 * reads and writes the device rows directly. Host MPI calls cannot live in a CUDA graph. */
#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "core/poll.h"
#include "halo/halo.h"

#if defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h> /* Open MPI: MPIX_Query_cuda_support */
#endif
#endif

typedef struct halo_mpi_staged {
    gol_halo *host; /* the host MPI mode does the messages */
    int up, down;
    int64_t msg_words; /* words per message: the rows of one exchange side */
    size_t msg_bytes; /* bytes per message */
    cudaStream_t stream;
    int cuda_aware;
    uint64_t *mpi_h; /* pinned: send first, send last, recv top, recv bottom (staged only) */
    uint64_t *top_d, *bottom_d; /* the posted exchange's halo rows, for wait */
    int64_t max_pitch;          /* cudaDevAttrMaxPitch: the largest pitch a 2-D copy takes */
    cudaEvent_t rows_done;      /* the edge rows (and their copy) are in: MPI may read them */
} halo_mpi_staged;

static int query_cuda_aware_mpi(void) {
#if defined(MPIX_CUDA_AWARE_SUPPORT)
    return MPIX_Query_cuda_support() ? 1 : 0;
#else
    return 0;
#endif
}

static void *staged_create(const gol_slab *slab, int64_t depth, MPI_Comm comm, void *stream,
                           double timeout_s) {
    halo_mpi_staged *h = gol_xcalloc(1, sizeof *h);
    h->host = halo_create(halo_mode_find("mpi", HALO_MEM_HOST), slab, depth, comm, NULL, timeout_s);
    h->up = slab->up;
    h->down = slab->down;
    h->msg_words = slab->nwords * depth;
    h->msg_bytes = (size_t)h->msg_words * sizeof(uint64_t);
    h->stream = (cudaStream_t)stream;
    h->cuda_aware = query_cuda_aware_mpi();
    CUDA_CHECK(cudaEventCreateWithFlags(&h->rows_done, cudaEventDisableTiming));
    if (!h->cuda_aware) {
        CUDA_CHECK(cudaMallocHost((void **)&h->mpi_h, 4 * h->msg_bytes));
        memset(h->mpi_h, 0, 4 * h->msg_bytes);
        int device, max_pitch;
        CUDA_CHECK(cudaGetDevice(&device));
        CUDA_CHECK(cudaDeviceGetAttribute(&max_pitch, cudaDevAttrMaxPitch, device));
        h->max_pitch = max_pitch;
    }
    return h;
}

/* Two messages between the device slab and the pinned buffer, `dpitch` bytes apart at the
 * destination and `spitch` at the source, in one 2-D copy (one call, one DMA set-up) where both
 * spacings allow it: no less than a message (a slab of fewer than 2k rows has its first and last
 * k rows overlapping) and no more than the device's largest pitch (a very tall slab); else as two
 * copies. */
static void copy_pair(const halo_mpi_staged *h, void *dst, ptrdiff_t dpitch, const void *src,
                      ptrdiff_t spitch, enum cudaMemcpyKind kind) {
    ptrdiff_t least = (ptrdiff_t)h->msg_bytes, most = (ptrdiff_t)h->max_pitch;
    if (dpitch >= least && dpitch <= most && spitch >= least && spitch <= most) {
        CUDA_CHECK(cudaMemcpy2DAsync(dst, (size_t)dpitch, src, (size_t)spitch, h->msg_bytes, 2,
                                     kind, h->stream));
        return;
    }
    CUDA_CHECK(cudaMemcpyAsync(dst, src, h->msg_bytes, kind, h->stream));
    CUDA_CHECK(cudaMemcpyAsync((char *)dst + dpitch, (const char *)src + spitch, h->msg_bytes,
                               kind, h->stream));
}

static int rows_ready(void *impl, double since) {
    halo_mpi_staged *h = impl;
    cudaError_t e = cudaEventQuery(h->rows_done);
    if (e == cudaSuccess) return 1;
    if (e != cudaErrorNotReady) CUDA_CHECK(e);
    gol_watch_poll(since);
    return 0;
}

/* Until the work queued on the stream so far is done. Polled (core/poll.h), with the watchdogs of
 * host waits (core/check.h's gol_watch_poll: the CUDA backend's, which aborts every rank when its
 * GPU makes no progress for --timeout), where cudaStreamSynchronize would block with no
 * deadline. */
static void wait_rows(halo_mpi_staged *h) {
    CUDA_CHECK(cudaEventRecord(h->rows_done, h->stream));
    gol_poll_until(rows_ready, h, 0);
}

/* The message of each side that has a neighbour: up_src into up_dst (the side above), down_src
 * into down_dst; with both, one 2-D copy where copy_pair can. */
static void copy_sides(const halo_mpi_staged *h, void *up_dst, void *down_dst, const void *up_src,
                       const void *down_src, enum cudaMemcpyKind kind) {
    if (h->up >= 0 && h->down >= 0)
        copy_pair(h, up_dst, (char *)down_dst - (char *)up_dst, up_src,
                  (const char *)down_src - (const char *)up_src, kind);
    else if (h->up >= 0)
        CUDA_CHECK(cudaMemcpyAsync(up_dst, up_src, h->msg_bytes, kind, h->stream));
    else if (h->down >= 0)
        CUDA_CHECK(cudaMemcpyAsync(down_dst, down_src, h->msg_bytes, kind, h->stream));
}

/* Runs the MPI part on the host, so it first waits for the edge rows on the stream. */
static void staged_post(void *impl, const uint64_t *first, const uint64_t *last, uint64_t *top,
                        uint64_t *bottom) {
    halo_mpi_staged *h = impl;
    h->top_d = top;
    h->bottom_d = bottom;
    if (h->cuda_aware) {
        wait_rows(h); /* edge rows written */
        halo_post(h->host, first, last, top, bottom);
        return;
    }
    int64_t nw = h->msg_words;
    uint64_t *send_first = h->mpi_h, *send_last = h->mpi_h + nw;
    uint64_t *recv_top = h->mpi_h + 2 * nw, *recv_bottom = h->mpi_h + 3 * nw;
    /* the first k owned rows into send_first, the last into send_last, for the neighbours there
     * are: past a dead boundary the rows are not sent, and not read either (the interior kernel
     * may still be writing them there, on the other stream) */
    copy_sides(h, send_first, send_last, first, last, cudaMemcpyDeviceToHost);
    wait_rows(h);
    halo_post(h->host, send_first, send_last, recv_top, recv_bottom);
}

static void staged_wait(void *impl) {
    halo_mpi_staged *h = impl;
    halo_wait(h->host);
    if (h->cuda_aware) return;
    int64_t nw = h->msg_words;
    uint64_t *recv_top = h->mpi_h + 2 * nw, *recv_bottom = h->mpi_h + 3 * nw;
    /* past a dead boundary the halo rows stay zero on the device: nothing is copied there */
    copy_sides(h, h->top_d, h->bottom_d, recv_top, recv_bottom, cudaMemcpyHostToDevice);
}

static double staged_seconds(const void *impl) {
    return halo_seconds(((const halo_mpi_staged *)impl)->host);
}

static void staged_destroy(void *impl) {
    halo_mpi_staged *h = impl;
    if (!h) return;
    halo_destroy(h->host);
    if (h->mpi_h) CUDA_CHECK(cudaFreeHost(h->mpi_h));
    CUDA_CHECK(cudaEventDestroy(h->rows_done));
    free(h);
}

/* Host MPI calls: not capturable; the host time of the MPI part is the exchange time, as on the
 * CPU (the copies to and from the pinned rows are not counted). */
const halo_ops halo_mpi_staged_ops = {
    .create = staged_create,
    .post = staged_post,
    .wait = staged_wait,
    .seconds = staged_seconds,
    .destroy = staged_destroy,
    .capturable = 0,
    .sampled = 0,
    .poll = NULL,
    .abort = NULL, /* the host MPI mode underneath: MPI_Abort ends it */
};
