/* Memory a run needs and memory the machine has, so that a grid that cannot fit is refused as a
 * user error before anything is allocated, rather than ending in an out-of-memory abort.
 *
 * Each backend states what it allocates itself (its need function below); the driver adds what it
 * allocates around the backend (the start state, the frame slots) and compares the sum with the
 * node's host memory and, for a GPU backend, the device's free memory. The need functions sit
 * beside each other here because kernels/backend.h's ops table has no slot for them yet; a `need`
 * member of gol_backend_ops is where they belong once the backends can take it. */
#ifndef GOLMPI_MEM_NEED_H
#define GOLMPI_MEM_NEED_H

#include <mpi.h>
#include <stdint.h>

#include "core/config.h"
#include "core/decomp.h"

typedef struct gol_mem_need {
    int64_t host;   /* bytes of host memory the backend allocates itself, for the whole run */
    int64_t device; /* bytes of device memory (0 for the CPU backend) */
} gol_mem_need;

/* Saturating size arithmetic: a product past INT64_MAX stays INT64_MAX, so a grid that needs more
 * than any machine has is still refused with a number rather than wrapping to a small one. */
int64_t mem_mul(int64_t a, int64_t b);
int64_t mem_add(int64_t a, int64_t b);

/* The CPU backend: two grids of (rows + 2) x nwords words (the halo rows above and below). */
gol_mem_need backend_cpu_need(const gol_slab *slab, const gol_config *cfg);

/* The CUDA backend: on the device, what kernels/cuda_plan.c says the backend allocates (two grids
 * of (rows + 2) x nwords words, the population counter, with u8 output a staging buffer of rows x
 * width bytes per frame slot), plus MEM_CUDA_RESERVE, an allowance for what others allocate on its
 * behalf: NCCL's buffers (NCCL_BUFFSIZE, 4 MiB per channel and peer) and the CUDA graphs. On the
 * host, the pinned staging rows of the MPI halo modes. */
#define MEM_CUDA_RESERVE (INT64_C(512) << 20)
gol_mem_need backend_cuda_need(const gol_slab *slab, const gol_config *cfg);

/* The need of the backend of that kind. */
gol_mem_need backend_need(gol_backend_kind kind, const gol_slab *slab, const gol_config *cfg);

/* Bytes of host memory that this node can still give: MemAvailable of /proc/meminfo (sysconf's
 * available pages where there is no /proc), lowered to what this process's memory cgroup (v2 or
 * v1, as under Slurm) still allows, counting its reclaimable page cache as free. -1: unknown. */
int64_t mem_host_available(void);

/* Collective over node (the ranks of one node, MPI_Comm_split_type SHARED). Makes current the GPU
 * this rank will drive (node rank modulo the visible devices, as device_select does), creates its
 * context, waits until every rank of the node has done the same, and returns the device's free
 * bytes then (cudaMemGetInfo) and its index in *device. -1 where there is no device or this build
 * has no CUDA. Callable before the backend is created. */
int64_t mem_device_free(MPI_Comm node, int *device);

#endif
