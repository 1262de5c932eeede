/* golmpi-render: one frame (or a range of frames) of a golmpi output file to PNG.
 *
 * Each pixel covers a block of cells and takes the fraction of live cells in it, blended between
 * the dead and the alive colour. The frame is read a band of rows at a time, so a 65536^2 frame
 * never needs the whole frame in memory: only one band and one output row.
 *
 * The file is read through io/golfile, golmpi's own reader, serially and without MPI_Init. The tool
 * is more forgiving than restart: a file needs only /frames; the encoding may sit on /frames or
 * the root, the width and /generations may be absent. */
#include <errno.h>
#include <inttypes.h>
#include <png.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/golfile.h"

/* The band of rows read at once: large enough for few HDF5 calls, small next to any memory. */
#define BAND_BYTES ((int64_t)64 << 20)
#define DEFAULT_MAX_SIDE 1024

typedef struct render_opts {
    const char *input;
    const char *output; /* single frame: the PNG; --range: the prefix of PREFIX_%06d.png */
    bool frame_given, range_given;
    int64_t frame_gen;
    int64_t range_g0, range_g1;
    int64_t width, height; /* of the image; 0: derived */
    uint8_t alive[3], dead[3];
} render_opts;

typedef struct golmpi_file {
    golfile *file;
    int64_t nframes, height, width; /* width in cells, also for packed frames */
    int64_t row_bytes;              /* bytes of one stored row */
    bool packed;
    int64_t *generations; /* [nframes] */
} golmpi_file;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("golmpi-render: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1); /* a serial tool: no other rank to leave hanging */
}

static void *xmalloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) fail("out of memory (%zu bytes)", bytes);
    return p;
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: golmpi-render [options] FILE.h5\n"
            "Render frames of a golmpi output file (a chunk file or the index <base>.h5) as PNG.\n"
            "\n"
            "  -o, --output PATH   PNG to write (default: out.png); with --range, the prefix of\n"
            "                      PATH_%%06d.png, numbered by generation (default: out)\n"
            "  --frame G           the frame of generation G (default: the last frame)\n"
            "  --range G0:G1       every frame with G0 <= generation <= G1, one PNG each\n"
            "  --width N           image width in pixels (default: min(grid width, %d), or the\n"
            "                      width that keeps the aspect ratio when only --height is given)\n"
            "  --height N          image height in pixels (default: keeps the aspect ratio)\n"
            "  --alive RRGGBB      colour of a pixel whose cells are all alive (default: ffffff)\n"
            "  --dead RRGGBB       colour of a pixel whose cells are all dead (default: 000000)\n"
            "  -h, --help          this text\n"
            "\n"
            "A pixel covers a block of cells; with k of its n cells alive each channel is\n"
            "(dead*(n-k) + alive*k + n/2) / n in integer arithmetic, so 1:1 renders are exact.\n"
            "Frames may be uint8 (0/1 per cell) or packed-lsb (8 cells per byte, LSB first).\n",
            DEFAULT_MAX_SIDE);
}

static int64_t parse_i64(const char *opt, const char *text, int64_t min) {
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end != '\0' || v < min)
        fail("%s: '%s' is not an integer >= %" PRId64, opt, text, min);
    return (int64_t)v;
}

static void parse_colour(const char *opt, const char *text, uint8_t rgb[3]) {
    const char *t = text[0] == '#' ? text + 1 : text;
    char *end = NULL;
    if (strlen(t) != 6) fail("%s: '%s' is not a colour RRGGBB", opt, text);
    errno = 0;
    unsigned long v = strtoul(t, &end, 16);
    if (errno || *end != '\0' || t[0] == '+' || t[0] == '-')
        fail("%s: '%s' is not a colour RRGGBB", opt, text);
    rgb[0] = (uint8_t)(v >> 16);
    rgb[1] = (uint8_t)(v >> 8);
    rgb[2] = (uint8_t)v;
}

static void parse_range(const char *text, render_opts *o) {
    const char *colon = strchr(text, ':');
    if (!colon) fail("--range: '%s' is not G0:G1", text);
    char first[64];
    size_t n = (size_t)(colon - text);
    if (n == 0 || n >= sizeof first) fail("--range: '%s' is not G0:G1", text);
    memcpy(first, text, n);
    first[n] = '\0';
    o->range_g0 = parse_i64("--range", first, 0);
    o->range_g1 = parse_i64("--range", colon + 1, 0);
    if (o->range_g1 < o->range_g0) fail("--range: %s is empty (G1 < G0)", text);
    o->range_given = true;
}

static void parse_args(int argc, char **argv, render_opts *o) {
    memset(o, 0, sizeof *o);
    memset(o->alive, 0xff, 3);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        /* every option but --help takes a value: as the next argument, or after '=' */
        const char *val = NULL;
        char name[32];
        const char *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
        if (eq && (size_t)(eq - a) < sizeof name) {
            memcpy(name, a, (size_t)(eq - a));
            name[eq - a] = '\0';
            val = eq + 1;
            a = name;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        }
        bool takes_value = !strcmp(a, "-o") || !strcmp(a, "--output") || !strcmp(a, "--frame") ||
                           !strcmp(a, "--range") || !strcmp(a, "--width") ||
                           !strcmp(a, "--height") || !strcmp(a, "--alive") || !strcmp(a, "--dead");
        if (a[0] == '-' && a[1] != '\0' && !takes_value)
            fail("unknown option '%s' (see golmpi-render --help)", argv[i]);
        if (takes_value && !val) {
            if (i + 1 >= argc) fail("%s needs a value", a);
            val = argv[++i];
        }
        if (!takes_value) {
            if (o->input) fail("more than one input file ('%s' and '%s')", o->input, a);
            o->input = a;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            o->output = val;
        } else if (!strcmp(a, "--frame")) {
            o->frame_gen = parse_i64(a, val, 0);
            o->frame_given = true;
        } else if (!strcmp(a, "--range")) {
            parse_range(val, o);
        } else if (!strcmp(a, "--width")) {
            o->width = parse_i64(a, val, 1);
        } else if (!strcmp(a, "--height")) {
            o->height = parse_i64(a, val, 1);
        } else if (!strcmp(a, "--alive")) {
            parse_colour(a, val, o->alive);
        } else if (!strcmp(a, "--dead")) {
            parse_colour(a, val, o->dead);
        }
    }
    if (!o->input) {
        usage(stderr);
        fail("no input file given");
    }
    if (o->frame_given && o->range_given) fail("--frame and --range cannot be used together");
    if (!o->output) o->output = o->range_given ? "out" : "out.png";
}

/* The frames: 1-byte cells or packed bytes, three dimensions, not empty. */
static void check_frames(const char *path, golmpi_file *g) {
    const golfile_facts *f = golfile_facts_of(g->file);
    if (!f->frames_found) fail("%s: no /frames dataset: not a golmpi output file", path);
    if (!f->frames_open) fail("%s: cannot open /frames", path);
    if (!f->frames_bytes) fail("%s: /frames is not a uint8 dataset", path);
    if (f->frames_ndims != 3)
        fail("%s: /frames has %d dimensions, expected 3 [frames, rows, columns]", path,
             f->frames_ndims);
    g->nframes = f->frames_dims[0];
    g->height = f->frames_dims[1];
    g->row_bytes = f->frames_dims[2];
    if (g->nframes == 0 || g->height == 0 || g->row_bytes == 0) fail("%s: /frames is empty", path);
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
        fail("%s: unknown frame encoding '%s' (expected u8 or packed-lsb)", path, enc);
    }
    int64_t width_attr = 0;
    bool have_width = golfile_attr_i64(g->file, NULL, "width", &width_attr) ||
                      golfile_attr_i64(g->file, "frames", "width", &width_attr);
    if (g->packed) {
        if (!have_width) width_attr = g->row_bytes * 8; /* best guess: no partial last byte */
        if (width_attr <= 0 || (width_attr + 7) / 8 != g->row_bytes)
            fail("%s: width %" PRId64 " does not fit packed rows of %" PRId64 " bytes", path,
                 width_attr, g->row_bytes);
        g->width = width_attr;
    } else {
        g->width = g->row_bytes;
        if (have_width && width_attr != g->width)
            fail("%s: attribute width=%" PRId64 " but /frames has %" PRId64 " columns", path,
                 width_attr, g->width);
    }
}

static void read_generations(const char *path, golmpi_file *g) {
    const golfile_facts *f = golfile_facts_of(g->file);
    g->generations = xmalloc((size_t)g->nframes * sizeof(int64_t));
    if (!f->generations_found) { /* frames alone: number them */
        for (int64_t i = 0; i < g->nframes; i++)
            g->generations[i] = i;
        return;
    }
    if (f->generations_count != g->nframes)
        fail("%s: /generations has %lld entries but /frames has %" PRId64 " frames", path,
             (long long)f->generations_count, g->nframes);
    if (!golfile_read_generations(g->file, 0, g->nframes, g->generations))
        fail("%s: cannot read /generations", path);
}

static void golmpi_open(const char *path, golmpi_file *g) {
    memset(g, 0, sizeof *g);
    FILE *probe = fopen(path, "rb");
    if (!probe) fail("%s: cannot open: %s", path, strerror(errno));
    fclose(probe);
    g->file = golfile_open(path);
    if (!g->file) fail("%s: not an HDF5 file (or a damaged one)", path);
    check_frames(path, g);
    read_encoding_and_width(path, g);
    read_generations(path, g);
}

static void golmpi_close(golmpi_file *g) {
    free(g->generations);
    golfile_close(g->file);
}

/* Rows [y0, y0+n) of frame f into buf (n * row_bytes bytes). */
static void read_rows(const golmpi_file *g, int64_t f, int64_t y0, int64_t n, uint8_t *buf) {
    if (!golfile_read_rows(g->file, f, y0, n, buf))
        fail("cannot read rows %" PRId64 "..%" PRId64 " of frame %" PRId64, y0, y0 + n - 1, f);
}

/* Live cells in [x0, x1) of one stored row. */
static int64_t row_live(const uint8_t *row, int64_t x0, int64_t x1, bool packed) {
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

/* The cells [*lo, *hi) that pixel p of n covers on an axis of len cells: never empty, so an
 * image larger than the grid repeats cells instead of leaving gaps. */
static void pixel_span(int64_t p, int64_t n, int64_t len, int64_t *lo, int64_t *hi) {
    *lo = p * len / n;
    *hi = (p + 1) * len / n;
    if (*hi <= *lo) *hi = *lo + 1;
}

static void image_size(const render_opts *o, const golmpi_file *g, int64_t *w, int64_t *h) {
    *w = o->width;
    *h = o->height;
    if (*w && *h) return;
    if (!*w && !*h) {
        int64_t big = g->width > g->height ? g->width : g->height;
        int64_t side = big < DEFAULT_MAX_SIDE ? big : DEFAULT_MAX_SIDE;
        if (g->width >= g->height)
            *w = side;
        else
            *h = side;
    }
    if (!*h) *h = (g->height * *w + g->width / 2) / g->width;
    if (!*w) *w = (g->width * *h + g->height / 2) / g->height;
    if (*w < 1) *w = 1;
    if (*h < 1) *h = 1;
}

typedef struct png_out {
    FILE *f;
    png_structp png;
    png_infop info;
    const char *path;
} png_out;

static void png_fail(png_structp png, png_const_charp msg) {
    (void)png;
    fail("libpng: %s", msg);
}

static void render_frame(const render_opts *o, const golmpi_file *g, int64_t f, const char *path) {
    int64_t iw, ih;
    image_size(o, g, &iw, &ih);
    if (iw > (int64_t)1 << 20 || ih > (int64_t)1 << 20)
        fail("image %" PRId64 "x%" PRId64 " is too large", iw, ih);

    /* Write to a temporary name, so a failed render leaves no half PNG under the real name. */
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.part", path) >= (int)sizeof tmp)
        fail("%s: path too long", path);
    png_out p = {.path = path};
    p.f = fopen(tmp, "wb");
    if (!p.f) fail("%s: cannot create: %s", tmp, strerror(errno));
    p.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, png_fail, NULL);
    p.info = p.png ? png_create_info_struct(p.png) : NULL;
    if (!p.info) fail("libpng: cannot create the write structures");
    png_init_io(p.png, p.f);
    png_set_IHDR(p.png, p.info, (png_uint_32)iw, (png_uint_32)ih, 8, PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(p.png, p.info);

    int64_t band_rows = BAND_BYTES / g->row_bytes;
    if (band_rows < 1) band_rows = 1;
    uint8_t *band = NULL;
    int64_t band_cap = 0;
    int64_t *live = xmalloc((size_t)iw * sizeof(int64_t));
    png_bytep out_row = xmalloc((size_t)iw * 3);
    int64_t *xlo = xmalloc((size_t)iw * sizeof(int64_t)),
            *xhi = xmalloc((size_t)iw * sizeof(int64_t));
    for (int64_t px = 0; px < iw; px++)
        pixel_span(px, iw, g->width, &xlo[px], &xhi[px]);

    for (int64_t py = 0; py < ih; py++) {
        int64_t y0, y1;
        pixel_span(py, ih, g->height, &y0, &y1);
        memset(live, 0, (size_t)iw * sizeof(int64_t));
        for (int64_t y = y0; y < y1; y += band_rows) {
            int64_t n = y1 - y < band_rows ? y1 - y : band_rows;
            if (n > band_cap) {
                free(band);
                band = xmalloc((size_t)(n * g->row_bytes));
                band_cap = n;
            }
            read_rows(g, f, y, n, band);
            for (int64_t r = 0; r < n; r++) {
                const uint8_t *row = band + r * g->row_bytes;
                for (int64_t px = 0; px < iw; px++)
                    live[px] += row_live(row, xlo[px], xhi[px], g->packed);
            }
        }
        for (int64_t px = 0; px < iw; px++) {
            int64_t cells = (y1 - y0) * (xhi[px] - xlo[px]);
            int64_t k = live[px];
            for (int c = 0; c < 3; c++)
                out_row[3 * px + c] =
                    (png_byte)((o->dead[c] * (cells - k) + o->alive[c] * k + cells / 2) / cells);
        }
        png_write_row(p.png, out_row);
    }
    png_write_end(p.png, NULL);
    png_destroy_write_struct(&p.png, &p.info);
    if (fclose(p.f) != 0) fail("%s: write failed: %s", tmp, strerror(errno));
    if (rename(tmp, path) != 0) fail("%s: cannot rename to %s: %s", tmp, path, strerror(errno));
    free(band);
    free(live);
    free(out_row);
    free(xlo);
    free(xhi);
    printf("%s: generation %" PRId64 ", %" PRId64 "x%" PRId64 " cells -> %" PRId64 "x%" PRId64
           " pixels\n",
           path, g->generations[f], g->width, g->height, iw, ih);
}

int main(int argc, char **argv) {
    render_opts o;
    parse_args(argc, argv, &o);

    golmpi_file g;
    golmpi_open(o.input, &g);
    if (o.range_given) {
        int64_t written = 0;
        char path[4096];
        for (int64_t f = 0; f < g.nframes; f++) {
            if (g.generations[f] < o.range_g0 || g.generations[f] > o.range_g1) continue;
            if (snprintf(path, sizeof path, "%s_%06" PRId64 ".png", o.output, g.generations[f]) >=
                (int)sizeof path)
                fail("%s: output prefix too long", o.output);
            render_frame(&o, &g, f, path);
            written++;
        }
        if (written == 0)
            fail("%s: no frame with a generation in %" PRId64 ":%" PRId64 " (frames hold %" PRId64
                 "..%" PRId64 ")",
                 o.input, o.range_g0, o.range_g1, g.generations[0], g.generations[g.nframes - 1]);
    } else {
        int64_t f = g.nframes - 1;
        if (o.frame_given) {
            f = 0;
            while (f < g.nframes && g.generations[f] != o.frame_gen)
                f++;
            if (f == g.nframes)
                fail("%s: no frame of generation %" PRId64 " (frames hold %" PRId64 "..%" PRId64
                     ")",
                     o.input, o.frame_gen, g.generations[0], g.generations[g.nframes - 1]);
        }
        render_frame(&o, &g, f, o.output);
    }
    golmpi_close(&g);
    return 0;
}
