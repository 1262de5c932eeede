/* golmpi-render --rle: one frame, or a crop of it, as an RLE pattern that Golly opens and golmpi
 * runs (src/pattern.c reads the same header):
 *
 *   #CXRLE Pos=-W/2,-H/2 Gen=G
 *   #C golmpi generation G, cells X..X+W-1, Y..Y+H-1 of GWxGH
 *   x = W, y = H, rule = B3/S23:TW,H
 *
 * The rule suffix is Golly's bounded grid of the cropped size: ":T" for a torus run, ":P" (a plane
 * with dead cells beyond it) for a dead-boundary run. Golly centres a bounded grid on the origin;
 * Pos puts the pattern's top-left cell on the grid's, so the pattern fills the grid exactly, and
 * Gen carries the generation over. Lines are at most 70 characters (the RLE convention), broken
 * between tokens only. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/render.h"

#define RLE_LINE_MAX 70

typedef struct rle_text {
    FILE *f;
    char line[RLE_LINE_MAX + 1];
    int len;
    int64_t pending_rows; /* row ends not yet written: "$" tokens merge into one "n$" */
} rle_text;

static void rle_token(rle_text *t, int64_t count, char tag) {
    char tok[32];
    int n = count > 1 ? snprintf(tok, sizeof tok, "%" PRId64 "%c", count, tag)
                      : snprintf(tok, sizeof tok, "%c", tag);
    if (t->len + n > RLE_LINE_MAX) {
        fprintf(t->f, "%.*s\n", t->len, t->line);
        t->len = 0;
    }
    memcpy(t->line + t->len, tok, (size_t)n);
    t->len += n;
}

/* Cells [x0, x0+w) of one stored row: runs of dead and live cells, the trailing dead run left
 * out; an empty row only adds to the pending row ends. */
static void rle_row(rle_text *t, const uint8_t *row, int64_t x0, int64_t w, bool packed) {
    bool started = false;
    int64_t x = 0;
    while (x < w) {
        int v = golmpi_cell(row, x0 + x, packed);
        int64_t s = x;
        while (x < w && golmpi_cell(row, x0 + x, packed) == v)
            x++;
        if (!v && x == w) break;
        if (!started && t->pending_rows) rle_token(t, t->pending_rows, '$');
        if (!started) t->pending_rows = 0;
        started = true;
        rle_token(t, x - s, v ? 'o' : 'b');
    }
    t->pending_rows++;
}

/* The run's rule and Golly's bounded-grid letter for its boundary. */
static void rle_rule(const golmpi_file *g, const char *path, char *rule, size_t len, char *grid) {
    if (!golfile_attr_str(g->file, NULL, "rule", rule, len))
        render_fail("%s: no 'rule' attribute: --rle needs the rule of the run", path);
    char boundary[32];
    if (!golfile_attr_str(g->file, NULL, "boundary", boundary, sizeof boundary))
        render_fail("%s: no 'boundary' attribute: --rle needs the boundary of the run", path);
    if (!strcmp(boundary, "torus"))
        *grid = 'T';
    else if (!strcmp(boundary, "dead"))
        *grid = 'P';
    else
        render_fail("%s: unknown boundary '%s' (expected torus or dead)", path, boundary);
}

void render_rle(const render_opts *o, const golmpi_file *g, const cell_rect *r, int64_t f,
                const char *path) {
    char rule[64], grid;
    rle_rule(g, o->input, rule, sizeof rule, &grid);
    int64_t gen = g->generations[f];
    render_out out;
    render_out_open(&out, path);
    fprintf(out.f, "#CXRLE Pos=%" PRId64 ",%" PRId64 " Gen=%" PRId64 "\n", -(r->w / 2), -(r->h / 2),
            gen);
    fprintf(out.f,
            "#C golmpi generation %" PRId64 ", cells %" PRId64 "..%" PRId64 ", %" PRId64
            "..%" PRId64 " of %" PRId64 "x%" PRId64 "\n",
            gen, r->x, r->x + r->w - 1, r->y, r->y + r->h - 1, g->width, g->height);
    fprintf(out.f, "x = %" PRId64 ", y = %" PRId64 ", rule = %s:%c%" PRId64 ",%" PRId64 "\n", r->w,
            r->h, rule, grid, r->w, r->h);

    rle_text t = {.f = out.f};
    int64_t band_rows = golmpi_band_rows(g);
    uint8_t *band = render_xmalloc((size_t)((r->h < band_rows ? r->h : band_rows) * g->row_bytes));
    int64_t live = 0;
    for (int64_t y = r->y; y < r->y + r->h; y += band_rows) {
        int64_t n = r->y + r->h - y < band_rows ? r->y + r->h - y : band_rows;
        golmpi_read_rows(g, f, y, n, band);
        for (int64_t i = 0; i < n; i++) {
            const uint8_t *row = band + i * g->row_bytes;
            rle_row(&t, row, r->x, r->w, g->packed);
            live += golmpi_row_live(row, r->x, r->x + r->w, g->packed);
        }
    }
    rle_token(&t, 1, '!');
    fprintf(out.f, "%.*s\n", t.len, t.line);
    free(band);
    render_out_commit(&out);
    printf("%s: generation %" PRId64 ", %" PRId64 "x%" PRId64 " cells at %" PRId64 ",%" PRId64
           ", %" PRId64 " alive, rule = %s:%c%" PRId64 ",%" PRId64 "\n",
           path, gen, r->w, r->h, r->x, r->y, live, rule, grid, r->w, r->h);
}
