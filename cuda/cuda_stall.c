#include "cuda/cuda_stall.h"

#include <stdio.h>

#include "halo/halo.h"

int cuda_stall_is_local(int rank, int up, int down, int exchange_on_stream) {
    return !exchange_on_stream || ((up < 0 || up == rank) && (down < 0 || down == rank));
}

void cuda_stall_message(char *buf, size_t len, int rank, int up, int down, int exchange_on_stream,
                        double waited_s, const char *what, int alive) {
    if (cuda_stall_is_local(rank, up, down, exchange_on_stream)) {
        snprintf(buf, len,
                 "the GPU made no progress for %.0f s (--timeout) while waiting for %s; no "
                 "neighbour is involved, so this rank's GPU itself stopped; aborting every rank",
                 waited_s, what);
        return;
    }
    char who[96];
    halo_name_neighbours(who, sizeof who, up, down);
    if (alive)
        snprintf(buf, len,
                 "the halo exchange made no progress for %.0f s (--timeout) while waiting for %s, "
                 "though neighbour %s still answers and every rank had posted the exchanges "
                 "waited for: a GPU (this rank's or a neighbour's) or NCCL's transport stopped; "
                 "aborting every rank",
                 waited_s, what, who);
    else
        snprintf(buf, len,
                 "the halo exchange made no progress for %.0f s (--timeout) while waiting for %s: "
                 "neighbour %s stopped answering (NCCL cannot tell which); aborting every rank",
                 waited_s, what, who);
}

void cuda_silent_message(char *buf, size_t len, int silent, const char *host, int up, int down,
                         double quiet_s, const char *what) {
    const char *where = up == down ? "above and below" : silent == up ? "above" : "below";
    snprintf(buf, len,
             "the halo exchange made no progress for %.0f s (--timeout) while waiting for %s, "
             "and rank %d (host %s, %s) sent no sign of life either: stopped answering; aborting "
             "every rank",
             quiet_s, what, silent, host, where);
}
