/* Library failures (MPI, HDF5, CUDA, NCCL) are not the user's fault and cannot be recovered from:
 * print host, rank, file:line, the call and the library's own error text, then MPI_Abort so that
 * no other rank hangs in a collective. */
#ifndef GOLMPI_CHECK_H
#define GOLMPI_CHECK_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#ifdef GOLMPI_HAVE_CUDA
#include "core/check_cuda.h" /* CUDA_CHECK, alone for the .cu files */
#endif
#ifdef GOLMPI_HAVE_NCCL
#include <nccl.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

void gol_die(const char *file, int line, const char *call, const char *lib, const char *err)
    __attribute__((noreturn));
const char *gol_mpi_errstr(int code); /* static buffer: only called on the way to abort */
/* Not a library error but a run that cannot go on (a peer that stopped answering): one line,
 * "golmpi: rank R on host H: <message>", then MPI_Abort(GOL_EXIT_PEER) so that every rank goes.
 * The other ranks are told first (gol_on_peer_lost), without the lost rank: each says that this
 * rank found one, and ends with the same code. */
void gol_abort_msg(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* The same, for a peer found lost (its rank: lost): the other ranks are told first, through the
 * hook set with gol_on_peer_lost (the heartbeat's notice, so that each ends within a tick instead
 * of after a cascade of timeouts around the ring), then this rank aborts. */
void gol_abort_peer(int lost, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));
const char *gol_h5_errstr(void);

/* The fatal path (gol_die, gol_abort_msg, gol_abort_peer, a deadline) is taken once per process:
 * a second thread that reaches it waits to end with the process. The path has a deadline of its
 * own: 4 s after its first step the process _exits with its code, whatever MPI_Abort or the
 * telling of the others block in (MPI_Abort waits on the local daemon, which may wait on an
 * unreachable one). Each fatal line also goes, with the UTC time, to
 * gol_fatal_log_to's file (the output's <base>.log, O_APPEND, one line a message), or to syslog
 * (LOG_USER) while none is set (start-up, --no-output). NULL: syslog. Main thread, before the
 * helper threads start. */
void gol_fatal_log_to(const char *path);
/* tell(arg, lost) tells the other ranks that rank `lost` is lost and returns how many it told,
 * without blocking; heard(arg, told, within_s) waits at most within_s for their word that each
 * wrote its line (so the abort that follows does not cut them short). One pair at most; NULL:
 * none. */
void gol_on_peer_lost(int (*tell)(void *, int), void (*heard)(void *, int, double), void *arg);
/* Tells the other ranks that this one is about to abort (lost: the lost rank, or -1), and waits
 * for their word (1.5 s at most), once per process: for a caller that must tear something down
 * first that the others would see fail (halo_abort: NCCL's communicators), so that they end on
 * the notice, exit 6, and not on that failure. The fatal path calls it too; a second call does
 * nothing. */
void gol_tell_others(int lost);
/* This process told the others (it is on its way to abort): a notice from another rank that
 * found the same loss is no news to it. Any thread. */
bool gol_telling(void);
/* gol_abort_msg, running after(arg) once the line is printed and logged (a told rank's word
 * back to the rank that told it; or a finder's gol_tell_others and teardown, after which it
 * aborts at once). */
void gol_abort_then(void (*after)(void *), void *arg, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 3, 4)));
/* A deadline for a call that can block for ever where no thread of ours can look inside it
 * (MPI_Finalize): past `seconds`, one line "golmpi: rank R on host H: <message>" (stderr and the
 * log) and _exit(GOL_EXIT_PEER), no MPI. seconds <= 0 (--timeout 0): none. One at a time; disarm
 * before the next. Local. */
void gol_deadline_arm(double seconds, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gol_deadline_disarm(void);

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

/* Work that must end before MPI_Finalize when a run leaves without unwinding (io_exit_all: an
 * agreed output failure): a helper thread still making MPI calls on a communicator of its own.
 * gol_at_finalize registers fn(arg) (at most a few); gol_forget_at_finalize takes it back once
 * its owner has stopped it the usual way; gol_finalize_now runs what is still registered, last
 * registered first, then MPI_Finalize. Collective where each fn is (every rank must call it). */
void gol_at_finalize(void (*fn)(void *), void *arg);
void gol_forget_at_finalize(void (*fn)(void *), void *arg);
void gol_finalize_now(void);

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
