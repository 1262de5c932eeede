/* The plan of a run: every fact of it decided once, after parsing and decomposition, by
 * src/plan_make.c's plan_make (collective). Every part of the program reads it and none decides
 * these again: the backends build what it says, admission (src/admit.c) weighs the memory it
 * counts, --dry-run prints it, and the report quotes it. Nothing changes it after plan_make. */
#ifndef GOLMPI_PLAN_H
#define GOLMPI_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "core/config.h"
#include "core/decomp.h"

#ifdef __cplusplus
extern "C" {
#endif

struct halo_mode;        /* halo/halo.h: the exchange, found once in its table */
struct cpu_strip_kernel; /* cpu/cpu_strip.h: the CPU's generation step, picked once */

typedef struct gol_mem_need {
    int64_t host;   /* bytes of host memory */
    int64_t device; /* bytes of device memory (0 for the CPU backend) */
} gol_mem_need;

/* Host bytes of one rank, by what holds them. */
typedef struct gol_host_bytes {
    int64_t backend; /* what the backend allocates itself (its grids or pinned halo rows) */
    int64_t start;   /* the start state of a pattern or a restart, built on the host */
    int64_t read;    /* the restart frame being read, beside the start state */
    int64_t slots;   /* the driver's two frame slots (src/run.c) */
    int64_t base;    /* the peak without the frame slots */
    int64_t peak;    /* the most held at once: what admission weighs */
} gol_host_bytes;

/* How the run's ranks share GPUs, decided once by cuda/device.c's device_sharing (collective):
 * the ranks of one node on one physical GPU (the same PCI bus id), and whether the ranks' CUDA
 * contexts run side by side under MPS (docs/GPU.md, Ranks sharing a GPU). All zero on the CPU. */
typedef struct gol_gpu_share {
    int ranks_per_gpu; /* the most ranks on any one GPU of the run, the same on every rank */
    int ranks_on_gpu;  /* ranks on this rank's GPU, itself included: what its launches share */
    bool mps;          /* an MPS control daemon serves every node where ranks share a GPU */
} gol_gpu_share;

typedef struct gol_plan {
    gol_slab slab;                /* this rank's rows */
    gol_backend_kind backend;     /* GOL_BACKEND_CPU or GOL_BACKEND_CUDA, never auto */
    gol_gpu_share gpu;            /* ranks sharing a GPU, MPS (the CUDA backend) */
    const struct halo_mode *halo; /* the exchange; its name is halo->name */
    int64_t depth;                /* halo rows a side, exchanged every that many generations */
    const struct cpu_strip_kernel *cpu_kernel; /* the CPU backend's step (NULL for CUDA) */
    int kernel_shape; /* CUDA: --kernel's shape (cuda/life_geometry.h); -1: auto, chosen on
                       * the GPU by cuda/shape_choice.h (wisdom, timing or the model) */
    int threads;                  /* OpenMP threads of this rank */
    gol_frame_format frame_format;
    bool output;                  /* frames are written (not --no-output) */
    int64_t chunk_frames;         /* frames a frame slot holds (0 without output) */
    /* A frame goes to the writer this many frames after it was begun: 0 where the frame is in its
     * slot when backend_frame_begin returns (the CPU), 1 where the copy runs on a device, which
     * would sit idle if the driver waited for a frame before queuing the next one's generations. */
    int frame_lag;
    gol_mem_need backend_need;    /* what the backend allocates: its own need function's count */
    gol_host_bytes host;          /* this rank's host memory, the backend's part included */
    int64_t device_bytes;         /* this rank's device memory (backend_need.device) */
} gol_plan;

/* Saturating size arithmetic: a product past INT64_MAX stays INT64_MAX, so a grid that needs more
 * than any machine has is still refused with a number rather than wrapping to a small one. */
int64_t mem_mul(int64_t a, int64_t b);
int64_t mem_add(int64_t a, int64_t b);

/* Bytes of one frame slot: chunk_frames frames of the slab's rows in the plan's format. */
int64_t plan_slot_bytes(const gol_plan *p);

#ifdef __cplusplus
}
#endif

#endif
