/* golmpi-render's parts: the options, the input file as the tool reads it, and the three writers
 * (PNG images, one animated PNG, RLE). Shared by the tool's own files only. */
#ifndef GOLMPI_TOOLS_RENDER_H
#define GOLMPI_TOOLS_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "io/golfile.h"

/* Exit codes: bad input (options, the input file, an output path that cannot be created) is 2,
 * as for golmpi; a failure while writing (disk full, libpng, memory) is 1. */
#define RENDER_EXIT_USAGE 2
#define RENDER_EXIT_FAILURE 1

#define RENDER_DEFAULT_MAX_SIDE 1024
#define RENDER_DEFAULT_DELAY_MS 100

typedef enum render_mode {
    RENDER_PNG,      /* one frame (--frame, default the last), one PNG */
    RENDER_SEQUENCE, /* --range: one PNG per frame */
    RENDER_ANIMATE,  /* --animate: one animated PNG over the frames of --range (default all) */
    RENDER_RLE,      /* --rle: one frame as RLE */
} render_mode;

/* A rectangle of cells: the whole grid, or --crop X,Y,W,H. */
typedef struct cell_rect {
    int64_t x, y, w, h;
} cell_rect;

typedef struct render_opts {
    const char *input;
    const char *output; /* PNG, animated PNG or RLE; with --range the prefix of PREFIX_%06d.png */
    render_mode mode;
    bool frame_given, range_given, crop_given;
    int64_t frame_gen;
    int64_t range_g0, range_g1;
    cell_rect crop;
    int64_t width, height; /* of the image; 0: derived */
    int64_t zoom;          /* pixels per cell on each axis; 0: not given */
    int64_t delay_ms, loops;
    uint8_t alive[3], dead[3];
} render_opts;

typedef struct golmpi_file {
    golfile *file;
    int64_t nframes, height, width; /* width in cells, also for packed frames */
    int64_t row_bytes;              /* bytes of one stored row */
    bool packed;
    int64_t *generations; /* [nframes] */
} golmpi_file;

void render_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void render_fail_write(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void *render_xmalloc(size_t bytes);

/* render_file.c: the input through io/golfile, forgiving as the tool has always been: a file
 * needs only /frames; the encoding may sit on /frames or the root; the width and /generations
 * may be absent. Any fault is a message and exit 2. */
void golmpi_open(const char *path, golmpi_file *g);
void golmpi_close(golmpi_file *g);
void golmpi_read_rows(const golmpi_file *g, int64_t f, int64_t y0, int64_t n, uint8_t *buf);
/* The frame of generation gen; a message naming the generations held when there is none. */
int64_t golmpi_frame_of(const char *path, const golmpi_file *g, int64_t gen);
/* The rows to read at once for rows of row_bytes bytes: a band of about 64 MiB. */
int64_t golmpi_band_rows(const golmpi_file *g);
/* Is cell x of a stored row alive; live cells in [x0, x1) of it. */
static inline int golmpi_cell(const uint8_t *row, int64_t x, bool packed) {
    return packed ? (row[x >> 3] >> (x & 7)) & 1 : row[x] != 0;
}
int64_t golmpi_row_live(const uint8_t *row, int64_t x0, int64_t x1, bool packed);

/* render_image.c: the pixels of one frame, as PNG files or one animated PNG. The image covers
 * the rectangle r of the grid; its size comes from --zoom, --width/--height or the default. */
void render_image_size(const render_opts *o, const cell_rect *r, int64_t *w, int64_t *h);
void render_png(const render_opts *o, const golmpi_file *g, const cell_rect *r, int64_t f,
                const char *path);
/* The frames [first..last] of the index set, in order (a list of frame indices, n of them). */
void render_apng(const render_opts *o, const golmpi_file *g, const cell_rect *r,
                 const int64_t *frames, int64_t n, const char *path);

/* render_rle.c: frame f, rectangle r, as an RLE Golly and golmpi read, with the rule and the
 * bounded grid of the file's boundary (":Tw,h" torus, ":Pw,h" dead) for a grid of r's size. */
void render_rle(const render_opts *o, const golmpi_file *g, const cell_rect *r, int64_t f,
                const char *path);

/* Output goes to PATH.part first and is renamed when complete, so a failed run leaves no half
 * file under the real name. */
typedef struct render_out {
    char tmp[4096];
    const char *path;
    FILE *f;
} render_out;
void render_out_open(render_out *out, const char *path);
void render_out_commit(render_out *out);

#endif
