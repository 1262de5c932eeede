/* The multi-generation kernel's shape for this run (cuda/life_geometry.h's GOL_SHAPES), decided
 * once, collectively, on the GPUs the run is on. Plain C and MPI: no CUDA call here, so a host
 * test drives it with injected kernel times (tests/test_shape_choice.c).
 *
 * How auto decides, in this order:
 *   1. wisdom: the wisdom file (io/wisdom.h) has a record for every rank's key (GPU, driver and
 *      runtime, golmpi's build, slab width and rows, rule class, boundary, halo depth), all
 *      naming the same shape: that shape.
 *   2. measured: timing costs at most SHAPE_CHOICE_BUDGET of the run's predicted length (the
 *      model's seconds a generation x --steps): the model's SHAPE_CHOICE_FEW best shapes and
 *      `baseline` are timed on every rank's own slab (time_shape), and the ranks take the shape
 *      whose slowest rank is fastest (MPI_Allreduce MAX per shape). Rank 0 records it.
 *   3. model: the model's pick for the slowest rank (shape_model_pick: its fastest, but baseline
 *      unless that beats it by SHAPE_MODEL_MARGIN).
 * --kernel SHAPE skips all three (asked). --tune times every shape, whatever the budget, and
 * records it (tuned). */
#ifndef GOLMPI_SHAPE_CHOICE_H
#define GOLMPI_SHAPE_CHOICE_H

#include <mpi.h>
#include <stddef.h>

#include "core/config.h"
#include "core/plan.h"
#include "cuda/life_geometry.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SHAPE_CHOICE_BUDGET 0.01 /* timing may cost this share of the run's predicted length */
enum {
    SHAPE_CHOICE_FEW = 2,        /* the model's best shapes timed besides baseline */
    SHAPE_CHOICE_TIMED_GENS = 32 /* generations time_shape runs a shape for (see below) */
};

/* What the backend tells about its GPU: shape_choice_gpu_of's (cuda/shape_gpu.c, CUDA builds:
 * cudaGetDeviceProperties, cudaDeviceGetAttribute, cudaDriverGetVersion, cudaRuntimeGetVersion). */
typedef struct shape_choice_gpu {
    char name[256]; /* cudaDeviceProp.name: "NVIDIA H200" */
    int sms;        /* multiProcessorCount */
    int clock_khz;  /* cudaDevAttrClockRate; 0 when unknown */
    int cc_major, cc_minor;
    int driver, runtime; /* cudaDriverGetVersion, cudaRuntimeGetVersion: 13000 */
} shape_choice_gpu;

/* CUDA builds only (cuda/shape_gpu.c): device `device`'s facts; never fails (an unknown fact is
 * "?" or 0, which only makes the wisdom key a key of its own). */
void shape_choice_gpu_of(int device, shape_choice_gpu *gpu);

typedef enum shape_choice_how {
    SHAPE_CHOICE_ASKED,    /* --kernel SHAPE */
    SHAPE_CHOICE_WISDOM,   /* a record of the wisdom file */
    SHAPE_CHOICE_MEASURED, /* timed on every rank now (auto) */
    SHAPE_CHOICE_TUNED,    /* --tune: every shape timed */
    SHAPE_CHOICE_MODEL,    /* the model's pick: timing would cost too much of a short run */
    SHAPE_CHOICE_UNUSED    /* depth 1: the one-generation kernels run, no shape (baseline) */
} shape_choice_how;

typedef struct shape_choice_result {
    int shape; /* the index into gol_shapes: what the backend runs */
    shape_choice_how how;
    /* MEASURED, TUNED and WISDOM: each shape's seconds a generation, the slowest rank's; < 0 where
     * not timed. MODEL: the model's prediction for the slowest rank. ASKED: all < 0. */
    double seconds[GOL_SHAPE_COUNT];
} shape_choice_result;

/* Seconds a generation of `shape` on this rank's slab, measured with events on this rank's GPU:
 * about SHAPE_CHOICE_TIMED_GENS generations of the run's own passes (halo exchanges included, so
 * the calls are collective: every rank calls it for the same shapes in the same order), on
 * whatever the grid buffers hold (they are zeroed again before the load). Written by the backend's
 * owner; ctx is the backend. Never fails (a CUDA error is fatal, as everywhere in the backend). */
typedef double (*shape_choice_timer)(void *ctx, int shape);

/* Collective over comm; may block (timing, exchanges, the wisdom file's lock on rank 0).
 * The CUDA backend calls it once, in create: after the warm-up exchanges (NCCL connected) and
 * before any graph capture, any load or random start, with the grid buffers allocated:
 *
 *     shape_choice_gpu gpu;
 *     shape_choice_gpu_of(cb->device, &gpu);
 *     cb->choice = shape_choice_make(plan, cfg, comm, &gpu, cuda_time_shape, cb);
 *     use_shape(cb, cb->choice.shape);
 *
 * With plan->kernel_shape >= 0 (--kernel SHAPE) it returns that shape at once, timing nothing and
 * reading no file (time_shape may then be NULL). Wisdom faults (a corrupt, truncated or foreign
 * record, a read-only or missing directory) are never fatal: rank 0 says each kind once on stderr
 * (unless --quiet) and the choice goes on. With cfg->tune, rank 0 prints the table of times. */
shape_choice_result shape_choice_make(const gol_plan *plan, const gol_config *cfg, MPI_Comm comm,
                                      const shape_choice_gpu *gpu, shape_choice_timer time_shape,
                                      void *ctx);

/* "wisdom", "measured", "tuned", "model", "asked by --kernel". */
const char *shape_choice_how_name(shape_choice_how how);

/* One line for the summary: "unrolled (measured: baseline 1.2e-04, unrolled 9.8e-05 s/gen...)". */
void shape_choice_describe(const shape_choice_result *r, char *text, size_t len);

#ifdef __cplusplus
}
#endif

#endif
