/* golmpi-render's input: a golmpi output file read through io/golfile, golmpi's own reader,
 * serially and without MPI_Init; and the tool's error exits and atomic output files. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/render.h"

/* The band of rows read at once: large enough for few HDF5 calls, small next to any memory. */
#define BAND_BYTES ((int64_t)64 << 20)

static void vdie(int code, const char *fmt, va_list ap) __attribute__((noreturn));
static void vdie(int code, const char *fmt, va_list ap) {
    fputs("golmpi-render: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    exit(code); /* a serial tool: no other rank to leave hanging */
}

void render_fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vdie(RENDER_EXIT_USAGE, fmt, ap);
}

void render_fail_write(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vdie(RENDER_EXIT_FAILURE, fmt, ap);
}

void *render_xmalloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) render_fail_write("out of memory (%zu bytes)", bytes);
    return p;
}

void render_out_open(render_out *out, const char *path) {
    out->path = path;
    if (snprintf(out->tmp, sizeof out->tmp, "%s.part", path) >= (int)sizeof out->tmp)
        render_fail("%s: path too long", path);
    out->f = fopen(out->tmp, "wb");
    if (!out->f) render_fail("%s: cannot create: %s", out->tmp, strerror(errno));
}

void render_out_commit(render_out *out) {
    bool bad = ferror(out->f) != 0;
    if (fclose(out->f) != 0 || bad) {
        int err = errno;
        remove(out->tmp);
        render_fail_write("%s: write failed: %s", out->tmp, strerror(err));
    }
    if (rename(out->tmp, out->path) != 0)
        render_fail_write("%s: cannot rename to %s: %s", out->tmp, out->path, strerror(errno));
}

/* The frames: 1-byte cells or packed bytes, three dimensions, not empty. */
static void check_frames(const char *path, golmpi_file *g) {
    const golfile_facts *f = golfile_facts_of(g->file);
    if (!f->frames_found) render_fail("%s: no /frames dataset: not a golmpi output file", path);
    if (!f->frames_open) render_fail("%s: cannot open /frames", path);
    if (!f->frames_bytes) render_fail("%s: /frames is not a uint8 dataset", path);
    if (f->frames_ndims != 3)
        render_fail("%s: /frames has %d dimensions, expected 3 [frames, rows, columns]", path,
                    f->frames_ndims);
    g->nframes = f->frames_dims[0];
    g->height = f->frames_dims[1];
    g->row_bytes = f->frames_dims[2];
    if (g->nframes == 0 || g->height == 0 || g->row_bytes == 0)
        render_fail("%s: /frames is empty", path);
}

/* The encoding sits on /frames or on the root; the index may carry only one of them. The width
 * attribute, where there is one, must fit the rows. */
static void read_encoding_and_width(const char *path, golmpi_file *g) {
    char enc[64] = "u8";
    if (!golfile_attr_str(g->file, "frames", "encoding", enc, sizeof enc))
        golfile_attr_str(g->file, NULL, "encoding", enc, sizeof enc);
    if (!strcmp(enc, "packed-lsb")) {
        g->packed = true;
    } else if (strcmp(enc, "u8") != 0 && strcmp(enc, "uint8") != 0) {
        render_fail("%s: unknown frame encoding '%s' (expected u8 or packed-lsb)", path, enc);
    }
    int64_t width_attr = 0;
    bool have_width = golfile_attr_i64(g->file, NULL, "width", &width_attr) ||
                      golfile_attr_i64(g->file, "frames", "width", &width_attr);
    if (g->packed) {
        if (!have_width) width_attr = g->row_bytes * 8; /* best guess: no partial last byte */
        if (width_attr <= 0 || (width_attr + 7) / 8 != g->row_bytes)
            render_fail("%s: width %" PRId64 " does not fit packed rows of %" PRId64 " bytes", path,
                        width_attr, g->row_bytes);
        g->width = width_attr;
    } else {
        g->width = g->row_bytes;
        if (have_width && width_attr != g->width)
            render_fail("%s: attribute width=%" PRId64 " but /frames has %" PRId64 " columns", path,
                        width_attr, g->width);
    }
}

static void read_generations(const char *path, golmpi_file *g) {
    const golfile_facts *f = golfile_facts_of(g->file);
    g->generations = render_xmalloc((size_t)g->nframes * sizeof(int64_t));
    if (!f->generations_found) { /* frames alone: number them */
        for (int64_t i = 0; i < g->nframes; i++)
            g->generations[i] = i;
        return;
    }
    if (f->generations_count != g->nframes)
        render_fail("%s: /generations has %lld entries but /frames has %" PRId64 " frames", path,
                    (long long)f->generations_count, g->nframes);
    if (!golfile_read_generations(g->file, 0, g->nframes, g->generations))
        render_fail("%s: cannot read /generations", path);
}

void golmpi_open(const char *path, golmpi_file *g) {
    memset(g, 0, sizeof *g);
    FILE *probe = fopen(path, "rb");
    if (!probe) render_fail("%s: cannot open: %s", path, strerror(errno));
    fclose(probe);
    g->file = golfile_open(path);
    if (!g->file) render_fail("%s: not an HDF5 file (or a damaged one)", path);
    check_frames(path, g);
    read_encoding_and_width(path, g);
    read_generations(path, g);
}

void golmpi_close(golmpi_file *g) {
    free(g->generations);
    golfile_close(g->file);
}

void golmpi_read_rows(const golmpi_file *g, int64_t f, int64_t y0, int64_t n, uint8_t *buf) {
    if (!golfile_read_rows(g->file, f, y0, n, buf))
        render_fail("cannot read rows %" PRId64 "..%" PRId64 " of frame %" PRId64, y0, y0 + n - 1,
                    f);
}

int64_t golmpi_frame_of(const char *path, const golmpi_file *g, int64_t gen) {
    for (int64_t f = 0; f < g->nframes; f++)
        if (g->generations[f] == gen) return f;
    render_fail("%s: no frame of generation %" PRId64 " (frames hold %" PRId64 "..%" PRId64 ")",
                path, gen, g->generations[0], g->generations[g->nframes - 1]);
}

int64_t golmpi_band_rows(const golmpi_file *g) {
    int64_t rows = BAND_BYTES / g->row_bytes;
    return rows < 1 ? 1 : rows;
}

int64_t golmpi_row_live(const uint8_t *row, int64_t x0, int64_t x1, bool packed) {
    int64_t live = 0;
    if (!packed) {
        for (int64_t x = x0; x < x1; x++)
            live += row[x] != 0;
        return live;
    }
    int64_t x = x0;
    for (; x < x1 && (x & 7); x++)
        live += (row[x >> 3] >> (x & 7)) & 1;
    for (; x + 8 <= x1; x += 8)
        live += __builtin_popcount(row[x >> 3]);
    for (; x < x1; x++)
        live += (row[x >> 3] >> (x & 7)) & 1;
    return live;
}
