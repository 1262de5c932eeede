/* Stream names for the nsys timeline. It lives apart from src/trace.c so that file builds without
 * CUDA; NVTX3 is header-only and does nothing unless a tool is attached. */
#include "core/trace.h"

/* the simulated GPU's streams are not CUDA's: NVTX has nothing to name there */
#if defined(GOLMPI_HAVE_NVTX) && !defined(GOLMPI_CUDA_SIM)
#include <nvtx3/nvToolsExtCudaRt.h>
#endif

void trace_name_stream(cudaStream_t stream, const char *name) {
#if defined(GOLMPI_HAVE_NVTX) && !defined(GOLMPI_CUDA_SIM)
    nvtxNameCudaStreamA(stream, name);
#else
    (void)stream;
    (void)name;
#endif
}
