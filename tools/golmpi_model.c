/* golmpi-model: the model of a pass (cuda/shape_model.h) from the command line, what
 * bench/gpu_model.sh runs. No GPU, no MPI.
 *
 *   golmpi-model --gpu h200|h100 --width W --height H [--depth K] [--boundary torus|dead]
 *                [--rule R] [--ranks N] [--kernel NAME|auto] [--verbose]
 *       `NAME RATE` a line per shape (RATE: predicted cell updates a second), the fastest (the
 *       one auto takes) first; --kernel NAME: that shape's line alone.
 *   golmpi-model --gpu G --foreign WARPS,WARPS_BLOCK,REGS,INSTS_STEP,STEPS,GENS --width W
 *                --height H
 *       The predicted rate of a kernel from outside golmpi, described by its launch.
 *   golmpi-model --check CURVE.tsv [--bound PCT] [--peer-bound PCT]
 *       The calibration test: predicts every row of a measured curve (bench/data/...) and fails
 *       when one is off by more than its bound. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/shape_model.h"

typedef struct model_args {
    const char *gpu, *kernel, *boundary, *rule, *foreign, *check;
    int64_t width, height;
    int depth, ranks, verbose;
    double bound, peer_bound;
} model_args;

static int usage(const char *why) {
    fprintf(stderr,
            "golmpi-model: %s\nusage: golmpi-model --gpu h200|h100 --width W --height H "
            "[--depth K] [--boundary torus|dead] [--rule R] [--ranks N] [--kernel NAME|auto]\n"
            "       golmpi-model --gpu G --foreign WARPS,WARPS_BLOCK,REGS,INSTS_STEP,STEPS,GENS "
            "--width W --height H\n"
            "       golmpi-model --check CURVE.tsv [--bound PCT] [--peer-bound PCT]\n",
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

/* The foreign kernel's rate, from "WARPS,WARPS_BLOCK,REGS,INSTS_STEP,STEPS,GENS". */
static int foreign_rate(const shape_model_gpu *gpu, const char *spec, int64_t w, int64_t h,
                        double *rate) {
    shape_model_foreign k;
    long long warps, steps;
    if (sscanf(spec, "%lld,%d,%d,%lf,%lld,%d", &warps, &k.warps_block, &k.regs, &k.insts_step,
               &steps, &k.gens) != 6)
        return 0;
    k.warps = warps;
    k.steps = steps;
    k.cells = (double)w * (double)h;
    *rate = shape_model_foreign_rate(gpu, &k);
    return 1;
}

/* The calibration check: rows "gpu kind width height depth boundary rate [foreign-spec]", kind
 * golmpi (the baseline shape) or foreign. */
static int check_curve(const model_args *a) {
    FILE *f = fopen(a->check, "r");
    if (!f) return fprintf(stderr, "golmpi-model: cannot read %s\n", a->check), 2;
    char line[512];
    int rows = 0, bad = 0;
    printf("%-6s %-8s %8s %8s %5s %-6s %11s %11s %7s %6s\n", "gpu", "kernel", "width", "height",
           "depth", "edges", "measured", "model", "off", "bound");
    while (fgets(line, sizeof line, f)) {
        char gname[16], kind[16], edges[16], spec[128] = "";
        long long w, h;
        int depth;
        double measured;
        if (line[0] == '#' || line[0] == '\n') continue;
        if (sscanf(line, "%15s %15s %lld %lld %d %15s %lf %127s", gname, kind, &w, &h, &depth,
                   edges, &measured, spec) < 7)
            continue;
        shape_model_gpu gpu;
        if (!shape_model_gpu_by_key(gname, &gpu)) {
            fprintf(stderr, "golmpi-model: unknown gpu %s in %s\n", gname, a->check);
            fclose(f);
            return 2;
        }
        double rate = 0, bound;
        if (strcmp(kind, "golmpi") == 0) {
            model_args b = *a;
            b.width = w, b.height = h, b.depth = depth, b.boundary = edges, b.ranks = 1;
            const shape_model_slab s = slab_of(&b);
            rate = shape_model_predict(&gpu, &s, GOL_SHAPE_BASELINE).rate;
            bound = a->bound;
        } else {
            if (!foreign_rate(&gpu, spec, w, h, &rate)) {
                fprintf(stderr, "golmpi-model: bad foreign launch '%s' in %s\n", spec, a->check);
                fclose(f);
                return 2;
            }
            bound = a->peer_bound;
        }
        const double off = (rate - measured) / measured * 100;
        const int fail = !(fabs(off) <= bound);
        printf("%-6s %-8s %8lld %8lld %5d %-6s %11.3e %11.3e %+6.1f%% %5.0f%%%s\n", gname, kind, w,
               h, depth, edges, measured, rate, off, bound, fail ? "  FAIL" : "");
        rows++;
        bad += fail;
    }
    fclose(f);
    if (!rows) return fprintf(stderr, "golmpi-model: no rows in %s\n", a->check), 1;
    printf("%d rows, %d outside their bound\n", rows, bad);
    return bad ? 1 : 0;
}

static int parse(int argc, char **argv, model_args *a) {
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(o, "--verbose") == 0) {
            a->verbose = 1;
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
        else if (strcmp(o, "--bound") == 0)
            a->bound = atof(v);
        else if (strcmp(o, "--peer-bound") == 0)
            a->peer_bound = atof(v);
        else if (!parse_i64(v, &n))
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
    shape_model_gpu gpu;
    if (!a.gpu || !shape_model_gpu_by_key(a.gpu, &gpu)) return usage("--gpu h200|h100");
    if (!a.width || !a.height) return usage("--width and --height are needed");
    if (a.foreign) {
        double rate;
        if (!foreign_rate(&gpu, a.foreign, a.width, a.height, &rate))
            return usage("--foreign WARPS,WARPS_BLOCK,REGS,INSTS_STEP,STEPS,GENS");
        printf("foreign %.3e\n", rate);
        return 0;
    }
    const int only = strcmp(a.kernel, "auto") == 0 ? -1 : gol_shape_find(a.kernel);
    if (strcmp(a.kernel, "auto") != 0 && only < 0) return usage("--kernel: no such shape");
    const shape_model_slab s = slab_of(&a);
    shape_model_guess g[GOL_SHAPE_COUNT];
    shape_model_rank(&gpu, &s, g);
    for (int i = 0; i < GOL_SHAPE_COUNT; i++) {
        if (only >= 0 && g[i].shape != only) continue;
        if (!g[i].usable) {
            printf("%s -\n", gol_shapes[g[i].shape].name);
            continue;
        }
        printf("%s %.3e", gol_shapes[g[i].shape].name, g[i].rate);
        if (a.verbose)
            printf("  regs %d blocks/SM %d warps %lld chain %lld insts/row %.1f gen %.2f us",
                   g[i].regs, g[i].blocks_sm, (long long)g[i].warps, (long long)g[i].chain,
                   g[i].insts_row, g[i].gen_s * 1e6);
        printf("\n");
    }
    return 0;
}
