/* Stream names for the nsys timeline. It lives apart from core/trace.c so that file builds without
 * CUDA; NVTX3 is header-only and does nothing unless a tool is attached. */
#if defined(GOLMPI_CUDA_SIM) && defined(GOLMPI_HAVE_NVTX)
/* On the simulated GPU (tests/cudasim) this unit takes CUDA's types from NVTX's own header, not
 * from the simulator's: a stream is a struct CUstream_st pointer in both, and NVTX's header cannot
 * sit beside the simulator's declarations of the same names. */
#include <nvtx3/nvToolsExtCudaRt.h>
void trace_name_stream(cudaStream_t stream, const char *name);
#else
#include "core/trace.h"
#ifdef GOLMPI_HAVE_NVTX
#include <nvtx3/nvToolsExtCudaRt.h>
#endif
#endif

void trace_name_stream(cudaStream_t stream, const char *name) {
#ifdef GOLMPI_HAVE_NVTX
    nvtxNameCudaStreamA(stream, name);
#else
    (void)stream;
    (void)name;
#endif
}
