#include "cuda/cuda_cadence.h"

int cuda_mark_due(int64_t queued) { return queued > 0 && queued % CUDA_MARK_EVERY == 0; }

int64_t cuda_mark_to_wait(int64_t m) { return m >= CUDA_MARKS_AHEAD ? m - CUDA_MARKS_AHEAD : -1; }

int cuda_halo_sample_due(int64_t since_load) {
    return since_load >= 0 && since_load % CUDA_HALO_SAMPLE_EVERY == 0;
}
