/* Reading back the chunk list of an index, so a run can continue its series. The chunk names are
 * not read from the virtual dataset but made again from the generations (io/format.h), as the
 * writers make them: the index and the .xmf then name a chunk the same way whichever run wrote it.
 */
#include "io/series.h"

#include <hdf5.h>
#include <stdbool.h>
#include <stdlib.h>

#include "core/check.h"
#include "io/h5_quiet.h"

/* A 1-D int64 dataset of n elements into out: false when absent, of another size, or unreadable. */
static bool read_i64(hid_t file, const char *name, int64_t n, int64_t *out) {
    if (H5Lexists(file, name, H5P_DEFAULT) <= 0) return false;
    hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
    if (d < 0) return false;
    hid_t sp = H5Dget_space(d);
    hsize_t dims[1] = {0};
    bool ok = sp >= 0 && H5Sget_simple_extent_ndims(sp) == 1 &&
              H5Sget_simple_extent_dims(sp, dims, NULL) == 1 && (int64_t)dims[0] == n &&
              H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) >= 0;
    if (sp >= 0) H5Sclose(sp);
    H5Dclose(d);
    return ok;
}

/* The frames each mapping of the virtual /frames covers, which must follow one another from 0. */
static bool read_chunks(hid_t frames, io_series *s) {
    hid_t dcpl = H5Dget_create_plist(frames);
    size_t count = 0;
    bool ok = dcpl >= 0 && H5Pget_layout(dcpl) == H5D_VIRTUAL &&
              H5Pget_virtual_count(dcpl, &count) >= 0 && count > 0;
    if (ok) s->chunk_frames = gol_xcalloc(count, sizeof *s->chunk_frames);
    int64_t next = 0;
    for (size_t i = 0; ok && i < count; i++) {
        hid_t vs = H5Pget_virtual_vspace(dcpl, i);
        hsize_t lo[3], hi[3];
        ok = vs >= 0 && H5Sget_simple_extent_ndims(vs) == 3 &&
             H5Sget_select_bounds(vs, lo, hi) >= 0 && (int64_t)lo[0] == next && hi[0] >= lo[0];
        if (ok) s->chunk_frames[i] = (int64_t)(hi[0] - lo[0] + 1), next = (int64_t)hi[0] + 1;
        if (vs >= 0) H5Sclose(vs);
    }
    if (dcpl >= 0) H5Pclose(dcpl);
    s->nchunks = ok ? (int64_t)count : 0;
    s->nframes = next;
    return ok;
}

static bool increasing(const int64_t *g, int64_t n) {
    for (int64_t i = 1; i < n; i++)
        if (g[i] <= g[i - 1]) return false;
    return n > 0 && g[0] >= 0;
}

gol_status io_series_read(const char *path, io_series *s) {
    *s = (io_series){0};
    io_h5_quiet q = io_quiet_begin();
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t frames = file >= 0 ? H5Dopen2(file, "frames", H5P_DEFAULT) : -1;
    bool ok = frames >= 0 && read_chunks(frames, s);
    if (ok) {
        hid_t sp = H5Dget_space(frames);
        hsize_t dims[3] = {0, 0, 0};
        ok = sp >= 0 && H5Sget_simple_extent_dims(sp, dims, NULL) == 3 &&
             (int64_t)dims[0] == s->nframes;
        if (sp >= 0) H5Sclose(sp);
    }
    if (ok) {
        s->generations = gol_xmalloc((size_t)s->nframes * sizeof *s->generations);
        s->population = gol_xmalloc((size_t)s->nframes * sizeof *s->population);
        ok = read_i64(file, "generations", s->nframes, s->generations) &&
             increasing(s->generations, s->nframes);
        if (ok && !read_i64(file, "population", s->nframes, s->population))
            for (int64_t f = 0; f < s->nframes; f++)
                s->population[f] = -1;
    }
    if (frames >= 0) H5Dclose(frames);
    if (file >= 0) H5Fclose(file);
    io_quiet_end(q);
    if (ok) return gol_ok();
    io_series_free(s);
    return gol_fail(GOL_EXIT_USAGE,
                    "--restart %s --output %s: '%s' is not an index whose chunks can be continued "
                    "(a virtual /frames over whole chunk files and increasing /generations)",
                    path, path, path);
}

void io_series_free(io_series *s) {
    free(s->chunk_frames);
    free(s->generations);
    free(s->population);
    *s = (io_series){0};
}
