/* The read-back before a chunk's rename (io/verify_h5.c) against the damage that Open MPI's OMPIO
 * can leave on a full disk while every HDF5 call succeeds: a chunk is written for real
 * (chunk_h5_write), renamed back to a .part, damaged on rank 0, then verify_chunk runs on every
 * rank as it does inside chunk_h5_write.
 *   test_verify DIR CASE
 * CASE: ok, zero-hole (a hole where zeros were written: right, not damage) -> exit 0, "verified";
 *       hole, short, signature, byte -> every rank aborts with GOL_EXIT_OUTPUT and one message
 *       naming the file and the cause. tests/test_faults.py --part verify runs each case. */
#include <fcntl.h>
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/check.h"
#include "io/io_internal.h"
#include "io/output.h"
#include "io/verify_h5.h"

enum { WIDTH = 8192, ROWS_PER_RANK = 4, NFRAMES = 3 };

static gol_slab make_slab(int rank, int nranks) {
    gol_slab s;
    memset(&s, 0, sizeof s);
    s.width = WIDTH;
    s.height = (int64_t)ROWS_PER_RANK * nranks;
    s.rows = ROWS_PER_RANK;
    s.row0 = (int64_t)rank * ROWS_PER_RANK;
    s.nwords = WIDTH / 64;
    s.rank = rank;
    s.nranks = nranks;
    return s;
}

static haddr_t frames_offset(const char *path) {
    hid_t file, dset;
    H5_CHECK(file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT));
    H5_CHECK(dset = H5Dopen2(file, "frames", H5P_DEFAULT));
    haddr_t at = H5Dget_offset(dset);
    H5_CHECK(H5Dclose(dset));
    H5_CHECK(H5Fclose(file));
    return at;
}

/* The last rank's rows of frame `f` in the file. */
static void victim_region(const gol_slab *s, haddr_t at, int f, off_t *off, off_t *len) {
    int64_t row0 = (int64_t)(s->nranks - 1) * ROWS_PER_RANK;
    *off = (off_t)(at + (haddr_t)((f * s->height + row0) * WIDTH));
    *len = (off_t)ROWS_PER_RANK * WIDTH;
}

static void damage(const char *path, const char *how, const gol_slab *s, haddr_t at) {
    int fd = open(path, O_RDWR);
    SYS_CHECK(fd >= 0, path);
    off_t off, len;
    if (strcmp(how, "hole") == 0 || strcmp(how, "zero-hole") == 0) {
        victim_region(s, at, 1, &off, &len); /* neither the first nor the last frame: no sample */
        SYS_CHECK(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len) == 0,
                  "fallocate(PUNCH_HOLE)");
    } else if (strcmp(how, "short") == 0) {
        victim_region(s, at, NFRAMES - 1, &off, &len);
        SYS_CHECK(ftruncate(fd, off + len / 2) == 0, "ftruncate");
    } else if (strcmp(how, "signature") == 0) {
        SYS_CHECK(pwrite(fd, "\0\0\0\0\0\0\0\0", 8, 0) == 8, "pwrite");
    } else if (strcmp(how, "byte") == 0) {
        victim_region(s, at, NFRAMES - 1, &off, &len);
        unsigned char b;
        SYS_CHECK(pread(fd, &b, 1, off + len - 1) == 1, "pread");
        b ^= 1;
        SYS_CHECK(pwrite(fd, &b, 1, off + len - 1) == 1, "pwrite");
    }
    SYS_CHECK(close(fd) == 0, path);
}

int main(int argc, char **argv) {
    int provided, rank, nranks;
    MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argc != 3) {
        if (rank == 0)
            fprintf(stderr, "usage: %s DIR ok|zero-hole|hole|short|signature|byte\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    const char *dir = argv[1], *how = argv[2];
    gol_slab slab = make_slab(rank, nranks);
    io_meta m = {.boundary = "torus",
                 .encoding = IO_ENCODING_U8,
                 .width = WIDTH,
                 .height = slab.height,
                 .row_bytes = WIDTH,
                 .seed = 1,
                 .density = 0.5,
                 .ranks = nranks};
    snprintf(m.rule, sizeof m.rule, "B3/S23");
    int64_t gens[NFRAMES] = {0, 10, 20}, block = slab.rows * WIDTH;
    unsigned char *frames = gol_xmalloc((size_t)(NFRAMES * block));
    for (int64_t i = 0; i < NFRAMES * block; i++)
        frames[i] = (unsigned char)((i * 7 + rank) % 3 == 0);
    if (strcmp(how, "zero-hole") == 0 && rank == nranks - 1) memset(frames + block, 0, block);

    char name[GOL_PATH_MAX], part[GOL_PATH_MAX + 8], final[GOL_PATH_MAX + 8];
    snprintf(name, sizeof name, "%s/c.h5", dir);
    snprintf(final, sizeof final, "%s/d.h5", dir);
    snprintf(part, sizeof part, "%s/d.h5.part", dir);
    chunk_h5_write(MPI_COMM_WORLD, name, &m, &slab, NULL, NFRAMES, gens, frames, NULL);
    haddr_t at = 0;
    if (rank == 0) {
        SYS_CHECK(rename(name, part) == 0, "rename");
        at = frames_offset(part);
        damage(part, how, &slab, at);
    }
    MPI_CHECK(MPI_Bcast(&at, (int)sizeof at, MPI_BYTE, 0, MPI_COMM_WORLD));
    verify_chunk(MPI_COMM_WORLD, part, final, &m, &slab, NFRAMES, gens, frames, at);
    if (rank == 0) printf("verified\n");
    free(frames);
    MPI_Finalize();
    return 0;
}
