/* Library failures (MPI, HDF5, CUDA, NCCL) are not the user's fault and cannot be recovered from:
 * print host, rank, file:line, the call and the library's own error text (also to the fatal log),
 * then MPI_Abort(1) so that no other rank hangs in a collective: core/ending.h's fatal path, from
 * any thread. */
#ifndef GOLMPI_CHECK_H
#define GOLMPI_CHECK_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#ifdef GOLMPI_HAVE_CUDA
#include "core/check_cuda.h" /* CUDA_CHECK, alone for the .cu files */
#endif
#include "core/ending.h" /* the one fatal path these macros end in, and the other ends */
#ifdef GOLMPI_HAVE_NCCL
#include <nccl.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

const char *gol_mpi_errstr(int code); /* static buffer: only called on the way to abort */
const char *gol_h5_errstr(void);

#define MPI_CHECK(call)                                                                    \
    do {                                                                                   \
        int mpi_check_rc_ = (call);                                                        \
        if (mpi_check_rc_ != MPI_SUCCESS)                                                  \
            gol_die(__FILE__, __LINE__, #call, "MPI", gol_mpi_errstr(mpi_check_rc_));      \
    } while (0)

/* HDF5 returns a negative herr_t or hid_t on failure. */
#define H5_CHECK(call)                                                                     \
    do {                                                                                   \
        if ((long long)(call) < 0) gol_die(__FILE__, __LINE__, #call, "HDF5", gol_h5_errstr()); \
    } while (0)

/* Plain C library calls that set errno (fopen, rename, ...). */
#define SYS_CHECK(cond, what)                                                              \
    do {                                                                                   \
        if (!(cond)) gol_die(__FILE__, __LINE__, what, "system", gol_sys_errstr());         \
    } while (0)
const char *gol_sys_errstr(void);

#ifdef GOLMPI_HAVE_NCCL
#define NCCL_CHECK(call)                                                                   \
    do {                                                                                   \
        ncclResult_t nccl_check_rc_ = (call);                                              \
        if (nccl_check_rc_ != ncclSuccess && nccl_check_rc_ != ncclInProgress)             \
            gol_die_nccl(__FILE__, __LINE__, #call, nccl_check_rc_);                       \
    } while (0)
void gol_die_nccl(const char *file, int line, const char *call, ncclResult_t rc)
    __attribute__((noreturn));
#endif

/* malloc that never returns NULL: running out of host memory is a failure like any other. */
void *gol_xmalloc(size_t bytes);
void *gol_xcalloc(size_t count, size_t size);
/* bytes at an address that is a multiple of align (a power of two, at least sizeof(void *)),
 * uninitialised; free() frees it. */
void *gol_xmalloc_aligned(size_t bytes, size_t align);

/* Watchdogs for host waits that no backend sees (the stop vote, the writer's slot, a halo mode's
 * wait for its stream): a backend whose work can stall in the background (the CUDA backend: its
 * GPU, NCCL) registers fn(arg, since) with gol_watch_add, and every such wait calls
 * gol_watch_poll(since) between its polls, since being MPI_Wtime() when the wait began. fn
 * returns at once when all is well and aborts every rank (with a message) when it finds a stall
 * past --timeout or a library's asynchronous error. Main thread only (the thread that runs the
 * generations), both the registration and the polls; at most a few. Local; never blocks. */
void gol_watch_add(void (*fn)(void *, double), void *arg);
void gol_watch_remove(void (*fn)(void *, double), void *arg);
void gol_watch_poll(double since);

#ifdef __cplusplus
}
#endif

#endif
