/* golmpi-model: the model of a pass (cuda/shape_model.h) from the command line, what
 * bench/gpu_model.sh runs. No GPU, no MPI.
 *
 *   golmpi-model --gpu h200|h100 --width W --height H [--depth K] [--boundary torus|dead]
 *                [--rule R] [--ranks N] [--kernel NAME|auto] [--verbose]
 *       `NAME RATE` a line per shape (RATE: predicted cell updates a second): first the one auto
 *       takes without timing (shape_model_pick: the fastest, or baseline when none beats it by
 *       SHAPE_MODEL_MARGIN), then the others fastest first; --kernel NAME: that shape's line.
 *   golmpi-model --gpu G --foreign WARPS,WARPS_BLOCK,REGS,INSTS_STEP,STEPS,GENS[,ALU_STEP]
 *                --width W --height H
 *       The predicted rate of a kernel from outside golmpi, described by its launch (ALU_STEP:
 *       the step's instructions on the integer ALU pipe; all of them when left out).
 *   golmpi-model --check CURVE.tsv [--bound PCT] [--peer-bound PCT]
 *       The calibration test: predicts every row of a measured curve (bench/data/...) and fails
 *       when one is off by more than its bound.
 *   golmpi-model --fit CURVE.tsv
 *       The calibration itself: the GPU constants (alu_ipc, pass_s) that bring the curve's
 *       golmpi rows closest (the smallest largest error), searched on a grid, lone_cpi held at
 *       its built-in value; exits 1 when the constants built into cuda/shape_model.c are not
 *       that fit. --fit-lone: lone_cpi searched too, on every shape's rows (a file of several
 *       shapes or depths, as bench/gpu_shapes.sh's TSV writes); exit 0, nothing compared.
 *   --lone-cpi X, --alu-ipc Y, --pass-us Z (with any of the above): what-ifs, those constants
 *       instead of the built-in ones. lone_cpi is the one a size curve at one depth cannot fix:
 *       `--fit CURVE --lone-cpi X` fits alu_ipc and pass_s at X (exit 0: nothing built in is
 *       compared), and `--check` or `--pick-check` with all three shows what that fit predicts
 *       (docs/PERFORMANCE.md, "What the kept-aside shapes say about the constants").
 *   golmpi-model --pick-check SHAPES.tsv [--bound PCT]
 *       Each shape's measured rate at several sizes (bench/data/...): at every size, the shape
 *       the model alone takes must run within PCT (15) percent of the fastest measured. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/shape_model.h"

typedef struct model_args {
    const char *gpu, *kernel, *boundary, *rule, *foreign, *check, *fit, *pick_check;
    int64_t width, height;
    int depth, ranks, verbose, fit_lone;
    double bound, peer_bound;
    double lone_cpi, alu_ipc, pass_us; /* what-ifs: 0, the built-in value */
} model_args;

static int usage(const char *why) {
    fprintf(stderr,
            "golmpi-model: %s\nusage: golmpi-model --gpu h200|h100 --width W --height H "
            "[--depth K] [--boundary torus|dead] [--rule R] [--ranks N] [--kernel NAME|auto]\n"
            "       golmpi-model --gpu G --foreign WARPS,WARPS_BLOCK,REGS,INSTS_STEP,STEPS,GENS"
            "[,ALU_STEP] --width W --height H\n"
            "       golmpi-model --check CURVE.tsv [--bound PCT] [--peer-bound PCT]\n"
            "       golmpi-model --fit CURVE.tsv [--fit-lone]\n"
            "       golmpi-model --pick-check SHAPES.tsv [--bound PCT]\n"
            "       any of them with --lone-cpi X --alu-ipc Y --pass-us Z: what-if constants\n",
            why);
    return 2;
}

static int parse_i64(const char *s, int64_t *v) {
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno || end == s || *end || x < 1) return 0;
    *v = x;
    return 1;
}

/* A what-if constant: a positive number below 100 into *x, 1; else 0. */
static int parse_constant(const char *s, double *x) {
    char *end;
    const double v = strtod(s, &end);
    if (end == s || *end || !(v > 0 && v < 100)) return 0;
    *x = v;
    return 1;
}

static int is_conway(const char *rule) {
    return !rule || strcmp(rule, "B3/S23") == 0 || strcmp(rule, "conway") == 0;
}

static shape_model_slab slab_of(const model_args *a) {
    const int torus = strcmp(a->boundary, "torus") == 0;
    shape_model_slab s = {.width = a->width,
                          .rows = a->height,
                          .depth = a->depth,
                          .torus = torus,
                          .conway = is_conway(a->rule),
                          .dead_top = !torus,
                          .dead_bottom = !torus,
                          .ranks = a->ranks};
    return s;
}

/* The foreign kernel's rate, from "WARPS,WARPS_BLOCK,REGS,INSTS_STEP,STEPS,GENS[,ALU_STEP]". */
static int foreign_rate(const shape_model_gpu *gpu, const char *spec, int64_t w, int64_t h,
                        double *rate) {
    shape_model_foreign k;
    long long warps, steps;
    const int n = sscanf(spec, "%lld,%d,%d,%lf,%lld,%d,%lf", &warps, &k.warps_block, &k.regs,
                         &k.insts_step, &steps, &k.gens, &k.alu_step);
    if (n != 6 && n != 7) return 0;
    if (n == 6) k.alu_step = k.insts_step;
    k.warps = warps;
    k.steps = steps;
    k.cells = (double)w * (double)h;
    *rate = shape_model_foreign_rate(gpu, &k);
    return 1;
}

/* One measured row of a curve file: "gpu kind width height depth boundary rate [foreign-spec]",
 * kind golmpi (the baseline shape), a shape's name (GOL_SHAPES), or foreign. */
typedef struct curve_row {
    char gpu[16], kind[16], edges[16], spec[128];
    long long w, h;
    int depth;
    double measured;
} curve_row;

enum { CURVE_MAX = 256 };

/* The rows of a curve file into rows[CURVE_MAX]: their count, or -1 with a message. */
static int read_curve(const char *path, curve_row *rows) {
    FILE *f = fopen(path, "r");
    if (!f) return fprintf(stderr, "golmpi-model: cannot read %s\n", path), -1;
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f) && n < CURVE_MAX) {
        curve_row *r = &rows[n];
        r->spec[0] = 0;
        if (line[0] == '#' || line[0] == '\n') continue;
        if (sscanf(line, "%15s %15s %lld %lld %d %15s %lf %127s", r->gpu, r->kind, &r->w, &r->h,
                   &r->depth, r->edges, &r->measured, r->spec) >= 7)
            n++;
    }
    fclose(f);
    if (!n) fprintf(stderr, "golmpi-model: no rows in %s\n", path);
    return n ? n : -1;
}

/* The constants of the GPU called key, with the what-ifs of the command line: 1, or 0 for a GPU
 * the model does not know. */
static int gpu_constants(const model_args *a, const char *key, shape_model_gpu *gpu) {
    if (!shape_model_gpu_by_key(key, gpu)) return 0;
    if (a->lone_cpi > 0) gpu->lone_cpi = a->lone_cpi;
    if (a->alu_ipc > 0) gpu->alu_ipc = a->alu_ipc;
    if (a->pass_us > 0) gpu->pass_s = a->pass_us * 1e-6;
    return 1;
}

/* A row's predicted rate on gpu: 1, or 0 for a bad foreign launch or an unknown kind. */
static int predict_row(const model_args *a, const shape_model_gpu *gpu, const curve_row *r,
                       double *rate) {
    if (strcmp(r->kind, "foreign") == 0) return foreign_rate(gpu, r->spec, r->w, r->h, rate);
    const int shape = strcmp(r->kind, "golmpi") == 0 ? GOL_SHAPE_BASELINE : gol_shape_find(r->kind);
    if (shape < 0) return 0;
    model_args b = *a;
    b.width = r->w, b.height = r->h, b.depth = r->depth, b.boundary = r->edges, b.ranks = 1;
    const shape_model_slab s = slab_of(&b);
    *rate = shape_model_predict(gpu, &s, shape).rate;
    return 1;
}

/* The calibration check: every row predicted, each within its bound (--bound for golmpi's rows,
 * --peer-bound for a foreign kernel's). */
static int check_curve(const model_args *a) {
    static curve_row rows[CURVE_MAX];
    const int n = read_curve(a->check, rows);
    if (n < 0) return 2;
    int bad = 0;
    printf("%-6s %-8s %8s %8s %5s %-6s %11s %11s %7s %6s\n", "gpu", "kernel", "width", "height",
           "depth", "edges", "measured", "model", "off", "bound");
    for (int i = 0; i < n; i++) {
        const curve_row *r = &rows[i];
        shape_model_gpu gpu;
        double rate = 0;
        if (!gpu_constants(a, r->gpu, &gpu))
            return fprintf(stderr, "golmpi-model: unknown gpu %s in %s\n", r->gpu, a->check), 2;
        if (!predict_row(a, &gpu, r, &rate))
            return fprintf(stderr, "golmpi-model: bad row '%s %s %s' in %s\n", r->kind, r->edges,
                           r->spec, a->check),
                   2;
        const double bound = strcmp(r->kind, "foreign") != 0 ? a->bound : a->peer_bound;
        const double off = (rate - r->measured) / r->measured * 100;
        const int fail = !(fabs(off) <= bound);
        printf("%-6s %-8s %8lld %8lld %5d %-6s %11.3e %11.3e %+6.1f%% %5.0f%%%s\n", r->gpu, r->kind,
               r->w, r->h, r->depth, r->edges, r->measured, rate, off, bound, fail ? "  FAIL" : "");
        bad += fail;
    }
    printf("%d rows, %d outside their bound\n", n, bad);
    return bad ? 1 : 0;
}

/* --pick-check: on a file of each shape's measured rate at several sizes, the shape the model
 * alone takes (shape_model_pick) at each size must run within --bound percent of the fastest
 * shape measured there. What a run too short to time its shapes loses by trusting the model. */
static int check_picks(const model_args *a) {
    static curve_row rows[CURVE_MAX];
    const int n = read_curve(a->pick_check, rows);
    if (n < 0) return 2;
    int sizes = 0, bad = 0;
    printf("%-6s %8s %8s %-10s %11s %-10s %11s %7s\n", "gpu", "width", "height", "model's",
           "measured", "fastest", "measured", "behind");
    for (int i = 0; i < n; i++) {
        int first = 1; /* the first row of its size: the size is checked once */
        for (int j = 0; j < i && first; j++)
            first = !(rows[j].w == rows[i].w && rows[j].h == rows[i].h &&
                      rows[j].depth == rows[i].depth && !strcmp(rows[j].edges, rows[i].edges));
        shape_model_gpu gpu;
        if (!first) continue;
        if (!gpu_constants(a, rows[i].gpu, &gpu))
            return fprintf(stderr, "golmpi-model: unknown gpu %s\n", rows[i].gpu), 2;
        double measured[GOL_SHAPE_COUNT] = {0}, gen_s[GOL_SHAPE_COUNT];
        for (int j = i; j < n; j++) {
            const int s = gol_shape_find(rows[j].kind);
            if (s >= 0 && rows[j].w == rows[i].w && rows[j].h == rows[i].h &&
                rows[j].depth == rows[i].depth && !strcmp(rows[j].edges, rows[i].edges))
                measured[s] = rows[j].measured;
        }
        model_args b = *a;
        b.width = rows[i].w, b.height = rows[i].h, b.depth = rows[i].depth;
        b.boundary = rows[i].edges, b.ranks = 1;
        const shape_model_slab slab = slab_of(&b);
        int best = 0;
        for (int s = 0; s < GOL_SHAPE_COUNT; s++) {
            const shape_model_guess g = shape_model_predict(&gpu, &slab, s);
            gen_s[s] = g.usable ? g.gen_s : INFINITY;
            if (measured[s] > measured[best]) best = s;
        }
        const int pick = shape_model_pick(gen_s);
        const double behind = (1 - measured[pick] / measured[best]) * 100;
        const int fail = !(measured[pick] > 0 && behind <= a->bound);
        printf("%-6s %8lld %8lld %-10s %11.3e %-10s %11.3e %6.1f%%%s\n", rows[i].gpu, rows[i].w,
               rows[i].h, gol_shapes[pick].name, measured[pick], gol_shapes[best].name,
               measured[best], behind, fail ? "  FAIL" : "");
        sizes++;
        bad += fail;
    }
    printf("%d sizes, %d where the model's shape is over %.0f%% behind the fastest\n", sizes, bad,
           a->bound);
    return bad ? 1 : 0;
}

/* The largest |error| (a fraction) of the golmpi rows of gpu's key with these constants: the
 * baseline shape's (kind golmpi or baseline), every shape's with --fit-lone. */
static double fit_error(const model_args *a, const curve_row *rows, int n,
                        const shape_model_gpu *gpu) {
    double worst = 0;
    for (int i = 0; i < n; i++) {
        double rate;
        const int baseline = !strcmp(rows[i].kind, "golmpi") || !strcmp(rows[i].kind, "baseline");
        const int shape = baseline || (a->fit_lone && gol_shape_find(rows[i].kind) >= 0);
        if (!shape || strcmp(rows[i].gpu, gpu->key)) continue;
        predict_row(a, gpu, &rows[i], &rate);
        worst = fmax(worst, fabs(rate - rows[i].measured) / rows[i].measured);
    }
    return worst;
}

/* The grid of the fit (alu_ipc 0.20-1.00, pass_s 0-40 us): wide enough for any sm_80/sm_90 GPU,
 * fine enough that the built constants (two decimals, half microseconds) are points of it. */
#define FIT_STEP_IPC 0.01
#define FIT_STEP_PASS 0.5e-6
#define FIT_STEP_LONE 0.1 /* --fit-lone: lone_cpi 1.0-4.0 */

/* The alu_ipc and pass_s of the grid that bring the rows closest, at g's lone_cpi: g is set to
 * them; returns that fit's largest error. */
static double fit_at(const model_args *a, const curve_row *rows, int n, shape_model_gpu *g) {
    shape_model_gpu t = *g;
    double best_err = INFINITY;
    for (int q = 20; q <= 100; q++)
        for (int p = 0; p <= 80; p++) {
            t.alu_ipc = q * FIT_STEP_IPC;
            t.pass_s = p * FIT_STEP_PASS;
            const double err = fit_error(a, rows, n, &t);
            if (err < best_err) best_err = err, *g = t;
        }
    return best_err;
}

/* --fit: the constants of the first GPU of the curve that make its golmpi rows closest, against
 * those built in. lone_cpi is not searched: a size curve at one depth cannot tell a lone warp's
 * latency from a pass's fixed cost (on the H200's curve lone_cpi 1.73 to 2.8 fits within 4-12%,
 * pass_s moving from 19.5 to 7 us), so it stays the built-in value (cuda/shape_model.c says why
 * that one), unless --lone-cpi asks what the fit is at another, or --fit-lone searches it too on
 * every shape's rows: a file with several shapes or depths (bench/gpu_shapes.sh's TSV) has
 * passes of several lengths, which set the two apart. */
static int fit_curve(const model_args *a) {
    static curve_row rows[CURVE_MAX];
    const int n = read_curve(a->fit, rows);
    if (n < 0) return 2;
    shape_model_gpu built, g, best;
    if (!shape_model_gpu_by_key(rows[0].gpu, &built))
        return fprintf(stderr, "golmpi-model: unknown gpu %s in %s\n", rows[0].gpu, a->fit), 2;
    g = best = built;
    if (a->lone_cpi > 0) g.lone_cpi = a->lone_cpi;
    double best_err = INFINITY;
    const int lone_steps = a->fit_lone ? 30 : 0;
    for (int l = 0; l <= lone_steps; l++) {
        if (a->fit_lone) g.lone_cpi = 1.0 + l * FIT_STEP_LONE;
        const double err = fit_at(a, rows, n, &g);
        if (err < best_err) best_err = err, best = g;
    }
    printf("fit (%s, %s rows of %s): lone_cpi %.2f alu_ipc %.2f pass_s %.1f us: largest error "
           "%.1f%%\n",
           best.key, a->fit_lone ? "every shape's" : "golmpi", a->fit, best.lone_cpi, best.alu_ipc,
           best.pass_s * 1e6, best_err * 100);
    if (a->lone_cpi > 0 || a->fit_lone) return 0; /* a what-if: nothing built in to compare */
    const double built_err = fit_error(a, rows, n, &built);
    printf("built in: lone_cpi %.2f alu_ipc %.2f pass_s %.1f us: largest error %.1f%%\n",
           built.lone_cpi, built.alu_ipc, built.pass_s * 1e6, built_err * 100);
    const int same = fabs(best.alu_ipc - built.alu_ipc) < FIT_STEP_IPC / 2 &&
                     fabs(best.pass_s - built.pass_s) < FIT_STEP_PASS / 2;
    if (!same) printf("the built-in constants are not the fit: set them in cuda/shape_model.c\n");
    return same ? 0 : 1;
}

static int parse(int argc, char **argv, model_args *a) {
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(o, "--verbose") == 0 || strcmp(o, "--fit-lone") == 0) {
            if (strcmp(o, "--verbose") == 0)
                a->verbose = 1;
            else
                a->fit_lone = 1;
            continue;
        }
        if (!v) return usage("an option without its value");
        int64_t n = 0;
        i++;
        if (strcmp(o, "--gpu") == 0)
            a->gpu = v;
        else if (strcmp(o, "--kernel") == 0)
            a->kernel = v;
        else if (strcmp(o, "--boundary") == 0)
            a->boundary = v;
        else if (strcmp(o, "--rule") == 0)
            a->rule = v;
        else if (strcmp(o, "--foreign") == 0)
            a->foreign = v;
        else if (strcmp(o, "--check") == 0)
            a->check = v;
        else if (strcmp(o, "--fit") == 0)
            a->fit = v;
        else if (strcmp(o, "--pick-check") == 0)
            a->pick_check = v;
        else if (strcmp(o, "--bound") == 0)
            a->bound = atof(v);
        else if (strcmp(o, "--peer-bound") == 0)
            a->peer_bound = atof(v);
        else if (strcmp(o, "--lone-cpi") == 0 || strcmp(o, "--alu-ipc") == 0 ||
                 strcmp(o, "--pass-us") == 0) {
            if (!parse_constant(v, strcmp(o, "--lone-cpi") == 0  ? &a->lone_cpi
                                   : strcmp(o, "--alu-ipc") == 0 ? &a->alu_ipc
                                                                 : &a->pass_us))
                return usage("a constant is a positive number below 100");
        } else if (!parse_i64(v, &n))
            return usage("a size, depth or rank count is not a positive integer");
        else if (strcmp(o, "--width") == 0)
            a->width = n;
        else if (strcmp(o, "--height") == 0)
            a->height = n;
        else if (strcmp(o, "--depth") == 0 && n <= 64)
            a->depth = (int)n;
        else if (strcmp(o, "--ranks") == 0 && n <= 64)
            a->ranks = (int)n;
        else
            return usage("unknown option, or a value out of range");
    }
    if (strcmp(a->boundary, "torus") && strcmp(a->boundary, "dead"))
        return usage("--boundary is torus or dead");
    return 0;
}

int main(int argc, char **argv) {
    model_args a = {.boundary = "dead",
                    .kernel = "auto",
                    .depth = 16,
                    .ranks = 1,
                    .bound = 15,
                    .peer_bound = 25};
    int rc = parse(argc, argv, &a);
    if (rc) return rc;
    if (a.check) return check_curve(&a);
    if (a.fit) return fit_curve(&a);
    if (a.pick_check) return check_picks(&a);
    shape_model_gpu gpu;
    if (!a.gpu || !gpu_constants(&a, a.gpu, &gpu)) return usage("--gpu h200|h100");
    if (!a.width || !a.height) return usage("--width and --height are needed");
    if (a.foreign) {
        double rate;
        if (!foreign_rate(&gpu, a.foreign, a.width, a.height, &rate))
            return usage("--foreign WARPS,WARPS_BLOCK,REGS,INSTS_STEP,STEPS,GENS[,ALU_STEP]");
        printf("foreign %.3e\n", rate);
        return 0;
    }
    const int only = strcmp(a.kernel, "auto") == 0 ? -1 : gol_shape_find(a.kernel);
    if (strcmp(a.kernel, "auto") != 0 && only < 0) return usage("--kernel: no such shape");
    const shape_model_slab s = slab_of(&a);
    shape_model_guess ranked[GOL_SHAPE_COUNT], g[GOL_SHAPE_COUNT];
    double gen_s[GOL_SHAPE_COUNT];
    shape_model_rank(&gpu, &s, ranked);
    for (int i = 0; i < GOL_SHAPE_COUNT; i++)
        gen_s[ranked[i].shape] = ranked[i].usable ? ranked[i].gen_s : INFINITY;
    /* auto's shape first (the fastest, or baseline when none beats it by the model's margin),
     * then the others fastest first */
    const int pick = shape_model_pick(gen_s);
    int n = 0;
    for (int i = 0; i < GOL_SHAPE_COUNT; i++)
        if (ranked[i].shape == pick) g[n++] = ranked[i];
    for (int i = 0; i < GOL_SHAPE_COUNT; i++)
        if (ranked[i].shape != pick) g[n++] = ranked[i];
    for (int i = 0; i < GOL_SHAPE_COUNT; i++) {
        if (only >= 0 && g[i].shape != only) continue;
        if (!g[i].usable) {
            printf("%s -\n", gol_shapes[g[i].shape].name);
            continue;
        }
        printf("%s %.3e", gol_shapes[g[i].shape].name, g[i].rate);
        if (a.verbose)
            printf("  regs %d blocks/SM %d warps %lld chain %lld insts/row %.1f (ALU %.1f) gen "
                   "%.2f us",
                   g[i].regs, g[i].blocks_sm, (long long)g[i].warps, (long long)g[i].chain,
                   g[i].insts_row, g[i].alu_row, g[i].gen_s * 1e6);
        printf("\n");
    }
    return 0;
}
