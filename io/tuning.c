/* The writer's settings (io/tuning.h); the figures behind each default are in docs/PERFORMANCE.md,
 * Frames at disk speed. */
#include "io/tuning.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/check.h"

/* Below this many bytes of one frame on one rank, the ranks' ranges are small enough that
 * two-phase collective buffering (few, large writes by the aggregators) pays for its exchange;
 * above it each rank's range is already one large write, and the exchange is a copy of every byte
 * through the aggregators for nothing. */
#define IO_INDEPENDENT_MIN_BYTES ((int64_t)4 << 20)

static const char *env_or(const char *name, const char *dflt) {
    const char *v = getenv(name);
    return v && *v ? v : dflt;
}

static bool one_of(const char *v, const char *a, const char *b, const char *c) {
    return !strcmp(v, a) || !strcmp(v, b) || (c && !strcmp(v, c));
}

gol_status io_tuning_check(void) {
    const char *t = env_or("GOLMPI_IO_TRANSFER", "auto");
    if (!one_of(t, "auto", "independent", "collective"))
        return gol_fail(GOL_EXIT_USAGE,
                        "GOLMPI_IO_TRANSFER='%s': expected auto, independent or collective", t);
    const char *w = env_or("GOLMPI_WRITER_CPUS", "auto");
    if (!one_of(w, "auto", "inherit", NULL))
        return gol_fail(GOL_EXIT_USAGE, "GOLMPI_WRITER_CPUS='%s': expected auto or inherit", w);
    return gol_ok();
}

io_tuning io_tuning_choose(const gol_slab *slab, int64_t row_bytes, MPI_Comm comm) {
    io_tuning t = {false, MPI_INFO_NULL};
    /* the smallest range of one frame that any rank writes (a rank without rows writes nothing) */
    int64_t mine = slab->rows > 0 ? slab->rows * row_bytes : INT64_MAX, least = 0;
    MPI_CHECK(MPI_Allreduce(&mine, &least, 1, MPI_INT64_T, MPI_MIN, comm));
    const char *mode = env_or("GOLMPI_IO_TRANSFER", "auto");
    t.independent = !strcmp(mode, "independent") ||
                    (!strcmp(mode, "auto") && least >= IO_INDEPENDENT_MIN_BYTES);
    /* ROMIO's data sieving would turn each rank's independent ranges into read-modify-write
     * cycles under a file lock; the ranges are whole rows, so it has nothing to gain. A user's
     * ROMIO_HINTS file is left to speak alone. */
    if (t.independent && !getenv("ROMIO_HINTS")) {
        MPI_CHECK(MPI_Info_create(&t.info));
        MPI_CHECK(MPI_Info_set(t.info, "romio_ds_write", "disable"));
    }
    return t;
}

void io_tuning_free(io_tuning *t) {
    if (t->info != MPI_INFO_NULL) MPI_CHECK(MPI_Info_free(&t->info));
}

bool io_writer_cpus(MPI_Comm comm, void *set) {
    MPI_Comm node;
    MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    cpu_set_t mine, used;
    CPU_ZERO(&mine);
    /* this thread's mask is the rank's: the writer has not started, OpenMP threads inherit it */
    if (sched_getaffinity(0, sizeof mine, &mine) != 0) CPU_ZERO(&mine);
    MPI_CHECK(MPI_Allreduce(&mine, &used, (int)sizeof used, MPI_BYTE, MPI_BOR, node));
    MPI_CHECK(MPI_Comm_free(&node));
    if (!strcmp(env_or("GOLMPI_WRITER_CPUS", "auto"), "inherit")) return false;
    cpu_set_t free_cpus;
    CPU_ZERO(&free_cpus);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    for (long c = 0; c < online && c < CPU_SETSIZE; c++)
        if (!CPU_ISSET(c, &used)) CPU_SET(c, &free_cpus);
    if (CPU_COUNT(&free_cpus) == 0) return false;
    memcpy(set, &free_cpus, sizeof free_cpus);
    return true;
}
