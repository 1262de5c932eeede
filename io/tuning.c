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

static const char *const transfer_names[] = {
    [IO_TRANSFER_COLLECTIVE] = "collective",
    [IO_TRANSFER_INDEPENDENT] = "independent",
    [IO_TRANSFER_DIRECT] = "direct",
};

const char *io_transfer_name(enum io_transfer t) { return transfer_names[t]; }

/* GOLMPI_IO_TRANSFER's value as a mode; -1 for auto, -2 for anything else. */
static int transfer_setting(void) {
    const char *v = env_or("GOLMPI_IO_TRANSFER", "auto");
    if (!strcmp(v, "auto")) return -1;
    for (int t = 0; t < (int)(sizeof transfer_names / sizeof *transfer_names); t++)
        if (!strcmp(v, transfer_names[t])) return t;
    return -2;
}

gol_status io_tuning_check(void) {
    if (transfer_setting() == -2)
        return gol_fail(GOL_EXIT_USAGE,
                        "GOLMPI_IO_TRANSFER='%s': expected auto, direct, independent or collective",
                        getenv("GOLMPI_IO_TRANSFER"));
    const char *w = env_or("GOLMPI_WRITER_CPUS", "auto");
    if (strcmp(w, "auto") && strcmp(w, "inherit"))
        return gol_fail(GOL_EXIT_USAGE, "GOLMPI_WRITER_CPUS='%s': expected auto or inherit", w);
    return gol_ok();
}

/* This rank's range of every frame starts and ends on IO_DIRECT_ALIGN: its first row, its row
 * count and the frame's stride (the frames follow each other in /frames) all are multiples. */
static bool range_aligned(const gol_slab *slab, int64_t row_bytes) {
    return (slab->row0 * row_bytes) % IO_DIRECT_ALIGN == 0 &&
           (slab->rows * row_bytes) % IO_DIRECT_ALIGN == 0 &&
           (slab->height * row_bytes) % IO_DIRECT_ALIGN == 0;
}

io_tuning io_tuning_choose(const gol_slab *slab, int64_t row_bytes, MPI_Comm comm) {
    io_tuning t = {IO_TRANSFER_COLLECTIVE, MPI_INFO_NULL};
    /* the smallest range of one frame that any rank writes (a rank without rows writes nothing),
     * and whether every rank's ranges are aligned for O_DIRECT (0 or 1, so the least is "all") */
    int64_t mine[2] = {slab->rows > 0 ? slab->rows * row_bytes : INT64_MAX,
                       range_aligned(slab, row_bytes)};
    int64_t least[2];
    MPI_CHECK(MPI_Allreduce(mine, least, 2, MPI_INT64_T, MPI_MIN, comm));
    int setting = transfer_setting();
    bool large = least[0] >= IO_INDEPENDENT_MIN_BYTES, aligned = least[1] == 1;
    if (setting >= 0)
        t.transfer = (enum io_transfer)setting;
    else if (large)
        t.transfer = aligned ? IO_TRANSFER_DIRECT : IO_TRANSFER_INDEPENDENT;
    /* asked for where the ranges do not allow it: the nearest thing, each rank its own range */
    if (t.transfer == IO_TRANSFER_DIRECT && !aligned) t.transfer = IO_TRANSFER_INDEPENDENT;
    /* ROMIO's data sieving would turn each rank's independent ranges into read-modify-write
     * cycles under a file lock; the ranges are whole rows, so it has nothing to gain. A user's
     * ROMIO_HINTS file is left to speak alone. */
    if (t.transfer != IO_TRANSFER_COLLECTIVE && !getenv("ROMIO_HINTS")) {
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
