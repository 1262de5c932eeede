/* A ring of event pairs timing stretches of one stream's work (frames, advance calls): GPU time,
 * read once both events of a pair are done, never by blocking the host (a full ring waits for its
 * oldest pair through the watchdog, cuda/cuda_watch.h). */
#ifndef GOLMPI_EVENT_TIMER_H
#define GOLMPI_EVENT_TIMER_H

#include <cuda_runtime_api.h>

#include "cuda/cuda_watch.h"

typedef struct event_timer event_timer;

event_timer *event_timer_create(cuda_watch *w);
/* After its stream's work was waited for: the events are destroyed. */
void event_timer_destroy(event_timer *t);

/* Starts a timed stretch on stream s; returns its pair for event_timer_end. into: NULL, or where
 * the stretch's seconds also go once read (a chunk's share). */
int event_timer_begin(event_timer *t, cudaStream_t s, double *into);
void event_timer_end(event_timer *t, int pair, cudaStream_t s);
/* Reads the pairs already done; never waits. */
void event_timer_read(event_timer *t);
/* Seconds of the pairs read so far. */
double event_timer_seconds(const event_timer *t);

#endif
