/* Where the CUDA backend's time goes (its ops' times and chunk_times): the advance calls' GPU
 * time, timed with events on the compute stream; the halo exchange's, sampled; and both shared
 * out by chunk.
 *
 * The sample: a device mode's exchange only enqueues, so the host cannot time it; one eager pass
 * every CUDA_HALO_SAMPLE_EVERY generations' worth of exchanges after a load
 * (cuda/cuda_cadence.h) brackets its exchange with two events, and the run's halo time is the
 * mean sample times the exchanges. A mode on the host (MPI) is timed by the mode itself (halo_seconds). */
#ifndef GOLMPI_CUDA_TIMES_H
#define GOLMPI_CUDA_TIMES_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#include "core/backend_ops.h"
#include "cuda/cuda_watch.h"
#include "halo/halo.h"

typedef struct cuda_times cuda_times;

/* For the exchange h of depth k (exchanges every k generations). */
cuda_times *cuda_times_create(gol_halo *h, int64_t k, cuda_watch *w);
/* After the compute stream was waited for. */
void cuda_times_destroy(cuda_times *t);

/* An advance call on stream s: begin returns the timer's pair for end. */
int cuda_times_advance_begin(cuda_times *t, cudaStream_t s);
void cuda_times_advance_end(cuda_times *t, int pair, cudaStream_t s);

/* For the pass about to be queued (ends: it ends a cycle with its exchange): NULL, or the two
 * events to record on the exchange's stream before and after the exchange, when it is the one
 * to sample (then the pass must run eagerly, on every rank alike). */
cudaEvent_t *cuda_times_sample(cuda_times *t, int ends);
/* Whether the next exchange is the one to sample: a cycle replayed from a graph cannot be. */
int cuda_times_sample_next(const cuda_times *t);
/* The pass was queued: counts its exchange (ends). */
void cuda_times_passed(cuda_times *t, int ends);
/* A load's exchange was waited for: the samples count from here, and its host time is not the
 * run's. */
void cuda_times_loaded(cuda_times *t);
/* After a wait for the compute stream: reads what is done (never waits). */
void cuda_times_read(cuda_times *t);

/* A chunk begins: the advance calls queued from now on are its. */
void cuda_times_chunk_begin(cuda_times *t, int64_t chunk);
/* The chunk's share: compute_s and halo_s; frame_s is slot_frame_s (the slot's frame seconds now)
 * less what the slot's last chunk read. */
gol_backend_times cuda_times_chunk(cuda_times *t, int64_t chunk, int slot, double slot_frame_s);
/* The run's: compute_s and halo_s, as of the last read. */
gol_backend_times cuda_times_total(const cuda_times *t);

#endif
