/* A host probe: how much memory this node can still give, for memory admission (src/admit.c). */
#ifndef GOLMPI_HOST_MEM_H
#define GOLMPI_HOST_MEM_H

#include <stdint.h>

/* Bytes of host memory that this node can still give: MemAvailable of /proc/meminfo (sysconf's
 * available pages where there is no /proc), lowered to what this process's memory cgroup (v2 or
 * v1, as under Slurm) still allows, counting its reclaimable page cache as free. -1: unknown. */
int64_t mem_host_available(void);

#endif
