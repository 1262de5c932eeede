/* golmpi-render's pixels: one frame as a PNG (libpng), or frames as one animated PNG.
 *
 * Each pixel covers a block of cells and takes the fraction of live cells in it, blended between
 * the dead and the alive colour. A frame is read a band of rows at a time, so a 65536^2 frame
 * never needs the whole frame in memory: only one band and one output row.
 *
 * Animated PNG (APNG): Debian's libpng 1.6 is built without the APNG patch (no png_set_acTL), so
 * the animation is written here, chunk by chunk, with zlib: IHDR, acTL, then per frame fcTL and
 * the image data (IDAT for the first frame, which is also the still image that a viewer without
 * APNG support shows; fdAT for the others), IEND. APNG rather than GIF: PNG keeps every colour
 * and blend level exact (GIF has 256 colours a frame), browsers play it, and no new library is
 * needed. Each frame is a whole image (no partial frames, dispose NONE, blend SOURCE): simple,
 * and deflate already squeezes a mostly dead grid. */
#include <inttypes.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "tools/render.h"

#define MAX_IMAGE_SIDE ((int64_t)1 << 20)

/* The cells [*lo, *hi) that pixel p of n covers on an axis of len cells: never empty, so an
 * image larger than the grid repeats cells instead of leaving gaps. */
static void pixel_span(int64_t p, int64_t n, int64_t len, int64_t *lo, int64_t *hi) {
    *lo = p * len / n;
    *hi = (p + 1) * len / n;
    if (*hi <= *lo) *hi = *lo + 1;
}

void render_image_size(const render_opts *o, const cell_rect *r, int64_t *w, int64_t *h) {
    if (o->zoom) {
        *w = r->w * o->zoom;
        *h = r->h * o->zoom;
    } else {
        *w = o->width;
        *h = o->height;
    }
    if (!*w || !*h) {
        if (!*w && !*h) {
            int64_t big = r->w > r->h ? r->w : r->h;
            int64_t side = big < RENDER_DEFAULT_MAX_SIDE ? big : RENDER_DEFAULT_MAX_SIDE;
            if (r->w >= r->h)
                *w = side;
            else
                *h = side;
        }
        if (!*h) *h = (r->h * *w + r->w / 2) / r->w;
        if (!*w) *w = (r->w * *h + r->h / 2) / r->h;
        if (*w < 1) *w = 1;
        if (*h < 1) *h = 1;
    }
    if (*w > MAX_IMAGE_SIDE || *h > MAX_IMAGE_SIDE)
        render_fail("image %" PRId64 "x%" PRId64 " is too large", *w, *h);
}

/* The pixel rows of one frame, one at a time, top to bottom. */
typedef struct pixel_rows {
    const render_opts *o;
    const golmpi_file *g;
    cell_rect r;
    int64_t f, iw, ih;
    int64_t *xlo, *xhi, *live; /* [iw]: each pixel column's cells, and its live count */
    uint8_t *band;
    int64_t band_cap, band_rows;
    uint8_t *row;    /* [iw * 3] RGB */
    int64_t last_y0; /* the cell rows the row holds: a zoomed image repeats them */
} pixel_rows;

static void pixel_rows_init(pixel_rows *p, const render_opts *o, const golmpi_file *g,
                            const cell_rect *r) {
    memset(p, 0, sizeof *p);
    p->o = o;
    p->g = g;
    p->r = *r;
    render_image_size(o, r, &p->iw, &p->ih);
    p->band_rows = golmpi_band_rows(g);
    p->live = render_xmalloc((size_t)p->iw * sizeof(int64_t));
    p->row = render_xmalloc((size_t)p->iw * 3);
    p->xlo = render_xmalloc((size_t)p->iw * sizeof(int64_t));
    p->xhi = render_xmalloc((size_t)p->iw * sizeof(int64_t));
    for (int64_t px = 0; px < p->iw; px++) {
        pixel_span(px, p->iw, r->w, &p->xlo[px], &p->xhi[px]);
        p->xlo[px] += r->x;
        p->xhi[px] += r->x;
    }
}

static void pixel_rows_frame(pixel_rows *p, int64_t f) {
    p->f = f;
    p->last_y0 = -1;
}

static void pixel_rows_free(pixel_rows *p) {
    free(p->band);
    free(p->live);
    free(p->row);
    free(p->xlo);
    free(p->xhi);
}

/* Live cells of each pixel column over the cell rows [y0, y1). */
static void count_live(pixel_rows *p, int64_t y0, int64_t y1) {
    const golmpi_file *g = p->g;
    memset(p->live, 0, (size_t)p->iw * sizeof(int64_t));
    for (int64_t y = y0; y < y1; y += p->band_rows) {
        int64_t n = y1 - y < p->band_rows ? y1 - y : p->band_rows;
        if (n > p->band_cap) {
            free(p->band);
            p->band = render_xmalloc((size_t)(n * g->row_bytes));
            p->band_cap = n;
        }
        golmpi_read_rows(g, p->f, y, n, p->band);
        for (int64_t r = 0; r < n; r++) {
            const uint8_t *row = p->band + r * g->row_bytes;
            for (int64_t px = 0; px < p->iw; px++)
                p->live[px] += golmpi_row_live(row, p->xlo[px], p->xhi[px], g->packed);
        }
    }
}

/* Pixel row py: with k of a pixel's n cells alive each channel is
 * (dead*(n-k) + alive*k + n/2) / n, in integer arithmetic, so 1:1 and zoomed renders are exact. */
static const uint8_t *pixel_row(pixel_rows *p, int64_t py) {
    int64_t y0, y1;
    pixel_span(py, p->ih, p->r.h, &y0, &y1);
    y0 += p->r.y;
    y1 += p->r.y;
    if (y0 == p->last_y0) return p->row; /* the same cells: the same pixels */
    count_live(p, y0, y1);
    for (int64_t px = 0; px < p->iw; px++) {
        int64_t cells = (y1 - y0) * (p->xhi[px] - p->xlo[px]);
        int64_t k = p->live[px];
        for (int c = 0; c < 3; c++)
            p->row[3 * px + c] =
                (uint8_t)((p->o->dead[c] * (cells - k) + p->o->alive[c] * k + cells / 2) / cells);
    }
    p->last_y0 = y0;
    return p->row;
}

static void png_fail(png_structp png, png_const_charp msg) {
    (void)png;
    render_fail_write("libpng: %s", msg);
}

static bool whole_grid(const golmpi_file *g, const cell_rect *r) {
    return r->x == 0 && r->y == 0 && r->w == g->width && r->h == g->height;
}

/* "WxH cells" for the whole grid, "WxH cells at X,Y of GWxGH" for a crop. */
static void describe_cells(const golmpi_file *g, const cell_rect *r, char *out, size_t len) {
    if (whole_grid(g, r))
        snprintf(out, len, "%" PRId64 "x%" PRId64 " cells", g->width, g->height);
    else
        snprintf(out, len,
                 "%" PRId64 "x%" PRId64 " cells at %" PRId64 ",%" PRId64 " of %" PRId64 "x%" PRId64,
                 r->w, r->h, r->x, r->y, g->width, g->height);
}

void render_png(const render_opts *o, const golmpi_file *g, const cell_rect *r, int64_t f,
                const char *path) {
    pixel_rows p;
    pixel_rows_init(&p, o, g, r);
    pixel_rows_frame(&p, f);
    render_out out;
    render_out_open(&out, path);
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, png_fail, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!info) render_fail_write("libpng: cannot create the write structures");
    png_init_io(png, out.f);
    png_set_IHDR(png, info, (png_uint_32)p.iw, (png_uint_32)p.ih, 8, PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (int64_t py = 0; py < p.ih; py++)
        png_write_row(png, (png_bytep)pixel_row(&p, py));
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    render_out_commit(&out);
    char cells[160];
    describe_cells(g, r, cells, sizeof cells);
    printf("%s: generation %" PRId64 ", %s -> %" PRId64 "x%" PRId64 " pixels\n", path,
           g->generations[f], cells, p.iw, p.ih);
    pixel_rows_free(&p);
}

/* ---- animated PNG ----------------------------------------------------------------------- */

typedef struct apng_writer {
    render_out out;
    uint32_t seq;     /* sequence number of the next fcTL or fdAT */
    bool first_frame; /* its data goes into IDAT, the others' into fdAT */
    z_stream z;
    uint8_t zbuf[1 << 16];
} apng_writer;

static void put_u32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* A chunk whose data is a followed by b (b may be empty). */
static void put_chunk(apng_writer *w, const char *type, const uint8_t *a, size_t na,
                      const uint8_t *b, size_t nb) {
    uint8_t head[8], tail[4];
    put_u32(head, (uint32_t)(na + nb));
    memcpy(head + 4, type, 4);
    uLong crc = crc32(0L, head + 4, 4);
    /* crc32() of a NULL buffer is the initial value, not a no-op: skip empty parts */
    if (na) crc = crc32(crc, a, (uInt)na);
    if (nb) crc = crc32(crc, b, (uInt)nb);
    put_u32(tail, (uint32_t)crc);
    fwrite(head, 1, 8, w->out.f);
    if (na) fwrite(a, 1, na, w->out.f);
    if (nb) fwrite(b, 1, nb, w->out.f);
    fwrite(tail, 1, 4, w->out.f);
}

/* What deflate has produced so far, as one IDAT or fdAT chunk. */
static void put_image_data(apng_writer *w) {
    size_t n = sizeof w->zbuf - w->z.avail_out;
    if (n) {
        if (w->first_frame) {
            put_chunk(w, "IDAT", w->zbuf, n, NULL, 0);
        } else {
            uint8_t seq[4];
            put_u32(seq, w->seq++);
            put_chunk(w, "fdAT", seq, 4, w->zbuf, n);
        }
    }
    w->z.next_out = w->zbuf;
    w->z.avail_out = sizeof w->zbuf;
}

static void deflate_bytes(apng_writer *w, const uint8_t *data, size_t n, int flush) {
    w->z.next_in = (Bytef *)data;
    w->z.avail_in = (uInt)n;
    for (;;) {
        int rc = deflate(&w->z, flush);
        if (rc == Z_STREAM_ERROR) render_fail_write("zlib: deflate failed");
        if (w->z.avail_out == 0) {
            put_image_data(w);
            continue;
        }
        if (flush == Z_FINISH ? rc == Z_STREAM_END : w->z.avail_in == 0) break;
    }
    if (flush == Z_FINISH) put_image_data(w);
}

static void apng_header(apng_writer *w, int64_t iw, int64_t ih, int64_t nframes, int64_t loops) {
    static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    fwrite(signature, 1, 8, w->out.f);
    uint8_t ihdr[13] = {0};
    put_u32(ihdr, (uint32_t)iw);
    put_u32(ihdr + 4, (uint32_t)ih);
    ihdr[8] = 8; /* bit depth; colour type 2 (RGB), deflate, filter method 0, no interlace */
    ihdr[9] = 2;
    put_chunk(w, "IHDR", ihdr, sizeof ihdr, NULL, 0);
    uint8_t actl[8];
    put_u32(actl, (uint32_t)nframes);
    put_u32(actl + 4, (uint32_t)loops);
    put_chunk(w, "acTL", actl, sizeof actl, NULL, 0);
}

static void apng_frame(apng_writer *w, pixel_rows *p, int64_t delay_ms) {
    uint8_t fctl[26] = {0}; /* offsets 0,0; dispose NONE, blend SOURCE */
    put_u32(fctl, w->seq++);
    put_u32(fctl + 4, (uint32_t)p->iw);
    put_u32(fctl + 8, (uint32_t)p->ih);
    fctl[20] = (uint8_t)(delay_ms >> 8); /* delay = delay_num / delay_den seconds */
    fctl[21] = (uint8_t)delay_ms;
    fctl[22] = 1000 >> 8;
    fctl[23] = 1000 & 0xff;
    put_chunk(w, "fcTL", fctl, sizeof fctl, NULL, 0);

    memset(&w->z, 0, sizeof w->z);
    if (deflateInit(&w->z, Z_DEFAULT_COMPRESSION) != Z_OK)
        render_fail_write("zlib: deflateInit failed");
    w->z.next_out = w->zbuf;
    w->z.avail_out = sizeof w->zbuf;
    static const uint8_t filter_none = 0; /* each row: filter type 0, then its bytes */
    for (int64_t py = 0; py < p->ih; py++) {
        deflate_bytes(w, &filter_none, 1, Z_NO_FLUSH);
        deflate_bytes(w, pixel_row(p, py), (size_t)(p->iw * 3), Z_NO_FLUSH);
    }
    deflate_bytes(w, NULL, 0, Z_FINISH);
    deflateEnd(&w->z);
    w->first_frame = false;
}

void render_apng(const render_opts *o, const golmpi_file *g, const cell_rect *r,
                 const int64_t *frames, int64_t n, const char *path) {
    if (n > UINT32_MAX / 2) render_fail("%" PRId64 " frames are too many for one APNG", n);
    pixel_rows p;
    pixel_rows_init(&p, o, g, r);
    apng_writer *w = render_xmalloc(sizeof *w);
    memset(w, 0, sizeof *w);
    w->first_frame = true;
    render_out_open(&w->out, path);
    apng_header(w, p.iw, p.ih, n, o->loops);
    for (int64_t i = 0; i < n; i++) {
        pixel_rows_frame(&p, frames[i]);
        apng_frame(w, &p, o->delay_ms);
    }
    put_chunk(w, "IEND", NULL, 0, NULL, 0);
    render_out_commit(&w->out);
    char cells[160];
    describe_cells(g, r, cells, sizeof cells);
    printf("%s: %" PRId64 " frames, generations %" PRId64 "..%" PRId64 ", %s -> %" PRId64
           "x%" PRId64 " pixels, %" PRId64 " ms a frame\n",
           path, n, g->generations[frames[0]], g->generations[frames[n - 1]], cells, p.iw, p.ih,
           o->delay_ms);
    free(w);
    pixel_rows_free(&p);
}
