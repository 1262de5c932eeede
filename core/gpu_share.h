/* Ranks sharing a GPU, in host terms the tests can reach without one: whether an MPS control
 * daemon serves this process (its control socket, probed within a deadline), and how many ranks of
 * a node name the same GPU. cuda/device.c fills both from the CUDA runtime. */
#ifndef GOLMPI_GPU_SHARE_H
#define GOLMPI_GPU_SHARE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What the control socket <pipe_dir>/control says. */
typedef enum {
    GOL_MPS_NONE,       /* no socket, or one nobody listens on (a daemon that was killed) */
    GOL_MPS_OURS,       /* a live daemon that serves this process: ours, or root's (system-wide) */
    GOL_MPS_OTHER_USER, /* a live daemon of another user: its server cannot run our work */
    GOL_MPS_NO_ANSWER   /* a socket whose daemon accepts no connection within the deadline */
} gol_mps_state;

/* Probes <pipe_dir>/control as the CUDA driver does at a program's first call, but never for
 * longer than limit_s seconds: a non-blocking connect, retried while the daemon's queue is full.
 * The socket file's owner says whose daemon it is. Not collective; may be called before or after
 * MPI_Init (its wait uses gol_poll_every, which reads MPI_Wtime). */
gol_mps_state gol_mps_probe(const char *pipe_dir, double limit_s);
/* "none", "ours", "another user's", "not answering" */
const char *gol_mps_state_name(gol_mps_state s);

/* A GPU's key from its 16-byte UUID (cudaDeviceProp.uuid, which under MIG is the slice's own, as
 * the driver's cuDeviceGetUuid_v2 gives it): "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", every byte
 * in it; len >= 41. */
void gol_gpu_uuid_key(const unsigned char uuid[16], char *key, size_t len);

/* The ranks of a node that name the same GPU as rank `me`, itself included, from each rank's key
 * (keys: n strings of key_len bytes each, "" for a rank that has no GPU or could not name it).
 * The key must tell MIG slices apart (the device UUID; a slice reports its parent's PCI bus id).
 * *all_known: 0 when some rank's key is "" (no GPU can then be called anyone's own). */
int gol_gpu_sharers(const char *keys, int n, size_t key_len, int me, int *all_known);

#ifdef __cplusplus
}
#endif

#endif
