/* The simulated GPU's declarations of host threads (tests/cudasim/include/cudasim.h): in a
 * simulated build (GOLMPI_CUDA_SIM) a thread other than the one that enqueues GPU work declares
 * its accesses to pinned memory and its hand-overs, so the race check sees them; in every other
 * build these calls are empty. */
#ifndef GOLMPI_CUDASIM_HOOKS_H
#define GOLMPI_CUDASIM_HOOKS_H

#ifdef GOLMPI_CUDA_SIM
#include "cudasim.h"
#else
#include <stddef.h>

enum { CUDASIM_READ = 1, CUDASIM_WRITE = 2 };
static inline void cudasim_host_thread(void) {}
static inline void cudasim_host_access(const void *p, size_t bytes, int mode) {
    (void)p;
    (void)bytes;
    (void)mode;
}
static inline void cudasim_host_release(const void *token) { (void)token; }
static inline void cudasim_host_acquire(const void *token) { (void)token; }
#endif

#endif
