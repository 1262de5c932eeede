/* Whole cycles as CUDA graphs: the k generations of a cycle from each grid buffer (parity 0 and
 * 1), its passes and its exchange, captured once at create and replayed for every whole cycle
 * but the timed samples: one launch a cycle, no host call inside it.
 *
 * NCCL requires every rank to launch, for the same exchange, the graph of the same collective
 * capture. The backend replays a cycle only where it starts at the last exchange and is owed
 * whole, which depends on the generations asked and the ops that need the grid, never on where
 * a rank cuts its calls (cuda/backend_cuda.c, cuda_advance): so every rank replays the same
 * cycles, both parities captured on every rank in the same order. Host MPI calls cannot live in
 * a graph: only capturable halo modes are captured. */
#ifndef GOLMPI_CUDA_GRAPH_H
#define GOLMPI_CUDA_GRAPH_H

#include <cuda_runtime_api.h>

typedef struct cuda_graphs cuda_graphs;

/* Queues the cycle from buffer `parity` on the stream being captured (and any stream it forks). */
typedef void (*cuda_cycle_fn)(void *arg, int parity);

/* Both parities' graphs: cycle(arg, p) captured on stream s (thread-local capture), instantiated
 * with node priorities kept (the comm stream's kernels outrank the interior's in replays too) and
 * uploaded. Collective where the cycle's exchange is: every rank, the same order. */
cuda_graphs *cuda_graphs_capture(cudaStream_t s, cuda_cycle_fn cycle, void *arg);
/* Launches the graph of `parity` on stream s. */
void cuda_graphs_replay(const cuda_graphs *g, int parity, cudaStream_t s);
void cuda_graphs_destroy(cuda_graphs *g); /* NULL: nothing */

#endif
