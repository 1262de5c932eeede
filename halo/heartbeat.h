/* A sign of life between neighbouring ranks, apart from the halo rows (DESIGN: the watchdog).
 *
 * The halo watchdog must judge silence, not slowness: a neighbour busy outside the exchange (rank
 * 0 rewriting the index and the .xmf, waiting on the lock, a slow file system, a collective) has
 * not posted its rows yet, but it is not stopped. So each rank runs a helper thread that sends a
 * tiny message to each neighbour every period and takes theirs, on a communicator of its own, and
 * notes when each neighbour was last heard from. The thread keeps answering while the rank's
 * other threads are busy; a stopped rank (SIGSTOP, a frozen node, a dead network) stops its
 * helper too, so its neighbours stop hearing from it: the halo wait then aborts after --timeout,
 * and the helper itself after --timeout + 1 s even where this rank waits on something else (its
 * writer, a collective). Needs MPI_THREAD_MULTIPLE (else no thread: only the rows count as signs
 * of life). */
#ifndef GOLMPI_HEARTBEAT_H
#define GOLMPI_HEARTBEAT_H

#include <mpi.h>
#include <stdint.h>

typedef struct gol_heartbeat gol_heartbeat;

/* Starts the helper thread beating to up and down, and aborting every rank, naming the neighbour,
 * once one sent nothing for timeout_s + 1 s (either may be < 0: no neighbour; this rank
 * itself: nothing to hear). The period follows timeout_s (several beats per timeout, at most one
 * a second). Collective over comm (it duplicates it). Returns NULL when MPI gives less than
 * MPI_THREAD_MULTIPLE on some rank (every rank then agrees on NULL). */
gol_heartbeat *heartbeat_start(MPI_Comm comm, int up, int down, double timeout_s);
/* The guard: the same helper for the whole run, started by main once the options are known and
 * stopped just before MPI_Finalize, beating around a ring (rank - 1 and rank + 1, modulo the
 * ranks), so a rank stopped in any phase (start-up, a collective write, the report) is found by
 * its two ring neighbours after timeout_s + 1 s, whatever the halo. It knows every rank's host
 * (one MPI_Allgather), and a rank that finds a peer lost tells every rank through it (a notice on
 * a communicator of its own, taken with MPI_ANY_SOURCE): each prints one line naming the lost
 * rank, its host and the rank that found it, and ends (exit 6) within a tick, not after a
 * cascade of timeouts around the ring. A halo mode's heartbeat_start with this timeout and
 * neighbours on the ring gets the guard itself (no second thread), and its heartbeat_stop leaves
 * it running. NULL with timeout_s 0 (--timeout 0: wait for ever) or below MPI_THREAD_MULTIPLE.
 * Collective over comm. */
gol_heartbeat *heartbeat_start_guard(MPI_Comm comm, double timeout_s);
/* The host of `rank`, as the guard learned it; "?" when unknown (hb NULL or no guard). Local. */
const char *heartbeat_host(const gol_heartbeat *hb, int rank);
/* This process's guard while it runs, else NULL. Local. */
gol_heartbeat *heartbeat_guard(void);
/* MPI_Wtime() when peer was last heard from (a beat taken by the helper thread); 0 when never, or
 * hb is NULL, or peer is no neighbour. Local; never blocks. */
double heartbeat_heard(gol_heartbeat *hb, int peer);
/* Each beat also carries the fewest halo exchanges posted that its sender knows of: its own count
 * (set here by the halo mode as it posts) and the counts its neighbours' last beats carried, so
 * the least over every rank reaches each rank a few beats late (one hop a beat). A rank whose GPU
 * waits on an exchange can so tell a rank that has not posted it yet (a host that is slow or
 * busy elsewhere) from every rank having posted it (a device, or the transport, stopped). The
 * count only grows. Local; never blocks. NULL: nothing. */
void heartbeat_set_posted(gol_heartbeat *hb, int64_t posted);
/* The least count known here (a lower bound of every rank's, at most a few beat periods per hop
 * late); -1 when hb is NULL. Local; never blocks. */
int64_t heartbeat_least_posted(gol_heartbeat *hb);
/* Stops the thread: a last message to each neighbour, then every beat still coming is taken until
 * their last ones, so nothing is left in flight on the communicator. Collective with the
 * neighbours (each must stop too); waits on a neighbour no longer than timeout_s of silence, then
 * aborts every rank naming it. NULL: nothing. */
void heartbeat_stop(gol_heartbeat *hb);

#endif
