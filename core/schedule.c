#include "core/schedule.h"

/* The frames of the run as if skip_start were 0: the start, the multiples of K strictly between,
 * and the end. */
static int64_t frames_from_start(const gol_schedule *s) {
    if (s->g_end == s->g_start) return 1;
    int64_t first_multiple = (s->g_start / s->save_every + 1) * s->save_every;
    int64_t between = 0;
    if (first_multiple < s->g_end) between = (s->g_end - 1 - first_multiple) / s->save_every + 1;
    return 2 + between;
}

int64_t schedule_frames(const gol_schedule *s) {
    return frames_from_start(s) - (s->skip_start != 0);
}

int64_t schedule_frame_generation(const gol_schedule *s, int64_t frame) {
    frame += s->skip_start != 0;
    int64_t n = frames_from_start(s);
    if (frame == 0) return s->g_start;
    if (frame == n - 1) return s->g_end;
    return (s->g_start / s->save_every + frame) * s->save_every;
}

int64_t schedule_chunks(const gol_schedule *s) {
    return (schedule_frames(s) + s->frames_per_chunk - 1) / s->frames_per_chunk;
}

int64_t schedule_chunk_first(const gol_schedule *s, int64_t chunk) {
    return chunk * s->frames_per_chunk;
}

int64_t schedule_chunk_frames(const gol_schedule *s, int64_t chunk) {
    int64_t rest = schedule_frames(s) - chunk * s->frames_per_chunk;
    return rest < s->frames_per_chunk ? rest : s->frames_per_chunk;
}

gol_schedule schedule_truncate(const gol_schedule *s, int64_t g_stop) {
    gol_schedule t = *s;
    t.g_end = g_stop;
    return t;
}
