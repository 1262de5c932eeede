/* Which generations become frames, and how frames group into chunk files. A frame is taken at the
 * start generation, at every multiple of save_every after it, and at the last generation, so an
 * interrupted run restarted from its last frame takes the same frames as one that never stopped. */
#ifndef GOLMPI_SCHEDULE_H
#define GOLMPI_SCHEDULE_H

#include <stdint.h>

typedef struct gol_schedule {
    int64_t g_start, g_end; /* first and last generation of the run */
    int64_t save_every;
    int64_t frames_per_chunk; /* frames per chunk file (the last may hold fewer) */
    /* 1: the start generation's frame exists already (the last frame of the series this run
     * continues, DESIGN: Checkpoint and resume), so the first frame is the next one due */
    int skip_start;
} gol_schedule;

int64_t schedule_frames(const gol_schedule *s); /* 0 only for skip_start with g_end == g_start */
int64_t schedule_frame_generation(const gol_schedule *s, int64_t frame);
int64_t schedule_chunks(const gol_schedule *s);
int64_t schedule_chunk_first(const gol_schedule *s, int64_t chunk); /* index of its first frame */
int64_t schedule_chunk_frames(const gol_schedule *s, int64_t chunk);

/* The schedule of the same run stopped early at generation g_stop (g_start < g_stop <= g_end):
 * its frames before g_stop are those of s, in the same chunks, and g_stop is its last frame, so a
 * run that stops keeps every name it has written and ends with a shorter last chunk. */
gol_schedule schedule_truncate(const gol_schedule *s, int64_t g_stop);

#endif
