/* The CUDA backend's choices that need no GPU: what it allocates, how a pass splits its rows
 * between the streams, when it records and waits on its progress marks, which generations run
 * eagerly to time the exchange, and what it says when a neighbour stops answering. Plain C with no
 * CUDA types, built in every configuration, so that tests/test_cuda_choices.c checks them on
 * machines without a GPU (kernels/backend_cuda.c calls these very functions; it decides nothing
 * of this on its own). */
#ifndef GOLMPI_CUDA_CHOICES_H
#define GOLMPI_CUDA_CHOICES_H

#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "core/depth.h"
#include "core/plan.h"

/* Device bytes of one grid buffer: rows + 2 depth rows (depth halo rows above and below, the halo
 * depth of core/depth.h) of nwords words. */
int64_t cuda_slab_bytes(int64_t rows, int64_t depth, int64_t nwords);

/* Device bytes of one frame stage: rows frame rows (core/config.h's frame_row_bytes). A
 * frame is first made on the device in its slot, u8 frames unpacked there, packed ones copied
 * there with one 2-D device copy (the grid row's first ceil(width/8) bytes are the frame row), so
 * the grid buffer is free again after that fast copy; the slow copy to pinned host memory then
 * reads only the slot. */
int64_t cuda_frame_stage_bytes(int64_t rows, int64_t width, gol_frame_format fmt);

/* Everything the backend has cudaMalloc'ed: every allocation and free goes through it. */
typedef struct cuda_mem_account {
    int64_t bytes;       /* held now */
    int64_t peak;        /* the most held at once */
    int64_t allocations; /* live allocations */
} cuda_mem_account;

void cuda_account_alloc(cuda_mem_account *a, int64_t bytes);
void cuda_account_free(cuda_mem_account *a, int64_t bytes);

/* The device memory the backend allocates for a slab, frames of fmt taken (with_frames) or not:
 * two grid buffers, the population counter, and a staging buffer per frame slot. All of it is
 * allocated at create (a cudaMalloc or cudaFree later could wait on queued NCCL work), so this is
 * what the account holds from create on, and what cuda_need counts. */
int64_t cuda_device_bytes(int64_t rows, int64_t depth, int64_t nwords, int64_t width,
                          gol_frame_format fmt, int with_frames);

/* The CUDA backend's need (its ops' need): on the device, cuda_device_bytes for the plan's slab,
 * depth and frames, plus CUDA_RESERVE, an allowance for what others allocate on its behalf:
 * NCCL's buffers (NCCL_BUFFSIZE, 4 MiB per channel and peer) and the CUDA graphs. On the host,
 * the pinned staging rows of the MPI halo mode (four messages of depth rows). */
#define CUDA_RESERVE (INT64_C(512) << 20)
gol_mem_need cuda_need(const gol_plan *plan);

/* How a pass of a slab with halo depth k splits its rows between the streams (enqueue_pass): the
 * comm stream's two edge bands, each from the first row still valid after the pass to the k rows
 * that end sends (none past a dead boundary, where the interior runs to the edge), the compute
 * stream's interior between them; a slab of fewer than 2k rows is one range, band[0], on the comm
 * stream. At depth 1 between two neighbours the bands are the first and the last owned row, one
 * launch of the edge kernel (edges). Together, each row once: pass_whole_rows(pass, pass->gens). */
typedef struct cuda_pass_rows {
    gol_rows band[2];  /* comm stream: top, bottom (empty: none) */
    gol_rows interior; /* compute stream (empty: none) */
    int edges;         /* band[0], band[1] are rows 0 and rows - 1: launch_life_edges */
} cuda_pass_rows;

cuda_pass_rows cuda_pass_split(const gol_pass *pass, int64_t k);

/* The ranks whose kernels run on this rank's GPU side by side (core/plan.h's gol_gpu_share): those
 * on it under MPS, else 1. launch_life_deep sizes its grid to this rank's share of the blocks the
 * GPU holds at once (life_geometry.h's gol_resident_share): under MPS the ranks' kernels run side
 * by side, so a launch sized for the whole GPU would leave each rank a partial last wave; without
 * MPS the ranks take turns, each alone on the whole GPU in its time slice, and keep it all. */
int cuda_launch_ranks(const gol_gpu_share *gpu);

/* Generations in flight. The host may queue work far ahead of the GPU (a graph launch returns at
 * once), but then a stalled peer would only show when the launch queue fills and a launch blocks
 * the host without ever polling NCCL. So the backend records a mark (an event on the compute
 * stream) after every CUDA_MARK_EVERY generations, and before recording mark m it waits, polling,
 * for mark m - CUDA_MARKS_AHEAD: at most (CUDA_MARKS_AHEAD + 1) x CUDA_MARK_EVERY generations are
 * ever queued, enough to hide the host's launch latency many times over. Marks live in a ring of
 * CUDA_MARK_RING events; the ring is larger than CUDA_MARKS_AHEAD, so an event is re-recorded
 * only after it was waited for. */
enum { CUDA_MARK_EVERY = 16, CUDA_MARKS_AHEAD = 4, CUDA_MARK_RING = 8 };

/* After the queued-th generation since create (1, 2, ...): 1 when a mark is recorded there. */
int cuda_mark_due(int64_t queued);
/* The mark (0, 1, ...) to wait for before recording mark m; -1 for none. */
int64_t cuda_mark_to_wait(int64_t m);

/* The exchange's time is sampled with events around one eager (not graph-replayed) generation,
 * every CUDA_HALO_SAMPLE_EVERY generations counted from the last load: generation 0 after a load,
 * then CUDA_HALO_SAMPLE_EVERY, .... The count is the same on every rank whatever pieces each cuts
 * its advance calls into, so every rank runs the same generations eagerly and the others from the
 * graph: NCCL never sees an eager exchange on one side and a captured one on the other. */
enum { CUDA_HALO_SAMPLE_EVERY = 1024 };
int cuda_halo_sample_due(int64_t since_load);

/* 1 when a stall of this rank's GPU involves no neighbour: the exchange is not in the GPU's
 * stream order (exchange_on_stream 0: host MPI), or the only neighbour is this rank itself (one
 * rank on a torus) or there is none. Then the watchdog tears no communicator down: NCCL's abort
 * frees memory and synchronises streams, and on a GPU that stopped it can block forever. */
int cuda_stall_is_local(int rank, int up, int down, int exchange_on_stream);

/* The watchdog's message, when the GPU made no progress for waited_s seconds (--timeout) while the
 * host waited for `what`. exchange_on_stream: the halo exchange runs in the GPU's stream order
 * (NCCL), so a stalled neighbour stalls the stream; up and down are its neighbours (-1: none) and
 * rank this rank. The rank that stopped cannot be told apart from inside the stream: the message
 * names both neighbours, or says that only this GPU is involved. alive: the heartbeat says both
 * neighbours still answer and every rank had posted the exchanges waited for, so no host is
 * behind: a GPU (this one or a neighbour's) or NCCL's transport stopped. */
void cuda_stall_message(char *buf, size_t len, int rank, int up, int down, int exchange_on_stream,
                        double waited_s, const char *what, int alive);
/* The watchdog's message when, the GPU making no progress, neighbour `silent` (up or down) also
 * sent no sign of life (heartbeat) for quiet_s seconds: it stopped answering. host: its host, for
 * the message (every rank's line names the lost rank and its host). */
void cuda_silent_message(char *buf, size_t len, int silent, const char *host, int up, int down,
                         double quiet_s, const char *what);

#endif
