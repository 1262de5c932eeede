/* NVTX ranges in the "golmpi" domain. They cost nothing without a tool attached, and they work
 * without a GPU, so tests/ can check them with an injection library.
 *
 * Ranges: "generations <g0>-<g1>" (compute of one chunk), "halo" (one exchange the host takes
 * part in: MPI, on the CPU or staged for the GPU), "halo enqueue" (NCCL: the host only enqueues
 * the exchange, which runs later in stream order; its GPU time is sampled with events into the
 * summary's halo time), "d2h slot <s>" (enqueueing a frame copy into slot s, GPU), "unpack slot
 * <s>" (a frame into slot s, CPU), "wait slot <s>" (the main thread waiting for the writer to
 * free slot s before the chunk's first frame), "write <file>" (one chunk's HDF5 write), "index"
 * (index/XDMF refresh). They are the stages of --stats' per-chunk list (src/chunk_log.h) one for
 * one: compute and halo in "generations", frame_s in "d2h"/"unpack", io_wait_s in "wait slot",
 * io_write_s in "write" and "index" (on the GPU the ranges only enqueue what events time).
 * Before them, "kernel shape timing": the CUDA backend's create timing kernel shapes on this
 * rank (cuda/shape_choice.h), when the choice times them.
 * Threads: "main", "hdf5-writer". CUDA streams: "compute", "comm", "copy0", "copy1". */
#ifndef GOLMPI_TRACE_H
#define GOLMPI_TRACE_H

void trace_init(void);
void trace_push(const char *name);
void trace_pushf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void trace_pop(void);
void trace_name_thread(const char *name); /* the calling OS thread */
#ifdef GOLMPI_HAVE_CUDA
#include <cuda_runtime_api.h>
void trace_name_stream(cudaStream_t stream, const char *name);
#endif

#endif
