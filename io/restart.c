/* Restart from the last frame of a golmpi file, a chunk file or the index. The file is the
 * user's input, so whatever is wrong with it is a user error, said plainly, never an HDF5 stack
 * dump: HDF5's own error printing is off for the whole probe and load.
 *
 * Every rank opens the file on its own with the serial sec2 driver. For the index, the frame is
 * read from the chunk file that the last mapping of the virtual dataset names: reading through the
 * virtual dataset would quietly return zeros if that chunk file were missing. */
#include "io/restart.h"

#include <errno.h>
#include <hdf5.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/io_internal.h"
#include "core/check.h"
#include "core/rule.h"

/* HDF5 calls whose failure means a bad input file: no abort, just a false. */
#define H5_OK(call) ((long long)(call) >= 0)

typedef struct h5_quiet {
    H5E_auto2_t func;
    void *data;
} h5_quiet;

static h5_quiet quiet_begin(void) {
    h5_quiet q;
    H5_CHECK(H5Eget_auto2(H5E_DEFAULT, &q.func, &q.data));
    H5_CHECK(H5Eset_auto2(H5E_DEFAULT, NULL, NULL));
    return q;
}

static void quiet_end(h5_quiet q) { H5_CHECK(H5Eset_auto2(H5E_DEFAULT, q.func, q.data)); }

static bool read_num_attr(hid_t loc, const char *name, hid_t mem_type, void *value) {
    if (H5Aexists(loc, name) <= 0) return false;
    hid_t attr = H5Aopen(loc, name, H5P_DEFAULT);
    if (attr < 0) return false;
    bool ok = false;
    hid_t type = H5Aget_type(attr);
    hid_t space = H5Aget_space(attr);
    H5T_class_t want = H5Tget_class(mem_type);
    if (type >= 0 && space >= 0 && H5Tget_class(type) == want &&
        H5Sget_simple_extent_npoints(space) == 1)
        ok = H5_OK(H5Aread(attr, mem_type, value));
    if (space >= 0) H5Sclose(space);
    if (type >= 0) H5Tclose(type);
    H5Aclose(attr);
    return ok;
}

/* Fixed or variable length: golmpi writes fixed, but another tool may have rewritten the file. */
static bool read_str_attr(hid_t loc, const char *name, char *out, size_t len) {
    if (H5Aexists(loc, name) <= 0) return false;
    hid_t attr = H5Aopen(loc, name, H5P_DEFAULT);
    if (attr < 0) return false;
    bool ok = false;
    hid_t type = H5Aget_type(attr);
    if (type >= 0 && H5Tget_class(type) == H5T_STRING) {
        if (H5Tis_variable_str(type) > 0) {
            char *s = NULL;
            hid_t mem = H5Tcopy(H5T_C_S1);
            if (mem >= 0 && H5_OK(H5Tset_size(mem, H5T_VARIABLE)) &&
                H5_OK(H5Aread(attr, mem, &s)) && s) {
                snprintf(out, len, "%s", s);
                ok = true;
            }
            if (s) H5free_memory(s);
            if (mem >= 0) H5Tclose(mem);
        } else {
            size_t n = H5Tget_size(type);
            char *buf = calloc(n + 1, 1);
            if (buf && H5_OK(H5Aread(attr, type, buf))) {
                snprintf(out, len, "%s", buf);
                ok = true;
            }
            free(buf);
        }
    }
    if (type >= 0) H5Tclose(type);
    H5Aclose(attr);
    return ok;
}

/* Where the last frame of `path` lives: the file, and the frame's index in its /frames. */
typedef struct frame_src {
    char file[GOL_PATH_MAX + 64];
    int64_t frame;
} frame_src;

typedef struct probe_out {
    gol_restart_info info;
    int64_t row_bytes;
    bool packed;
    frame_src src;
} probe_out;

static gol_status locate_last_frame(hid_t file, const char *path, int64_t nframes, frame_src *src) {
    snprintf(src->file, sizeof src->file, "%s", path);
    src->frame = nframes - 1;
    hid_t dset = H5Dopen2(file, "frames", H5P_DEFAULT);
    if (dset < 0) return gol_fail(GOL_EXIT_USAGE, "'%s' has no /frames dataset", path);
    gol_status st = gol_ok();
    hid_t dcpl = H5Dget_create_plist(dset);
    if (dcpl >= 0 && H5Pget_layout(dcpl) == H5D_VIRTUAL) {
        size_t count = 0;
        st = gol_fail(GOL_EXIT_USAGE, "'%s': /frames is a virtual dataset that maps no frame %lld",
                      path, (long long)(nframes - 1));
        if (H5_OK(H5Pget_virtual_count(dcpl, &count))) {
            for (size_t i = 0; i < count; i++) {
                hid_t vs = H5Pget_virtual_vspace(dcpl, i);
                hsize_t lo[3], hi[3];
                bool hit = vs >= 0 && H5Sget_simple_extent_ndims(vs) == 3 &&
                           H5_OK(H5Sget_select_bounds(vs, lo, hi)) &&
                           (int64_t)lo[0] <= nframes - 1 && (int64_t)hi[0] >= nframes - 1;
                if (vs >= 0) H5Sclose(vs);
                if (!hit) continue;
                char name[GOL_PATH_MAX];
                if (H5Pget_virtual_filename(dcpl, i, name, sizeof name) < 0) break;
                if (name[0] == '/' || strchr(path, '/') == NULL) {
                    snprintf(src->file, sizeof src->file, "%s", name);
                } else { /* relative names are next to the index */
                    const char *slash = strrchr(path, '/');
                    snprintf(src->file, sizeof src->file, "%.*s/%s", (int)(slash - path), path,
                             name);
                }
                src->frame = nframes - 1 - (int64_t)lo[0];
                if (access(src->file, R_OK) != 0)
                    st = gol_fail(GOL_EXIT_USAGE,
                                  "'%s' takes its last frame from '%s', which cannot be read (%s)",
                                  path, src->file, strerror(errno));
                else
                    st = gol_ok();
                break;
            }
        }
    }
    if (dcpl >= 0) H5Pclose(dcpl);
    H5Dclose(dset);
    return st;
}

static gol_status probe_open_file(const char *path, probe_out *p) {
    memset(p, 0, sizeof *p);
    gol_restart_info *info = &p->info;
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file < 0) return gol_fail(GOL_EXIT_USAGE, "'%s' cannot be opened as an HDF5 file", path);

    char rule[64] = "", boundary[32] = "", encoding[32] = "";
    gol_status st = gol_ok();
    if (!read_num_attr(file, "width", H5T_NATIVE_INT64, &info->width) ||
        !read_num_attr(file, "height", H5T_NATIVE_INT64, &info->height) ||
        !read_num_attr(file, "seed", H5T_NATIVE_UINT64, &info->seed) ||
        !read_num_attr(file, "density", H5T_NATIVE_DOUBLE, &info->density) ||
        !read_str_attr(file, "rule", rule, sizeof rule) ||
        !read_str_attr(file, "boundary", boundary, sizeof boundary) ||
        !read_str_attr(file, "encoding", encoding, sizeof encoding)) {
        st = gol_fail(GOL_EXIT_USAGE,
                      "'%s' is not a golmpi output file (it lacks the width, height, seed, "
                      "density, rule, boundary or encoding attribute)",
                      path);
        goto out;
    }
    if (info->width <= 0 || info->height <= 0) {
        st = gol_fail(GOL_EXIT_USAGE, "'%s': bad grid size %lld x %lld", path,
                      (long long)info->width, (long long)info->height);
        goto out;
    }
    st = rule_parse(rule, &info->rule, info->rule_text, sizeof info->rule_text);
    if (st.code != GOL_OK) {
        st = gol_fail(GOL_EXIT_USAGE, "'%s': bad rule attribute: %s", path, st.msg);
        goto out;
    }
    if (strcmp(boundary, "torus") == 0) {
        info->boundary = GOL_BOUNDARY_TORUS;
    } else if (strcmp(boundary, "dead") == 0) {
        info->boundary = GOL_BOUNDARY_DEAD;
    } else {
        st = gol_fail(GOL_EXIT_USAGE, "'%s': unknown boundary '%s'", path, boundary);
        goto out;
    }
    if (strcmp(encoding, IO_ENCODING_U8) == 0) {
        p->packed = false;
    } else if (strcmp(encoding, IO_ENCODING_PACKED) == 0) {
        p->packed = true;
    } else {
        st = gol_fail(GOL_EXIT_USAGE, "'%s': unknown frame encoding '%s'", path, encoding);
        goto out;
    }
    p->row_bytes = p->packed ? (info->width + 7) / 8 : info->width;

    /* the shapes must agree with the attributes, or the frame would be misread */
    hid_t gset = H5Dopen2(file, "generations", H5P_DEFAULT), fset = -1;
    hsize_t gdims[1] = {0}, fdims[3] = {0, 0, 0};
    bool shapes_ok = false;
    if (gset >= 0 && (fset = H5Dopen2(file, "frames", H5P_DEFAULT)) >= 0) {
        hid_t gs = H5Dget_space(gset), fs = H5Dget_space(fset);
        shapes_ok = gs >= 0 && fs >= 0 && H5Sget_simple_extent_ndims(gs) == 1 &&
                    H5Sget_simple_extent_ndims(fs) == 3 &&
                    H5Sget_simple_extent_dims(gs, gdims, NULL) == 1 &&
                    H5Sget_simple_extent_dims(fs, fdims, NULL) == 3 && gdims[0] == fdims[0] &&
                    (int64_t)fdims[1] == info->height && (int64_t)fdims[2] == p->row_bytes;
        if (shapes_ok && gdims[0] > 0) {
            hsize_t last = gdims[0] - 1, one = 1;
            hid_t ms = H5Screate_simple(1, &one, NULL);
            shapes_ok =
                ms >= 0 &&
                H5_OK(H5Sselect_hyperslab(gs, H5S_SELECT_SET, &last, NULL, &one, NULL)) &&
                H5_OK(H5Dread(gset, H5T_NATIVE_INT64, ms, gs, H5P_DEFAULT, &info->generation));
            if (ms >= 0) H5Sclose(ms);
        }
        if (gs >= 0) H5Sclose(gs);
        if (fs >= 0) H5Sclose(fs);
    }
    if (fset >= 0) H5Dclose(fset);
    if (gset >= 0) H5Dclose(gset);
    if (!shapes_ok) {
        st = gol_fail(GOL_EXIT_USAGE,
                      "'%s' is not a golmpi output file (/frames or /generations is missing or "
                      "does not match its %lld x %lld %s grid)",
                      path, (long long)info->width, (long long)info->height, encoding);
        goto out;
    }
    if (gdims[0] == 0) {
        st = gol_fail(GOL_EXIT_USAGE, "'%s' holds no frames", path);
        goto out;
    }
    if (info->generation < 0) {
        st = gol_fail(GOL_EXIT_USAGE, "'%s': negative generation %lld", path,
                      (long long)info->generation);
        goto out;
    }
    st = locate_last_frame(file, path, (int64_t)gdims[0], &p->src);
out:
    H5Fclose(file);
    return st;
}

static gol_status probe(const char *path, probe_out *p) {
    if (access(path, R_OK) != 0)
        return gol_fail(GOL_EXIT_USAGE, "--restart: cannot read '%s': %s", path, strerror(errno));
    h5_quiet q = quiet_begin();
    gol_status st;
    if (H5Fis_hdf5(path) <= 0)
        st = gol_fail(GOL_EXIT_USAGE, "--restart: '%s' is not an HDF5 file", path);
    else
        st = probe_open_file(path, p);
    quiet_end(q);
    return st;
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

gol_status restart_load_rows(const char *path, const gol_slab *slab, uint64_t *rows_h) {
    probe_out p;
    gol_status st = probe(path, &p);
    if (st.code != GOL_OK) return st;
    if (p.info.width != slab->width || p.info.height != slab->height)
        return gol_fail(GOL_EXIT_USAGE, "--restart: '%s' holds a %lld x %lld grid, not %lld x %lld",
                        path, (long long)p.info.width, (long long)p.info.height,
                        (long long)slab->width, (long long)slab->height);
    if (slab->rows == 0) return gol_ok();

    uint8_t *buf = gol_xmalloc((size_t)(slab->rows * p.row_bytes));
    h5_quiet q = quiet_begin();
    bool ok = false;
    hid_t file = H5Fopen(p.src.file, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file >= 0) {
        hid_t dset = H5Dopen2(file, "frames", H5P_DEFAULT);
        if (dset >= 0) {
            hid_t fs = H5Dget_space(dset);
            hsize_t start[3] = {(hsize_t)p.src.frame, (hsize_t)slab->row0, 0};
            hsize_t count[3] = {1, (hsize_t)slab->rows, (hsize_t)p.row_bytes};
            hsize_t dims[3];
            hid_t ms = H5Screate_simple(3, count, NULL);
            ok = fs >= 0 && ms >= 0 && H5Sget_simple_extent_ndims(fs) == 3 &&
                 H5Sget_simple_extent_dims(fs, dims, NULL) == 3 && (int64_t)dims[0] > p.src.frame &&
                 (int64_t)dims[1] == slab->height && (int64_t)dims[2] == p.row_bytes &&
                 H5_OK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL)) &&
                 H5_OK(H5Dread(dset, H5T_NATIVE_UINT8, ms, fs, H5P_DEFAULT, buf));
            if (ms >= 0) H5Sclose(ms);
            if (fs >= 0) H5Sclose(fs);
            H5Dclose(dset);
        }
        H5Fclose(file);
    }
    quiet_end(q);
    if (!ok) {
        free(buf);
        return gol_fail(GOL_EXIT_USAGE, "--restart: cannot read frame %lld of '%s'",
                        (long long)p.src.frame, p.src.file);
    }
    pack_rows(buf, slab->rows, slab->width, p.row_bytes, p.packed, slab->nwords, rows_h);
    free(buf);
    return gol_ok();
}
