/* cuda/shape_choice.h's choice on 1 to 4 ranks with injected kernel times (a stand-in for the
 * backend's timer, each rank its own table, the ranks disagreeing on their fastest shape): the
 * shape whose slowest rank is fastest wins; --kernel SHAPE and depth 1 time nothing; a short run
 * takes the model's choice untimed; the record of a measured choice is found by the next run, not
 * by a run on another GPU nor when one rank's GPU differs; --tune times every shape, and its
 * record is not replaced by a run that timed fewer. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/decomp.h"
#include "core/plan.h"
#include "core/rule.h"
#include "cuda/shape_choice.h"
#include "cuda/shape_model.h"
#include "tests/expect.h"

static int rank, nranks;

/* Seconds a generation (x 1e-5) of baseline, unrolled, short, half on each rank: rank 0 alone
 * takes short, rank 3 alone half, the four together unrolled. */
static const double injected[4][GOL_SHAPE_COUNT] = {
    {10, 5, 3, 9}, {10, 6, 12, 9}, {10, 7, 4, 9}, {10, 5, 4, 2}};
static int calls[GOL_SHAPE_COUNT];

static double stand_in_timer(void *ctx, int shape) {
    (void)ctx;
    calls[shape]++;
    return injected[rank][shape] * 1e-5;
}

static void reset_calls(void) { memset(calls, 0, sizeof calls); }
static int total_calls(void) {
    int n = 0;
    for (int s = 0; s < GOL_SHAPE_COUNT; s++)
        n += calls[s];
    return n;
}

/* Every rank's calls were the same shapes: the timer's exchanges are collective. */
static int same_calls_everywhere(void) {
    int lo[GOL_SHAPE_COUNT], hi[GOL_SHAPE_COUNT];
    MPI_Allreduce(calls, lo, GOL_SHAPE_COUNT, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(calls, hi, GOL_SHAPE_COUNT, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return !memcmp(lo, hi, sizeof lo);
}

/* The shape of least time over the ranks' maxima, among those timed. */
static int expected_of_timed(void) {
    int best = -1;
    double best_t = 0;
    for (int s = 0; s < GOL_SHAPE_COUNT; s++) {
        if (!calls[s]) continue;
        double worst = 0;
        for (int r = 0; r < nranks; r++)
            worst = fmax(worst, injected[r][s]);
        if (best < 0 || worst < best_t) best = s, best_t = worst;
    }
    return best;
}

static gol_config cfg;
static gol_plan plan;

static void make_plan(int64_t depth, int64_t steps, int kernel_shape) {
    cfg.steps = steps;
    plan = (gol_plan){0};
    if (decomp_make(&cfg, rank, nranks, &plan.slab).code != GOL_OK) abort();
    plan.depth = depth;
    plan.kernel_shape = kernel_shape;
    plan.gpu = (gol_gpu_share){.ranks_per_gpu = 1, .ranks_on_gpu = 1, .mps = false};
}

static shape_choice_gpu h200(void) {
    shape_choice_gpu g = {.name = "NVIDIA H200",
                          .sms = 132,
                          .clock_khz = 1980000,
                          .cc_major = 9,
                          .cc_minor = 0,
                          .driver = 13000,
                          .runtime = 13000};
    return g;
}

static shape_choice_result choose(const shape_choice_gpu *gpu) {
    reset_calls();
    return shape_choice_make(&plan, &cfg, MPI_COMM_WORLD, gpu, stand_in_timer, NULL);
}

static void test_asked_and_depth_one(void) {
    shape_choice_gpu g = h200();
    make_plan(16, 1000000, GOL_SHAPE_HALF);
    shape_choice_result r = shape_choice_make(&plan, &cfg, MPI_COMM_WORLD, &g, NULL, NULL);
    EXPECT_EQ(r.shape, GOL_SHAPE_HALF, "--kernel half");
    EXPECT_EQ(r.how, SHAPE_CHOICE_ASKED, "--kernel half's reason");
    make_plan(1, 1000000, -1);
    r = choose(&g);
    EXPECT_EQ(total_calls(), 0, "depth 1 times nothing");
    EXPECT_EQ(r.how, SHAPE_CHOICE_UNUSED, "depth 1: no deep kernel");
}

/* A run too short to time its shapes takes the model's fastest when it beats baseline by the
 * model's margin, and baseline otherwise, on a grid of width x width; returns the model's fastest
 * guess (the wide branch of the test is which of the two it took). */
static int short_run_on(int64_t width, int want_baseline) {
    shape_choice_gpu g = h200();
    const gol_config keep = cfg;
    cfg.width = cfg.height = width;
    make_plan(16, 10, -1);
    shape_choice_result r = choose(&g);
    cfg = keep;
    EXPECT_EQ(total_calls(), 0, "10 generations cannot pay for timing (%lld)", (long long)width);
    EXPECT_EQ(r.how, SHAPE_CHOICE_MODEL, "the model's choice (%lld)", (long long)width);
    int fastest = GOL_SHAPE_BASELINE;
    for (int s = 0; s < GOL_SHAPE_COUNT; s++)
        if (r.seconds[s] > 0 && r.seconds[s] < r.seconds[fastest]) fastest = s;
    const double base = r.seconds[GOL_SHAPE_BASELINE];
    const int want =
        r.seconds[fastest] * (1 + SHAPE_MODEL_MARGIN) <= base ? fastest : GOL_SHAPE_BASELINE;
    EXPECT_EQ(r.shape, want, "%lld: took %s; the fastest guess %s at %g s, baseline at %g s",
              (long long)width, gol_shapes[r.shape].name, gol_shapes[fastest].name,
              r.seconds[fastest], base);
    EXPECT_EQ(r.shape == GOL_SHAPE_BASELINE, want_baseline, "%lld: the branch this size is for",
              (long long)width);
    return fastest;
}

static void test_short_run_takes_the_model(void) {
    /* on the H200 the model's short beats baseline by far more than the margin at 4096^2 */
    EXPECT(short_run_on(4096, 0) != GOL_SHAPE_BASELINE, "4096: a shape other than baseline");
    /* at 32768^2 its unrolled beats baseline by less: baseline runs */
    EXPECT(short_run_on(32768, 1) != GOL_SHAPE_BASELINE, "32768: a guess faster than baseline");
}

static void test_measured_then_wisdom(void) {
    shape_choice_gpu g = h200();
    make_plan(16, 1000000, -1);
    shape_choice_result r = choose(&g);
    EXPECT_EQ(r.how, SHAPE_CHOICE_MEASURED, "a long run measures");
    EXPECT(calls[GOL_SHAPE_BASELINE] == 1, "baseline is always timed");
    EXPECT_EQ(total_calls(), 1 + SHAPE_CHOICE_FEW, "baseline and the model's best few");
    EXPECT(same_calls_everywhere(), "every rank timed the same shapes");
    EXPECT_EQ(r.shape, expected_of_timed(), "the shape whose slowest rank is fastest");
    int measured = r.shape;

    r = choose(&g);
    EXPECT_EQ(r.how, SHAPE_CHOICE_WISDOM, "the next run finds the record");
    EXPECT_EQ(r.shape, measured, "the recorded shape");
    EXPECT_EQ(total_calls(), 0, "and times nothing");

    shape_choice_gpu other = h200();
    snprintf(other.name, sizeof other.name, "NVIDIA H100 80GB HBM3");
    r = choose(&other);
    EXPECT_EQ(r.how, SHAPE_CHOICE_MEASURED, "another GPU's record is not taken");
    if (nranks > 1) {
        shape_choice_gpu mixed = rank == nranks - 1 ? h200() : other;
        mixed.driver = rank == nranks - 1 ? 12040 : mixed.driver; /* a GPU no record knows */
        r = choose(&mixed);
        EXPECT_EQ(r.how, SHAPE_CHOICE_MEASURED, "one rank without a record: all measure");
        EXPECT(same_calls_everywhere(), "every rank timed the same shapes");
    }
}

static void test_tune(void) {
    shape_choice_gpu g = h200();
    make_plan(16, 10, -1); /* --tune times whatever the run's length */
    cfg.tune = true;
    shape_choice_result r = choose(&g);
    cfg.tune = false;
    EXPECT_EQ(r.how, SHAPE_CHOICE_TUNED, "--tune");
    EXPECT_EQ(total_calls(), GOL_SHAPE_COUNT, "--tune times every shape");
    int want = nranks == 1 ? GOL_SHAPE_SHORT : GOL_SHAPE_UNROLLED;
    EXPECT_EQ(r.shape, want, "the ranks' slowest decides (rank 0's own fastest is short)");
    for (int s = 0; s < GOL_SHAPE_COUNT; s++) {
        double worst = 0;
        for (int q = 0; q < nranks; q++)
            worst = fmax(worst, injected[q][s] * 1e-5);
        EXPECT(fabs(r.seconds[s] - worst) < 1e-12, "%s: the slowest rank's time",
               gol_shapes[s].name);
    }
    /* a later auto run of the same key finds the tuned record, and its record never replaces it */
    make_plan(16, 1000000, -1);
    r = choose(&g);
    EXPECT_EQ(r.how, SHAPE_CHOICE_WISDOM, "the tuned record");
    EXPECT_EQ(r.shape, want, "its shape");
    EXPECT(r.seconds[GOL_SHAPE_HALF] > 0, "with every shape's time");
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (nranks > 4) MPI_Abort(MPI_COMM_WORLD, 2);
    char dir[256] = "";
    if (rank == 0) snprintf(dir, sizeof dir, "/tmp/golmpi_choice_%ld", (long)getpid());
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    cfg = (gol_config){.width = 4096, .height = 4096, .boundary = GOL_BOUNDARY_TORUS};
    char canon[32];
    if (rule_parse("B3/S23", &cfg.rule, canon, sizeof canon).code != GOL_OK) abort();
    cfg.quiet = rank != 0; /* rank 0 shows its notices in the log */
    snprintf(cfg.wisdom, sizeof cfg.wisdom, "%s/wisdom", dir);
    test_asked_and_depth_one();
    test_short_run_takes_the_model();
    test_measured_then_wisdom();
    cfg.wisdom[strlen(cfg.wisdom) - 1] = '2'; /* a fresh file */
    test_tune();
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
        if (all) fprintf(stderr, "%d failure(s)\n", all);
    }
    MPI_Finalize();
    return all ? 1 : 0;
}
