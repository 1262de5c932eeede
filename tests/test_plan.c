/* The plan's memory is the memory allocated: for the CPU backend at several halo
 * depths, both frame formats and no output, the command line goes through the production path
 * (setup_parse, plan_make), the backend is created from the plan, and what it holds, counted where
 * it allocates (backend_held), must equal the plan's backend bytes; with the driver's two frame
 * slots allocated as run.c allocates them, it must equal the backend bytes plus the plan's slot
 * bytes. The depth must be the one asked for, and the bytes must grow with it. */
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>

#include "core/check.h"
#include "backend/backend.h"
#include "src/plan_make.h"
#include "src/run.h"
#include "src/setup.h"
#include "tests/expect.h"

static void one_case(const char *depth, const char *format, MPI_Comm comm, int64_t *need) {
    char *argv[32] = {"golmpi", "--backend", "cpu", "--width", "1000", "--height", "301",
                      "--steps", "7", "--halo-depth", (char *)depth};
    int argc = 11;
    bool output = strcmp(format, "none") != 0;
    char *more_output[] = {"--save-every", "2", "--chunk", "3", "--output", "never.h5",
                           "--frame-format", (char *)format};
    char *no_output[] = {"--no-output"};
    char **more = output ? more_output : no_output;
    int nmore = output ? 8 : 1;
    for (int i = 0; i < nmore; i++)
        argv[argc++] = more[i];
    gol_setup setup;
    char notice[512];
    gol_plan plan;
    EXPECT(setup_parse(argc, argv, comm, &setup, NULL).code == GOL_OK, "parse %s %s", depth, format);
    EXPECT(plan_make(&setup, comm, &plan, notice, sizeof notice).code == GOL_OK, "plan");
    EXPECT_EQ(plan.depth, atoll(depth), "depth %s", depth);
    omp_set_num_threads(plan.threads);
    gol_backend *b = backend_create(&plan, &setup.cfg, comm);
    EXPECT_EQ(backend_held(b).host, plan.backend_need.host, "backend bytes, depth %s %s", depth,
              format);
    EXPECT_EQ(plan.host.backend, plan.backend_need.host, "host part, depth %s", depth);
    void *slot_h[2];
    run_slots_alloc(b, &plan, slot_h);
    EXPECT_EQ(backend_held(b).host, plan.host.backend + plan.host.slots,
              "backend and frame slots, depth %s %s", depth, format);
    EXPECT(plan.output == output && (plan.host.slots > 0) == output,
           "frame slots only with output (%s)", format);
    for (int i = 0; i < 2; i++)
        backend_host_free(b, slot_h[i]);
    EXPECT_EQ(backend_held(b).host, plan.backend_need.host, "slots given back, depth %s", depth);
    backend_destroy(b);
    setup_free(&setup);
    *need = plan.backend_need.host;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, nranks;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &nranks));
    static const char *const depths[] = {"1", "2", "5", "16", "32"};
    static const char *const formats[] = {"u8", "packed", "none"};
    for (size_t f = 0; f < sizeof formats / sizeof *formats; f++) {
        int64_t last = 0;
        for (size_t d = 0; d < sizeof depths / sizeof *depths; d++) {
            if (atoll(depths[d]) * nranks > 301) continue; /* a slab must own k rows */
            int64_t need;
            one_case(depths[d], formats[f], MPI_COMM_WORLD, &need);
            EXPECT(need > last, "bytes grow with the depth: %lld at %s", (long long)need,
                   depths[d]);
            last = need;
        }
    }
    int mine = failures, all = 0;
    MPI_CHECK(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    if (rank == 0) {
        if (all)
            fprintf(stderr, "%d failure(s)\n", all);
        else
            printf("plan: the CPU backend holds what the plan counts, at every depth and format\n");
    }
    MPI_Finalize();
    return all ? 1 : 0;
}
