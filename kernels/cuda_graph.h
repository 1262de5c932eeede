/* Depth 1's passes as CUDA graphs: the pass from each grid buffer (parity 0 and 1), exchange
 * included, captured once at create and replayed for every pass but the timed samples.
 *
 * NCCL requires every rank to launch, for the same exchange, the graph of the same collective
 * capture. At depth 1 every pass is one generation ending a cycle: the same pass from the same
 * buffer on every rank whatever the ranks' cuts, so both parities are captured on every rank in
 * the same order. At depth k > 1 the passes of a cycle depend on where each rank cuts its calls
 * (frames, progress, GOLMPI_DEBUG_PIECE): they run eagerly, and are long enough that the launches
 * hide. Host MPI calls cannot live in a graph: only capturable halo modes are captured. */
#ifndef GOLMPI_CUDA_GRAPH_H
#define GOLMPI_CUDA_GRAPH_H

#include <cuda_runtime_api.h>

typedef struct cuda_graphs cuda_graphs;

/* Queues the pass from buffer `parity` on the stream being captured (and any stream it forks). */
typedef void (*cuda_pass_fn)(void *arg, int parity);

/* Both parities' graphs: pass(arg, p) captured on stream s (thread-local capture), instantiated
 * with node priorities kept (the comm stream's kernels outrank the interior's in replays too) and
 * uploaded. Collective where the pass's exchange is: every rank, the same order. */
cuda_graphs *cuda_graphs_capture(cudaStream_t s, cuda_pass_fn pass, void *arg);
/* Launches the graph of `parity` on stream s. */
void cuda_graphs_replay(const cuda_graphs *g, int parity, cudaStream_t s);
void cuda_graphs_destroy(cuda_graphs *g); /* NULL: nothing */

#endif
