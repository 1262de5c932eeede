/* Stream names for the nsys timeline. It lives apart from src/trace.c so that file builds without
 * CUDA; NVTX3 is header-only and does nothing unless a tool is attached. */
#include "core/trace.h"

#ifdef GOLMPI_HAVE_NVTX
#include <nvtx3/nvToolsExtCudaRt.h>
#endif

void trace_name_stream(cudaStream_t stream, const char *name) {
#ifdef GOLMPI_HAVE_NVTX
    nvtxNameCudaStreamA(stream, name);
#else
    (void)stream;
    (void)name;
#endif
}
