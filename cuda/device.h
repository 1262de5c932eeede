/* Which GPU a rank drives: its rank among the ranks of its node, modulo the devices it can see.
 * That honours CUDA_VISIBLE_DEVICES, including Slurm's one GPU per task (every task sees device
 * 0, which is a different GPU for each). */
#ifndef GOLMPI_DEVICE_H
#define GOLMPI_DEVICE_H

#include <mpi.h>
#include <stddef.h>

#include "core/plan.h"

/* Devices this process can use; 0 when there is no driver or no device. Never aborts: this is how
 * a machine without a GPU is told apart, so the error code is deliberately not checked. */
int device_count_unchecked(void);

/* Collective over comm: the rank's index among the ranks of its node. */
int device_local_rank(MPI_Comm comm);

/* Collective over comm: picks local rank modulo device count, makes it current and returns it.
 * Only call after device_cuda_available said yes. */
int device_select(MPI_Comm comm);

/* For the start-up table: the GPU that device_select gives the rank with this local rank, as
 * "GPU <index>: <name>, PCI <bus id>", or why there is none. Not collective; never aborts. */
void device_describe(int local_rank, char *text, size_t len);

/* For --version and --stats: the CUDA runtime golmpi was built with and loaded, the driver's CUDA
 * version ("none (no driver)" without one) and the NCCL loaded, as "12.4" and "2.28.5". */
void device_versions(char *runtime, char *driver, char *nccl, size_t len);

/* Collective: 1 on every rank when every rank has a usable device, else 0; *why says what is missing. */
int device_cuda_available(MPI_Comm comm, char *why, size_t why_len);
/* Collective: 1 when the ranks on each node have distinct GPUs, so NCCL will accept them. */
int device_distinct_gpus(MPI_Comm comm);

/* 1 when an MPS control daemon on this node serves this process: its socket "control" in
 * CUDA_MPS_PIPE_DIRECTORY (default /tmp/nvidia-mps) accepts a connection within a second, as the
 * CUDA driver's does when a program starts, and belongs to this user (or root): core/gpu_share.h.
 * Not collective; never aborts. */
int device_mps_running(void);

/* Collective: how the ranks share GPUs (core/plan.h's gol_gpu_share): the ranks of each node whose
 * GPUs (picked as device_select picks them) have the same UUID share it (MIG slices of one GPU do
 * not: they report their parent's PCI bus id, but a UUID of their own); mps says whether
 * device_mps_running holds on every node where ranks share a GPU (on every node, where none do).
 * Returns 1 when every rank's GPU has a known UUID (0: some rank has none, so no GPU can be
 * called its own). */
int device_sharing(MPI_Comm comm, gol_gpu_share *share);

/* 1 when the NCCL loaded accepts several ranks on one GPU and the user asked for it
 * (NCCL_MULTI_RANK_GPU_ENABLE=1, NCCL 2.30 or later); then --halo nccl may run on shared GPUs. */
int device_nccl_shares_gpus(void);

#endif
