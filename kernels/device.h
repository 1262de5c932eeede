/* Which GPU a rank drives: its rank among the ranks of its node, modulo the devices it can see.
 * That honours CUDA_VISIBLE_DEVICES, including Slurm's one GPU per task (every task sees device
 * 0, which is a different GPU for each). */
#ifndef GOLMPI_DEVICE_H
#define GOLMPI_DEVICE_H

#include <mpi.h>

/* Devices this process can use; 0 when there is no driver or no device. Never aborts: this is how
 * a machine without a GPU is told apart, so the error code is deliberately not checked. */
int device_count_unchecked(void);

/* Collective over comm: the rank's index among the ranks of its node. */
int device_local_rank(MPI_Comm comm);

/* Collective over comm: picks local rank modulo device count, makes it current and returns it.
 * Only call after backend_cuda_available said yes. */
int device_select(MPI_Comm comm);

/* 1 when the NCCL loaded accepts several ranks on one GPU and the user asked for it
 * (NCCL_MULTI_RANK_GPU_ENABLE=1, NCCL 2.30 or later); then --halo nccl may run on shared GPUs. */
int device_nccl_shares_gpus(void);

#endif
