/* "<base>.xmf": an XDMF 3 temporal collection, so ParaView and VisIt open the run as a time
 * series of 2-D images. Each frame is a Uniform grid whose cell-centred attribute "alive" names
 * that frame's 2-D view in its chunk file, /frames_2d/<f> (a virtual dataset over /frames[f]):
 * ParaView's default reader (Xdmf3ReaderS) reads a named dataset whole, but an attribute given
 * as a HyperSlab of /frames comes out as "unrecognized array type [None]" (DESIGN, XDMF).
 *
 * The mesh is a 3DCoRectMesh of 1 x (H+1) x (W+1) nodes, which VTK reads as a 2-D image of
 * W x H cells, one per Life cell (a 2DCoRectMesh lands in the YZ plane). Its origin is y = H and
 * its y spacing -1, so row 0 is at the top, as in Golly and golmpi-render.
 *
 * The chunk files are named relative to the .xmf, so a run directory can be moved or copied.
 * Xdmf3 joins that name to the directory of the path it was given, and when that path is a bare
 * "life.xmf" it glues the two ("life.xmflife_..."): open it by a path with a directory (ParaView's
 * File > Open always passes one).
 *
 * Packed frames get an XMF too, over the byte grid: ceil(W/8) cells per row, the attribute is
 * called "alive_packed_lsb" and each value holds 8 cells, the leftmost in the least significant
 * bit. That keeps the time series openable; to see single cells, write u8 frames. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "io/io_internal.h"
#include "io/output_names.h"
#include "io/output_guard.h"

struct xdmf_state {
    char name[GOL_PATH_MAX + 16], part[GOL_PATH_MAX + 32];
    io_meta meta;
    char *grids; /* the text of every frame described so far */
    size_t len, cap;
};

static void append(xdmf_state *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void append(xdmf_state *x, const char *fmt, ...) {
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(x->grids + x->len, x->cap - x->len, fmt, ap);
        va_end(ap);
        SYS_CHECK(n >= 0, "vsnprintf");
        if ((size_t)n < x->cap - x->len) {
            x->len += (size_t)n;
            return;
        }
        size_t cap = 2 * x->cap + (size_t)n + 1;
        char *grown = gol_xmalloc(cap);
        memcpy(grown, x->grids, x->len);
        free(x->grids);
        x->grids = grown;
        x->cap = cap;
    }
}

xdmf_state *xdmf_create(const char *base, const io_meta *m) {
    xdmf_state *x = gol_xcalloc(1, sizeof *x);
    output_file_name(base, OUTPUT_XMF, x->name, sizeof x->name);
    output_file_name(base, OUTPUT_XMF_PART, x->part, sizeof x->part);
    x->meta = *m;
    x->cap = 4096;
    x->grids = gol_xmalloc(x->cap);
    x->grids[0] = '\0';
    return x;
}

/* XML text may not hold a bare & or <, and an attribute value may not hold its quote: a file name
 * such as "a&b.h5" would otherwise make the whole .xmf unreadable. */
static void append_escaped(xdmf_state *x, const char *text) {
    for (const char *c = text; *c; c++) {
        switch (*c) {
        case '&':
            append(x, "&amp;");
            break;
        case '<':
            append(x, "&lt;");
            break;
        case '>':
            append(x, "&gt;");
            break;
        case '"':
            append(x, "&quot;");
            break;
        case '\'':
            append(x, "&apos;");
            break;
        default:
            append(x, "%c", *c);
        }
    }
}

void xdmf_add_chunk(xdmf_state *x, const char *chunk_name, int64_t nframes, const int64_t *gens) {
    const io_meta *m = &x->meta;
    const char *attr = m->encoding[0] == 'p' ? "alive_packed_lsb" : "alive";
    long long h = (long long)m->height, w = (long long)m->row_bytes;
    for (int64_t f = 0; f < nframes; f++) {
        append(x,
               "      <Grid Name=\"generation_%06lld\" GridType=\"Uniform\">\n"
               "        <Time Value=\"%lld\"/>\n"
               "        <Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"1 %lld %lld\"/>\n"
               "        <Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n"
               "          <DataItem Format=\"XML\" NumberType=\"Float\" Dimensions=\"3\">0 %lld "
               "0</DataItem>\n"
               "          <DataItem Format=\"XML\" NumberType=\"Float\" Dimensions=\"3\">1 -1 "
               "1</DataItem>\n"
               "        </Geometry>\n"
               "        <Attribute Name=\"%s\" AttributeType=\"Scalar\" Center=\"Cell\">\n"
               "          <DataItem Format=\"HDF\" NumberType=\"UChar\" Precision=\"1\" "
               "Dimensions=\"%lld %lld\">",
               (long long)gens[f], (long long)gens[f], h + 1, w + 1, h, attr, h, w);
        append_escaped(x, io_basename(chunk_name));
        append(x,
               ":/frames_2d/%lld</DataItem>\n"
               "        </Attribute>\n"
               "      </Grid>\n",
               (long long)f);
    }
}

void xdmf_write(xdmf_state *x) {
    FILE *fp = fopen(x->part, "w");
    IO_SYS_CHECK(x->part, fp != NULL);
    fprintf(fp, "<?xml version=\"1.0\" ?>\n"
                "<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n"
                "<Xdmf Version=\"3.0\">\n"
                "  <Domain>\n"
                "    <Grid Name=\"life\" GridType=\"Collection\" CollectionType=\"Temporal\">\n");
    IO_SYS_CHECK(x->part, fwrite(x->grids, 1, x->len, fp) == x->len);
    fprintf(fp, "    </Grid>\n  </Domain>\n</Xdmf>\n");
    IO_SYS_CHECK(x->part, ferror(fp) == 0);
    IO_SYS_CHECK(x->part, fclose(fp) == 0);
    io_rename(x->part, x->name);
}

void xdmf_destroy(xdmf_state *x) {
    if (!x) return;
    free(x->grids);
    free(x);
}
