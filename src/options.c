/* The command line: getopt_long into a gol_config, every number checked with its endptr, then the
 * options cross-checked. Every rank parses the same argv and so reaches the same verdict; the
 * messages are returned, never printed, so rank 0 alone shows them. */
#include <errno.h>
#include <getopt.h>
#include <hdf5.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/rule.h"
#include "src/options.h"

#ifndef GOLMPI_VERSION
#define GOLMPI_VERSION "0.1.0"
#endif

#define DEFAULT_SIZE 4096
#define MAX_SIDE INT64_C(2147483647)
#define MAX_CELLS (INT64_C(1) << 50)

static const char help_text[] =
    "usage: golmpi [options]\n"
    "       mpirun -n P golmpi [options]    (one rank per GPU, or per CPU socket)\n"
    "\n"
    "Conway's Game of Life, or any Life-like rule, on one large grid split into row slabs over\n"
    "MPI ranks, with frames written in chunks through parallel HDF5.\n"
    "\n"
    "Grid:\n"
    "  --size N              square N x N grid                        (default 4096)\n"
    "  --width W --height H  a W x H grid; not together with --size    (default 4096 x 4096)\n"
    "  --rule Bx/Sy          Life-like rule: B3/S23, S23/B3 or 23/3    (default B3/S23)\n"
    "  --boundary KIND       torus | dead                              (default torus)\n"
    "\n"
    "Initial state:\n"
    "  --seed S              seed of the random start                  (default 1)\n"
    "  --density P           chance that a cell starts alive, 0..1     (default 0.5)\n"
    "  --pattern FILE        start from an RLE or .cells file instead  (default: random)\n"
    "                        its header may set the size, rule and boundary unless given\n"
    "  --at X,Y              top-left cell of the pattern              (default: centred)\n"
    "  --restart FILE        continue from the last frame of a golmpi output file\n"
    "\n"
    "Run:\n"
    "  --steps G             generations to advance                    (default 1000)\n"
    "  --backend KIND        auto | cpu | cuda                         (default auto)\n"
    "  --halo KIND           auto | mpi | nccl                         (default auto)\n"
    "  --no-graphs           CUDA: launch per generation, no CUDA graph replay\n"
    "\n"
    "Output:\n"
    "  --output PATH.h5      index file; chunks are PATH_<g0>-<g1>.h5  (default life.h5)\n"
    "  --save-every K        a frame every K generations, plus the first and the last\n"
    "                                                                  (default 250)\n"
    "  --chunk F             frames per chunk file                     (default 2)\n"
    "  --frame-format FMT    u8 (one byte per cell) | packed (1 bit, LSB first)\n"
    "                                                                  (default u8)\n"
    "  --no-output           write no frames (--stats still works)\n"
    "  --force               replace existing output files of the same names\n"
    "  --stats FILE.json     write the run's figures as JSON\n"
    "  --quiet               no progress line and no summary\n"
    "\n"
    "  -h, --help            this text\n"
    "  -V, --version         version and build information\n"
    "\n"
    "Examples:\n"
    "  mpirun -n 4 golmpi --size 16384\n"
    "  golmpi --pattern gosper.rle --size 512 --boundary dead --steps 300 --save-every 30 \\\n"
    "         --output runs/gun.h5\n"
    "\n"
    "Exit codes: 0 success, 2 bad input (command line, files, sizes, rank counts),\n"
    "3 --backend cuda without a usable GPU; library failures abort with a message.\n";

enum {
    OPT_SIZE = 256,
    OPT_WIDTH,
    OPT_HEIGHT,
    OPT_STEPS,
    OPT_SAVE_EVERY,
    OPT_CHUNK,
    OPT_OUTPUT,
    OPT_NO_OUTPUT,
    OPT_FORCE,
    OPT_SEED,
    OPT_DENSITY,
    OPT_PATTERN,
    OPT_AT,
    OPT_RULE,
    OPT_BOUNDARY,
    OPT_BACKEND,
    OPT_HALO,
    OPT_FRAME_FORMAT,
    OPT_RESTART,
    OPT_STATS,
    OPT_NO_GRAPHS,
};

static const struct option long_options[] = {
    {"size", required_argument, NULL, OPT_SIZE},
    {"width", required_argument, NULL, OPT_WIDTH},
    {"height", required_argument, NULL, OPT_HEIGHT},
    {"steps", required_argument, NULL, OPT_STEPS},
    {"save-every", required_argument, NULL, OPT_SAVE_EVERY},
    {"chunk", required_argument, NULL, OPT_CHUNK},
    {"output", required_argument, NULL, OPT_OUTPUT},
    {"no-output", no_argument, NULL, OPT_NO_OUTPUT},
    {"force", no_argument, NULL, OPT_FORCE},
    {"seed", required_argument, NULL, OPT_SEED},
    {"density", required_argument, NULL, OPT_DENSITY},
    {"pattern", required_argument, NULL, OPT_PATTERN},
    {"at", required_argument, NULL, OPT_AT},
    {"rule", required_argument, NULL, OPT_RULE},
    {"boundary", required_argument, NULL, OPT_BOUNDARY},
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"halo", required_argument, NULL, OPT_HALO},
    {"frame-format", required_argument, NULL, OPT_FRAME_FORMAT},
    {"restart", required_argument, NULL, OPT_RESTART},
    {"stats", required_argument, NULL, OPT_STATS},
    {"no-graphs", no_argument, NULL, OPT_NO_GRAPHS},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

static void config_defaults(gol_config *cfg) {
    memset(cfg, 0, sizeof *cfg);
    cfg->width = cfg->height = DEFAULT_SIZE;
    cfg->steps = 1000;
    cfg->save_every = 250;
    cfg->chunk = 2;
    snprintf(cfg->output, sizeof cfg->output, "life.h5");
    cfg->seed = 1;
    cfg->density = 0.5;
    cfg->rule.birth = GOL_RULE_CONWAY_BIRTH;
    cfg->rule.survive = GOL_RULE_CONWAY_SURVIVE;
    rule_format(cfg->rule, cfg->rule_text, sizeof cfg->rule_text);
    cfg->boundary = GOL_BOUNDARY_TORUS;
    cfg->backend = GOL_BACKEND_AUTO;
    cfg->halo = GOL_HALO_AUTO;
    cfg->frame_format = GOL_FRAME_U8;
}

/* A decimal integer in [lo, hi]; "what" says what the option wants, for the message. */
static gol_status parse_i64(const char *opt, const char *arg, int64_t lo, int64_t hi,
                            const char *what, int64_t *out) {
    char *end = NULL;
    errno = 0;
    long long v = strtoll(arg, &end, 10);
    if (end == arg || *end != '\0' || *arg == ' ' || *arg == '\t')
        return gol_fail(GOL_EXIT_USAGE, "%s: '%s' is not an integer", opt, arg);
    if (errno == ERANGE || v < lo || v > hi)
        return gol_fail(GOL_EXIT_USAGE, "%s: '%s' is out of range; expected %s", opt, arg, what);
    *out = (int64_t)v;
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

static gol_status parse_at(const char *arg, int64_t *x, int64_t *y) {
    const char *comma = strchr(arg, ',');
    char xs[32], ys[32];
    size_t xn = comma ? (size_t)(comma - arg) : 0;
    if (!comma || xn == 0 || xn >= sizeof xs || strlen(comma + 1) >= sizeof ys ||
        !comma[1])
        return gol_fail(GOL_EXIT_USAGE, "--at: '%s' is not of the form X,Y (e.g. --at 10,20)",
                        arg);
    memcpy(xs, arg, xn);
    xs[xn] = '\0';
    snprintf(ys, sizeof ys, "%s", comma + 1);
    char *end;
    errno = 0;
    long long vx = strtoll(xs, &end, 10);
    int bad = end == xs || *end || errno;
    long long vy = strtoll(ys, &end, 10);
    bad = bad || end == ys || *end || errno;
    if (bad)
        return gol_fail(GOL_EXIT_USAGE, "--at: '%s' is not of the form X,Y (e.g. --at 10,20)",
                        arg);
    if (vx < 0 || vy < 0 || vx > MAX_SIDE || vy > MAX_SIDE)
        return gol_fail(GOL_EXIT_USAGE,
                        "--at: '%s' is out of range; X and Y are cell indices from 0", arg);
    *x = vx;
    *y = vy;
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

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
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
        for (const struct option *o = long_options; o->name; o++)
            if (o->has_arg == no_argument && strlen(o->name) == n && strncmp(o->name, arg + 2, n) == 0)
                return gol_fail(GOL_EXIT_USAGE, "option '--%s' takes no value, got '%s'", o->name,
                                arg);
    }
    return gol_fail(GOL_EXIT_USAGE, "unknown option '%s' (see --help)", arg);
}

static const char *version_text(void) {
    /* A static buffer is fine here: the text is built once, on the way out. */
    static char text[512];
    snprintf(text, sizeof text,
             "golmpi %s\n"
             "backends: cpu (OpenMP)%s\n"
             "HDF5 %d.%d.%d (parallel), MPI %d.%d\n",
             GOLMPI_VERSION,
#ifdef GOLMPI_HAVE_CUDA
             ", cuda"
#ifdef GOLMPI_HAVE_NCCL
             " (NCCL halos)"
#endif
#else
             "; built without CUDA"
#endif
             ,
             H5_VERS_MAJOR, H5_VERS_MINOR, H5_VERS_RELEASE, MPI_VERSION, MPI_SUBVERSION);
    return text;
}

/* Options that are fine alone but not together, and sizes the program cannot hold. */
static gol_status config_cross_check(const gol_config *cfg, bool width_given, bool height_given,
                                     bool size_opt, bool output_given) {
    if (size_opt && (width_given || height_given))
        return gol_fail(GOL_EXIT_USAGE,
                        "--size sets both sides; give either --size or --width/--height");
    if (width_given != height_given)
        return gol_fail(GOL_EXIT_USAGE, "--%s given without --%s; give both (or --size)",
                        width_given ? "width" : "height", width_given ? "height" : "width");
    if (cfg->width > MAX_CELLS / cfg->height)
        return gol_fail(GOL_EXIT_USAGE,
                        "grid %" PRId64 " x %" PRId64 " has more than 2^50 cells", cfg->width,
                        cfg->height);
    if (cfg->no_output && output_given)
        return gol_fail(GOL_EXIT_USAGE, "--no-output and --output contradict each other");
    if (cfg->at_given && !cfg->pattern[0])
        return gol_fail(GOL_EXIT_USAGE, "--at places a pattern; it needs --pattern FILE");
    if (cfg->at_given && cfg->size_given && (cfg->at_x >= cfg->width || cfg->at_y >= cfg->height))
        return gol_fail(GOL_EXIT_USAGE,
                        "--at %" PRId64 ",%" PRId64 " is outside the %" PRId64 " x %" PRId64
                        " grid",
                        cfg->at_x, cfg->at_y, cfg->width, cfg->height);
    if (cfg->restart[0] && cfg->pattern[0])
        return gol_fail(GOL_EXIT_USAGE,
                        "--restart continues a saved run; it cannot start from --pattern too");
    if (cfg->halo == GOL_HALO_NCCL && cfg->backend == GOL_BACKEND_CPU)
        return gol_fail(GOL_EXIT_USAGE, "--halo nccl moves GPU memory; it needs --backend cuda "
                                        "(or auto), not cpu");
    return gol_ok();
}

gol_status config_parse(int argc, char **argv, gol_config *cfg, const char **out_text) {
    config_defaults(cfg);
    if (out_text) *out_text = NULL;

    /* getopt keeps state between calls; glibc only forgets all of it (a half-read cluster of
     * short options included) for optind = 0, so tests can parse several argv in a row. */
#ifdef __GLIBC__
    optind = 0;
#else
    optind = 1;
#endif
    /* Every rank would print getopt's own messages; ours go back to rank 0 instead. */
    opterr = 0;

    bool width_given = false, height_given = false, size_opt = false, output_given = false;
    gol_status st = gol_ok();
    int c;
    /* '+': stop at the first non-option, so a stray word is reported rather than reordered;
     * ':': report a missing value apart from an unknown option. */
    while ((c = getopt_long(argc, argv, "+:hVq", long_options, NULL)) != -1) {
        const char *a = optarg;
        int v = 0;
        switch (c) {
        case OPT_SIZE:
            st = parse_i64("--size", a, 1, MAX_SIDE, "a side of 1 to 2147483647 cells",
                           &cfg->width);
            cfg->height = cfg->width;
            size_opt = true;
            break;
        case OPT_WIDTH:
            st = parse_i64("--width", a, 1, MAX_SIDE, "1 to 2147483647 cells", &cfg->width);
            width_given = true;
            break;
        case OPT_HEIGHT:
            st = parse_i64("--height", a, 1, MAX_SIDE, "1 to 2147483647 cells", &cfg->height);
            height_given = true;
            break;
        case OPT_STEPS:
            st = parse_i64("--steps", a, 0, INT64_MAX / 2, "a count of generations >= 0",
                           &cfg->steps);
            break;
        case OPT_SAVE_EVERY:
            st = parse_i64("--save-every", a, 1, INT64_MAX / 2, "a period of 1 or more",
                           &cfg->save_every);
            break;
        case OPT_CHUNK:
            st = parse_i64("--chunk", a, 1, 1 << 20, "1 to 1048576 frames per file",
                           &cfg->chunk);
            break;
        case OPT_OUTPUT:
            st = parse_path("--output", a, cfg->output);
            if (!st.code && !ends_with(a, ".h5"))
                st = gol_fail(GOL_EXIT_USAGE, "--output: '%s' does not end in .h5", a);
            if (!st.code) {
                const char *slash = strrchr(a, '/');
                if (strcmp(slash ? slash + 1 : a, ".h5") == 0)
                    st = gol_fail(GOL_EXIT_USAGE, "--output: '%s' has no name before .h5", a);
            }
            output_given = true;
            break;
        case OPT_NO_OUTPUT: cfg->no_output = true; break;
        case OPT_FORCE: cfg->force = true; break;
        case OPT_SEED: {
            char *end = NULL;
            errno = 0;
            /* strtoull would quietly turn "-1" into 2^64-1 */
            unsigned long long s = strtoull(a, &end, 10);
            if (end == a || *end || errno == ERANGE || strchr(a, '-') || *a == ' ')
                st = gol_fail(GOL_EXIT_USAGE, "--seed: '%s' is not an integer from 0 to 2^64-1",
                              a);
            else
                cfg->seed = (uint64_t)s;
            break;
        }
        case OPT_DENSITY: {
            char *end = NULL;
            errno = 0;
            double d = strtod(a, &end);
            if (end == a || *end || *a == ' ')
                st = gol_fail(GOL_EXIT_USAGE, "--density: '%s' is not a number", a);
            else if (!(d >= 0.0 && d <= 1.0)) /* NaN fails too */
                st = gol_fail(GOL_EXIT_USAGE, "--density: '%s' is outside 0..1", a);
            else
                cfg->density = d;
            break;
        }
        case OPT_PATTERN: st = parse_path("--pattern", a, cfg->pattern); break;
        case OPT_AT:
            st = parse_at(a, &cfg->at_x, &cfg->at_y);
            cfg->at_given = true;
            break;
        case OPT_RULE:
            st = rule_parse(a, &cfg->rule, cfg->rule_text, sizeof cfg->rule_text);
            if (st.code) {
                gol_status wrapped = gol_fail(st.code, "--rule: %s", st.msg);
                st = wrapped;
            }
            cfg->rule_given = true;
            break;
        case OPT_BOUNDARY: {
            static const char *const names[] = {"torus", "dead"};
            static const int values[] = {GOL_BOUNDARY_TORUS, GOL_BOUNDARY_DEAD};
            st = parse_choice("--boundary", a, names, values, 2, "torus, dead", &v);
            if (!st.code) cfg->boundary = (gol_boundary)v;
            cfg->boundary_given = true;
            break;
        }
        case OPT_BACKEND: {
            static const char *const names[] = {"auto", "cpu", "cuda"};
            static const int values[] = {GOL_BACKEND_AUTO, GOL_BACKEND_CPU, GOL_BACKEND_CUDA};
            st = parse_choice("--backend", a, names, values, 3, "auto, cpu, cuda", &v);
            if (!st.code) cfg->backend = (gol_backend_kind)v;
            break;
        }
        case OPT_HALO: {
            static const char *const names[] = {"auto", "mpi", "nccl"};
            static const int values[] = {GOL_HALO_AUTO, GOL_HALO_MPI, GOL_HALO_NCCL};
            st = parse_choice("--halo", a, names, values, 3, "auto, mpi, nccl", &v);
            if (!st.code) cfg->halo = (gol_halo_kind)v;
            break;
        }
        case OPT_FRAME_FORMAT: {
            static const char *const names[] = {"u8", "packed", "packed-lsb"};
            static const int values[] = {GOL_FRAME_U8, GOL_FRAME_PACKED, GOL_FRAME_PACKED};
            st = parse_choice("--frame-format", a, names, values, 3, "u8, packed", &v);
            if (!st.code) cfg->frame_format = (gol_frame_format)v;
            break;
        }
        case OPT_RESTART: st = parse_path("--restart", a, cfg->restart); break;
        case OPT_STATS: st = parse_path("--stats", a, cfg->stats); break;
        case OPT_NO_GRAPHS: cfg->no_graphs = true; break;
        case 'q': cfg->quiet = true; break;
        case 'h':
            if (out_text) *out_text = help_text;
            return gol_fail(GOL_EXIT_DONE, "help");
        case 'V':
            if (out_text) *out_text = version_text();
            return gol_fail(GOL_EXIT_DONE, "version");
        default: return bad_option(c, argc, argv);
        }
        if (st.code) return st;
    }
    if (optind < argc)
        return gol_fail(GOL_EXIT_USAGE,
                        "unexpected argument '%s'; golmpi takes only options (see --help)",
                        argv[optind]);

    cfg->size_given = size_opt || width_given || height_given;
    return config_cross_check(cfg, width_given, height_given, size_opt, output_given);
}
