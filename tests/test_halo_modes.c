/* Each halo mode called directly (halo/halo.h: create, post, wait, destroy), not through a
 * backend: the halo rows each rank receives equal its neighbours' edge rows, word for word; the
 * owned rows are left as they were; the halo rows past a dead boundary are never written. Slabs of
 * unequal heights, halo depths 1 to 3, torus and dead boundaries, two exchanges in a row (the
 * second of other rows) on the same exchange.
 *   - host memory: the "mpi" mode, with --timeout 0 (MPI_Waitall) and 30 (the polled wait, with
 *     its heartbeat);
 *   - device memory, in CUDA builds when every rank has a GPU (the simulated GPU included): the
 *     "mpi" mode (staged through the host, or CUDA-aware MPI) and, on distinct GPUs, "nccl".
 * Prints a line per case; exits 1 on any difference. */
#include <inttypes.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "halo/halo.h"
#include "tests/expect.h"
#ifdef GOLMPI_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "cuda/device.h"
#endif

enum { NWORDS = 3 };
static const uint64_t UNTOUCHED = 0xdeadbeefcafef00dull; /* what a halo row holds before */

/* Word w of global row r in round `round`: different for every row, word and round. */
static uint64_t cell_word(int64_t r, int w, int round) {
    uint64_t x = (uint64_t)r * 0x9e3779b97f4a7c15ull + (uint64_t)w * 0xbf58476d1ce4e5b9ull +
                 (uint64_t)round * 0x94d049bb133111ebull + 1;
    x ^= x >> 31;
    return x * 0xd6e9f8cc1e3a2b35ull;
}

/* Rank i owns 4 + i % 3 rows: unequal slabs, each at least the deepest halo tested (3). */
static int64_t rows_of(int i) { return 4 + i % 3; }

static gol_slab make_slab(int rank, int nranks, gol_boundary boundary) {
    gol_slab s;
    memset(&s, 0, sizeof s);
    for (int i = 0; i < nranks; i++) {
        if (i < rank) s.row0 += rows_of(i);
        s.height += rows_of(i);
    }
    s.rows = rows_of(rank);
    s.width = NWORDS * 64;
    s.nwords = NWORDS;
    s.rank = rank;
    s.nranks = nranks;
    s.boundary = boundary;
    int torus = boundary == GOL_BOUNDARY_TORUS;
    s.up = rank > 0 ? rank - 1 : torus ? nranks - 1 : -1;
    s.down = rank < nranks - 1 ? rank + 1 : torus ? 0 : -1;
    return s;
}

/* The slab's buffer (k halo rows a side): owned rows of the round, halo rows UNTOUCHED. */
static void fill(uint64_t *buf, const gol_slab *s, int64_t k, int round) {
    for (int64_t i = -k; i < s->rows + k; i++)
        for (int w = 0; w < NWORDS; w++)
            buf[(i + k) * NWORDS + w] =
                i < 0 || i >= s->rows ? UNTOUCHED : cell_word(s->row0 + i, w, round);
}

/* Differences from what the exchange must leave: every row, owned and halo; reports the first. */
static int check(const uint64_t *buf, const gol_slab *s, int64_t k, int round, const char *name) {
    int bad = 0;
    for (int64_t i = -k; i < s->rows + k; i++) {
        int dead = (i < 0 && s->up < 0) || (i >= s->rows && s->down < 0);
        int64_t g = ((s->row0 + i) % s->height + s->height) % s->height; /* the torus wraps */
        for (int w = 0; w < NWORDS; w++) {
            uint64_t want = dead ? UNTOUCHED : cell_word(g, w, round);
            uint64_t got = buf[(i + k) * NWORDS + w];
            if (got != want && !bad++)
                fprintf(stderr,
                        "FAIL %s: rank %d, row %" PRId64 " word %d: %016" PRIx64
                        ", expected %016" PRIx64 " (global row %" PRId64 "%s)\n",
                        name, s->rank, i, w, got, want, g, dead ? ", past a dead boundary" : "");
        }
    }
    return bad;
}

/* Moves rows between the test's host buffer and the mode's buffer (device memory for a device
 * mode); waits for the exchange's stream (device modes) before reading back. */
typedef struct memory {
    int device;
    void *stream; /* cudaStream_t; NULL for host memory */
    uint64_t *(*alloc)(size_t bytes);
    void (*put)(uint64_t *dst, const uint64_t *src_h, size_t bytes);
    void (*get)(uint64_t *dst_h, const uint64_t *src, size_t bytes, void *stream);
    void (*release)(uint64_t *p);
} memory;

static uint64_t *host_alloc(size_t bytes) { return gol_xmalloc(bytes); }
static void host_put(uint64_t *dst, const uint64_t *src, size_t bytes) { memcpy(dst, src, bytes); }
static void host_get(uint64_t *dst, const uint64_t *src, size_t bytes, void *stream) {
    (void)stream;
    memcpy(dst, src, bytes);
}
static void host_release(uint64_t *p) { free(p); }
static const memory host_memory = {0, NULL, host_alloc, host_put, host_get, host_release};

/* One mode on one slab: two exchanges, each checked on every rank; 1 when any rank differs. */
static int run_case(const halo_mode *mode, const memory *mem, gol_boundary boundary, int64_t k,
                    double timeout_s, MPI_Comm comm) {
    int rank, nranks;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nranks);
    const gol_slab s = make_slab(rank, nranks, boundary);
    char name[160];
    snprintf(name, sizeof name, "%s (%s memory), %d rank%s, %s, depth %lld, --timeout %g",
             mode->name, mem->stream ? "device" : "host", nranks, nranks > 1 ? "s" : "",
             boundary == GOL_BOUNDARY_TORUS ? "torus" : "dead", (long long)k, timeout_s);
    size_t bytes = (size_t)(s.rows + 2 * k) * NWORDS * sizeof(uint64_t);
    uint64_t *host = gol_xmalloc(bytes), *buf = mem->alloc(bytes);
    gol_halo *h = halo_create(mode, &s, k, comm, mem->stream, timeout_s);
    int bad = 0;
    for (int round = 0; round < 2; round++) {
        fill(host, &s, k, round);
        mem->put(buf, host, bytes);
        uint64_t *row0 = buf + k * NWORDS;
        halo_post(h, row0, row0 + (s.rows - k) * NWORDS, row0 - k * NWORDS,
                  row0 + s.rows * NWORDS);
        halo_wait(h);
        mem->get(host, buf, bytes, mem->stream);
        bad += check(host, &s, k, round, name);
    }
    EXPECT_EQ(halo_messages(h), 2 * ((s.up >= 0) + (s.down >= 0)), "%s: messages", name);
    halo_destroy(h);
    mem->release(buf);
    free(host);
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm);
    if (rank == 0) printf("%s %s\n", any ? "FAIL" : "ok  ", name);
    return any != 0;
}

/* Every boundary and depth for one mode on one kind of memory; the failures. */
static int run_mode(const char *name, int mem_kind, const memory *mem, double timeout_s,
                    MPI_Comm comm) {
    const halo_mode *mode = halo_mode_find(name, mem_kind);
    EXPECT(mode != NULL, "the mode %s is built in", name);
    if (!mode) return 1;
    int bad = 0;
    for (int b = 0; b < 2; b++)
        for (int64_t k = 1; k <= 3; k++)
            bad += run_case(mode, mem, b ? GOL_BOUNDARY_DEAD : GOL_BOUNDARY_TORUS, k, timeout_s,
                            comm);
    return bad;
}

#ifdef GOLMPI_HAVE_CUDA
static uint64_t *dev_alloc(size_t bytes) {
    void *p = NULL;
    CUDA_CHECK(cudaMalloc(&p, bytes));
    return p;
}
static void dev_put(uint64_t *dst, const uint64_t *src, size_t bytes) {
    CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
}
/* After the exchange's stream: a device mode's wait returns once later stream work sees the rows. */
static void dev_get(uint64_t *dst, const uint64_t *src, size_t bytes, void *stream) {
    CUDA_CHECK(cudaStreamSynchronize((cudaStream_t)stream));
    CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
}
static void dev_release(uint64_t *p) { CUDA_CHECK(cudaFree(p)); }

/* The device modes, where every rank has a GPU; nccl only on distinct GPUs (NCCL refuses
 * duplicates). */
static int run_device_modes(MPI_Comm comm, int rank) {
    char why[512];
    if (!device_cuda_available(comm, why, sizeof why)) {
        if (rank == 0) printf("skip the device modes: %s\n", why);
        return 0;
    }
    memory mem = {device_select(comm), NULL, dev_alloc, dev_put, dev_get, dev_release};
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreateWithPriority(&stream, cudaStreamNonBlocking, 0));
    mem.stream = (void *)stream;
    int bad = run_mode("mpi", HALO_MEM_DEVICE, &mem, 30, comm);
    if (device_distinct_gpus(comm))
        bad += run_mode("nccl", HALO_MEM_DEVICE, &mem, 30, comm);
    else if (rank == 0)
        printf("skip nccl: ranks share a GPU\n");
    CUDA_CHECK(cudaStreamDestroy(stream));
    return bad;
}
#endif

int main(int argc, char **argv) {
    int provided, rank;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided); /* the heartbeat's thread */
    MPI_Comm comm = MPI_COMM_WORLD;
    MPI_Comm_rank(comm, &rank);
    int bad = run_mode("mpi", HALO_MEM_HOST, &host_memory, 0, comm);
    bad += run_mode("mpi", HALO_MEM_HOST, &host_memory, 30, comm);
#ifdef GOLMPI_HAVE_CUDA
    bad += run_device_modes(comm, rank);
#endif
    int local = bad + failures, any = 0;
    MPI_Allreduce(&local, &any, 1, MPI_INT, MPI_MAX, comm);
    if (rank == 0) printf("%s test_halo_modes\n", any ? "FAIL" : "PASS");
    MPI_Finalize();
    return any ? 1 : 0;
}
