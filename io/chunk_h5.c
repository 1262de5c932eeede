/* One chunk file, made by every rank together through parallel HDF5 (the file, its datasets, the
 * small ones written collectively); each frame's rows go the way io_tuning_choose chose: pwrite
 * with O_DIRECT at the dataset's offset (direct, the default for aligned ranges of 4 MiB and more,
 * as in the default 4-rank 16384^2 job), or an H5Dwrite through MPI-IO, independent or
 * collective (docs/DESIGN.md, Output). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/check.h"
#include "core/phase.h"
#include "io/io_internal.h"
#include "io/output_guard.h"
#include "io/verify_h5.h"

const char *io_basename(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* A sleep, not a poll (core/poll.h): the slow metadata work it plays waits on nothing. */
void io_debug_slow_meta(void) {
    const char *s = getenv("GOLMPI_DEBUG_SLOW_INDEX");
    double secs = s ? atof(s) : 0.0;
    if (!(secs > 0 && secs < 3600)) return;
    struct timespec ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

void io_rename(const char *from, const char *to) {
    gol_phase_enter(GOL_PHASE_RENAME, -1);
    char what[2 * GOL_PATH_MAX + 32];
    snprintf(what, sizeof what, "rename(\"%s\", \"%s\")", from, to);
    SYS_CHECK(rename(from, to) == 0, what);
}

/* Fixed-length, null-padded strings (as h5py writes them): they need no global heap, which keeps
 * collective metadata writes simple, and h5py reads them as bytes. */
void io_write_str_attr(hid_t loc, const char *name, const char *value) {
    hid_t type, space, attr;
    H5_CHECK(type = H5Tcopy(H5T_C_S1));
    H5_CHECK(H5Tset_size(type, strlen(value) > 0 ? strlen(value) : 1));
    H5_CHECK(H5Tset_strpad(type, H5T_STR_NULLPAD));
    H5_CHECK(space = H5Screate(H5S_SCALAR));
    H5_CHECK(attr = H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT));
    H5_CHECK(H5Awrite(attr, type, value));
    H5_CHECK(H5Aclose(attr));
    H5_CHECK(H5Sclose(space));
    H5_CHECK(H5Tclose(type));
}

static void write_scalar_attr(hid_t loc, const char *name, hid_t type, const void *value) {
    hid_t space, attr;
    H5_CHECK(space = H5Screate(H5S_SCALAR));
    H5_CHECK(attr = H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT));
    H5_CHECK(H5Awrite(attr, type, value));
    H5_CHECK(H5Aclose(attr));
    H5_CHECK(H5Sclose(space));
}

void io_write_root_attrs(hid_t loc, const io_meta *m) {
    io_write_str_attr(loc, "rule", m->rule);
    io_write_str_attr(loc, "boundary", m->boundary);
    write_scalar_attr(loc, "width", H5T_NATIVE_INT64, &m->width);
    write_scalar_attr(loc, "height", H5T_NATIVE_INT64, &m->height);
    write_scalar_attr(loc, "seed", H5T_NATIVE_UINT64, &m->seed);
    write_scalar_attr(loc, "density", H5T_NATIVE_DOUBLE, &m->density);
    io_write_str_attr(loc, "encoding", m->encoding);
    write_scalar_attr(loc, "ranks", H5T_NATIVE_INT32, &m->ranks);
    io_write_str_attr(loc, "version", GOLMPI_VERSION);
}

static hid_t create_file(MPI_Comm comm, const char *part, MPI_Info info) {
    hid_t fapl, file;
    H5_CHECK(fapl = H5Pcreate(H5P_FILE_ACCESS));
    H5_CHECK(H5Pset_fapl_mpio(fapl, comm, info));
    /* metadata read and written once, collectively, instead of by every rank on its own */
    H5_CHECK(H5Pset_all_coll_metadata_ops(fapl, 1));
    H5_CHECK(H5Pset_coll_metadata_write(fapl, 1));
    /* big objects (the frames) start on a stripe/block boundary; small metadata stays packed */
    H5_CHECK(H5Pset_alignment(fapl, (hsize_t)64 << 10, (hsize_t)1 << 20));
    H5_CHECK(file = H5Fcreate(part, H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    H5_CHECK(H5Pclose(fapl));
    return file;
}

/* Contiguous, allocated at creation (parallel HDF5 needs that for contiguous data) and never
 * filled: every byte is written once by its owner. */
static hid_t create_dataset(hid_t file, const char *name, hid_t type, int ndims,
                            const hsize_t *dims) {
    hid_t space, dcpl, dset;
    H5_CHECK(space = H5Screate_simple(ndims, dims, NULL));
    H5_CHECK(dcpl = H5Pcreate(H5P_DATASET_CREATE));
    H5_CHECK(H5Pset_layout(dcpl, H5D_CONTIGUOUS));
    H5_CHECK(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER));
    H5_CHECK(H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY));
    H5_CHECK(dset = H5Dcreate2(file, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    H5_CHECK(H5Pclose(dcpl));
    H5_CHECK(H5Sclose(space));
    return dset;
}

/* A rank with nothing to write still takes part in the collective call, with empty selections. */
static void select_nothing(hid_t dset, hid_t *fspace, hid_t *mspace) {
    hsize_t one = 1;
    H5_CHECK(*fspace = H5Dget_space(dset));
    H5_CHECK(H5Sselect_none(*fspace));
    H5_CHECK(*mspace = H5Screate_simple(1, &one, NULL));
    H5_CHECK(H5Sselect_none(*mspace));
}

/* /frames_2d/<f>: frame f of /frames as a 2-D [H, W] virtual dataset of this same file (".").
 * ParaView's default XDMF reader (Xdmf3) reads a named dataset whole but not a HyperSlab of one,
 * so the .xmf names these (DESIGN, XDMF). Metadata only, no data is copied. Rank 0 adds them
 * alone, to the closed file, through the serial driver: made collectively, each view cost a
 * collective metadata round, 10x the I/O time of a --save-every 1 run. */
static void add_frame_views(const char *part, int64_t nframes, const hsize_t *dims) {
    io_debug_slow_meta(); /* rank 0 alone, as the other ranks go on */
    hid_t file, group, vspace, sspace;
    H5_CHECK(file = H5Fopen(part, H5F_ACC_RDWR, H5P_DEFAULT));
    H5_CHECK(group = H5Gcreate2(file, "frames_2d", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    H5_CHECK(vspace = H5Screate_simple(2, dims + 1, NULL));
    H5_CHECK(sspace = H5Screate_simple(3, dims, NULL));
    for (int64_t f = 0; f < nframes; f++) {
        hsize_t start[3] = {(hsize_t)f, 0, 0}, count[3] = {1, dims[1], dims[2]};
        H5_CHECK(H5Sselect_hyperslab(sspace, H5S_SELECT_SET, start, NULL, count, NULL));
        hid_t dcpl, dset;
        H5_CHECK(dcpl = H5Pcreate(H5P_DATASET_CREATE));
        H5_CHECK(H5Pset_virtual(dcpl, vspace, ".", "/frames", sspace));
        char name[24];
        snprintf(name, sizeof name, "%lld", (long long)f);
        H5_CHECK(dset = H5Dcreate2(group, name, H5T_NATIVE_UINT8, vspace, H5P_DEFAULT, dcpl,
                                   H5P_DEFAULT));
        H5_CHECK(H5Dclose(dset));
        H5_CHECK(H5Pclose(dcpl));
    }
    H5_CHECK(H5Sclose(sspace));
    H5_CHECK(H5Sclose(vspace));
    H5_CHECK(H5Gclose(group));
    H5_CHECK(H5Fclose(file));
}

/* Live cells of each of this rank's frames, from the bytes about to be written: exact, and cheap
 * beside the write of the same bytes. u8 cells are 0 or 1, so a row's sum is its count. A packed
 * row's last byte is masked to the width: its padding bits are 0 by construction (DESIGN,
 * Representation; tests/test_stats.py checks the frames), and the mask keeps a stray one from
 * ever counting as a cell. */
/* Set bits in bytes [0, n) of p, eight bytes at a time (a byte at a time ran at 0.3 GB/s). The
 * clones give the popcnt instruction (and AVX-512's vector popcount where the compiler finds it):
 * the base x86-64 form counts in about 12 instructions a word, and this runs on the writer
 * thread over every byte of every u8 frame (docs/PERFORMANCE.md, Frames at disk speed). */
__attribute__((target_clones("arch=x86-64-v4", "popcnt", "default"))) static int64_t
popcount_bytes(const uint8_t *p, int64_t n) {
    int64_t count = 0, i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, sizeof w);
        count += __builtin_popcountll(w);
    }
    for (; i < n; i++) count += __builtin_popcount(p[i]);
    return count;
}

static void count_live_cells(const io_meta *m, const gol_slab *slab, int64_t nframes,
                             const void *frames_h, int64_t *live) {
    const uint8_t *p = frames_h;
    int packed = strcmp(m->encoding, IO_ENCODING_PACKED) == 0;
    int tail_bits = (int)(m->width % 8);
    uint8_t last_mask = packed && tail_bits ? (uint8_t)((1u << tail_bits) - 1) : 0xff;
    for (int64_t f = 0; f < nframes; f++) {
        int64_t n = 0;
        for (int64_t r = 0; r < slab->rows; r++, p += m->row_bytes) {
            if (!packed) { /* cells are bytes of 0 or 1: their set bits are their sum */
                n += popcount_bytes(p, m->row_bytes);
                continue;
            }
            n += popcount_bytes(p, m->row_bytes - 1);
            n += __builtin_popcount((unsigned)(p[m->row_bytes - 1] & last_mask));
        }
        live[f] = n;
    }
}

/* /population: the live cells of each frame (live: this rank's), all ranks together (the sum goes
 * to rank 0, which writes it; the others join the collective write with nothing). pop_out gets the
 * sums on rank 0. */
static void write_population(hid_t file, MPI_Comm comm, hid_t dxpl, const gol_slab *slab,
                             int64_t nframes, int64_t *live, int64_t *pop_out) {
    MPI_CHECK(MPI_Reduce(slab->rank == 0 ? MPI_IN_PLACE : live, live, (int)nframes, MPI_INT64_T,
                         MPI_SUM, 0, comm));
    hsize_t n = (hsize_t)nframes;
    hid_t dset = create_dataset(file, "population", H5T_NATIVE_INT64, 1, &n), fspace, mspace;
    if (slab->rank == 0) {
        H5_CHECK(fspace = H5Dget_space(dset));
        H5_CHECK(H5Sselect_all(fspace));
        H5_CHECK(mspace = H5Screate_simple(1, &n, NULL));
    } else {
        select_nothing(dset, &fspace, &mspace);
    }
    H5_CHECK(H5Dwrite(dset, H5T_NATIVE_INT64, mspace, fspace, dxpl, live));
    H5_CHECK(H5Sclose(mspace));
    H5_CHECK(H5Sclose(fspace));
    H5_CHECK(H5Dclose(dset));
    if (slab->rank == 0 && pop_out) memcpy(pop_out, live, (size_t)nframes * sizeof *live);
}

/* A chunk file between its creation and its last frame: /frames exists, allocated for every
 * frame, and each frame is written as it comes, so the writer works while the next frame is
 * computed instead of waiting for the chunk's last (DESIGN, Output). */
struct chunk_h5 {
    MPI_Comm comm;
    char part[GOL_PATH_MAX + 16];
    io_meta meta;
    gol_slab slab;
    int64_t nframes, written;
    hid_t file, frames, dxpl; /* dxpl: the frames' transfer mode */
    hsize_t dims[3];
    int collective; /* 1 while every frame write went collective */
    int direct;     /* 1 while every frame write went direct */
    int direct_fd;  /* the file opened with O_DIRECT, or -1: the frames go by H5Dwrite */
    haddr_t frames_at; /* /frames' offset in the file (allocated at creation), for the direct
                        * writes and the read-back */
    int64_t *live;  /* this rank's live cells of each frame written */
};

/* The direct path's file descriptor, where the tuning asks for it and the file allows it: /frames
 * must start aligned (H5Pset_alignment starts objects of 64 KiB and more on 1 MiB), and the file
 * system must take O_DIRECT (an older tmpfs refuses it with EINVAL). Otherwise -1, and the frames
 * go by independent MPI-IO: the same bytes at the same place. */
static int open_direct(chunk_h5 *c, const io_tuning *t) {
    if (!t || t->transfer != IO_TRANSFER_DIRECT || c->slab.rows == 0) return -1;
    if (c->frames_at == HADDR_UNDEF || c->frames_at % IO_DIRECT_ALIGN != 0) return -1;
    return open(c->part, O_WRONLY | O_DIRECT | O_CLOEXEC);
}

chunk_h5 *chunk_h5_create(MPI_Comm comm, const char *name, const io_meta *m, const gol_slab *slab,
                          const io_tuning *t, int64_t nframes) {
    chunk_h5 *c = gol_xcalloc(1, sizeof *c);
    c->comm = comm;
    snprintf(c->part, sizeof c->part, "%s.part", name);
    c->meta = *m;
    c->slab = *slab;
    c->nframes = nframes;
    c->collective = 1;
    c->direct = 1;
    c->live = gol_xcalloc((size_t)nframes, sizeof *c->live);
    c->file = create_file(comm, c->part, t ? t->info : MPI_INFO_NULL);
    io_write_root_attrs(c->file, m);
    c->dims[0] = (hsize_t)nframes;
    c->dims[1] = (hsize_t)m->height;
    c->dims[2] = (hsize_t)m->row_bytes;
    /* the frames alone may go independently: the small datasets stay collective, so rank 0's
     * values and the others' empty selections make one call */
    H5_CHECK(c->dxpl = H5Pcreate(H5P_DATASET_XFER));
    bool shared = !t || t->transfer == IO_TRANSFER_COLLECTIVE;
    H5_CHECK(H5Pset_dxpl_mpio(c->dxpl, shared ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT));
    /* memory type == file type, or HDF5 quietly drops to independent I/O */
    c->frames = create_dataset(c->file, "frames", H5T_NATIVE_UINT8, 3, c->dims);
    if (strcmp(m->encoding, IO_ENCODING_PACKED) == 0)
        io_write_str_attr(c->frames, "encoding", IO_ENCODING_PACKED);
    c->frames_at = H5Dget_offset(c->frames);
    c->direct_fd = open_direct(c, t);
    return c;
}

static void close_direct(chunk_h5 *c) {
    if (c->direct_fd < 0) return;
    IO_SYS_CHECK(c->part, close(c->direct_fd) == 0);
    c->direct_fd = -1;
}

/* This rank's rows of frame `written` with O_DIRECT, from frame_h to the disk. False, with
 * nothing written, where frame_h is not aligned or the first write is refused as unaligned
 * (EINVAL: a device whose blocks are larger than a page): the caller writes it by MPI-IO. A write
 * the disk refuses otherwise (ENOSPC, EIO) ends the run as any failed write does. */
static bool write_direct(chunk_h5 *c, const void *frame_h) {
    if ((uintptr_t)frame_h % IO_DIRECT_ALIGN != 0) return false;
    const char *p = frame_h;
    int64_t left = c->slab.rows * c->meta.row_bytes;
    int64_t at =
        (int64_t)c->frames_at + (c->written * c->meta.height + c->slab.row0) * c->meta.row_bytes;
    bool first = true;
    while (left > 0) {
        ssize_t n = pwrite(c->direct_fd, p, (size_t)left, (off_t)at);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EINVAL && first) return false;
        if (n == 0) errno = ENOSPC; /* no progress: the only cause a regular file has */
        IO_SYS_CHECK(c->part, n > 0);
        first = false;
        p += n;
        at += n;
        left -= n;
    }
    return true;
}

/* Frame `written`: this rank's rows, one hyperslab, one call, straight from frame_h; its live
 * cells are counted from the same bytes first. */
void chunk_h5_write_frame(chunk_h5 *c, const void *frame_h) {
    if (c->written >= c->nframes)
        gol_die(__FILE__, __LINE__, "chunk_h5_write_frame", "golmpi", "more frames than the chunk");
    if (c->slab.rows > 0) count_live_cells(&c->meta, &c->slab, 1, frame_h, &c->live[c->written]);
    if (c->direct_fd >= 0) {
        if (write_direct(c, frame_h)) {
            c->collective = 0;
            c->written++;
            return;
        }
        close_direct(c); /* refused once: the rest of the file by MPI-IO */
    }
    if (c->slab.rows > 0) c->direct = 0; /* a rank without rows writes nothing either way */
    hid_t fspace, mspace;
    if (c->slab.rows > 0) {
        hsize_t start[3] = {(hsize_t)c->written, (hsize_t)c->slab.row0, 0};
        hsize_t count[3] = {1, (hsize_t)c->slab.rows, c->dims[2]};
        H5_CHECK(fspace = H5Dget_space(c->frames));
        H5_CHECK(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL));
        H5_CHECK(mspace = H5Screate_simple(3, count, NULL));
    } else {
        select_nothing(c->frames, &fspace, &mspace);
    }
    IO_WRITE_CHECK(c->part,
                   H5Dwrite(c->frames, H5T_NATIVE_UINT8, mspace, fspace, c->dxpl, frame_h));
    H5D_mpio_actual_io_mode_t mode = H5D_MPIO_NO_COLLECTIVE;
    H5_CHECK(H5Pget_mpio_actual_io_mode(c->dxpl, &mode));
    if (mode == H5D_MPIO_NO_COLLECTIVE) c->collective = 0;
    H5_CHECK(H5Sclose(mspace));
    H5_CHECK(H5Sclose(fspace));
    c->written++;
}

/* How this rank's frames of the file went: a mode only where every one went that way. */
static enum io_transfer chunk_transfer(const chunk_h5 *c) {
    if (c->collective) return IO_TRANSFER_COLLECTIVE;
    return c->direct ? IO_TRANSFER_DIRECT : IO_TRANSFER_INDEPENDENT;
}

/* The rest of the file once its frames are in, then the read-back and the rename. */
enum io_transfer chunk_h5_finish(chunk_h5 *c, const char *name, const int64_t *gens,
                                 const void *frames_h, int64_t *pop_out) {
    if (c->written != c->nframes)
        gol_die(__FILE__, __LINE__, "chunk_h5_finish", "golmpi", "a chunk finished short");
    const gol_slab *slab = &c->slab;
    close_direct(c); /* past the page cache; H5Fflush's fsync makes it and the metadata durable */
    H5_CHECK(H5Dclose(c->frames));
    H5_CHECK(H5Pclose(c->dxpl));
    hid_t dxpl, fspace, mspace;
    H5_CHECK(dxpl = H5Pcreate(H5P_DATASET_XFER));
    H5_CHECK(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE));
    /* /generations: rank 0 holds the values, the others join with nothing */
    hsize_t ngen = (hsize_t)c->nframes;
    hid_t gdset = create_dataset(c->file, "generations", H5T_NATIVE_INT64, 1, &ngen);
    if (slab->rank == 0) {
        H5_CHECK(fspace = H5Dget_space(gdset));
        H5_CHECK(H5Sselect_all(fspace));
        H5_CHECK(mspace = H5Screate_simple(1, &ngen, NULL));
    } else {
        select_nothing(gdset, &fspace, &mspace);
    }
    IO_WRITE_CHECK(c->part, H5Dwrite(gdset, H5T_NATIVE_INT64, mspace, fspace, dxpl, gens));
    H5_CHECK(H5Sclose(mspace));
    H5_CHECK(H5Sclose(fspace));
    H5_CHECK(H5Dclose(gdset));
    write_population(c->file, c->comm, dxpl, slab, c->nframes, c->live, pop_out);
    H5_CHECK(H5Pclose(dxpl));
    /* MPI_File_sync on every rank: a write the file system took but could not keep fails here */
    IO_WRITE_CHECK(c->part, H5Fflush(c->file, H5F_SCOPE_GLOBAL));
    IO_WRITE_CHECK(c->part, H5Fclose(c->file));

    /* renamed only once closed everywhere and read back, so no reader ever sees half a file */
    verify_chunk(c->comm, c->part, name, &c->meta, slab, c->nframes, gens, frames_h, c->frames_at);
    if (slab->rank == 0) {
        add_frame_views(c->part, c->nframes, c->dims);
        verify_sync(c->part);
        io_rename(c->part, name);
    }
    enum io_transfer how = chunk_transfer(c);
    free(c->live);
    free(c);
    return how;
}

void chunk_h5_abandon(chunk_h5 *c) {
    close_direct(c);
    H5_CHECK(H5Dclose(c->frames));
    H5_CHECK(H5Pclose(c->dxpl));
    IO_WRITE_CHECK(c->part, H5Fclose(c->file));
    char what[GOL_PATH_MAX + 32];
    snprintf(what, sizeof what, "unlink(\"%s\")", c->part);
    if (c->slab.rank == 0) SYS_CHECK(unlink(c->part) == 0 || errno == ENOENT, what);
    free(c->live);
    free(c);
}

enum io_transfer chunk_h5_write(MPI_Comm comm, const char *name, const io_meta *m,
                                const gol_slab *slab, const io_tuning *t, int64_t nframes,
                                const int64_t *gens, const void *frames_h, int64_t *pop_out) {
    chunk_h5 *c = chunk_h5_create(comm, name, m, slab, t, nframes);
    int64_t frame_bytes = slab->rows * m->row_bytes;
    for (int64_t f = 0; f < nframes; f++)
        chunk_h5_write_frame(c, (const uint8_t *)frames_h + f * frame_bytes);
    return chunk_h5_finish(c, name, gens, frames_h, pop_out);
}
