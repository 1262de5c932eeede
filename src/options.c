/* The command line: one table of options. getopt_long's table, --help and the defaults all come
 * from it, and README.md's table is checked against it (tests/test_options_readme.c). Every number
 * is checked with its endptr, then the options are cross-checked. Every rank parses the same argv
 * and so reaches the same verdict; the messages are returned, never printed, so rank 0 alone shows
 * them. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <hdf5.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/depth.h"
#include "core/rule.h"
#include "cuda/life_geometry.h"
#include "halo/halo.h"
#include "src/options.h"
#include "src/provenance.h"

#ifndef GOLMPI_VERSION
#define GOLMPI_VERSION "0.1.0"
#endif

#define MAX_SIDE INT64_C(2147483647)
#define MAX_CELLS (INT64_C(1) << 50)

#define MAX_OPTIONS 64

struct option_context {
    gol_config *cfg;
    const char **out_text;  /* where --help and --version leave their text; may be NULL */
    bool seen[MAX_OPTIONS]; /* by row: which options argv gave */
};

typedef gol_status option_apply(const gol_option *opt, const char *arg, option_context *ctx);
static option_apply apply_int64, apply_int64_or_auto, apply_size, apply_flag, apply_path,
    apply_output, apply_seed, apply_density, apply_at, apply_rule, apply_boundary, apply_backend,
    apply_halo, apply_kernel, apply_frame_format, apply_seconds, apply_help, apply_version;
static const char *rule_names_help(void);
/* --halo's help: "auto | " and the visible modes of halo/halo.c's table, so a new mode needs no
 * edit here. fill_halo_help writes it before --help is built. */
static char halo_help[64];
static void fill_halo_help(void);
/* --kernel's help: "auto | " and the shapes of cuda/life_geometry.h's table. */
static char kernel_help[160];
static void fill_kernel_help(void);

#define FIELD(f) .field = offsetof(gol_config, f)

/* Every option once, in --help's order. A default that is not prose is applied like a value
 * from argv, so --help, README.md and the config cannot disagree. */
// clang-format off
/* (one option to a row or two reads better than clang-format's one field to a line) */
static const gol_option table[] = {
    {.name = "size", .metavar = "N", .default_text = "4096", .group = "Grid",
     .help = "square N x N grid",
     .apply = apply_size, FIELD(width), .lo = 1, .hi = MAX_SIDE,
     .range_text = "a side of 1 to 2147483647 cells"},
    {.name = "width", .metavar = "W", .default_text = "4096", .group = "Grid",
     .help = "width of a W x H grid; not with --size",
     .apply = apply_int64, FIELD(width), .lo = 1, .hi = MAX_SIDE,
     .range_text = "1 to 2147483647 cells"},
    {.name = "height", .metavar = "H", .default_text = "4096", .group = "Grid",
     .help = "height of a W x H grid; with --width",
     .apply = apply_int64, FIELD(height), .lo = 1, .hi = MAX_SIDE,
     .range_text = "1 to 2147483647 cells"},
    {.name = "rule", .metavar = "Bx/Sy", .default_text = "B3/S23", .group = "Grid",
     .help = "Life-like rule: B3/S23, S23/B3 or 23/3", .help_more = rule_names_help,
     .apply = apply_rule},
    {.name = "boundary", .metavar = "KIND", .default_text = "torus", .group = "Grid",
     .help = "torus | dead",
     .apply = apply_boundary},

    {.name = "seed", .metavar = "S", .default_text = "1", .group = "Initial state",
     .help = "seed of the random start",
     .apply = apply_seed},
    {.name = "density", .metavar = "P", .default_text = "0.5", .group = "Initial state",
     .help = "chance that a cell starts alive, 0..1",
     .apply = apply_density},
    {.name = "pattern", .metavar = "FILE", .default_text = "random", .default_is_prose = true,
     .group = "Initial state",
     .help = "start from an RLE or .cells file instead\n"
             "its header may set the size, rule and boundary unless given",
     .apply = apply_path, FIELD(pattern)},
    {.name = "at", .metavar = "X,Y", .default_text = "centred", .default_is_prose = true,
     .group = "Initial state",
     .help = "top-left cell of the pattern",
     .apply = apply_at},
    {.name = "restart", .metavar = "FILE", .group = "Initial state",
     .help = "continue from the last frame of a golmpi output file",
     .apply = apply_path, FIELD(restart)},

    {.name = "steps", .metavar = "G", .default_text = "1000", .group = "Run",
     .help = "generations to advance",
     .apply = apply_int64, FIELD(steps), .lo = 0, .hi = INT64_MAX / 2,
     .range_text = "a count of generations >= 0"},
    {.name = "backend", .metavar = "KIND", .default_text = "auto", .group = "Run",
     .help = "auto | cpu | cuda",
     .apply = apply_backend},
    {.name = "halo", .metavar = "KIND", .default_text = "auto", .group = "Run",
     .help = halo_help, /* "auto | mpi | nccl": from halo/halo.c's table, see fill_halo_help */
     .apply = apply_halo},
    {.name = "halo-depth", .metavar = "K", .default_text = "auto", .group = "Run",
     .help = "K halo rows, exchanged every K generations;\n"
             "auto: by slab height (up to 16, at most a 32nd of the shortest slab)",
     .apply = apply_int64_or_auto, FIELD(halo_depth), .lo = 1, .hi = GOL_HALO_DEPTH_MAX,
     .range_text = "1 to 1024 rows, or auto"},
    {.name = "kernel", .metavar = "SHAPE", .default_text = "auto", .group = "Run",
     .help = kernel_help, /* from the shapes' table, see fill_kernel_help */
     .apply = apply_kernel},
    {.name = "tune", .group = "Run",
     .help = "CUDA: time every kernel shape on this run's slabs, record the\n"
             "fastest in the wisdom file, print the times; run nothing else",
     .apply = apply_flag, FIELD(tune)},
    {.name = "wisdom", .metavar = "PATH", .default_text = "$XDG_CACHE_HOME/golmpi/wisdom",
     .default_is_prose = true, .group = "Run",
     .help = "CUDA: kernel shapes measured before\n"
             "per GPU, build and slab (also GOLMPI_WISDOM;\n"
             "~/.cache/golmpi/wisdom without XDG_CACHE_HOME); off: nothing read or kept",
     .apply = apply_path, FIELD(wisdom)},
    {.name = "no-graphs", .group = "Run",
     .help = "CUDA: queue every pass itself, no CUDA graph replay of whole cycles",
     .apply = apply_flag, FIELD(no_graphs)},
    {.name = "timeout", .metavar = "SECONDS", .default_text = "300", .group = "Run",
     .help = "a halo row SECONDS late aborts all ranks\n"
             "and names the silent neighbour; 0: wait forever",
     .apply = apply_seconds, FIELD(timeout_s)},
    {.name = "dry-run", .group = "Run",
     .help = "check everything a run checks (inputs, outputs, memory), print the plan\n"
             "(a row per rank) and stop; with --stats, the plan as JSON",
     .apply = apply_flag, FIELD(dry_run)},

    {.name = "output", .metavar = "PATH.h5", .default_text = "life.h5", .group = "Output",
     .help = "index file; chunks are PATH_<g0>-<g1>.h5",
     .apply = apply_output},
    {.name = "save-every", .metavar = "K", .default_text = "250", .group = "Output",
     .help = "a frame every K generations, plus the first and the last",
     .apply = apply_int64, FIELD(save_every), .lo = 1, .hi = INT64_MAX / 2,
     .range_text = "a period of 1 or more"},
    {.name = "chunk", .metavar = "F", .default_text = "2", .group = "Output",
     .help = "frames per chunk file",
     .apply = apply_int64, FIELD(chunk), .lo = 1, .hi = 1 << 20,
     .range_text = "1 to 1048576 frames per file"},
    {.name = "frame-format", .metavar = "FMT", .default_text = "u8", .group = "Output",
     .help = "u8 (one byte per cell) | packed (1 bit, LSB first)",
     .apply = apply_frame_format},
    {.name = "no-output", .group = "Output",
     .help = "write no frames (--stats still works)",
     .apply = apply_flag, FIELD(no_output)},
    {.name = "force", .group = "Output",
     .help = "replace existing output files of the same names",
     .apply = apply_flag, FIELD(force)},
    {.name = "stats", .metavar = "FILE.json", .group = "Output",
     .help = "write the run's figures as JSON",
     .apply = apply_path, FIELD(stats)},
    {.name = "profile", .group = "Output",
     .help = "a line per chunk as it is written: its generations, and\n"
             "each stage's time, the slowest rank's (also in --stats)",
     .apply = apply_flag, FIELD(profile)},
    /* -q has always worked but was never in --help; it stays that way */
    {.name = "quiet", .short_name = 'q', .short_name_unlisted = true, .group = "Output",
     .help = "no progress line and no summary",
     .apply = apply_flag, FIELD(quiet)},
    {.name = "progress", .metavar = "SECONDS", .default_text = "10", .group = "Output",
     .help = "progress every SECONDS in batch logs\n"
             "(stderr not a terminal: mpirun, srun); 0: no progress at all",
     .apply = apply_seconds, FIELD(progress_s)},

    {.name = "help", .short_name = 'h',
     .help = "this text",
     .apply = apply_help},
    {.name = "version", .short_name = 'V',
     .help = "version and build information",
     .apply = apply_version},
};
// clang-format on

#define N_OPTIONS (sizeof table / sizeof *table)
_Static_assert(N_OPTIONS <= MAX_OPTIONS, "raise MAX_OPTIONS");

/* getopt_long returns OPT_BASE + row for a long option, above every short option's char. */
#define OPT_BASE 256

const gol_option *options_table(size_t *n) {
    *n = N_OPTIONS;
    return table;
}

static const char *option_label(const gol_option *o, char *buf, size_t len) {
    snprintf(buf, len, "--%s", o->name);
    return buf;
}

/* ---- --help, built from the table ---------------------------------------------------------- */

#define HELP_COLUMN 24    /* where an option's help starts */
#define DEFAULT_COLUMN 66 /* where "(default ...)" starts */
#define LINE_END 94       /* where generated lists wrap */

typedef struct text {
    char buf[16384];
    size_t len;
} text;

static void text_add(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void text_add(text *t, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->buf + t->len, sizeof t->buf - t->len, fmt, ap);
    va_end(ap);
    if (n > 0) t->len += (size_t)n;
    if (t->len >= sizeof t->buf) t->len = sizeof t->buf - 1; /* truncated, still terminated */
}

/* Spaces up to column col of the current line (at least one). */
static void text_pad_to(text *t, size_t col) {
    size_t start = t->len;
    while (start > 0 && t->buf[start - 1] != '\n')
        start--;
    size_t at = t->len - start;
    text_add(t, "%*s", at < col ? (int)(col - at) : 1, "");
}

/* Lines of s after the first, each indented to the help column. */
static void help_continuation(text *t, const char *s) {
    for (const char *nl = strchr(s, '\n'); nl; nl = strchr(nl + 1, '\n')) {
        const char *end = strchr(nl + 1, '\n');
        int n = end ? (int)(end - nl - 1) : (int)strlen(nl + 1);
        text_add(t, "\n%*s%.*s", HELP_COLUMN, "", n, nl + 1);
    }
}

/* "  --size N              square N x N grid                        (default 4096)" */
static void help_row(text *t, const gol_option *o) {
    text_add(t, "  ");
    if (o->short_name && !o->short_name_unlisted) text_add(t, "-%c, ", o->short_name);
    text_add(t, "--%s%s%s", o->name, o->metavar ? " " : "", o->metavar ? o->metavar : "");
    text_pad_to(t, HELP_COLUMN);
    size_t first = strcspn(o->help, "\n");
    text_add(t, "%.*s", (int)first, o->help);
    if (o->default_text) {
        /* a long first line gets its default on a line of its own, still in the column */
        if (HELP_COLUMN + first + 2 > DEFAULT_COLUMN) text_add(t, "\n");
        text_pad_to(t, DEFAULT_COLUMN);
        text_add(t, "(default%s %s)", o->default_is_prose ? ":" : "", o->default_text);
    }
    help_continuation(t, o->help);
    if (o->help_more) help_continuation(t, o->help_more());
    text_add(t, "\n");
}

static bool same_group(const char *a, const char *b) {
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* The exit codes, for --help and the man page (README.md's table says the same, checked by
 * tests/test_man.sh). */
static const struct {
    int code;
    const char *meaning;
} exit_codes[] = {
    {0, "success; also --help, --version, and a resumed series already complete"},
    {1, "a library failure (MPI, HDF5, CUDA, NCCL)"},
    {2, "bad input (options, files, sizes, rank counts, memory, existing output); nothing written"},
    {3, "--backend cuda without a usable GPU"},
    {4, "stopped by SIGTERM, SIGINT, SIGUSR1 or SIGHUP: the output ends in a checkpoint; resume with\n"
        "     --restart OUT --output OUT and the same --steps"},
    {5, "an output file could not be written (a full disk) or does not read back as written"},
    {6, "a rank or its GPU stopped answering for --timeout seconds (a node lost, a link cut):\n"
        "     finished chunks stay valid; resume with --restart OUT --output OUT"},
};
#define N_EXIT_CODES (sizeof exit_codes / sizeof *exit_codes)

static const char *help_text(void) {
    /* A static buffer is fine here: the text is built on the way out, once per parse. */
    static text t;
    t.len = 0;
    fill_halo_help();
    fill_kernel_help();
    text_add(&t, "usage: golmpi [options]\n"
                 "       mpirun -n P golmpi [options]    (one rank per GPU, or per CPU socket)\n"
                 "\n"
                 "Conway's Game of Life, or any Life-like rule, on one large grid split into row "
                 "slabs over\n"
                 "MPI ranks. Frames go into HDF5 chunk files: each rank pwrites its rows with "
                 "O_DIRECT into\n"
                 "the file's dataset where every rank's rows are 4 MiB or more and page-aligned "
                 "(the default\n"
                 "4-rank 16384x16384 job), else through MPI-IO (GOLMPI_IO_TRANSFER overrides).\n");
    for (size_t i = 0; i < N_OPTIONS; i++) {
        if (i == 0 || !same_group(table[i].group, table[i - 1].group))
            text_add(&t, "\n%s%s", table[i].group ? table[i].group : "",
                     table[i].group ? ":\n" : "");
        help_row(&t, &table[i]);
    }
    text_add(&t, "\n"
                 "Examples:\n"
                 "  mpirun -n 4 golmpi --size 16384\n"
                 "  golmpi --pattern tests/patterns/gosper.rle --size 512 --boundary dead "
                 "--steps 300 \\\n"
                 "         --save-every 30 --output gun.h5\n"
                 "  (gosper.rle: tests/patterns/ in the source tree, share/golmpi/patterns/ once "
                 "installed)\n"
                 "\n"
                 "Each option may be given once: a repeated option is an error, not last-wins.\n"
                 "\n"
                 "Exit codes (the same on every rank):\n");
    for (size_t i = 0; i < N_EXIT_CODES; i++)
        text_add(&t, "  %d  %s\n", exit_codes[i].code, exit_codes[i].meaning);
    return t.buf;
}

/* ---- the man page, from the same table ---------------------------------------------------- */

/* s in troff: '-' as \-, '\' as \e, each '\n' (a continuation in --help) a space. */
static void man_add_escaped(text *t, const char *s) {
    for (; *s; s++) {
        if (*s == '-') text_add(t, "\\-");
        else if (*s == '\\') text_add(t, "\\e");
        else if (*s == '\n') {
            text_add(t, " ");
            while (s[1] == ' ')
                s++; /* --help's indent of a continuation line */
        }
        else text_add(t, "%c", *s);
    }
}

static void man_option(text *t, const gol_option *o) {
    text_add(t, ".TP\n");
    if (o->short_name && !o->short_name_unlisted) text_add(t, "\\fB\\-%c\\fR, ", o->short_name);
    text_add(t, "\\fB");
    man_add_escaped(t, "--");
    man_add_escaped(t, o->name);
    text_add(t, "\\fR");
    if (o->metavar) {
        text_add(t, " \\fI");
        man_add_escaped(t, o->metavar);
        text_add(t, "\\fR");
    }
    text_add(t, "\n");
    man_add_escaped(t, o->help);
    if (o->help_more) man_add_escaped(t, o->help_more());
    if (o->default_text) {
        text_add(t, " (default%s ", o->default_is_prose ? ":" : "");
        man_add_escaped(t, o->default_text);
        text_add(t, ")");
    }
    text_add(t, "\n");
}

const char *options_man_page(void) {
    static text t;
    t.len = 0;
    fill_halo_help();
    fill_kernel_help();
    text_add(&t, ".TH GOLMPI 1 \"\" \"golmpi %s\" \"User Commands\"\n.SH NAME\n"
                 "golmpi \\- Conway's Game of Life, or any Life\\-like rule, on one large grid "
                 "over MPI ranks\n.SH SYNOPSIS\n.B mpirun \\-n\n.I P\n.B golmpi\n"
                 "[\\fIoptions\\fR]\n.SH DESCRIPTION\n"
                 "golmpi splits one grid into row slabs over MPI ranks (one GPU per rank with "
                 "CUDA and NCCL, or the cores of any machine with OpenMP) and writes frames into "
                 "HDF5 chunk files, with an XDMF file for ParaView: each rank writes its rows with "
                 "O_DIRECT pwrite into the file's dataset where every rank's rows are 4 MiB or "
                 "more and page-aligned, else through MPI-IO.\n"
                 "Each option may be given once.\n.SH OPTIONS\n",
             GOLMPI_VERSION);
    for (size_t i = 0; i < N_OPTIONS; i++) {
        if (table[i].group && (i == 0 || !same_group(table[i].group, table[i - 1].group)))
            text_add(&t, ".SS %s\n", table[i].group);
        man_option(&t, &table[i]);
    }
    text_add(&t, ".SH EXIT STATUS\nThe same on every rank.\n");
    for (size_t i = 0; i < N_EXIT_CODES; i++) {
        text_add(&t, ".TP\n.B %d\n", exit_codes[i].code);
        man_add_escaped(&t, exit_codes[i].meaning);
        text_add(&t, "\n");
    }
    text_add(&t, ".SH EXAMPLES\n.nf\nmpirun \\-n 4 golmpi \\-\\-size 16384\n"
                 "golmpi \\-\\-pattern gosper.rle \\-\\-size 512 \\-\\-boundary dead "
                 "\\-\\-steps 300 \\-\\-output gun.h5\n.fi\n"
                 ".SH SEE ALSO\n\\fBgolmpi\\-render\\fR(1), \\fBmpirun\\fR(1); the README and "
                 "docs/ in <prefix>/share/doc/golmpi\n");
    return t.buf;
}

static void fill_halo_help(void) {
    char names[sizeof halo_help - sizeof "auto | " + 1];
    halo_mode_names(names, sizeof names, " | ");
    snprintf(halo_help, sizeof halo_help, "auto | %s", names);
}

static void fill_kernel_help(void) {
    static text t;
    t.len = 0;
    text_add(&t, "CUDA: the kernel's shape: auto");
    for (int i = 0; i < GOL_SHAPE_COUNT; i++) text_add(&t, " | %s", gol_shapes[i].name);
    text_add(&t, "\nauto: the GPU's fastest for this slab, measured once, kept");
    memcpy(kernel_help, t.buf, t.len < sizeof kernel_help ? t.len + 1 : sizeof kernel_help);
    kernel_help[sizeof kernel_help - 1] = '\0';
}

/* --rule's extra lines: the names core/rule.c accepts, wrapped, so --help never lists a name
 * that rule_parse refuses or misses one it takes. Starts with '\n' like a continuation. */
static const char *rule_names_help(void) {
    static text t;
    t.len = 0;
    text_add(&t, "\nor a name Golly and LifeWiki use (any case):\n");
    size_t n, col = 0;
    const gol_named_rule *names = rule_names(&n);
    for (size_t i = 0; i < n; i++) {
        size_t w = strlen(names[i].name) + (i + 1 < n ? 1 : 0);
        if (col && col + 1 + w > LINE_END - HELP_COLUMN) {
            text_add(&t, "\n");
            col = 0;
        }
        text_add(&t, "%s%s%s", col ? " " : "", names[i].name, i + 1 < n ? "," : "");
        col += (col ? 1 : 0) + w;
    }
    return t.buf;
}

static const char *version_text(void) {
    /* A static buffer is fine here: the text is built once, on the way out. The same versions
     * go into --stats (src/report.c). */
    static char text[1024];
    gol_versions v;
    provenance_versions(&v);
    snprintf(text, sizeof text,
             "golmpi %s (git commit %s)\n"
             "backends: cpu (OpenMP)%s\n"
             "compiler: %s; CUDA compiler: %s\n"
             "MPI: %s (MPI standard %s)\n"
             "HDF5 %s (parallel)\n"
             "CUDA runtime %s, CUDA driver %s, NCCL %s\n",
             v.golmpi, v.commit,
#ifdef GOLMPI_HAVE_CUDA
             ", cuda"
#ifdef GOLMPI_HAVE_NCCL
             " (NCCL halos)"
#endif
#else
             "; built without CUDA"
#endif
             ,
             v.compiler, v.cuda_compiler, v.mpi, v.mpi_standard, v.hdf5, v.cuda_runtime,
             v.cuda_driver, v.nccl);
    return text;
}

/* ---- values: one apply function per kind of option ----------------------------------------- */

static void *field_of(option_context *ctx, const gol_option *o) {
    return (char *)ctx->cfg + o->field;
}

/* The one test every number's text passes, whatever its kind: strto* read something (end moved),
 * then nothing is left, and nothing before it either: strto* skips leading white space (a newline,
 * a tab, a space, from a script's quoting), which is refused like any other stray character. */
static bool number_whole(const char *arg, const char *end) {
    return end != arg && *end == '\0' && !isspace((unsigned char)arg[0]);
}

/* A decimal integer in [lo, hi]; "what" says what the option wants, for the message. */
static gol_status parse_i64(const char *opt, const char *arg, int64_t lo, int64_t hi,
                            const char *what, int64_t *out) {
    char *end = NULL;
    errno = 0;
    long long v = strtoll(arg, &end, 10);
    if (!number_whole(arg, end))
        return gol_fail(GOL_EXIT_USAGE, "%s: '%s' is not an integer", opt, arg);
    if (errno == ERANGE || v < lo || v > hi)
        return gol_fail(GOL_EXIT_USAGE, "%s: '%s' is out of range; expected %s", opt, arg, what);
    *out = (int64_t)v;
    return gol_ok();
}

static gol_status apply_int64(const gol_option *o, const char *arg, option_context *ctx) {
    char label[32];
    return parse_i64(option_label(o, label, sizeof label), arg, o->lo, o->hi, o->range_text,
                     (int64_t *)field_of(ctx, o));
}

/* "auto" (stored as 0) or an integer in [lo, hi]. */
static gol_status apply_int64_or_auto(const gol_option *o, const char *arg, option_context *ctx) {
    if (strcmp(arg, "auto") != 0) return apply_int64(o, arg, ctx);
    *(int64_t *)field_of(ctx, o) = 0;
    return gol_ok();
}

/* --size N is --width N --height N, but says "a side" in its message. */
static gol_status apply_size(const gol_option *o, const char *arg, option_context *ctx) {
    gol_status st = apply_int64(o, arg, ctx);
    ctx->cfg->height = ctx->cfg->width;
    return st;
}

static gol_status apply_flag(const gol_option *o, const char *arg, option_context *ctx) {
    (void)arg;
    *(bool *)field_of(ctx, o) = true;
    return gol_ok();
}

static gol_status parse_path(const char *opt, const char *arg, char *dst) {
    if (!*arg) return gol_fail(GOL_EXIT_USAGE, "%s: the file name is empty", opt);
    if (strlen(arg) >= GOL_PATH_MAX)
        return gol_fail(GOL_EXIT_USAGE, "%s: the path is longer than %d characters", opt,
                        GOL_PATH_MAX - 1);
    memcpy(dst, arg, strlen(arg) + 1);
    return gol_ok();
}

static gol_status apply_path(const gol_option *o, const char *arg, option_context *ctx) {
    char label[32];
    return parse_path(option_label(o, label, sizeof label), arg, (char *)field_of(ctx, o));
}

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* The chunk names are built from the index's name minus ".h5", so it needs both. */
static gol_status apply_output(const gol_option *o, const char *a, option_context *ctx) {
    (void)o;
    GOL_TRY(parse_path("--output", a, ctx->cfg->output));
    if (!ends_with(a, ".h5"))
        return gol_fail(GOL_EXIT_USAGE, "--output: '%s' does not end in .h5", a);
    const char *slash = strrchr(a, '/');
    if (strcmp(slash ? slash + 1 : a, ".h5") == 0)
        return gol_fail(GOL_EXIT_USAGE, "--output: '%s' has no name before .h5", a);
    /* The XDMF file names each chunk's frames as "FILE:/frames_2d/n"; its readers split there */
    if (strchr(slash ? slash + 1 : a, ':'))
        return gol_fail(GOL_EXIT_USAGE,
                        "--output: '%s': a ':' in the file name breaks the XDMF file's references "
                        "(FILE:/dataset) that ParaView follows; choose a name without ':'",
                        a);
    return gol_ok();
}

static gol_status apply_seed(const gol_option *o, const char *a, option_context *ctx) {
    (void)o;
    char *end = NULL;
    errno = 0;
    /* strtoull would quietly turn "-1" into 2^64-1 */
    unsigned long long s = strtoull(a, &end, 10);
    if (!number_whole(a, end) || errno == ERANGE || strchr(a, '-'))
        return gol_fail(GOL_EXIT_USAGE, "--seed: '%s' is not an integer from 0 to 2^64-1", a);
    ctx->cfg->seed = (uint64_t)s;
    return gol_ok();
}

static gol_status apply_density(const gol_option *o, const char *a, option_context *ctx) {
    (void)o;
    char *end = NULL;
    errno = 0;
    double d = strtod(a, &end);
    if (!number_whole(a, end))
        return gol_fail(GOL_EXIT_USAGE, "--density: '%s' is not a number", a);
    if (!(d >= 0.0 && d <= 1.0)) /* NaN fails too */
        return gol_fail(GOL_EXIT_USAGE, "--density: '%s' is outside 0..1", a);
    ctx->cfg->density = d;
    return gol_ok();
}

/* A duration in seconds, 0 or more; "0" switches the thing off. */
static gol_status apply_seconds(const gol_option *o, const char *a, option_context *ctx) {
    char label[32];
    option_label(o, label, sizeof label);
    char *end = NULL;
    double d = strtod(a, &end);
    if (!number_whole(a, end))
        return gol_fail(GOL_EXIT_USAGE, "%s: '%s' is not a number of seconds", label, a);
    if (!(d >= 0.0 && d <= 1e9)) /* NaN and inf fail too */
        return gol_fail(GOL_EXIT_USAGE, "%s: '%s' is outside 0..1e9 seconds", label, a);
    *(double *)field_of(ctx, o) = d;
    return gol_ok();
}

static gol_status apply_at(const gol_option *o, const char *arg, option_context *ctx) {
    (void)o;
    const char *comma = strchr(arg, ',');
    char xs[32], ys[32];
    size_t xn = comma ? (size_t)(comma - arg) : 0;
    if (!comma || xn == 0 || xn >= sizeof xs || strlen(comma + 1) >= sizeof ys || !comma[1])
        return gol_fail(GOL_EXIT_USAGE, "--at: '%s' is not of the form X,Y (e.g. --at 10,20)", arg);
    memcpy(xs, arg, xn);
    xs[xn] = '\0';
    snprintf(ys, sizeof ys, "%s", comma + 1);
    char *end;
    errno = 0;
    long long vx = strtoll(xs, &end, 10);
    int bad = !number_whole(xs, end) || errno;
    long long vy = strtoll(ys, &end, 10);
    bad = bad || !number_whole(ys, end) || errno;
    if (bad)
        return gol_fail(GOL_EXIT_USAGE, "--at: '%s' is not of the form X,Y (e.g. --at 10,20)", arg);
    if (vx < 0 || vy < 0 || vx > MAX_SIDE || vy > MAX_SIDE)
        return gol_fail(GOL_EXIT_USAGE,
                        "--at: '%s' is out of range; X and Y are cell indices from 0", arg);
    ctx->cfg->at_x = vx;
    ctx->cfg->at_y = vy;
    return gol_ok();
}

static gol_status apply_rule(const gol_option *o, const char *arg, option_context *ctx) {
    (void)o;
    gol_config *cfg = ctx->cfg;
    gol_status st = rule_parse(arg, &cfg->rule, cfg->rule_text, sizeof cfg->rule_text);
    if (st.code) return gol_fail(st.code, "--rule: %s", st.msg);
    return gol_ok();
}

/* Looks a word up in a table of names; fails listing the choices. */
static gol_status parse_choice(const char *opt, const char *arg, const char *const *names,
                               const int *values, int n, const char *choices, int *out) {
    for (int i = 0; i < n; i++)
        if (strcmp(arg, names[i]) == 0) {
            *out = values[i];
            return gol_ok();
        }
    return gol_fail(GOL_EXIT_USAGE, "%s: '%s' is not one of %s", opt, arg, choices);
}

static gol_status apply_boundary(const gol_option *o, const char *arg, option_context *ctx) {
    (void)o;
    static const char *const names[] = {"torus", "dead"};
    static const int values[] = {GOL_BOUNDARY_TORUS, GOL_BOUNDARY_DEAD};
    int v = 0;
    gol_status st = parse_choice("--boundary", arg, names, values, 2, "torus, dead", &v);
    if (!st.code) ctx->cfg->boundary = (gol_boundary)v;
    return st;
}

static gol_status apply_backend(const gol_option *o, const char *arg, option_context *ctx) {
    (void)o;
    static const char *const names[] = {"auto", "cpu", "cuda"};
    static const int values[] = {GOL_BACKEND_AUTO, GOL_BACKEND_CPU, GOL_BACKEND_CUDA};
    int v = 0;
    gol_status st = parse_choice("--backend", arg, names, values, 3, "auto, cpu, cuda", &v);
    if (!st.code) ctx->cfg->backend = (gol_backend_kind)v;
    return st;
}

/* "auto" or any mode of halo/halo.c's table, hidden ones (none) included; the message lists the
 * visible ones. Which backend can run the mode is decided later, in backend_select. */
static gol_status apply_halo(const gol_option *o, const char *arg, option_context *ctx) {
    (void)o;
    if (strcmp(arg, "auto") != 0 && !halo_mode_known(arg)) {
        char names[128];
        halo_mode_names(names, sizeof names, ", ");
        return gol_fail(GOL_EXIT_USAGE, "--halo: '%s' is not one of auto, %s", arg, names);
    }
    snprintf(ctx->cfg->halo, sizeof ctx->cfg->halo, "%s", arg);
    return gol_ok();
}

/* "auto" or a shape of cuda/life_geometry.h's table. */
static gol_status apply_kernel(const gol_option *o, const char *arg, option_context *ctx) {
    (void)o;
    if (strcmp(arg, "auto") != 0 && gol_shape_find(arg) < 0) {
        static text t;
        t.len = 0;
        for (int i = 0; i < GOL_SHAPE_COUNT; i++)
            text_add(&t, "%s%s", i ? ", " : "", gol_shapes[i].name);
        return gol_fail(GOL_EXIT_USAGE, "--kernel: '%s' is not one of auto, %s", arg, t.buf);
    }
    snprintf(ctx->cfg->kernel, sizeof ctx->cfg->kernel, "%s", arg);
    return gol_ok();
}

/* "packed-lsb" is the name the files' encoding attribute uses; it is accepted, not advertised. */
static gol_status apply_frame_format(const gol_option *o, const char *arg, option_context *ctx) {
    (void)o;
    static const char *const names[] = {"u8", "packed", "packed-lsb"};
    static const int values[] = {GOL_FRAME_U8, GOL_FRAME_PACKED, GOL_FRAME_PACKED};
    int v = 0;
    gol_status st = parse_choice("--frame-format", arg, names, values, 3, "u8, packed", &v);
    if (!st.code) ctx->cfg->frame_format = (gol_frame_format)v;
    return st;
}

/* --help and --version stop the parse where they stand: whatever follows is not looked at. */
static gol_status apply_help(const gol_option *o, const char *arg, option_context *ctx) {
    (void)o, (void)arg;
    if (ctx->out_text) *ctx->out_text = help_text();
    return gol_fail(GOL_EXIT_DONE, "help");
}

static gol_status apply_version(const gol_option *o, const char *arg, option_context *ctx) {
    (void)o, (void)arg;
    if (ctx->out_text) *ctx->out_text = version_text();
    return gol_fail(GOL_EXIT_DONE, "version");
}

/* ---- the phases of config_parse ------------------------------------------------------------ */

/* Zero, then every option's default through its own apply function, as if it stood in argv. */
static gol_status config_defaults(gol_config *cfg) {
    memset(cfg, 0, sizeof *cfg);
    option_context ctx = {.cfg = cfg, .out_text = NULL};
    for (size_t i = 0; i < N_OPTIONS; i++) {
        const gol_option *o = &table[i];
        if (!o->default_text || o->default_is_prose) continue;
        gol_status st = o->apply(o, o->default_text, &ctx);
        if (st.code) return gol_fail(st.code, "the default of --%s: %s", o->name, st.msg);
    }
    return gol_ok();
}

/* getopt_long's tables from ours: a long option returns OPT_BASE + its row. */
static void build_getopt_tables(struct option *longopts, char *shortopts, size_t short_len) {
    /* '+': stop at the first non-option, so a stray word is reported rather than reordered;
     * ':': report a missing value apart from an unknown option. */
    size_t k = (size_t)snprintf(shortopts, short_len, "+:");
    for (size_t i = 0; i < N_OPTIONS; i++) {
        longopts[i] =
            (struct option){table[i].name, table[i].metavar ? required_argument : no_argument, NULL,
                            OPT_BASE + (int)i};
        if (table[i].short_name && k + 2 < short_len) {
            shortopts[k++] = table[i].short_name;
            if (table[i].metavar) shortopts[k++] = ':';
        }
    }
    shortopts[k] = '\0';
    longopts[N_OPTIONS] = (struct option){NULL, 0, NULL, 0};
}

/* The row of what getopt_long returned, or NULL for its '?' and ':'. */
static const gol_option *row_of(int c) {
    if (c >= OPT_BASE && c < OPT_BASE + (int)N_OPTIONS) return &table[c - OPT_BASE];
    for (size_t i = 0; i < N_OPTIONS; i++)
        if (table[i].short_name && table[i].short_name == c) return &table[i];
    return NULL;
}

/* Names the option that getopt_long refused, from argv since optopt is 0 for long options. */
static gol_status bad_option(int c, int argc, char **argv) {
    const char *arg = (optind - 1 >= 1 && optind - 1 < argc) ? argv[optind - 1] : "?";
    if (optopt && optopt < 256 && !(arg[0] == '-' && arg[1] == '-'))
        arg = NULL; /* a short option inside a cluster: argv does not name it alone */
    if (c == ':') {
        if (arg) return gol_fail(GOL_EXIT_USAGE, "option '%s' needs a value (see --help)", arg);
        return gol_fail(GOL_EXIT_USAGE, "option '-%c' needs a value (see --help)", optopt);
    }
    if (!arg) return gol_fail(GOL_EXIT_USAGE, "unknown option '-%c' (see --help)", optopt);
    const char *eq = strchr(arg, '=');
    if (arg[0] == '-' && arg[1] == '-' && eq) {
        size_t n = (size_t)(eq - arg - 2);
        for (const gol_option *o = table; o < table + N_OPTIONS; o++)
            if (!o->metavar && strlen(o->name) == n && strncmp(o->name, arg + 2, n) == 0)
                return gol_fail(GOL_EXIT_USAGE, "option '--%s' takes no value, got '%s'", o->name,
                                arg);
    }
    return gol_fail(GOL_EXIT_USAGE, "unknown option '%s' (see --help)", arg);
}

/* getopt keeps state between calls; glibc only forgets all of it (a half-read cluster of short
 * options included) for optind = 0, so tests can parse several argv in a row. */
static void reset_getopt(void) {
#ifdef __GLIBC__
    optind = 0;
#else
    optind = 1;
#endif
    /* Every rank would print getopt's own messages; ours go back to rank 0 instead. */
    opterr = 0;
}

static gol_status apply_option(const gol_option *o, const char *arg, option_context *ctx) {
    /* Refused, not last-wins: "--size 32 --size 48" is a slip more often than a wish, and a
     * wrapper script's default silently overridden by a later one runs the wrong grid. */
    if (ctx->seen[o - table]) return gol_fail(GOL_EXIT_USAGE, "--%s given twice", o->name);
    ctx->seen[o - table] = true;
    return o->apply(o, arg, ctx);
}

/* argv in order: the first bad option or value stops the parse, as do --help and --version. */
static gol_status parse_arguments(int argc, char **argv, option_context *ctx) {
    struct option longopts[N_OPTIONS + 1];
    char shortopts[2 * N_OPTIONS + 3];
    build_getopt_tables(longopts, shortopts, sizeof shortopts);
    reset_getopt();
    int c;
    while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        const gol_option *o = row_of(c);
        if (!o) return bad_option(c, argc, argv);
        GOL_TRY(apply_option(o, optarg, ctx));
    }
    if (optind < argc)
        return gol_fail(GOL_EXIT_USAGE,
                        "unexpected argument '%s'; golmpi takes only options (see --help)",
                        argv[optind]);
    return gol_ok();
}

static bool given(const option_context *ctx, const char *name) {
    for (size_t i = 0; i < N_OPTIONS; i++)
        if (strcmp(table[i].name, name) == 0) return ctx->seen[i];
    return false;
}

/* What the user said, as opposed to a default: a pattern or restart file may fill the rest. */
static void note_given(option_context *ctx) {
    gol_config *cfg = ctx->cfg;
    cfg->size_given = given(ctx, "size") || given(ctx, "width") || given(ctx, "height");
    cfg->rule_given = given(ctx, "rule");
    cfg->boundary_given = given(ctx, "boundary");
    cfg->at_given = given(ctx, "at");
}

/* Options that are fine alone but not together, and sizes the program cannot hold. */
static gol_status cross_check(const option_context *ctx) {
    const gol_config *cfg = ctx->cfg;
    bool width_given = given(ctx, "width"), height_given = given(ctx, "height");
    if (given(ctx, "size") && (width_given || height_given))
        return gol_fail(GOL_EXIT_USAGE,
                        "--size sets both sides; give either --size or --width/--height");
    if (width_given != height_given)
        return gol_fail(GOL_EXIT_USAGE, "--%s given without --%s; give both (or --size)",
                        width_given ? "width" : "height", width_given ? "height" : "width");
    if (cfg->width > MAX_CELLS / cfg->height)
        return gol_fail(GOL_EXIT_USAGE, "grid %" PRId64 " x %" PRId64 " has more than 2^50 cells",
                        cfg->width, cfg->height);
    if (cfg->no_output && given(ctx, "output"))
        return gol_fail(GOL_EXIT_USAGE, "--no-output and --output contradict each other");
    if (cfg->no_output && cfg->profile)
        return gol_fail(GOL_EXIT_USAGE,
                        "--profile prints a line per chunk file, and --no-output writes none");
    if (cfg->at_given && !cfg->pattern[0])
        return gol_fail(GOL_EXIT_USAGE, "--at places a pattern; it needs --pattern FILE");
    if (cfg->at_given && cfg->size_given && (cfg->at_x >= cfg->width || cfg->at_y >= cfg->height))
        return gol_fail(GOL_EXIT_USAGE,
                        "--at %" PRId64 ",%" PRId64 " is outside the %" PRId64 " x %" PRId64
                        " grid",
                        cfg->at_x, cfg->at_y, cfg->width, cfg->height);
    if (cfg->tune && strcmp(cfg->kernel, "auto") != 0)
        return gol_fail(GOL_EXIT_USAGE, "--tune times every kernel shape; it takes no --kernel %s",
                        cfg->kernel);
    if (cfg->tune && cfg->backend == GOL_BACKEND_CPU)
        return gol_fail(GOL_EXIT_USAGE,
                        "--tune times the CUDA kernel's shapes; it needs --backend cuda (or auto)");
    if (cfg->restart[0] && cfg->pattern[0])
        return gol_fail(GOL_EXIT_USAGE,
                        "--restart continues a saved run; it cannot start from --pattern too");
    if (cfg->backend == GOL_BACKEND_CPU && strcmp(cfg->halo, "auto") != 0 &&
        !halo_mode_find(cfg->halo, HALO_MEM_HOST))
        return gol_fail(GOL_EXIT_USAGE,
                        "--halo %s moves GPU memory; it needs --backend cuda (or auto), not cpu",
                        cfg->halo);
    return gol_ok();
}

gol_status config_parse(int argc, char **argv, gol_config *cfg, const char **out_text) {
    if (out_text) *out_text = NULL;
    option_context ctx = {.cfg = cfg, .out_text = out_text};
    GOL_TRY(config_defaults(cfg));                 /* the table's defaults */
    GOL_TRY(parse_arguments(argc, argv, &ctx));    /* argv over them, in order */
    note_given(&ctx);         /* what argv set, for the pattern and restart files */
    return cross_check(&ctx); /* options that do not go together */
}
