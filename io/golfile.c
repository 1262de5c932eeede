/* The reader of golmpi's output format. Every public function runs with HDF5's error printing off
 * (the file is the user's input: a fault is a false or a message, never an HDF5 stack dump) and
 * makes no MPI call. */
#include "io/golfile.h"

#include <errno.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/check.h"
#include "io/h5_quiet.h"
#include "core/rule.h"
#include "io/format.h"

/* HDF5 calls whose failure means a bad input file: no abort, just a false. */
#define H5_OK(call) ((long long)(call) >= 0)

struct golfile {
    char path[GOL_PATH_MAX];
    hid_t file;
    hid_t frames;      /* -1 when absent */
    hid_t generations; /* -1 when absent */
    golfile_facts facts;
};

bool golfile_is_hdf5(const char *path) {
    io_h5_quiet q = io_quiet_begin();
    bool yes = H5Fis_hdf5(path) > 0;
    io_quiet_end(q);
    return yes;
}

/* ---- opening: the facts ----------------------------------------------------------------- */

static hid_t open_dataset(hid_t file, const char *name, bool *found) {
    *found = H5Lexists(file, name, H5P_DEFAULT) > 0;
    return *found ? H5Dopen2(file, name, H5P_DEFAULT) : -1;
}

static void frames_facts(hid_t frames, golfile_facts *f) {
    f->frames_ndims = -1;
    if (frames < 0) return;
    f->frames_open = true;
    hid_t type = H5Dget_type(frames);
    f->frames_bytes = type >= 0 && H5Tget_class(type) == H5T_INTEGER && H5Tget_size(type) == 1;
    if (type >= 0) H5Tclose(type);
    hid_t space = H5Dget_space(frames);
    if (space < 0) return;
    f->frames_ndims = H5Sget_simple_extent_ndims(space);
    hsize_t dims[3] = {0, 0, 0};
    if (f->frames_ndims == 3 && H5Sget_simple_extent_dims(space, dims, NULL) == 3)
        for (int i = 0; i < 3; i++)
            f->frames_dims[i] = (int64_t)dims[i];
    H5Sclose(space);
}

static void generations_facts(hid_t gens, golfile_facts *f) {
    f->generations_ndims = -1;
    f->generations_count = -1;
    if (gens < 0) return;
    hid_t space = H5Dget_space(gens);
    if (space < 0) return;
    f->generations_ndims = H5Sget_simple_extent_ndims(space);
    f->generations_count = (int64_t)H5Sget_simple_extent_npoints(space);
    H5Sclose(space);
}

golfile *golfile_open(const char *path) {
    io_h5_quiet q = io_quiet_begin();
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    golfile *g = NULL;
    if (file >= 0) {
        g = gol_xcalloc(1, sizeof *g);
        snprintf(g->path, sizeof g->path, "%s", path);
        g->file = file;
        g->frames = open_dataset(file, "frames", &g->facts.frames_found);
        g->generations = open_dataset(file, "generations", &g->facts.generations_found);
        frames_facts(g->frames, &g->facts);
        generations_facts(g->generations, &g->facts);
    }
    io_quiet_end(q);
    return g;
}

void golfile_close(golfile *g) {
    if (!g) return;
    io_h5_quiet q = io_quiet_begin();
    if (g->generations >= 0) H5Dclose(g->generations);
    if (g->frames >= 0) H5Dclose(g->frames);
    H5Fclose(g->file);
    io_quiet_end(q);
    free(g);
}

const golfile_facts *golfile_facts_of(const golfile *g) { return &g->facts; }

/* ---- attributes ------------------------------------------------------------------------- */

static hid_t open_attr(const golfile *g, const char *on, const char *name) {
    hid_t obj = on ? (strcmp(on, "frames") == 0 ? g->frames : -1) : g->file;
    if (obj < 0 || H5Aexists(obj, name) <= 0) return -1;
    return H5Aopen(obj, name, H5P_DEFAULT);
}

static bool single_value(hid_t attr) {
    hid_t space = H5Aget_space(attr);
    bool one = space >= 0 && H5Sget_simple_extent_npoints(space) == 1;
    if (space >= 0) H5Sclose(space);
    return one;
}

/* A number of mem_type's class (integer or float), converted to mem_type. */
static bool read_num_attr(const golfile *g, const char *on, const char *name, hid_t mem_type,
                          void *value) {
    hid_t attr = open_attr(g, on, name);
    if (attr < 0) return false;
    hid_t type = H5Aget_type(attr);
    bool ok = type >= 0 && H5Tget_class(type) == H5Tget_class(mem_type) && single_value(attr) &&
              H5_OK(H5Aread(attr, mem_type, value));
    if (type >= 0) H5Tclose(type);
    H5Aclose(attr);
    return ok;
}

/* Variable length. The memory type takes the file's character set: HDF5 does not convert
 * between UTF-8 and ASCII, and h5py writes UTF-8. */
static bool read_vlen_str(hid_t attr, hid_t ftype, char *out, size_t len) {
    hid_t mtype = H5Tcopy(H5T_C_S1);
    char *s = NULL;
    bool ok = mtype >= 0 && H5_OK(H5Tset_size(mtype, H5T_VARIABLE)) &&
              H5_OK(H5Tset_cset(mtype, H5Tget_cset(ftype))) && H5_OK(H5Aread(attr, mtype, &s)) && s;
    if (ok) snprintf(out, len, "%s", s);
    if (s) H5free_memory(s);
    if (mtype >= 0) H5Tclose(mtype);
    return ok;
}

/* Fixed length. One byte more than the file's, so a NULLPAD string of full length keeps its last
 * character once HDF5 terminates it. */
static bool read_fixed_str(hid_t attr, hid_t ftype, char *out, size_t len) {
    size_t n = H5Tget_size(ftype);
    char *buf = gol_xcalloc(n + 2, 1);
    hid_t mtype = H5Tcopy(H5T_C_S1);
    bool ok = mtype >= 0 && H5_OK(H5Tset_size(mtype, n + 1)) &&
              H5_OK(H5Tset_strpad(mtype, H5T_STR_NULLTERM)) &&
              H5_OK(H5Tset_cset(mtype, H5Tget_cset(ftype))) && H5_OK(H5Aread(attr, mtype, buf));
    if (ok) snprintf(out, len, "%s", buf);
    if (mtype >= 0) H5Tclose(mtype);
    free(buf);
    return ok;
}

static bool read_str_attr(const golfile *g, const char *on, const char *name, char *out,
                          size_t len) {
    hid_t attr = open_attr(g, on, name);
    if (attr < 0) return false;
    hid_t type = H5Aget_type(attr);
    bool ok = false;
    if (type >= 0 && H5Tget_class(type) == H5T_STRING && single_value(attr))
        ok = H5Tis_variable_str(type) > 0 ? read_vlen_str(attr, type, out, len)
                                          : read_fixed_str(attr, type, out, len);
    if (type >= 0) H5Tclose(type);
    H5Aclose(attr);
    return ok;
}

bool golfile_attr_str(const golfile *g, const char *on, const char *name, char *out, size_t len) {
    io_h5_quiet q = io_quiet_begin();
    bool ok = read_str_attr(g, on, name, out, len);
    io_quiet_end(q);
    return ok;
}

bool golfile_attr_i64(const golfile *g, const char *on, const char *name, int64_t *out) {
    io_h5_quiet q = io_quiet_begin();
    bool ok = read_num_attr(g, on, name, H5T_NATIVE_INT64, out);
    io_quiet_end(q);
    return ok;
}

/* ---- golfile_read_meta: the attributes, then the shapes --------------------------------- */

/* The attribute texts, before they are judged. */
typedef struct meta_text {
    char rule[64], boundary[32], encoding[32];
} meta_text;

static gol_status read_root_attrs(const golfile *g, golfile_meta *m, meta_text *t) {
    if (!read_num_attr(g, NULL, "width", H5T_NATIVE_INT64, &m->width) ||
        !read_num_attr(g, NULL, "height", H5T_NATIVE_INT64, &m->height) ||
        !read_num_attr(g, NULL, "seed", H5T_NATIVE_UINT64, &m->seed) ||
        !read_num_attr(g, NULL, "density", H5T_NATIVE_DOUBLE, &m->density) ||
        !read_str_attr(g, NULL, "rule", t->rule, sizeof t->rule) ||
        !read_str_attr(g, NULL, "boundary", t->boundary, sizeof t->boundary) ||
        !read_str_attr(g, NULL, "encoding", t->encoding, sizeof t->encoding))
        return gol_fail(GOL_EXIT_USAGE,
                        "'%s' is not a golmpi output file (it lacks the width, height, seed, "
                        "density, rule, boundary or encoding attribute)",
                        g->path);
    /* informative only: files of other writers may lack them */
    if (!read_num_attr(g, NULL, "ranks", H5T_NATIVE_INT32, &m->ranks)) m->ranks = 0;
    if (!read_str_attr(g, NULL, "version", m->version, sizeof m->version)) m->version[0] = '\0';
    return gol_ok();
}

static gol_status judge_attrs(const golfile *g, golfile_meta *m, const meta_text *t) {
    const char *path = g->path;
    if (m->width <= 0 || m->height <= 0)
        return gol_fail(GOL_EXIT_USAGE, "'%s': bad grid size %lld x %lld", path,
                        (long long)m->width, (long long)m->height);
    gol_status st = rule_parse(t->rule, &m->rule, m->rule_text, sizeof m->rule_text);
    if (st.code != GOL_OK)
        return gol_fail(GOL_EXIT_USAGE, "'%s': bad rule attribute: %s", path, st.msg);
    if (strcmp(t->boundary, config_boundary_name(GOL_BOUNDARY_TORUS)) == 0)
        m->boundary = GOL_BOUNDARY_TORUS;
    else if (strcmp(t->boundary, config_boundary_name(GOL_BOUNDARY_DEAD)) == 0)
        m->boundary = GOL_BOUNDARY_DEAD;
    else
        return gol_fail(GOL_EXIT_USAGE, "'%s': unknown boundary '%s'", path, t->boundary);
    if (strcmp(t->encoding, IO_ENCODING_U8) == 0)
        m->packed = false;
    else if (strcmp(t->encoding, IO_ENCODING_PACKED) == 0)
        m->packed = true;
    else
        return gol_fail(GOL_EXIT_USAGE, "'%s': unknown frame encoding '%s'", path, t->encoding);
    snprintf(m->encoding, sizeof m->encoding, "%s", t->encoding);
    m->row_bytes = frame_row_bytes(m->width, m->packed ? GOL_FRAME_PACKED : GOL_FRAME_U8);
    return gol_ok();
}

static bool read_gens(const golfile *g, int64_t first, int64_t n, int64_t *out) {
    const golfile_facts *f = &g->facts;
    if (g->generations < 0 || first < 0 || n < 0 || first + n > f->generations_count) return false;
    if (n == 0) return true;
    hid_t fs = H5Dget_space(g->generations);
    hsize_t start = (hsize_t)first, count = (hsize_t)n;
    hid_t ms = H5Screate_simple(1, &count, NULL);
    /* all of a dataset of any rank, or a stretch of a 1-D one */
    bool ok =
        fs >= 0 && ms >= 0 &&
        (first == 0 && n == f->generations_count
             ? H5_OK(H5Sselect_all(fs))
             : f->generations_ndims == 1 &&
                   H5_OK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL))) &&
        H5_OK(H5Dread(g->generations, H5T_NATIVE_INT64, ms, fs, H5P_DEFAULT, out));
    if (ms >= 0) H5Sclose(ms);
    if (fs >= 0) H5Sclose(fs);
    return ok;
}

/* The shapes must agree with the attributes, or the frame would be misread. */
static gol_status judge_shapes(const golfile *g, golfile_meta *m) {
    const golfile_facts *f = &g->facts;
    m->nframes = f->frames_dims[0];
    bool ok = f->frames_open && f->generations_ndims == 1 && f->frames_ndims == 3 &&
              f->generations_count == f->frames_dims[0] && f->frames_dims[1] == m->height &&
              f->frames_dims[2] == m->row_bytes;
    if (ok && m->nframes > 0) ok = read_gens(g, m->nframes - 1, 1, &m->last_generation);
    if (!ok)
        return gol_fail(GOL_EXIT_USAGE,
                        "'%s' is not a golmpi output file (/frames or /generations is missing or "
                        "does not match its %lld x %lld %s grid)",
                        g->path, (long long)m->width, (long long)m->height, m->encoding);
    if (m->nframes == 0) return gol_fail(GOL_EXIT_USAGE, "'%s' holds no frames", g->path);
    return gol_ok();
}

gol_status golfile_read_meta(const golfile *g, golfile_meta *m) {
    memset(m, 0, sizeof *m);
    meta_text t;
    io_h5_quiet q = io_quiet_begin();
    gol_status st = read_root_attrs(g, m, &t);
    if (st.code == GOL_OK) st = judge_attrs(g, m, &t);
    if (st.code == GOL_OK) st = judge_shapes(g, m);
    io_quiet_end(q);
    return st;
}

/* ---- generations and rows --------------------------------------------------------------- */

bool golfile_read_generations(const golfile *g, int64_t first, int64_t n, int64_t *out) {
    io_h5_quiet q = io_quiet_begin();
    bool ok = read_gens(g, first, n, out);
    io_quiet_end(q);
    return ok;
}

bool golfile_read_rows(const golfile *g, int64_t t, int64_t r0, int64_t n, uint8_t *buf) {
    const golfile_facts *f = &g->facts;
    if (f->frames_ndims != 3 || t < 0 || t >= f->frames_dims[0] || r0 < 0 || n < 0 ||
        r0 + n > f->frames_dims[1])
        return false;
    io_h5_quiet q = io_quiet_begin();
    hsize_t start[3] = {(hsize_t)t, (hsize_t)r0, 0};
    hsize_t count[3] = {1, (hsize_t)n, (hsize_t)f->frames_dims[2]};
    hid_t fs = H5Dget_space(g->frames);
    hid_t ms = H5Screate_simple(3, count, NULL);
    bool ok = fs >= 0 && ms >= 0 &&
              H5_OK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL)) &&
              H5_OK(H5Dread(g->frames, H5T_NATIVE_UINT8, ms, fs, H5P_DEFAULT, buf));
    if (ms >= 0) H5Sclose(ms);
    if (fs >= 0) H5Sclose(fs);
    io_quiet_end(q);
    return ok;
}

/* ---- golfile_locate_last_frame ---------------------------------------------------------- */

/* Mapping i of the virtual dataset: does it hold frame t, and from which frame on? */
static bool mapping_holds(hid_t dcpl, size_t i, int64_t t, int64_t *first) {
    hid_t vs = H5Pget_virtual_vspace(dcpl, i);
    hsize_t lo[3], hi[3];
    bool hit = vs >= 0 && H5Sget_simple_extent_ndims(vs) == 3 &&
               H5_OK(H5Sget_select_bounds(vs, lo, hi)) && (int64_t)lo[0] <= t &&
               (int64_t)hi[0] >= t;
    if (vs >= 0) H5Sclose(vs);
    *first = hit ? (int64_t)lo[0] : 0;
    return hit;
}

/* The source file of mapping i, found as HDF5 finds it: relative names are next to the index. */
static bool mapping_file(const golfile *g, hid_t dcpl, size_t i, golfile_source *src) {
    char name[GOL_PATH_MAX];
    if (H5Pget_virtual_filename(dcpl, i, name, sizeof name) < 0) return false;
    const char *slash = strrchr(g->path, '/');
    if (name[0] == '/' || slash == NULL)
        snprintf(src->file, sizeof src->file, "%s", name);
    else
        snprintf(src->file, sizeof src->file, "%.*s/%s", (int)(slash - g->path), g->path, name);
    return true;
}

static gol_status locate_in_virtual(const golfile *g, hid_t dcpl, int64_t t, golfile_source *src) {
    size_t count = 0;
    gol_status st =
        gol_fail(GOL_EXIT_USAGE, "'%s': /frames is a virtual dataset that maps no frame %lld",
                 g->path, (long long)t);
    if (!H5_OK(H5Pget_virtual_count(dcpl, &count))) return st;
    for (size_t i = 0; i < count; i++) {
        int64_t first;
        if (!mapping_holds(dcpl, i, t, &first)) continue;
        if (!mapping_file(g, dcpl, i, src)) return st;
        src->frame = t - first;
        if (access(src->file, R_OK) != 0)
            return gol_fail(GOL_EXIT_USAGE,
                            "'%s' takes its last frame from '%s', which cannot be read (%s)",
                            g->path, src->file, strerror(errno));
        return gol_ok();
    }
    return st;
}

gol_status golfile_locate_last_frame(const golfile *g, int64_t nframes, golfile_source *src) {
    snprintf(src->file, sizeof src->file, "%s", g->path);
    src->frame = nframes - 1;
    if (g->frames < 0) return gol_fail(GOL_EXIT_USAGE, "'%s' has no /frames dataset", g->path);
    io_h5_quiet q = io_quiet_begin();
    gol_status st = gol_ok();
    hid_t dcpl = H5Dget_create_plist(g->frames);
    if (dcpl >= 0 && H5Pget_layout(dcpl) == H5D_VIRTUAL)
        st = locate_in_virtual(g, dcpl, nframes - 1, src);
    if (dcpl >= 0) H5Pclose(dcpl);
    io_quiet_end(q);
    return st;
}
