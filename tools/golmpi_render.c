/* golmpi-render: frames of a golmpi output file as PNG images, one animated PNG, or RLE.
 *
 * The file is read through io/golfile, golmpi's own reader, serially and without MPI_Init
 * (render_file.c); the pixels and the animation are in render_image.c, the RLE in render_rle.c.
 * This file holds the command line and the choice of frames. */
#include <errno.h>
#include <getopt.h>
#include <hdf5.h>
#include <inttypes.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "tools/render.h"

#ifndef GOLMPI_VERSION
#define GOLMPI_VERSION "unknown"
#endif

static void usage(FILE *f) {
    fprintf(
        f,
        "usage: golmpi-render [options] FILE.h5\n"
        "Render frames of a golmpi output file (a chunk file or the index <base>.h5) as PNG\n"
        "images, as one animated PNG, or as RLE for Golly.\n"
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
        "  --crop X,Y,W,H      only the W x H cells whose top-left cell is column X, row Y\n"
        "                      (row 0 is the top row; default: the whole grid)\n"
        "  --zoom N            each cell an N x N block of pixels (instead of --width/--height)\n"
        "  --animate           one animated PNG (APNG) of the frames of --range (default: all\n"
        "                      frames), written to --output (default: out.png)\n"
        "  --delay MS          --animate: milliseconds each frame shows, 0..65535 (default: %d)\n"
        "  --loop N            --animate: times to play, 0 = forever (default: 0)\n"
        "  --rle               the frame (--frame, default the last; --crop) as an RLE pattern\n"
        "                      for Golly or golmpi --pattern, with the run's rule and a bounded\n"
        "                      grid of the crop's size: rule = R:TW,H (torus) or R:PW,H (dead);\n"
        "                      --output default: out.rle\n"
        "  --version           the version of golmpi-render and its libraries\n"
        "  -h, --help          this text\n"
        "\n"
        "A pixel covers a block of cells; with k of its n cells alive each channel is\n"
        "(dead*(n-k) + alive*k + n/2) / n in integer arithmetic, so 1:1 renders are exact.\n"
        "Frames may be uint8 (0/1 per cell) or packed-lsb (8 cells per byte, LSB first).\n"
        "\n"
        "Examples:\n"
        "  golmpi-render -o last.png life.h5                       the last frame\n"
        "  golmpi-render --crop 200,200,64,64 --zoom 8 -o c.png life.h5\n"
        "  golmpi-render --animate --range 0:300 --zoom 2 --delay 50 -o run.png life.h5\n"
        "  golmpi-render --rle --frame 300 --crop 200,200,64,64 -o region.rle life.h5\n"
        "\n"
        "Exit codes: 0 success, 2 bad input (options, input file, output path), 1 a failure\n"
        "while writing (disk full, memory).\n",
        RENDER_DEFAULT_MAX_SIDE, RENDER_DEFAULT_DELAY_MS);
}

static void version(void) {
    unsigned h5[3] = {0, 0, 0};
    H5get_libversion(&h5[0], &h5[1], &h5[2]);
    printf("golmpi-render %s\n"
#ifdef GOLMPI_GIT_COMMIT
           "commit " GOLMPI_GIT_COMMIT "\n"
#endif
           "libpng %s, zlib %s, HDF5 %u.%u.%u\n",
           GOLMPI_VERSION, png_get_libpng_ver(NULL), zlibVersion(), h5[0], h5[1], h5[2]);
}

static int64_t parse_i64(const char *opt, const char *text, int64_t min) {
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end != '\0' || v < min)
        render_fail("%s: '%s' is not an integer >= %" PRId64, opt, text, min);
    return (int64_t)v;
}

static int64_t parse_i64_in(const char *opt, const char *text, int64_t min, int64_t max) {
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end != '\0' || v < min || v > max)
        render_fail("%s: '%s' is not an integer in %" PRId64 "..%" PRId64, opt, text, min, max);
    return (int64_t)v;
}

static void parse_colour(const char *opt, const char *text, uint8_t rgb[3]) {
    const char *t = text[0] == '#' ? text + 1 : text;
    char *end = NULL;
    if (strlen(t) != 6) render_fail("%s: '%s' is not a colour RRGGBB", opt, text);
    errno = 0;
    unsigned long v = strtoul(t, &end, 16);
    if (errno || *end != '\0' || t[0] == '+' || t[0] == '-')
        render_fail("%s: '%s' is not a colour RRGGBB", opt, text);
    rgb[0] = (uint8_t)(v >> 16);
    rgb[1] = (uint8_t)(v >> 8);
    rgb[2] = (uint8_t)v;
}

static void parse_range(const char *text, render_opts *o) {
    const char *colon = strchr(text, ':');
    if (!colon) render_fail("--range: '%s' is not G0:G1", text);
    char first[64];
    size_t n = (size_t)(colon - text);
    if (n == 0 || n >= sizeof first) render_fail("--range: '%s' is not G0:G1", text);
    memcpy(first, text, n);
    first[n] = '\0';
    o->range_g0 = parse_i64("--range", first, 0);
    o->range_g1 = parse_i64("--range", colon + 1, 0);
    if (o->range_g1 < o->range_g0) render_fail("--range: %s is empty (G1 < G0)", text);
    o->range_given = true;
}

/* X,Y,W,H: four integers, the corner >= 0 and the sides >= 1; whether it fits the grid is known
 * only once the file is open. */
static void parse_crop(const char *text, render_opts *o) {
    int64_t v[4];
    const char *s = text;
    for (int i = 0; i < 4; i++) {
        char *end = NULL;
        errno = 0;
        long long x = strtoll(s, &end, 10);
        bool sep_ok = i < 3 ? *end == ',' : *end == '\0';
        if (errno || end == s || !sep_ok || x < (i < 2 ? 0 : 1) || s[0] == '+' || s[0] == ' ')
            render_fail("--crop: '%s' is not X,Y,W,H (X, Y >= 0: the top-left cell; W, H >= 1)",
                        text);
        v[i] = (int64_t)x;
        s = end + 1;
    }
    o->crop = (cell_rect){v[0], v[1], v[2], v[3]};
    o->crop_given = true;
}

/* The options, for getopt_long: -o and --output, or --NAME VALUE / --NAME=VALUE; a value option
 * returns its row's index plus OPT_BASE, so apply_value gets the option's own name. */
enum { OPT_BASE = 256 };
static const struct option long_options[] = {
    {"output", required_argument, NULL, 'o'},
    {"frame", required_argument, NULL, OPT_BASE + 1},
    {"range", required_argument, NULL, OPT_BASE + 2},
    {"width", required_argument, NULL, OPT_BASE + 3},
    {"height", required_argument, NULL, OPT_BASE + 4},
    {"alive", required_argument, NULL, OPT_BASE + 5},
    {"dead", required_argument, NULL, OPT_BASE + 6},
    {"crop", required_argument, NULL, OPT_BASE + 7},
    {"zoom", required_argument, NULL, OPT_BASE + 8},
    {"delay", required_argument, NULL, OPT_BASE + 9},
    {"loop", required_argument, NULL, OPT_BASE + 10},
    {"animate", no_argument, NULL, OPT_BASE + 11},
    {"rle", no_argument, NULL, OPT_BASE + 12},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_BASE + 14},
    {NULL, 0, NULL, 0},
};

/* Options given, for the checks across options. */
typedef struct seen_opts {
    const char *pixel_opt; /* the last of --width, --height, --zoom, --alive, --dead */
    bool size_given, delay_given, loop_given;
} seen_opts;

static void apply_value(render_opts *o, seen_opts *seen, const char *a, const char *val) {
    if (!strcmp(a, "--output")) {
        o->output = val;
    } else if (!strcmp(a, "--frame")) {
        o->frame_gen = parse_i64(a, val, 0);
        o->frame_given = true;
    } else if (!strcmp(a, "--range")) {
        parse_range(val, o);
    } else if (!strcmp(a, "--crop")) {
        parse_crop(val, o);
    } else if (!strcmp(a, "--delay")) {
        o->delay_ms = parse_i64_in(a, val, 0, 65535);
        seen->delay_given = true;
    } else if (!strcmp(a, "--loop")) {
        o->loops = parse_i64_in(a, val, 0, 65535);
        seen->loop_given = true;
    } else {
        seen->pixel_opt = strcmp(a, "--width") == 0    ? "--width"
                          : strcmp(a, "--height") == 0 ? "--height"
                          : strcmp(a, "--zoom") == 0   ? "--zoom"
                          : strcmp(a, "--alive") == 0  ? "--alive"
                                                       : "--dead";
        if (!strcmp(a, "--width")) o->width = parse_i64(a, val, 1);
        if (!strcmp(a, "--height")) o->height = parse_i64(a, val, 1);
        if (!strcmp(a, "--zoom")) o->zoom = parse_i64_in(a, val, 1, 1 << 20);
        if (!strcmp(a, "--alive")) parse_colour(a, val, o->alive);
        if (!strcmp(a, "--dead")) parse_colour(a, val, o->dead);
        seen->size_given |= !strcmp(a, "--width") || !strcmp(a, "--height");
    }
}

static void apply_flag(render_opts *o, const char *a) {
    if (!strcmp(a, "--animate")) {
        if (o->mode == RENDER_RLE) render_fail("--animate and --rle cannot be used together");
        o->mode = RENDER_ANIMATE;
    } else if (!strcmp(a, "--rle")) {
        if (o->mode == RENDER_ANIMATE) render_fail("--animate and --rle cannot be used together");
        o->mode = RENDER_RLE;
    }
}

/* The checks across options: each mode takes only the options that mean something for it. */
static void check_combinations(render_opts *o, const seen_opts *seen) {
    if (o->frame_given && o->range_given)
        render_fail("--frame and --range cannot be used together");
    if (o->mode == RENDER_ANIMATE && o->frame_given)
        render_fail("--animate plays the frames of --range (default: all), not one --frame");
    if (o->mode == RENDER_RLE && o->range_given)
        render_fail("--rle writes one frame: choose it with --frame, not --range");
    if (o->mode == RENDER_RLE && seen->pixel_opt)
        render_fail("--rle writes cells, not pixels: %s does not apply", seen->pixel_opt);
    if (o->zoom && seen->size_given)
        render_fail("--zoom sets the image size: use it or --width/--height, not both");
    if (o->mode != RENDER_ANIMATE && (seen->delay_given || seen->loop_given))
        render_fail("%s applies to --animate only", seen->delay_given ? "--delay" : "--loop");
    if (o->mode == RENDER_PNG && o->range_given) o->mode = RENDER_SEQUENCE;
    if (!o->output)
        o->output = o->mode == RENDER_SEQUENCE ? "out"
                    : o->mode == RENDER_RLE    ? "out.rle"
                                               : "out.png";
}

/* An option getopt_long refused: unknown, a value missing, or a value given to a flag. */
static void refuse(int c, char **argv) {
    const char *a = argv[optind - 1];
    if (c == ':') render_fail("%s needs a value", a);
    if (optopt && optopt < OPT_BASE) render_fail("unknown option '-%c' (see golmpi-render --help)",
                                                optopt);
    if (strncmp(a, "--", 2) == 0 && strchr(a, '='))
        render_fail("%.*s takes no value", (int)(strchr(a, '=') - a), a);
    render_fail("unknown option '%s' (see golmpi-render --help)", a);
}

static void parse_args(int argc, char **argv, render_opts *o) {
    memset(o, 0, sizeof *o);
    memset(o->alive, 0xff, 3);
    o->delay_ms = RENDER_DEFAULT_DELAY_MS;
    seen_opts seen = {0};
    if (argc < 2) {
        usage(stderr);
        exit(RENDER_EXIT_USAGE);
    }
    opterr = 0; /* our own messages, one line each */
    int c;
    while ((c = getopt_long(argc, argv, ":o:h", long_options, NULL)) != -1) {
        char name[32];
        if (c == 'h') {
            usage(stdout);
            exit(0);
        } else if (c == OPT_BASE + 14) {
            version();
            exit(0);
        } else if (c == 'o') {
            apply_value(o, &seen, "--output", optarg);
        } else if (c >= OPT_BASE + 1 && c <= OPT_BASE + 12) {
            snprintf(name, sizeof name, "--%s", long_options[c - OPT_BASE].name);
            if (long_options[c - OPT_BASE].has_arg) apply_value(o, &seen, name, optarg);
            else apply_flag(o, name);
        } else {
            refuse(c, argv);
        }
    }
    for (int i = optind; i < argc; i++) {
        if (o->input) render_fail("more than one input file ('%s' and '%s')", o->input, argv[i]);
        o->input = argv[i];
    }
    if (!o->input) render_fail("no input file given (see golmpi-render --help)");
    check_combinations(o, &seen);
}

/* The cells to show: --crop, which must lie inside the grid, or the whole grid. */
static cell_rect cells_of(const render_opts *o, const golmpi_file *g) {
    if (!o->crop_given) return (cell_rect){0, 0, g->width, g->height};
    const cell_rect *c = &o->crop;
    if (c->x >= g->width || c->y >= g->height || c->w > g->width - c->x || c->h > g->height - c->y)
        render_fail("--crop %" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
                    " does not fit the %" PRId64 "x%" PRId64 " grid of %s",
                    c->x, c->y, c->w, c->h, g->width, g->height, o->input);
    return *c;
}

/* The frames whose generation lies in --range (every frame without one), in file order. */
static int64_t frames_in_range(const render_opts *o, const golmpi_file *g, int64_t *out) {
    int64_t n = 0;
    for (int64_t f = 0; f < g->nframes; f++)
        if (!o->range_given ||
            (g->generations[f] >= o->range_g0 && g->generations[f] <= o->range_g1))
            out[n++] = f;
    if (n == 0)
        render_fail("%s: no frame with a generation in %" PRId64 ":%" PRId64
                    " (frames hold %" PRId64 "..%" PRId64 ")",
                    o->input, o->range_g0, o->range_g1, g->generations[0],
                    g->generations[g->nframes - 1]);
    return n;
}

static void render_sequence(const render_opts *o, const golmpi_file *g, const cell_rect *r,
                            const int64_t *frames, int64_t n) {
    char path[4096];
    for (int64_t i = 0; i < n; i++) {
        if (snprintf(path, sizeof path, "%s_%06" PRId64 ".png", o->output,
                     g->generations[frames[i]]) >= (int)sizeof path)
            render_fail("%s: output prefix too long", o->output);
        render_png(o, g, r, frames[i], path);
    }
}

int main(int argc, char **argv) {
    render_opts o;
    parse_args(argc, argv, &o);

    golmpi_file g;
    golmpi_open(o.input, &g);
    cell_rect r = cells_of(&o, &g);
    if (o.mode == RENDER_SEQUENCE || o.mode == RENDER_ANIMATE) {
        int64_t *frames = render_xmalloc((size_t)g.nframes * sizeof(int64_t));
        int64_t n = frames_in_range(&o, &g, frames);
        if (o.mode == RENDER_SEQUENCE)
            render_sequence(&o, &g, &r, frames, n);
        else
            render_apng(&o, &g, &r, frames, n, o.output);
        free(frames);
    } else {
        int64_t f = o.frame_given ? golmpi_frame_of(o.input, &g, o.frame_gen) : g.nframes - 1;
        if (o.mode == RENDER_RLE)
            render_rle(&o, &g, &r, f, o.output);
        else
            render_png(&o, &g, &r, f, o.output);
    }
    golmpi_close(&g);
    return 0;
}
