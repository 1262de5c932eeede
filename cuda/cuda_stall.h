/* What the CUDA watchdog says when the GPU stops making progress, and whether a stall involves a
 * neighbour. Plain C with no CUDA types, built in every configuration, so that
 * tests/test_cuda_choices.c checks it on machines without a GPU. */
#ifndef GOLMPI_CUDA_STALL_H
#define GOLMPI_CUDA_STALL_H

#include <stddef.h>

/* 1 when a stall of this rank's GPU involves no neighbour: the exchange is not in the GPU's
 * stream order (exchange_on_stream 0: host MPI), or the only neighbour is this rank itself (one
 * rank on a torus) or there is none. Then the watchdog tears no communicator down: NCCL's abort
 * frees memory and synchronises streams, and on a GPU that stopped it can block forever. */
int cuda_stall_is_local(int rank, int up, int down, int exchange_on_stream);

/* The watchdog's message, when the GPU made no progress for waited_s seconds (--timeout) while the
 * host waited for `what`. exchange_on_stream: the halo exchange runs in the GPU's stream order
 * (NCCL), so a stalled neighbour stalls the stream; up and down are its neighbours (-1: none) and
 * rank this rank. The rank that stopped cannot be told apart from inside the stream: the message
 * names both neighbours, or says that only this GPU is involved. alive: the heartbeat says both
 * neighbours still answer and every rank had posted the exchanges waited for, so no host is
 * behind: a GPU (this one or a neighbour's) or NCCL's transport stopped. */
void cuda_stall_message(char *buf, size_t len, int rank, int up, int down, int exchange_on_stream,
                        double waited_s, const char *what, int alive);
/* The watchdog's message when, the GPU making no progress, neighbour `silent` (up or down) also
 * sent no sign of life (heartbeat) for quiet_s seconds: it stopped answering. host: its host, for
 * the message (every rank's line names the lost rank and its host). */
void cuda_silent_message(char *buf, size_t len, int silent, const char *host, int up, int down,
                         double quiet_s, const char *what);

#endif
