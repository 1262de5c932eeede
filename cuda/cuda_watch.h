/* The CUDA backend's watchdog and its bound on the work in flight: every host wait of the backend
 * goes through cuda_watch_wait_event or cuda_watch_wait_stream, which poll (core/poll.h) and look
 * at the GPU's progress between polls, since a blocking CUDA wait would never see a dead peer:
 * NCCL's kernels spin on it forever.
 *
 * Progress is the marks (cuda/cuda_cadence.h): an event on the compute stream every
 * CUDA_MARK_EVERY generations. When no mark passed for --timeout seconds while the host waited,
 * the watchdog asks why (a rank behind excuses the stall; a silent neighbour or a stopped GPU does
 * not) and, unexcused, aborts every rank with a message: MPI_Abort is reached within a bounded
 * time whatever NCCL does, since the exchange's teardown is bounded (halo.h's abort) and skipped
 * when this GPU alone stopped. Host waits outside the backend (the stop vote, the writer's slot,
 * the staged exchange's rows) reach the same looks through core/check.h's gol_watch_poll. */
#ifndef GOLMPI_CUDA_WATCH_H
#define GOLMPI_CUDA_WATCH_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#include "core/decomp.h"
#include "halo/halo.h"

typedef struct cuda_watch cuda_watch;

/* The backend's streams: compute, comm and the two frame copy streams. */
enum { CUDA_WATCH_STREAMS = 4 };

/* The watchdog of the work on `compute` (the stream the marks go on), for this rank's slab;
 * timeout_s: --timeout (0: never abort). Registers with gol_watch_add. */
cuda_watch *cuda_watch_create(const gol_slab *slab, double timeout_s, cudaStream_t compute);
/* The exchange whose health and heartbeat the looks read; NULL while it is being made or once it
 * is about to be destroyed (the looks then skip it). */
void cuda_watch_set_halo(cuda_watch *w, gol_halo *halo);
/* A stream of the backend that host waits outside it (gol_watch_poll) may wait on: while any such
 * stream (the compute stream among them) holds work, those waits look for a stall; removed before
 * the stream is destroyed. At most CUDA_WATCH_STREAMS in all. */
void cuda_watch_add_stream(cuda_watch *w, cudaStream_t s);
void cuda_watch_remove_stream(cuda_watch *w, cudaStream_t s);
/* Unregisters, then frees the marks: after every stream has been waited for. */
void cuda_watch_destroy(cuda_watch *w);

/* Exchanges this rank has posted: what work queued now needs at most. */
int64_t cuda_watch_posted(const cuda_watch *w);

/* THE host waits of the backend: until ev (or all of stream s's work so far) is done, polling,
 * the watchdog looking between polls; the awaited work needs the first `needed` exchanges (those
 * posted when it was queued), and `what` names it in a stall's message. */
void cuda_watch_wait_event(cuda_watch *w, cudaEvent_t ev, const char *what, int64_t needed);
void cuda_watch_wait_stream(cuda_watch *w, cudaStream_t s, const char *what, int64_t needed);

/* After each generation queued on the compute stream: every CUDA_MARK_EVERY, waits (polling) for
 * the mark CUDA_MARKS_AHEAD back and records a new one, so the host never runs far ahead of the
 * GPU and never blocks in a launch whose queue is full. */
void cuda_watch_generation(cuda_watch *w);

#endif
