/* THE table of halo modes, and the calls that dispatch to a mode's ops. */
#include "halo/halo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "core/phase.h"
#include "halo/heartbeat.h"

extern const halo_ops halo_mpi_ops;        /* halo/halo_mpi.c */
extern const halo_ops halo_mpi_staged_ops; /* halo/halo_mpi_staged.c (CUDA builds) */
extern const halo_ops halo_nccl_ops;       /* halo/halo_nccl.c (CUDA builds) */
extern const halo_ops halo_none_ops;       /* halo/halo_none.c */

/* Device modes keep their line without CUDA, so --halo nccl is still a known name there and the
 * backend choice can say why it cannot be had. */
#ifdef GOLMPI_HAVE_CUDA
#define DEVICE_OPS(ops) (&(ops))
#else
#define DEVICE_OPS(ops) NULL
#endif

/* One line per mode; the first line of a name that fits the memory wins. */
static const halo_mode modes[] = {
    {"mpi", HALO_MEM_HOST, false, &halo_mpi_ops},
    {"mpi", HALO_MEM_DEVICE, false, DEVICE_OPS(halo_mpi_staged_ops)},
    {"nccl", HALO_MEM_DEVICE, false, DEVICE_OPS(halo_nccl_ops)},
    {"none", HALO_MEM_HOST | HALO_MEM_DEVICE, true, &halo_none_ops},
};
enum { NMODES = sizeof modes / sizeof *modes };

const halo_mode *halo_mode_find(const char *name, int mem) {
    for (int i = 0; i < NMODES; i++)
        if (strcmp(modes[i].name, name) == 0 && (modes[i].mem & mem) && modes[i].ops)
            return &modes[i];
    return NULL;
}

bool halo_mode_known(const char *name) {
    for (int i = 0; i < NMODES; i++)
        if (strcmp(modes[i].name, name) == 0) return true;
    return false;
}

void halo_mode_names(char *buf, size_t len, const char *sep) {
    size_t used = 0;
    if (len) buf[0] = '\0';
    for (int i = 0; i < NMODES; i++) {
        if (modes[i].hidden) continue;
        bool seen = false;
        for (int j = 0; j < i; j++)
            seen = seen || strcmp(modes[j].name, modes[i].name) == 0;
        if (seen) continue;
        int n = snprintf(buf + used, len - used, "%s%s", used ? sep : "", modes[i].name);
        if (n < 0 || (size_t)n >= len - used) return; /* truncated */
        used += (size_t)n;
    }
}

struct gol_halo {
    const halo_mode *mode;
    void *impl;
    int peers;        /* messages a post sends: one per neighbour that exists */
    int64_t messages; /* sent so far */
    int64_t posts;    /* exchanges posted so far */
    int up, down;     /* the neighbours (-1: none), for the loss halo_abort tells of */
    double timeout_s;
};

gol_halo *halo_create(const halo_mode *mode, const gol_slab *slab, int64_t depth, MPI_Comm comm,
                      void *stream, double timeout_s) {
    gol_halo *h = gol_xcalloc(1, sizeof *h);
    h->mode = mode;
    h->peers = (slab->up >= 0) + (slab->down >= 0);
    h->up = slab->up;
    h->down = slab->down;
    h->timeout_s = timeout_s;
    h->impl = mode->ops->create(slab, depth, comm, stream, timeout_s);
    return h;
}


void halo_post(gol_halo *h, const uint64_t *first, const uint64_t *last, uint64_t *top,
               uint64_t *bottom) {
    h->mode->ops->post(h->impl, first, last, top, bottom);
    h->messages += h->peers;
    h->posts++;
    if (h->mode->ops->posted) h->mode->ops->posted(h->impl, h->posts);
}

/* The host is in the exchange phase from here to its wait's end, as where it posts it itself
 * (the phase's deadline and the fault matrix's hold see a replayed exchange as an eager one). */
static void enter_exchange(const gol_halo *h) {
    gol_phase_enter(h->posts <= 1 ? GOL_PHASE_FIRST_EXCHANGE : GOL_PHASE_EXCHANGE, -1);
}

void halo_replayed(gol_halo *h) {
    h->posts++;
    if (h->mode->ops->posted) h->mode->ops->posted(h->impl, h->posts);
    enter_exchange(h);
    gol_phase_enter(GOL_PHASE_COMPUTE, -1);
}

void halo_wait(gol_halo *h) {
    enter_exchange(h);
    h->mode->ops->wait(h->impl);
    gol_phase_enter(GOL_PHASE_COMPUTE, -1);
}
double halo_seconds(const gol_halo *h) { return h->mode->ops->seconds(h->impl); }
int64_t halo_messages(const gol_halo *h) { return h->messages; }
bool halo_capturable(const gol_halo *h) { return h->mode->ops->capturable != 0; }
bool halo_sampled(const gol_halo *h) { return h->mode->ops->sampled != 0; }

void halo_poll(gol_halo *h) {
    if (h->mode->ops->poll) h->mode->ops->poll(h->impl);
}

/* The neighbour silent the longest, past the timeout, by its signs of life; -1: none is. */
static int silent_neighbour(gol_halo *h) {
    int lost = -1;
    double now = MPI_Wtime(), longest = h->timeout_s / 2; /* beats come every T/8 at most */
    const int peers[2] = {h->up, h->down};
    for (int i = 0; i < 2; i++) {
        double heard = halo_heard(h, peers[i]);
        if (peers[i] >= 0 && heard > 0 && now - heard > longest) {
            longest = now - heard;
            lost = peers[i];
        }
    }
    return lost;
}

void halo_abort(gol_halo *h) {
    /* before the teardown, which the others would see as NCCL's error */
    gol_tell_others(h ? silent_neighbour(h) : -1);
    if (h && h->mode->ops->abort) h->mode->ops->abort(h->impl);
}

double halo_heard(gol_halo *h, int peer) {
    return h && h->mode->ops->heard ? h->mode->ops->heard(h->impl, peer) : 0.0;
}

int64_t halo_least_posted(gol_halo *h) {
    return h && h->mode->ops->least_posted ? h->mode->ops->least_posted(h->impl) : -1;
}

int64_t halo_posts(const gol_halo *h) { return h ? h->posts : 0; }

void halo_destroy(gol_halo *h) {
    if (!h) return;
    h->mode->ops->destroy(h->impl);
    free(h);
}

const char *halo_peer_host(int peer) { return heartbeat_host(heartbeat_guard(), peer); }

void halo_name_neighbours(char *buf, size_t len, int up, int down) {
    if (up >= 0 && down >= 0 && up != down)
        snprintf(buf, len, "rank %d (above) or rank %d (below)", up, down);
    else if (up >= 0 && up == down)
        snprintf(buf, len, "rank %d (above and below)", up);
    else if (up >= 0)
        snprintf(buf, len, "rank %d (above)", up);
    else
        snprintf(buf, len, "rank %d (below)", down);
}
