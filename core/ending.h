/* How a run ends (DESIGN: How a run ends). There are two ways, and every end takes one of them:
 *
 * - The agreed end, gol_end_agreed: every rank calls it, on its main thread, once every rank knows
 *   the run is over (finished, a user error, a checkpoint on a signal, an agreed output failure).
 *   It stops the helper threads first, through the one registry below, then leaves through
 *   MPI_Finalize under a deadline.
 * - The fatal path, gol_fatal: one rank alone, on any thread, when the run cannot go on (a library
 *   failure, a peer lost, an output failure found by one rank, a deadline passed). It is taken
 *   once per process: a second thread that reaches it waits to be ended with the process. It
 *   stops no helper thread (a helper's stop may wait on the very peer that is lost): it prints its
 *   message, does the one thing its caller must do first (tell the other ranks, give back the
 *   output's lock), and ends with MPI_Abort, within a deadline of its own. */
#ifndef GOLMPI_ENDING_H
#define GOLMPI_ENDING_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- helper threads: one registry, stopped by the agreed end ----------------------------- */

/* A helper thread (the output's writer, the heartbeat) or background work (NCCL's communicators)
 * that must be stopped before MPI_Finalize: gol_helper_add registers stop(arg) when it starts (at
 * most a few); gol_helper_remove takes it back once its owner stopped it the usual way (a stop
 * may call it: it is removed before it runs). Main thread only. Local. */
void gol_helper_add(void (*stop)(void *), void *arg);
void gol_helper_remove(void (*stop)(void *), void *arg);
/* Runs the stop of every helper still registered, the last started first. Main thread only;
 * collective where each stop is (every rank must call it). */
void gol_helpers_stop(void);

/* The agreed end: gol_helpers_stop, then MPI_Finalize, which waits on every rank; past timeout_s
 * (--timeout; <= 0: none) the process ends with one line, "finalize: MPI_Finalize did not return
 * in T s", and GOL_EXIT_PEER, without MPI. Returns MPI_Finalize's code. Main thread only;
 * collective. */
int gol_end_agreed(double timeout_s);

/* ---- the fatal path ------------------------------------------------------------------------ */

/* One fatal end: its exit code, what it prints, and what it does first. */
typedef struct gol_fatal_end {
    int code;              /* every rank's exit code (MPI_Abort's, which mpirun passes on) */
    const char *text;      /* for stderr, whole lines; NULL: nothing (said already) */
    const char *line;      /* for the fatal log (gol_fatal_log_to), one line; NULL: not logged */
    void (*first)(void *); /* run once the message is out, before the abort; NULL: nothing */
    void *arg;
    bool without_mpi;      /* _exit, no MPI_Abort: MPI itself is what does not return */
} gol_fatal_end;

/* The one fatal path. Any thread. The first thread on it starts a deadline: 3 s later the process
 * _exits with e->code, whatever MPI_Abort or e->first block in (Open MPI's MPI_Abort waits on the
 * local daemon, which may wait on an unreachable one). */
void gol_fatal(const gol_fatal_end *e) __attribute__((noreturn));
/* A library failure (core/check.h's macros): "golmpi: <lib> error on host H, rank R, file:line",
 * the call and the library's error, logged, then MPI_Abort(1). */
void gol_die(const char *file, int line, const char *call, const char *lib, const char *err)
    __attribute__((noreturn));
/* Some thread of this process took the fatal path. Any thread. */
bool gol_fatal_taken(void);
/* "golmpi: rank R on host H" needs both; rank -1 before MPI_Init and after MPI_Finalize. */
int gol_host_rank(char *host, unsigned len);

/* Each fatal line also goes, with the UTC time before it and " (exit N)" after it (the process's
 * exit code), to this file (the output's <base>.log, O_APPEND, one line a message), or to syslog
 * (LOG_USER) while none is set (start-up, --no-output). NULL: syslog. Main thread, before the
 * helper threads start. */
void gol_fatal_log_to(const char *path);

/* A run that cannot go on although no library failed (a peer that stopped answering): one line,
 * "golmpi: rank R on host H: <message>", logged, then MPI_Abort(GOL_EXIT_PEER) so that every rank
 * goes. The other ranks are told first (gol_on_peer_lost's hook), that this rank found one lost. */
void gol_abort_msg(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* The same, for a peer found lost (its rank: lost): the other ranks are told which, so that each
 * ends within a tick instead of after a cascade of timeouts around the ring. */
void gol_abort_peer(int lost, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));
/* The same for a told rank: after(arg) runs once the line is printed and logged (its word back to
 * the rank that told it), and the abort is left to that rank, which waits for every told rank's
 * word (this rank's own MPI_Abort would cut the slower ones short). A caller whose after() tells
 * the others (gol_tell_others: the CUDA watchdog) aborts at once after it. */
void gol_abort_then(void (*after)(void *), void *arg, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 3, 4)));

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

#ifdef __cplusplus
}
#endif

#endif
