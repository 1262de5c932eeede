#include "src/startup.h"

#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/check.h"
#ifdef GOLMPI_HAVE_CUDA
#include "cuda/device.h"
#endif

/* One rank's line, gathered as bytes: fixed sizes, so one MPI_Gather carries every rank. */
typedef struct rank_line {
    int rank, local;
    char host[64];
    char cores[128];  /* the CPUs this process may run on, as "0-3,8" */
    char device[160]; /* the GPU, for the CUDA backend */
    unsigned char mask[128]; /* the same CPUs as bits (CPUs 0..1023), to find shared cores */
    int bound;               /* 1: fewer CPUs than the host has online (a launcher bound it) */
} rank_line;

/* sched_getaffinity as a list of ranges, the form taskset and Slurm print, and as bits. */
static void affinity_text(char *text, size_t len, rank_line *me) {
    cpu_set_t set;
    text[0] = '\0';
    if (sched_getaffinity(0, sizeof set, &set) != 0) {
        snprintf(text, len, "unknown");
        return;
    }
    for (int c = 0; c < CPU_SETSIZE && c < (int)sizeof me->mask * 8; c++)
        if (CPU_ISSET(c, &set)) me->mask[c / 8] |= (unsigned char)(1u << (c % 8));
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    me->bound = online > 0 && CPU_COUNT(&set) < online;
    size_t used = 0;
    for (int c = 0; c < CPU_SETSIZE && used < len; c++) {
        if (!CPU_ISSET(c, &set)) continue;
        int last = c;
        while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set))
            last++;
        int n = last > c ? snprintf(text + used, len - used, "%s%d-%d", used ? "," : "", c, last)
                         : snprintf(text + used, len - used, "%s%d", used ? "," : "", c);
        used += n > 0 ? (size_t)n : 0;
        c = last;
    }
    if (used >= len && len > 4) snprintf(text + len - 4, 4, "..."); /* cut, and says so */
}

/* Collective over comm (it splits it by node). */
static void describe_self(gol_backend_kind backend, MPI_Comm comm, rank_line *me) {
    memset(me, 0, sizeof *me);
    MPI_Comm node;
    MPI_CHECK(MPI_Comm_rank(comm, &me->rank));
    MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_CHECK(MPI_Comm_rank(node, &me->local));
    MPI_CHECK(MPI_Comm_free(&node));
    if (gethostname(me->host, sizeof me->host - 1) != 0) snprintf(me->host, sizeof me->host, "?");
    affinity_text(me->cores, sizeof me->cores, me);
#ifdef GOLMPI_HAVE_CUDA
    if (backend == GOL_BACKEND_CUDA) device_describe(me->local, me->device, sizeof me->device);
#else
    (void)backend;
#endif
}

/* Two ranks of one host bound to the same core share it, and each runs at half speed or worse
 * (mpirun --bind-to core with more ranks than cores, a wrong srun --cpu-bind map): say so once,
 * naming the first such pair. Unbound ranks (the whole machine) are the scheduler's to place. */
static void warn_shared_cores(const rank_line *all, int nranks) {
    int pairs = 0, first_a = -1, first_b = -1;
    for (int a = 0; a < nranks; a++)
        for (int b = a + 1; b < nranks && all[a].bound; b++) {
            if (!all[b].bound || strcmp(all[a].host, all[b].host) != 0) continue;
            bool shared = false;
            for (size_t i = 0; i < sizeof all[a].mask && !shared; i++)
                shared = (all[a].mask[i] & all[b].mask[i]) != 0;
            if (!shared) continue;
            if (pairs++ == 0) first_a = a, first_b = b;
        }
    if (pairs)
        fprintf(stderr,
                "golmpi: warning: ranks %d and %d on host %s are bound to the same core(s) (%s and "
                "%s; %d such pair%s): they share them and run slower; check mpirun's --map-by and "
                "--bind-to, or srun's --cpu-bind\n",
                first_a, first_b, all[first_a].host, all[first_a].cores, all[first_b].cores, pairs,
                pairs == 1 ? "" : "s");
}

void startup_table(gol_backend_kind backend, const char *halo, MPI_Comm comm) {
    int rank, nranks;
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    MPI_CHECK(MPI_Comm_size(comm, &nranks));
    rank_line me, *all = NULL;
    describe_self(backend, comm, &me);
    if (rank == 0) all = gol_xmalloc((size_t)nranks * sizeof *all);
    MPI_CHECK(MPI_Gather(&me, (int)sizeof me, MPI_BYTE, all, (int)sizeof me, MPI_BYTE, 0, comm));
    if (rank != 0) return;
    int host_w = 4;
    for (int r = 0; r < nranks; r++) {
        int w = (int)strlen(all[r].host);
        if (w > host_w) host_w = w;
    }
    /* "Using devices" in nccl-tests' manner: one self-describing line a rank, easy to grep */
    printf("golmpi: using %d rank%s (%s halo)\n", nranks, nranks == 1 ? "" : "s", halo);
    for (int r = 0; r < nranks; r++) {
        const rank_line *l = &all[r];
        printf("  rank %4d  local %3d  host %-*s  backend %s  %s%scores %s\n", l->rank, l->local,
               host_w, l->host, config_backend_name(backend), l->device, l->device[0] ? "; " : "",
               l->cores);
    }
    fflush(stdout);
    warn_shared_cores(all, nranks);
    free(all);
}
