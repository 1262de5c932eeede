#include "cuda/shape_choice.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "core/trace.h"
#include "cuda/cuda_share.h"
#include "cuda/shape_model.h"
#include "golmpi_git.h"
#include "io/wisdom.h"

#define NEVER 1e30 /* seconds a generation of a shape not timed, or not usable */

static const char *const how_names[] = {[SHAPE_CHOICE_ASKED] = "asked by --kernel",
                                        [SHAPE_CHOICE_WISDOM] = "wisdom",
                                        [SHAPE_CHOICE_MEASURED] = "measured",
                                        [SHAPE_CHOICE_TUNED] = "tuned",
                                        [SHAPE_CHOICE_MODEL] = "model",
                                        [SHAPE_CHOICE_UNUSED] = "not used at depth 1"};

const char *shape_choice_how_name(shape_choice_how how) { return how_names[how]; }

static shape_choice_result result_of(int shape, shape_choice_how how) {
    shape_choice_result r = {.shape = shape, .how = how};
    for (int s = 0; s < GOL_SHAPE_COUNT; s++)
        r.seconds[s] = -1.0;
    return r;
}

void shape_choice_describe(const shape_choice_result *r, char *text, size_t len) {
    size_t at = (size_t)snprintf(text, len, "%s (%s", gol_shapes[r->shape].name,
                                 shape_choice_how_name(r->how));
    const char *sep = ": ";
    for (int s = 0; s < GOL_SHAPE_COUNT && at < len; s++) {
        if (r->seconds[s] < 0) continue;
        at += (size_t)snprintf(text + at, len - at, "%s%s %.3g", sep, gol_shapes[s].name,
                               r->seconds[s]);
        sep = ", ";
    }
    if (at < len)
        snprintf(text + at, len - at, "%s)", strcmp(sep, ", ") == 0 ? " s a generation" : "");
}

/* ---- the key of a wisdom record ---- */

typedef struct choice_key {
    char where[WISDOM_FIELD_MAX], what[WISDOM_FIELD_MAX];
} choice_key;

/* WHERE: the GPU and the build; WHAT: this rank's slab as the kernels see it, the launch share
 * included (ranks running kernels on the GPU side by side under MPS time each shape otherwise). */
static void key_of(const gol_plan *plan, const shape_choice_gpu *gpu, choice_key *k) {
    char name[256];
    wisdom_field(gpu->name, name, sizeof name);
    snprintf(k->where, sizeof k->where, "gpu=%s sms=%d cc=%d.%d driver=%d runtime=%d build=%s/%s",
             name, gpu->sms, gpu->cc_major, gpu->cc_minor, gpu->driver, gpu->runtime,
             GOLMPI_VERSION, GOLMPI_GIT_COMMIT);
    const gol_slab *s = &plan->slab;
    snprintf(
        k->what, sizeof k->what, "width=%lld rows=%lld rule=%s boundary=%s depth=%lld share=%d",
        (long long)s->width, (long long)s->rows, gol_rule_is_conway(s->rule) ? "conway" : "other",
        config_boundary_name(s->boundary), (long long)plan->depth, cuda_launch_ranks(&plan->gpu));
}

/* ---- the model ---- */

/* Each shape's predicted seconds a generation on the slowest rank (NEVER: no instance).
 * Collective over comm (an MPI_Allreduce). */
static void model_seconds(const gol_plan *plan, const shape_choice_gpu *gpu, MPI_Comm comm,
                          double worst[GOL_SHAPE_COUNT]) {
    shape_model_gpu mg = shape_model_gpu_for(gpu->name, gpu->sms, gpu->clock_khz * 1e3,
                                             gpu->cc_major * 10 + gpu->cc_minor);
    const gol_slab *s = &plan->slab;
    shape_model_slab ms = {.width = s->width,
                           .rows = s->rows,
                           .depth = (int)plan->depth,
                           .torus = s->boundary == GOL_BOUNDARY_TORUS,
                           .conway = gol_rule_is_conway(s->rule),
                           .dead_top = s->up < 0,
                           .dead_bottom = s->down < 0,
                           .ranks = cuda_launch_ranks(&plan->gpu)};
    shape_model_guess g[GOL_SHAPE_COUNT];
    double mine[GOL_SHAPE_COUNT];
    for (int i = 0; i < GOL_SHAPE_COUNT; i++)
        mine[i] = NEVER;
    int usable = shape_model_rank(&mg, &ms, g);
    for (int i = 0; i < usable; i++)
        if (g[i].gen_s > 0 && isfinite(g[i].gen_s)) mine[g[i].shape] = g[i].gen_s;
    MPI_CHECK(MPI_Allreduce(mine, worst, GOL_SHAPE_COUNT, MPI_DOUBLE, MPI_MAX, comm));
}

/* The shape whose time is least (the first in the table on a tie: baseline before the rest). */
static int fastest(const double seconds[GOL_SHAPE_COUNT]) {
    int best = GOL_SHAPE_BASELINE;
    for (int s = 0; s < GOL_SHAPE_COUNT; s++)
        if (seconds[s] < seconds[best]) best = s;
    return best;
}

/* The shapes to time: every one (--tune), or baseline and the model's SHAPE_CHOICE_FEW best of
 * the others. */
static void candidates(const double model[GOL_SHAPE_COUNT], bool every,
                       bool timed[GOL_SHAPE_COUNT]) {
    double left[GOL_SHAPE_COUNT];
    for (int s = 0; s < GOL_SHAPE_COUNT; s++) {
        timed[s] = every || s == GOL_SHAPE_BASELINE;
        left[s] = s == GOL_SHAPE_BASELINE ? NEVER * 2 : model[s];
    }
    for (int n = 0; n < SHAPE_CHOICE_FEW; n++) {
        int s = fastest(left);
        if (left[s] >= NEVER) break;
        timed[s] = true;
        left[s] = NEVER * 2;
    }
}

/* What timing the candidates costs against the run's predicted length, both in seconds. */
static bool timing_pays(const gol_config *cfg, const double model[GOL_SHAPE_COUNT],
                        const bool timed[GOL_SHAPE_COUNT]) {
    double cost = 0.0;
    for (int s = 0; s < GOL_SHAPE_COUNT; s++)
        if (timed[s]) cost += SHAPE_CHOICE_TIMED_GENS * (model[s] < NEVER ? model[s] : 0.0);
    double run = model[fastest(model)] * (double)cfg->steps;
    return model[fastest(model)] < NEVER && cost <= SHAPE_CHOICE_BUDGET * run;
}

/* ---- measuring ---- */

/* Every candidate timed on every rank, in table order; each shape's slowest rank. Collective
 * (an MPI_Allreduce per shape). */
static void measure(const bool timed[GOL_SHAPE_COUNT], shape_choice_timer time_shape, void *ctx,
                    MPI_Comm comm, double worst[GOL_SHAPE_COUNT]) {
    double mine[GOL_SHAPE_COUNT];
    trace_push("kernel shape timing");
    for (int s = 0; s < GOL_SHAPE_COUNT; s++) {
        mine[s] = -1.0;
        if (!timed[s]) continue;
        double t = time_shape(ctx, s);
        mine[s] = t > 0 && isfinite(t) ? t : NEVER; /* a timer's nonsense never wins */
    }
    trace_pop();
    MPI_CHECK(MPI_Allreduce(mine, worst, GOL_SHAPE_COUNT, MPI_DOUBLE, MPI_MAX, comm));
}

/* ---- wisdom, on rank 0 ---- */

/* Every rank's key, on rank 0 (NULL elsewhere); *n: how many. */
static choice_key *gather_keys(const choice_key *mine, MPI_Comm comm, int *n) {
    int rank;
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    MPI_CHECK(MPI_Comm_size(comm, n));
    choice_key *all = rank == 0 ? gol_xcalloc((size_t)*n, sizeof *all) : NULL;
    MPI_CHECK(
        MPI_Gather(mine, (int)sizeof *mine, MPI_BYTE, all, (int)sizeof *mine, MPI_BYTE, 0, comm));
    return all;
}

/* The distinct keys first, in rank order; returns how many. */
static int distinct_keys(choice_key *k, int n) {
    int d = 0;
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < d && !seen; j++)
            seen = !strcmp(k[i].where, k[j].where) && !strcmp(k[i].what, k[j].what);
        if (!seen) k[d++] = k[i];
    }
    return d;
}

/* A record's value: "shape=NAME how=HOW baseline=SECONDS ... half=-". */
static void value_of(const shape_choice_result *r, char *v, size_t len) {
    size_t at = (size_t)snprintf(v, len, "shape=%s how=%s", gol_shapes[r->shape].name,
                                 shape_choice_how_name(r->how));
    for (int s = 0; s < GOL_SHAPE_COUNT && at < len; s++)
        at += r->seconds[s] >= 0 ? (size_t)snprintf(v + at, len - at, " %s=%.6e",
                                                    gol_shapes[s].name, r->seconds[s])
                                 : (size_t)snprintf(v + at, len - at, " %s=-", gol_shapes[s].name);
}

/* The shape a value names, its times in r->seconds; -1 when it names none of this build's. */
static int parse_value(char *v, shape_choice_result *r) {
    int shape = -1;
    for (char *tok = strtok(v, " "); tok; tok = strtok(NULL, " ")) {
        char *eq = strchr(tok, '=');
        if (!eq) continue;
        *eq = '\0';
        int s = gol_shape_find(tok);
        if (!strcmp(tok, "shape"))
            shape = gol_shape_find(eq + 1);
        else if (s >= 0 && strcmp(eq + 1, "-") != 0)
            r->seconds[s] = strtod(eq + 1, NULL);
    }
    return shape;
}

/* Rank 0: the shape every key's record names, when they all have one and name the same. */
static int wisdom_lookup(const char *path, choice_key *keys, int n, shape_choice_result *r,
                         wisdom_notice *notice) {
    int shape = -1;
    for (int i = 0; i < n; i++) {
        char value[WISDOM_FIELD_MAX];
        shape_choice_result mine = result_of(GOL_SHAPE_BASELINE, SHAPE_CHOICE_WISDOM);
        if (!wisdom_find(path, keys[i].where, keys[i].what, value, sizeof value, notice)) return -1;
        int s = parse_value(value, &mine);
        if (s < 0 || (i > 0 && s != shape)) return -1;
        if (i == 0) *r = mine;
        shape = s;
    }
    r->shape = shape;
    return shape;
}

static void say(const gol_config *cfg, const wisdom_notice *notice) {
    if (notice->text[0] && !cfg->quiet) fprintf(stderr, "golmpi: notice: %s\n", notice->text);
}

/* Rank 0 records r for every rank's key; the others wait for nothing. */
static void wisdom_record(const char *path, choice_key *keys, int n, const shape_choice_result *r,
                          const gol_config *cfg) {
    const char **where = gol_xcalloc((size_t)n, sizeof *where);
    const char **what = gol_xcalloc((size_t)n, sizeof *what);
    for (int i = 0; i < n; i++)
        where[i] = keys[i].where, what[i] = keys[i].what;
    char value[WISDOM_FIELD_MAX];
    value_of(r, value, sizeof value);
    int weight = 0;
    for (int s = 0; s < GOL_SHAPE_COUNT; s++)
        weight += r->seconds[s] >= 0;
    wisdom_notice notice = {""};
    bool ok = wisdom_put(path, where, what, n, value, weight, &notice);
    say(cfg, &notice);
    if (cfg->tune && ok) printf("golmpi: tune: recorded in %s\n", path);
    free(where);
    free(what);
}

/* The wisdom's shape for every rank, or -1: looked up on rank 0, told to all. */
static int agreed_wisdom(const char *path, choice_key *keys, int n, const gol_config *cfg,
                         MPI_Comm comm, shape_choice_result *r) {
    int rank;
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    int shape = -1;
    if (rank == 0) {
        wisdom_notice notice = {""};
        shape = wisdom_lookup(path, keys, n, r, &notice);
        say(cfg, &notice);
    }
    MPI_CHECK(MPI_Bcast(&shape, 1, MPI_INT, 0, comm));
    MPI_CHECK(MPI_Bcast(r->seconds, GOL_SHAPE_COUNT, MPI_DOUBLE, 0, comm));
    r->shape = shape;
    return shape;
}

/* --tune's table on rank 0: each shape's time, the grid's rate at it, the model's guess. */
static void print_table(const gol_plan *plan, const shape_choice_result *r,
                        const double model[GOL_SHAPE_COUNT]) {
    double cells = (double)plan->slab.width * (double)plan->slab.height;
    printf("golmpi: tune: %lld x %lld, depth %lld: seconds a generation, the slowest rank's\n",
           (long long)plan->slab.width, (long long)plan->slab.height, (long long)plan->depth);
    printf("  %-10s %14s %18s %14s\n", "shape", "measured", "cell updates/s", "model");
    for (int s = 0; s < GOL_SHAPE_COUNT; s++)
        printf("  %-10s %14.4e %18.4e %14.4e%s\n", gol_shapes[s].name, r->seconds[s],
               r->seconds[s] > 0 ? cells / r->seconds[s] : 0.0, model[s] < NEVER ? model[s] : 0.0,
               s == r->shape ? "  <- fastest" : "");
}

shape_choice_result shape_choice_make(const gol_plan *plan, const gol_config *cfg, MPI_Comm comm,
                                      const shape_choice_gpu *gpu, shape_choice_timer time_shape,
                                      void *ctx) {
    if (plan->kernel_shape >= 0) return result_of(plan->kernel_shape, SHAPE_CHOICE_ASKED);
    if (plan->depth == 1 && !cfg->tune) return result_of(GOL_SHAPE_BASELINE, SHAPE_CHOICE_UNUSED);
    int rank, n;
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    choice_key mine;
    key_of(plan, gpu, &mine);
    choice_key *keys = gather_keys(&mine, comm, &n);
    if (rank == 0) n = distinct_keys(keys, n);
    char path[GOL_PATH_MAX];
    bool wise = wisdom_path(cfg->wisdom, path, sizeof path);
    shape_choice_result r = result_of(GOL_SHAPE_BASELINE, SHAPE_CHOICE_WISDOM);
    if (wise && !cfg->tune && agreed_wisdom(path, keys, n, cfg, comm, &r) >= 0) {
        free(keys);
        return r;
    }
    double model[GOL_SHAPE_COUNT];
    bool timed[GOL_SHAPE_COUNT];
    model_seconds(plan, gpu, comm, model);
    candidates(model, cfg->tune, timed);
    if (!cfg->tune && !timing_pays(cfg, model, timed)) {
        r = result_of(shape_model_pick(model), SHAPE_CHOICE_MODEL);
        for (int s = 0; s < GOL_SHAPE_COUNT; s++)
            r.seconds[s] = model[s] < NEVER ? model[s] : -1;
    } else {
        r = result_of(GOL_SHAPE_BASELINE, cfg->tune ? SHAPE_CHOICE_TUNED : SHAPE_CHOICE_MEASURED);
        measure(timed, time_shape, ctx, comm, r.seconds);
        double t[GOL_SHAPE_COUNT];
        for (int s = 0; s < GOL_SHAPE_COUNT; s++)
            t[s] = r.seconds[s] >= 0 ? r.seconds[s] : NEVER;
        r.shape = fastest(t);
        if (rank == 0 && cfg->tune) print_table(plan, &r, model);
        if (rank == 0 && wise) wisdom_record(path, keys, n, &r, cfg);
    }
    free(keys);
    return r;
}
