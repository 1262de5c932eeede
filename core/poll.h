/* The one way a host wait polls: a wait that must not block in a library call that cannot see a
 * dead peer (a CUDA wait on NCCL work, MPI_Waitall on a silent neighbour, NCCL's setup) asks its
 * condition again and again through gol_poll_until, which runs the wait's health checks with each
 * ask (the condition itself does: they may abort every rank) and naps between asks by one policy.
 *
 * The nap: asks back to back, yielding the core, for GOL_POLL_SPIN_S (most waits end within
 * microseconds: an exchange's rows arrive while the interior is computed, and a generation can
 * take less than 100 us, shorter than a sleep), then one ask every GOL_POLL_NAP_NS, so that a long
 * wait leaves the core to the OpenMP threads, the other ranks on the node and the GPU's host
 * threads. */
#ifndef GOLMPI_POLL_H
#define GOLMPI_POLL_H

#ifdef __cplusplus
extern "C" {
#endif

#define GOL_POLL_SPIN_S 2e-3
enum { GOL_POLL_NAP_NS = 50000 };

/* 1 when the awaited thing is done, 0 to be asked again; since: MPI_Wtime() when the wait began.
 * Runs the wait's health checks (a peer's silence, a library's pending error, the watchdog),
 * which may abort every rank. */
typedef int (*gol_poll_done)(void *arg, double since);

/* Asks done(arg, since) until it answers 1 (then returns 1) or, limit_s > 0, until limit_s
 * seconds have passed since the wait began (then returns 0: the caller decides what that means).
 * limit_s <= 0: no limit of its own (done's health checks bound the wait). Any thread. */
int gol_poll_until(gol_poll_done done, void *arg, double limit_s);
/* The same with one nap of nap_s between asks and no spinning: for a wait off the generations'
 * path (a helper thread's, or a rare retry), which must leave the core to them, and whose thing
 * comes at its own pace (a beat, a file being written). Any thread. */
int gol_poll_every(gol_poll_done done, void *arg, double limit_s, double nap_s);

#ifdef __cplusplus
}
#endif

#endif
