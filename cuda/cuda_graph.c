/* Whole cycles as CUDA graphs (cuda/cuda_graph.h). */
#include "cuda/cuda_graph.h"

#include <stdlib.h>

#include "core/check.h"

struct cuda_graphs {
    cudaGraphExec_t exec[2]; /* the cycle from buffer p */
};

static cudaGraphExec_t capture(cudaStream_t s, cuda_cycle_fn cycle, void *arg, int parity) {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    cycle(arg, parity);
    CUDA_CHECK(cudaStreamEndCapture(s, &graph));
    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, cudaGraphInstantiateFlagUseNodePriority));
    CUDA_CHECK(cudaGraphDestroy(graph));
    CUDA_CHECK(cudaGraphUpload(exec, s));
    return exec;
}

cuda_graphs *cuda_graphs_capture(cudaStream_t s, cuda_cycle_fn cycle, void *arg) {
    cuda_graphs *g = gol_xcalloc(1, sizeof *g);
    for (int p = 0; p < 2; p++) g->exec[p] = capture(s, cycle, arg, p);
    return g;
}

void cuda_graphs_replay(const cuda_graphs *g, int parity, cudaStream_t s) {
    CUDA_CHECK(cudaGraphLaunch(g->exec[parity], s));
}

void cuda_graphs_destroy(cuda_graphs *g) {
    if (!g) return;
    for (int p = 0; p < 2; p++) CUDA_CHECK(cudaGraphExecDestroy(g->exec[p]));
    free(g);
}
