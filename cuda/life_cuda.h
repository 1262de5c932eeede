/* cuda/ is a layer below the backend table: the CUDA backend (cuda/backend_cuda.c), its kernels
 * and their shapes.
 *
 * The only door from host C into the CUDA kernels. Every launcher enqueues on the given stream
 * and checks the launch (cudaGetLastError) before it returns; none of them synchronises.
 *
 * Row numbering, the same as core/depth.h's and the CPU backend's: every launcher takes src_d and
 * dst_d pointing at row 0, the first owned row, of a slab of g.rows owned rows of g.nwords 64-bit
 * words; the halo above is rows -k..-1, the halo below rows g.rows..g.rows+k-1 (k: the halo
 * depth), so row numbers may be negative. */
#ifndef GOLMPI_LIFE_CUDA_H
#define GOLMPI_LIFE_CUDA_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#include "core/life_word.h"
#include "cuda/life_geometry.h" /* gol_cuda_grid, GOL_DEEP_GENS_MAX, the launch shapes */

#ifdef __cplusplus
extern "C" {
#endif

/* Next generation of rows 0 and g.rows - 1 (one row when g.rows == 1) from src_d into dst_d: a
 * one-generation pass's two edge bands in one launch (rows -1 and g.rows must be valid). The
 * row-end branches are cheap here: only two rows. */
void launch_life_edges(gol_cuda_grid g, const uint64_t *src_d, uint64_t *dst_d, cudaStream_t s);

/* Next generation of rows [row_begin, row_end) from src_d into dst_d: the kernel of a
 * one-generation pass. Rows row_begin - 1 and row_end must be valid in src_d (or dead: zero). An
 * empty range launches nothing. */
void launch_life_rows(gol_cuda_grid g, const uint64_t *src_d, uint64_t *dst_d, int64_t row_begin,
                      int64_t row_end, cudaStream_t s);

/* gens generations (1..the gens_max of `shape`, a row of life_geometry.h's GOL_SHAPES; every
 * shape computes the same cells) in one pass over global memory: rows [row_begin, row_end) of the
 * generation gens after src_d's into dst_d (the backend runs passes of 2 or more
 * generations here, a pass of one on launch_life_rows and launch_life_edges). Reads src
 * rows [row_begin - gens, row_end + gens) that lie in [live_begin, live_end); rows outside that
 * range are dead at every generation (past a dead boundary), whatever src holds there. Writes dst
 * rows [row_begin, row_end) and nothing else; src_d != dst_d. An empty range launches nothing.
 * ranks: the ranks whose kernels run on this GPU side by side (cuda_share.h's cuda_launch_ranks;
 * 1: the whole GPU); the launch is sized to this rank's share of the resident blocks. */
void launch_life_deep(gol_cuda_grid g, const uint64_t *src_d, uint64_t *dst_d, int64_t row_begin,
                      int64_t row_end, int gens, int shape, int64_t live_begin, int64_t live_end,
                      int ranks, cudaStream_t s);

/* rows packed rows (stride nwords words) starting at src_d into rows*width bytes of 0/1. */
void launch_unpack_u8(const uint64_t *src_d, uint8_t *dst_d, int64_t rows, int64_t nwords,
                      int64_t width, cudaStream_t s);

/* Adds the live cells of `words` consecutive words at src_d to *count_d (zero it first). */
void launch_popcount(const uint64_t *src_d, int64_t words, unsigned long long *count_d,
                     cudaStream_t s);

/* Host emulation, for tests on machines without a GPU; the program never calls these. Each runs
 * the launcher's kernel thread bodies over the launcher's grid and block (the same geometry
 * function, the same template instantiation), one (block, thread) at a time, barrier phases in
 * order, on host pointers, and leaves untouched whatever the kernel leaves untouched. Warp-level
 * kernels (life_deep) run one warp at a time: its 32 lanes' bodies phase by phase, and each warp
 * shuffle as an exchange between those 32 lane states. */
void emulate_life_edges(gol_cuda_grid g, const uint64_t *src, uint64_t *dst);
void emulate_life_rows(gol_cuda_grid g, const uint64_t *src, uint64_t *dst, int64_t row_begin,
                       int64_t row_end);
/* resident: the blocks of the kernel the emulated device holds at once, which the launcher asks
 * the GPU (the grid is whole waves of them). */
void emulate_life_deep(gol_cuda_grid g, const uint64_t *src, uint64_t *dst, int64_t row_begin,
                       int64_t row_end, int gens, int shape, int64_t live_begin, int64_t live_end,
                       int64_t resident);
void emulate_unpack_u8(const uint64_t *src, uint8_t *dst, int64_t rows, int64_t nwords,
                       int64_t width);
void emulate_popcount(const uint64_t *src, int64_t words, unsigned long long *count);

#ifdef __cplusplus
}
#endif

#endif
