/* What a backend provides (cpu/backend_cpu.c, cuda/backend_cuda.c fill it) and the times it
 * reports. The table that picks a backend and dispatches through this is backend/backend.h, above
 * both backends; this header sits in core/ so that the backends include it without including the
 * table that includes them. */
#ifndef GOLMPI_BACKEND_OPS_H
#define GOLMPI_BACKEND_OPS_H

#include <mpi.h>
#include <stdint.h>

#include "core/config.h"
#include "core/plan.h"

struct shape_choice_result; /* cuda/shape_choice.h */

typedef struct gol_backend_times {
    double compute_s;      /* generations, including the halo wait that could not be hidden */
    double halo_s;         /* time spent in the halo exchange itself */
    double frame_s;        /* unpacking and D2H of frames */
    int64_t halo_messages; /* halo messages this rank sent (halo_messages in halo/halo.h) */
} gol_backend_times;

/* A backend keeps the chunks begun and not yet read in a ring this long (at most 2 are open: the
 * chunk being computed and the one whose frames are still being written). */
enum { GOL_CHUNKS_OPEN = 4 };

/* What a backend provides; backend/backend.c dispatches through it. */
typedef struct gol_backend_ops {
    const char *name;
    int frame_lag; /* the plan's frame_lag (core/plan.h), which backend_plan copies */
    /* What create allocates for this plan (its grids, send rows, pinned rows, staging, the
     * reserve others allocate for it), from the sizes create itself uses. Pure; never fails. */
    gol_mem_need (*need)(const gol_plan *plan);
    /* Collective, may block: the backend for plan->slab, plan->halo, plan->depth. */
    void *(*create)(const gol_plan *plan, const gol_config *cfg, MPI_Comm comm);
    void (*load)(void *impl, const uint64_t *rows_h);
    /* backend_init_random: collective, may block; the grid afterwards is what load of
     * init_random_rows(seed, density, slab->row0, slab->rows, ...) gives. Never fails. */
    void (*init_random)(void *impl, uint64_t seed, double density);
    void (*store)(void *impl, uint64_t *rows_h);
    void (*advance)(void *impl, int64_t generations);
    void (*frame_begin)(void *impl, int slot, gol_frame_format fmt, void *dst_h);
    void (*frame_wait)(void *impl, int slot);
    void *(*host_alloc)(void *impl, int64_t bytes);
    void (*host_free)(void *impl, void *p);
    int64_t (*population)(void *impl);
    gol_backend_times (*times)(const void *impl);
    gol_mem_need (*held)(const void *impl); /* what it holds now, counted as it allocates */
    /* backend_chunk_begin and backend_chunk_times; never block. NULL: backend.c takes `times` at
     * each chunk's beginning, right for a backend whose times are final when its calls return
     * (the CPU). */
    void (*chunk_begin)(void *impl, int64_t chunk);
    gol_backend_times (*chunk_times)(void *impl, int64_t chunk, int slot);
    const char *(*kernel)(const void *impl);
    /* backend_shape_choice: the choice create made; never blocks. NULL: the backend has no shapes. */
    const struct shape_choice_result *(*shape_choice)(const void *impl);
    void (*destroy)(void *impl);
} gol_backend_ops;

extern const gol_backend_ops gol_backend_cpu_ops;
#ifdef GOLMPI_HAVE_CUDA
extern const gol_backend_ops gol_backend_cuda_ops;
#endif

#endif
