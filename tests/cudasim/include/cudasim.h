/* The simulated GPU's own door for kernel launchers (tests/cudasim). A .cu file built for the
 * simulator (GOLMPI_CUDA_SIM) keeps its launcher's geometry and replaces only the <<<>>> launch:
 * it enqueues the kernel's host emulation on the stream, naming the device memory the kernel
 * reads and writes, so that the simulator orders it like any stream work and checks it for races.
 * The body runs later on the stream's worker thread, on pointers it translates with cudasim_ptr. */
#ifndef GOLMPI_CUDASIM_H
#define GOLMPI_CUDASIM_H

#include <stddef.h>

#include "cuda_runtime_api.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { CUDASIM_READ = 1, CUDASIM_WRITE = 2 };

/* A byte range a kernel touches: [p, p + bytes), device or pinned host memory. */
typedef struct cudasim_access {
    const void *p;
    size_t bytes;
    int mode; /* CUDASIM_READ, CUDASIM_WRITE or both */
} cudasim_access;

/* Enqueues body(arg) on s (the arg's arg_bytes are copied at the call), as a kernel named name
 * touching the nacc ranges of acc. Returns what a launch returns (also left for
 * cudaGetLastError). */
cudaError_t cudasim_launch(cudaStream_t s, const char *name, const cudasim_access *acc, int nacc,
                           void (*body)(void *arg), const void *arg, size_t arg_bytes);

/* Where the stream worker reaches p: device pointers are not addressable by the host (a host
 * dereference faults), so a kernel body translates each one it is handed. Host pointers come back
 * unchanged. */
void *cudasim_ptr(const void *p);

/* Blocks of a kernel one simulated multiprocessor holds (the occupancy the device reports). */
int cudasim_blocks_per_sm(void);

/* Host threads for the race check. Every thread is the one host by default: what one thread saw
 * done, all have. A thread that calls cudasim_host_thread() is a host of its own instead, like a
 * stream: it sees device work done, and the host sees its accesses done, only through hand-overs
 * that both sides declare (a release under a token, an acquire of it, where the program hands
 * over with a lock), and each access it declares to pinned memory is checked against the device's
 * work and kept, as an operation's ranges are. golmpi's frame writer declares its reads of the
 * frame slots (io/output.c), so a slot the device writes before the writer gave it back is a race
 * at once, however the schedule fell. Without the simulator these calls are empty
 * (core/cudasim_hooks.h). */
void cudasim_host_thread(void);
void cudasim_host_access(const void *p, size_t bytes, int mode); /* CUDASIM_READ, _WRITE */
void cudasim_host_release(const void *token); /* what this thread saw and did, under token */
void cudasim_host_acquire(const void *token); /* joins what was released under token */

#ifdef __cplusplus
}
#endif

#endif
