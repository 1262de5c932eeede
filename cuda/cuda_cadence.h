/* The CUDA backend's two cadences: its progress marks (generations in flight, the watchdog's
 * measure) and the generations timed eagerly to sample the exchange. Plain C with no CUDA types,
 * built in every configuration, so that tests/test_cuda_choices.c checks it on machines without a
 * GPU. */
#ifndef GOLMPI_CUDA_CADENCE_H
#define GOLMPI_CUDA_CADENCE_H

#include <stdint.h>

/* Generations in flight. The host may queue work far ahead of the GPU (a graph launch returns at
 * once), but then a stalled peer would only show when the launch queue fills and a launch blocks
 * the host without ever polling NCCL. So the backend records a mark (an event on the compute
 * stream) after every CUDA_MARK_EVERY generations, and before recording mark m it waits, polling,
 * for mark m - CUDA_MARKS_AHEAD: at most (CUDA_MARKS_AHEAD + 1) x CUDA_MARK_EVERY generations are
 * ever queued, enough to hide the host's launch latency many times over. Marks live in a ring of
 * CUDA_MARK_RING events; the ring is larger than CUDA_MARKS_AHEAD, so an event is re-recorded
 * only after it was waited for. */
enum { CUDA_MARK_EVERY = 16, CUDA_MARKS_AHEAD = 4, CUDA_MARK_RING = 8 };

/* After the queued-th generation since create (1, 2, ...): 1 when a mark is recorded there. */
int cuda_mark_due(int64_t queued);
/* The mark (0, 1, ...) to wait for before recording mark m; -1 for none. */
int64_t cuda_mark_to_wait(int64_t m);

/* The exchange's time is sampled with events around one eager (not graph-replayed) generation,
 * every CUDA_HALO_SAMPLE_EVERY generations counted from the last load: generation 0 after a load,
 * then CUDA_HALO_SAMPLE_EVERY, .... The count is the same on every rank whatever pieces each cuts
 * its advance calls into, so every rank runs the same generations eagerly and the others from the
 * graph: NCCL never sees an eager exchange on one side and a captured one on the other. */
enum { CUDA_HALO_SAMPLE_EVERY = 1024 };
int cuda_halo_sample_due(int64_t since_load);

#endif
