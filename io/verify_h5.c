/* Reading a written file back before it gets its final name (io/verify_h5.h). */
#include "io/verify_h5.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/check.h"
#include "io/h5_quiet.h"
#include "io/output_guard.h"

typedef struct why {
    char text[640];
} why;

/* ---- this rank's rows, read back as bytes -------------------------------------------------- */

static bool all_zero(const uint8_t *p, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        if (p[i]) return false;
    return true;
}

/* [off, end) of the file holds `want`, as far as holes tell: a hole reads as zeros, which is right
 * only where zeros were written. A file system that does not report holes reports none (Linux
 * then treats the whole file as data), and the sampled rows are all that is checked. */
static bool holes_are_zeros(int fd, off_t off, off_t end, off_t size, const uint8_t *want,
                            off_t *bad) {
    off_t pos = off;
    while (pos < end) {
        off_t hole = lseek(fd, pos, SEEK_HOLE);
        if (hole < 0 || hole >= end) return true;
        off_t data = lseek(fd, hole, SEEK_DATA);
        if (data < 0 || data > end) data = end < size ? end : size; /* ENXIO: a hole to EOF */
        if (data <= hole) data = end;
        if (!all_zero(want + (hole - off), (int64_t)(data - hole))) {
            *bad = hole;
            return false;
        }
        pos = data;
    }
    return true;
}

static bool row_reads_back(int fd, off_t at, const uint8_t *want, int64_t n) {
    uint8_t *got = gol_xmalloc((size_t)n);
    ssize_t r = pread(fd, got, (size_t)n, at);
    bool same = r == (ssize_t)n && memcmp(got, want, (size_t)n) == 0;
    free(got);
    return same;
}

static bool check_rows(const char *part, const io_meta *m, const gol_slab *slab, int64_t nframes,
                       const int64_t *gens, const uint8_t *frames_h, haddr_t offset, why *w) {
    if (slab->rows == 0) return true;
    if (offset == HADDR_UNDEF) {
        snprintf(w->text, sizeof w->text, "its /frames has no place in the file");
        return false;
    }
    int fd = open(part, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(w->text, sizeof w->text, "rank %d cannot open it again: %s", slab->rank,
                 strerror(errno));
        if (fd >= 0) close(fd);
        return false;
    }
    int64_t row = m->row_bytes, block = slab->rows * row;
    bool ok = true;
    for (int64_t f = 0; f < nframes && ok; f++) {
        off_t off = (off_t)(offset + (haddr_t)((f * m->height + slab->row0) * row));
        off_t end = off + (off_t)block, bad = 0;
        const uint8_t *want = frames_h + f * block;
        if (end > st.st_size)
            snprintf(w->text, sizeof w->text,
                     "rank %d's rows %lld-%lld of generation %lld lie past its end (%lld bytes)",
                     slab->rank, (long long)slab->row0, (long long)(slab->row0 + slab->rows - 1),
                     (long long)gens[f], (long long)st.st_size);
        else if (!holes_are_zeros(fd, off, end, st.st_size, want, &bad))
            snprintf(w->text, sizeof w->text,
                     "rank %d's rows %lld-%lld of generation %lld were never written (a hole at "
                     "byte %lld)",
                     slab->rank, (long long)slab->row0, (long long)(slab->row0 + slab->rows - 1),
                     (long long)gens[f], (long long)bad);
        else if ((f == 0 && !row_reads_back(fd, off, want, row)) ||
                 (f == nframes - 1 &&
                  !row_reads_back(fd, end - (off_t)row, want + block - row, row)))
            snprintf(w->text, sizeof w->text,
                     "rank %d's %s row of generation %lld does not read back as written",
                     slab->rank, f == 0 ? "first" : "last", (long long)gens[f]);
        else
            continue;
        ok = false;
    }
    close(fd);
    return ok;
}

/* ---- the file as HDF5 sees it (rank 0) ---------------------------------------------------- */

/* The dataset's extent, or -1 dimensions when it cannot be read. */
static int dataset_dims(hid_t file, const char *name, hsize_t *dims) {
    hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
    if (d < 0) return -1;
    hid_t space = H5Dget_space(d);
    int nd = space < 0 ? -1 : H5Sget_simple_extent_dims(space, dims, NULL);
    if (space >= 0) H5Sclose(space);
    H5Dclose(d);
    return nd;
}

static bool generations_match(hid_t file, int64_t n, const int64_t *gens) {
    hsize_t dims[1];
    if (dataset_dims(file, "generations", dims) != 1 || dims[0] != (hsize_t)n) return false;
    int64_t *got = gol_xmalloc((size_t)n * sizeof *got);
    hid_t d = H5Dopen2(file, "generations", H5P_DEFAULT);
    bool same = d >= 0 && H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, got) >= 0 &&
                memcmp(got, gens, (size_t)n * sizeof *got) == 0;
    if (d >= 0) H5Dclose(d);
    free(got);
    return same;
}

/* Opens, and /frames and /generations are as written. The file stays open in *file on success. */
static bool check_shape(const char *part, const io_meta *m, int64_t nframes, const int64_t *gens,
                        hid_t *file, why *w) {
    *file = H5Fopen(part, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (*file < 0) {
        snprintf(w->text, sizeof w->text, "it does not open as HDF5 (%s)", io_h5_cause());
        return false;
    }
    hsize_t dims[3];
    if (dataset_dims(*file, "frames", dims) != 3 || dims[0] != (hsize_t)nframes ||
        dims[1] != (hsize_t)m->height || dims[2] != (hsize_t)m->row_bytes)
        snprintf(w->text, sizeof w->text, "its /frames is not [%lld, %lld, %lld]",
                 (long long)nframes, (long long)m->height, (long long)m->row_bytes);
    else if (!generations_match(*file, nframes, gens))
        snprintf(w->text, sizeof w->text, "its /generations do not read back as written");
    else
        return true;
    H5Fclose(*file);
    return false;
}

/* ---- agreeing, and the message ------------------------------------------------------------- */

/* The lowest failing rank's reason, on every rank; "" when all is well. Collective over comm. */
static void agree(MPI_Comm comm, bool ok, why *w) {
    int rank, size, first;
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    MPI_CHECK(MPI_Comm_size(comm, &size));
    int mine = ok ? size : rank;
    MPI_CHECK(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm));
    if (first == size) {
        w->text[0] = '\0';
        return;
    }
    MPI_CHECK(MPI_Bcast(w->text, (int)sizeof w->text, MPI_CHAR, first, comm));
}

void verify_chunk(MPI_Comm comm, const char *part, const char *name, const io_meta *m,
                  const gol_slab *slab, int64_t nframes, const int64_t *gens, const void *frames_h,
                  haddr_t frames_offset) {
    why w = {""};
    bool ok = true;
    if (slab->rank == 0) {
        io_h5_quiet q = io_quiet_begin();
        hid_t file;
        ok = check_shape(part, m, nframes, gens, &file, &w);
        if (ok) H5Fclose(file);
        io_quiet_end(q);
    }
    if (ok) ok = check_rows(part, m, slab, nframes, gens, frames_h, frames_offset, &w);
    agree(comm, ok, &w);
    if (!w.text[0]) return;
    char msg[1536], space[128];
    io_free_space_note(part, space, sizeof space);
    snprintf(msg, sizeof msg,
             "cannot write the chunk file '%s': it does not read back as written: %s%s. It stays "
             "unfinished as '%s'; the index and the .xmf cover only the chunks finished before it",
             name, w.text, space, part);
    io_write_failed_all(comm, msg);
}

/* ---- the index ----------------------------------------------------------------------------- */

/* "%%" -> "%" (output_vds_source_name's escape); false on any other '%'. */
static bool unescape(const char *in, char *out, size_t len) {
    size_t n = 0;
    for (const char *c = in; *c && n + 1 < len; c++) {
        if (*c == '%' && *++c != '%') return false;
        out[n++] = *c;
    }
    out[n] = '\0';
    return true;
}

/* Every source of the virtual /frames is a finished chunk file next to the index. */
static bool sources_exist(hid_t file, const char *part, why *w) {
    hid_t d = H5Dopen2(file, "frames", H5P_DEFAULT);
    hid_t dcpl = d < 0 ? -1 : H5Dget_create_plist(d);
    size_t count = 0;
    bool ok = dcpl >= 0 && H5Pget_virtual_count(dcpl, &count) >= 0 && count > 0;
    if (!ok) snprintf(w->text, sizeof w->text, "its /frames is not a virtual dataset");
    char dir[GOL_PATH_MAX], src[GOL_PATH_MAX], plain[GOL_PATH_MAX], path[2 * GOL_PATH_MAX + 2];
    const char *name;
    path_split(part, dir, sizeof dir, &name);
    for (size_t i = 0; ok && i < count; i++) {
        struct stat st;
        ok = H5Pget_virtual_filename(dcpl, i, src, sizeof src) > 0 &&
             unescape(src, plain, sizeof plain);
        snprintf(path, sizeof path, "%s/%s", dir, plain);
        if (ok) ok = stat(path, &st) == 0 && S_ISREG(st.st_mode);
        if (!ok)
            snprintf(w->text, sizeof w->text,
                     "it names '%.500s', which is not a chunk file (a finished chunk deleted or "
                     "moved while the run went on?)",
                     src);
    }
    if (dcpl >= 0) H5Pclose(dcpl);
    if (d >= 0) H5Dclose(d);
    return ok;
}

void verify_index(const char *part, const io_meta *m, int64_t nframes, const int64_t *gens) {
    why w = {""};
    io_h5_quiet q = io_quiet_begin();
    hid_t file;
    bool ok = check_shape(part, m, nframes, gens, &file, &w);
    if (ok) {
        ok = sources_exist(file, part, &w);
        H5Fclose(file);
    }
    io_quiet_end(q);
    if (ok) return;
    /* io_write_failed adds the free space itself */
    io_write_failed(part, "it does not read back as written: %s", w.text);
}

void verify_sync(const char *part) {
    int fd = open(part, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fsync(fd) != 0) {
        int err = errno;
        io_write_failed(part, "fsync: %s", strerror(err));
    }
    close(fd);
}
