/* Which generations become frames, and how frames group into chunk files. A frame is taken at the
 * start generation, at every multiple of save_every after it, and at the last generation, so an
 * interrupted run restarted from its last frame takes the same frames as one that never stopped. */
#ifndef GOLMPI_SCHEDULE_H
#define GOLMPI_SCHEDULE_H

#include <stdint.h>

typedef struct gol_schedule {
    int64_t g_start, g_end; /* first and last generation of the run */
    int64_t save_every;
    int64_t chunk; /* frames per chunk file */
} gol_schedule;

int64_t schedule_frames(const gol_schedule *s);
int64_t schedule_frame_generation(const gol_schedule *s, int64_t frame);
int64_t schedule_chunks(const gol_schedule *s);
int64_t schedule_chunk_first(const gol_schedule *s, int64_t chunk); /* index of its first frame */
int64_t schedule_chunk_frames(const gol_schedule *s, int64_t chunk);

#endif
