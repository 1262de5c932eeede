/* What keeps an output whole while it is written (DESIGN, Output):
 * - one writer per output: rank 0 holds "<base>.lock" from output_check to output_close, so a
 *   second run to the same --output is refused before it writes anything;
 * - one way out when a file cannot be written: a message that names the file and the cause, the
 *   lock given back, and MPI_Abort with GOL_EXIT_OUTPUT on every rank. */
#ifndef GOLMPI_OUTPUT_GUARD_H
#define GOLMPI_OUTPUT_GUARD_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/check.h"
#include "core/status.h"

/* Rank 0 only. Creates "<base>.lock" (O_EXCL), naming this host, pid and the process's start
 * time. Returns a user error naming the holder when another live run holds it, or when it comes
 * from another host (whose processes this one cannot see), with how to clear it. A lock whose
 * process is gone from this host is stale: it is taken over, and *took_over says so (the caller
 * tells the user; notice gets one line). Taking a lock this process already holds is a no-op.
 * The lock goes at output_lock_release, at a normal exit, and in io_write_failed*. */
gol_status output_lock_take(const char *base, char *notice, size_t len, bool *took_over);
void output_lock_release(const char *base);

/* This rank alone found that `file` cannot be written (an HDF5 call that failed inside a
 * collective write: the ranks are out of step, so nothing can be agreed). Prints one line,
 * "golmpi: rank R on host H: cannot write 'FILE': ...", gives back the lock, and aborts every
 * rank with GOL_EXIT_OUTPUT: core/ending.h's fatal path, from any thread (the writer's too). */
void io_write_failed(const char *file, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 2, 3)));

/* Collective over comm: every rank agrees that `file` failed (msg: why, the same on every rank,
 * which the caller made so). Rank 0 prints it once as "golmpi: error: ...", and once it is out
 * every rank takes the fatal path as io_write_failed does, with no line of its own. */
void io_write_failed_all(MPI_Comm comm, const char *msg) __attribute__((noreturn));

/* Collective over comm: rank 0 looks at the directory and file system that hold `file`. True when
 * the directory is there and writable and has `need` bytes free; otherwise msg (the same on every
 * rank) names the file and why (the directory gone or read-only, or what it needs and what is
 * free), and every rank returns false. */
bool io_room_for(MPI_Comm comm, const char *file, int64_t need, char *msg, size_t len);

/* Collective over comm, for a failure every rank knows of, from the main thread: the agreed end
 * (core/ending.h). The helper threads stop first (the writer ends what it was handed), rank 0
 * prints "golmpi: error: msg", the lock goes back, and every rank leaves through MPI_Finalize
 * (its deadline: timeout_s, --timeout) with GOL_EXIT_OUTPUT, so no MPI_ABORT banner surrounds the
 * one message. */
void io_exit_all(MPI_Comm comm, const char *msg, double timeout_s) __attribute__((noreturn));

/* The most specific message on HDF5's error stack (where the error was first detected: the
 * MPI or system error), for messages. Static buffer. */
const char *io_h5_cause(void);

/* "; N bytes are free on its file system" for the file system that holds `path`, or "". */
void io_free_space_note(const char *path, char *text, size_t len);

/* An HDF5 call that writes `file`: a failure names the file, the call and HDF5's reason. */
#define IO_WRITE_CHECK(file, call)                                                                 \
    do {                                                                                           \
        if ((long long)(call) < 0) io_write_failed(file, "%s failed: %s", #call, io_h5_cause());   \
    } while (0)

/* A C library call that writes `file` (errno set on failure), as IO_WRITE_CHECK. */
#define IO_SYS_CHECK(file, cond)                                                                   \
    do {                                                                                           \
        if (!(cond)) io_write_failed(file, "%s", gol_sys_errstr());                                \
    } while (0)

#endif
