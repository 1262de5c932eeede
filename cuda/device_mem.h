/* The device's free memory, for memory admission (src/admit.c): read with the context this
 * rank's GPU will run on already made. */
#ifndef GOLMPI_DEVICE_MEM_H
#define GOLMPI_DEVICE_MEM_H

#include <mpi.h>
#include <stdint.h>

/* Collective over node (the ranks of one node, MPI_Comm_split_type SHARED). Makes current the GPU
 * this rank will drive (node rank modulo the visible devices, as device_select does), creates its
 * context, waits until every rank of the node has done the same, and returns the device's free
 * bytes then (cudaMemGetInfo) and its index in *device. -1 where there is no device or this build
 * has no CUDA. Callable before the backend is created. */
int64_t mem_device_free(MPI_Comm node, int *device);

#endif
