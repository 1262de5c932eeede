/* Restart from the last frame of a golmpi file, a chunk file or the index. The file is the
 * user's input, so whatever is wrong with it is a user error, said plainly: io/golfile reads and
 * judges it without HDF5 printing a thing.
 *
 * Every rank opens the file on its own with the serial sec2 driver. For the index, the frame is
 * read from the chunk file that the last mapping of the virtual dataset names: reading through the
 * virtual dataset would quietly return zeros if that chunk file were missing. */
#include "io/restart.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/check.h"
#include "io/golfile.h"

typedef struct probe_out {
    gol_restart_info info;
    golfile_meta meta;
    golfile_source src; /* where the last frame really lives */
} probe_out;

static void restart_info_from(const golfile_meta *m, gol_restart_info *info) {
    info->width = m->width;
    info->height = m->height;
    info->generation = m->last_generation;
    info->rule = m->rule;
    snprintf(info->rule_text, sizeof info->rule_text, "%s", m->rule_text);
    info->boundary = m->boundary;
    info->seed = m->seed;
    info->density = m->density;
}

/* The phases of a probe, each a user error when it fails: the file opens as HDF5; its attributes
 * and shapes describe a golmpi run; the last frame has a generation to go on from; and the bytes
 * of that frame can be found. */
static gol_status probe_open_file(const char *path, probe_out *p) {
    memset(p, 0, sizeof *p);
    golfile *g = golfile_open(path);
    if (!g) return gol_fail(GOL_EXIT_USAGE, "'%s' cannot be opened as an HDF5 file", path);
    gol_status st = golfile_read_meta(g, &p->meta);
    if (st.code == GOL_OK && p->meta.last_generation < 0)
        st = gol_fail(GOL_EXIT_USAGE, "'%s': negative generation %lld", path,
                      (long long)p->meta.last_generation);
    if (st.code == GOL_OK) st = golfile_locate_last_frame(g, p->meta.nframes, &p->src);
    if (st.code == GOL_OK) restart_info_from(&p->meta, &p->info);
    golfile_close(g);
    return st;
}

static gol_status probe(const char *path, probe_out *p) {
    if (access(path, R_OK) != 0)
        return gol_fail(GOL_EXIT_USAGE, "--restart: cannot read '%s': %s", path, strerror(errno));
    if (!golfile_is_hdf5(path))
        return gol_fail(GOL_EXIT_USAGE, "--restart: '%s' is not an HDF5 file", path);
    return probe_open_file(path, p);
}

gol_status restart_probe(const char *path, gol_restart_info *info) {
    probe_out p;
    gol_status st = probe(path, &p);
    if (st.code == GOL_OK) *info = p.info;
    return st;
}

/* Frame rows (u8 or packed bytes) into backend rows: cell x is bit x%64 of word x/64. */
static void pack_rows(const uint8_t *src, int64_t rows, int64_t width, int64_t row_bytes,
                      bool packed, int64_t nwords, uint64_t *dst) {
    uint64_t last_mask = gol_row_last_mask(width);
    for (int64_t y = 0; y < rows; y++) {
        const uint8_t *in = src + y * row_bytes;
        uint64_t *out = dst + y * nwords;
        for (int64_t w = 0; w < nwords; w++) {
            uint64_t word = 0;
            if (packed) {
                for (int64_t b = 0; b < 8 && w * 8 + b < row_bytes; b++)
                    word |= (uint64_t)in[w * 8 + b] << (8 * b);
            } else {
                int64_t x0 = w * 64, n = width - x0 < 64 ? width - x0 : 64;
                for (int64_t b = 0; b < n; b++)
                    word |= (uint64_t)(in[x0 + b] != 0) << b;
            }
            out[w] = word;
        }
        if (nwords > 0) out[nwords - 1] &= last_mask; /* padding bits are always 0 */
    }
}

/* This rank's rows of the last frame, from the file that really holds them, whose /frames must
 * still have the shape the probe found. */
static bool read_frame_rows(const probe_out *p, const gol_slab *slab, uint8_t *buf) {
    golfile *g = golfile_open(p->src.file);
    if (!g) return false;
    const golfile_facts *f = golfile_facts_of(g);
    bool ok = f->frames_ndims == 3 && f->frames_dims[1] == slab->height &&
              f->frames_dims[2] == p->meta.row_bytes &&
              golfile_read_rows(g, p->src.frame, slab->row0, slab->rows, buf);
    golfile_close(g);
    return ok;
}

gol_status restart_load_rows(const char *path, const gol_slab *slab, uint64_t *rows_h) {
    probe_out p;
    GOL_TRY(probe(path, &p));
    if (p.info.width != slab->width || p.info.height != slab->height)
        return gol_fail(GOL_EXIT_USAGE, "--restart: '%s' holds a %lld x %lld grid, not %lld x %lld",
                        path, (long long)p.info.width, (long long)p.info.height,
                        (long long)slab->width, (long long)slab->height);
    if (slab->rows == 0) return gol_ok();

    uint8_t *buf = gol_xmalloc((size_t)(slab->rows * p.meta.row_bytes));
    if (!read_frame_rows(&p, slab, buf)) {
        free(buf);
        return gol_fail(GOL_EXIT_USAGE, "--restart: cannot read frame %lld of '%s'",
                        (long long)p.src.frame, p.src.file);
    }
    pack_rows(buf, slab->rows, slab->width, p.meta.row_bytes, p.meta.packed, slab->nwords, rows_h);
    free(buf);
    return gol_ok();
}
