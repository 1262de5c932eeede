/* backend/ is the layer below the program: the table that picks a backend (cpu/ or cuda/, below
 * it) and dispatches to it through core/backend_ops.h, the interface both backends fill.
 *
 * The driver never knows where the grid lives: it loads packed
 * rows, advances, asks for frames into host buffers, and reads the population. */
#ifndef GOLMPI_BACKEND_H
#define GOLMPI_BACKEND_H

#include <mpi.h>
#include <stdint.h>

#include "core/backend_ops.h" /* gol_backend_times, GOL_CHUNKS_OPEN; what each backend fills */
#include "core/config.h"
#include "core/decomp.h"
#include "core/plan.h"

typedef struct gol_backend gol_backend;

/* Decide the backend and the halo mode, collectively over comm. --backend cuda where any rank has
 * no GPU, a device-only halo mode (--halo nccl) without the CUDA backend, or --halo nccl where
 * ranks share a GPU (unless the NCCL loaded accepts that), is a user error. *halo is a mode of
 * halo/halo.h's table, "auto" resolved. *share: how the ranks share GPUs (cuda/device.h's
 * device_sharing, the one look at it), all zero on the CPU backend. With --backend auto and no
 * GPU, *notice says why the CPU was chosen (rank 0 prints it). */
gol_status backend_select(const gol_config *cfg, MPI_Comm comm, gol_backend_kind *backend,
                          const struct halo_mode **halo, gol_gpu_share *share, char *notice,
                          size_t notice_len);

/* The backend's part of the plan for this slab: plan->slab, backend, halo, depth, cpu_kernel,
 * frame_format, output and backend_need (the backend's own need function, the one that sizes what create
 * allocates). The halo depth is chosen here and nowhere else (core/depth.h's depth_choose): a
 * --halo-depth the backend or the shortest slab cannot take is a user error. Not collective: the
 * same on every rank, as its inputs are. */
gol_status backend_plan(const gol_config *cfg, const gol_slab *slab, gol_backend_kind kind,
                        const struct halo_mode *halo, gol_plan *plan);

/* Collective: the backend the plan says, on the plan's slab, halo mode and depth. cfg gives what
 * the plan does not decide (--timeout, --no-graphs). It allocates what backend_need counted. */
gol_backend *backend_create(const gol_plan *plan, const gol_config *cfg, MPI_Comm comm);
const char *backend_name(const gol_backend *b); /* "cpu" or "cuda" */
/* Which generation step runs: the CPU's instruction set ("avx512", "avx2", "base"), or the CUDA
 * kernels ("one-generation", "multi-generation"). */
const char *backend_kernel(const gol_backend *b);
/* The multi-generation kernel's shape and why it was taken (cuda/shape_choice.h), decided once
 * in create; NULL for a backend without shapes (the CPU). */
const struct shape_choice_result *backend_shape_choice(const gol_backend *b);

/* rows_h: slab->rows packed rows of slab->nwords words each. */
void backend_load(gol_backend *b, const uint64_t *rows_h);
/* Collective (every rank calls it; it may block until done): the random start of
 * core/random_start.h for this rank's rows, made where the grid lives (no host rows, no copy),
 * then the halo rows, exactly as backend_load of init_random_rows' rows would leave the backend,
 * bit for bit. The CUDA backend makes it on the device and exchanges the halo rows at once; the
 * CPU backend makes it in its grid with OpenMP, the exchange following as after a load. */
void backend_init_random(gol_backend *b, uint64_t seed, double density);
/* The inverse of backend_load, for tests and checks. */
void backend_store(gol_backend *b, uint64_t *rows_h);

/* The backend's ops->advance: cuda_advance (cuda/backend_cuda.c: passes, the exchange at a
 * cycle's end) or cpu_advance (cpu/backend_cpu.c: the exchange posted at a cycle's start). */
void backend_advance(gol_backend *b, int64_t generations);

/* Frames: slot s (0 or 1) collects the frames of one chunk. begin starts producing the current grid
 * into dst_h (slab->rows * width bytes for u8, slab->rows * ceil(width/8) for packed); the bytes
 * are there once backend_frame_wait(b, s) returns. The grid may advance in between. CUDA:
 * cuda_frame_begin queues the owed generations (settle), then cuda/cuda_frames.c's
 * cuda_frames_begin unpacks and copies the frame to dst_h on slot s's copy stream; the wait polls
 * that stream. CPU: cpu_frame_begin unpacks at once; the wait does nothing. */
void backend_frame_begin(gol_backend *b, int slot, gol_frame_format fmt, void *dst_h);
void backend_frame_wait(gol_backend *b, int slot);

/* Host memory for frame slots: pinned on the GPU backend, so D2H runs at full speed. */
void *backend_host_alloc(gol_backend *b, int64_t bytes);
void backend_host_free(gol_backend *b, void *p);

/* Per-chunk times (src/chunk_log.h), read without blocking. backend_chunk_begin(b, c): the advance
 * calls from now on belong to chunk c (frames go by their slot). backend_chunk_times(b, c, slot),
 * once backend_frame_wait(b, slot) of chunk c has returned: chunk c's compute_s, halo_s and
 * frame_s (the other fields 0), each its share of backend_times'. Chunks begin in order and are
 * read in order, at most two begun and not yet read; a GPU backend reads chunk c's events then,
 * which are done: its last frame waited for its generations. */
void backend_chunk_begin(gol_backend *b, int64_t chunk);
gol_backend_times backend_chunk_times(gol_backend *b, int64_t chunk, int slot);

int64_t backend_population(gol_backend *b); /* this rank's live cells */
gol_backend_times backend_times(const gol_backend *b);
/* The memory the backend holds now, counted where it allocates it (frame slots of
 * backend_host_alloc included): after create, what the plan's backend_need says. */
gol_mem_need backend_held(const gol_backend *b);
void backend_destroy(gol_backend *b);

#endif
