#include "core/plan.h"

int64_t mem_mul(int64_t a, int64_t b) {
    int64_t r;
    if (a < 0 || b < 0) return 0; /* no size is negative; a caller's bug must not wrap */
    return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

int64_t mem_add(int64_t a, int64_t b) {
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

int64_t plan_slot_bytes(const gol_plan *p) {
    return mem_mul(p->chunk_frames,
                   mem_mul(p->slab.rows, frame_row_bytes(p->slab.width, p->frame_format)));
}
