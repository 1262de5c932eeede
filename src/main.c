/* src/ is the program, the top layer: main, the command line, setup, the driver and the report.
 *
 * golmpi: Game of Life on one large grid, split into row slabs over MPI ranks.
 *   parse -> plan (decompose, backend, halo, depth, memory) -> admit -> start -> run -> report */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "io/output.h"
#include "backend/backend.h"
#include "core/check.h"
#include "core/phase.h"
#include "halo/halo.h"
#include "halo/heartbeat.h"
#include "io/output_names.h"
#include "src/admit.h"
#include "src/plan_make.h"
#include "src/run.h"
#include "src/setup.h"
#include "src/report.h"
#include "src/startup.h"
#include "core/trace.h"

/* What the end of a run needs: the deadline of MPI_Finalize, who prints. */
typedef struct finish_terms {
    double timeout_s; /* 0: MPI_Finalize may wait for ever */
    int rank;
} finish_terms;

/* Prints once, on rank 0, and gives every rank the same exit code. */
static int finish(gol_status st, const char *text, const finish_terms *e) {
    int rank = e->rank;
    if (rank == 0) {
        if (st.code == GOL_EXIT_DONE && text) fputs(text, stdout);
        else if (st.code == GOL_EXIT_STOPPED) fprintf(stderr, "golmpi: %s\n", st.msg);
        else if (st.code != GOL_OK) fprintf(stderr, "golmpi: error: %s\n", st.msg);
    }
    /* past MPI_Finalize MPI_Abort is not allowed, so a failure is reported by hand */
    gol_phase_enter(GOL_PHASE_FINALIZE, -1);
    int rc = gol_end_agreed(e->timeout_s); /* the helpers stop first: the guard */
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "golmpi: rank %d: MPI_Finalize failed (error %d)\n", rank, rc);
        return 1;
    }
    return st.code == GOL_EXIT_DONE ? 0 : st.code;
}

/* SIGTERM, SIGINT and SIGUSR1 (Slurm's --signal=B:USR1@SECONDS, forwarded by the job script and
 * by mpirun) stop the run at a generation every rank agrees on, written as a checkpoint (run.h);
 * so does SIGHUP (the terminal or ssh session of a run started by hand went away). A second
 * SIGINT, a second Ctrl-C, kills at once. A reader of stdout or stderr that went away (golmpi |
 * head) must not kill the run half-written either: SIGPIPE is ignored, and the lost lines are
 * only lost lines. Set before MPI_Init: a job signalled while it starts must still stop cleanly. */
static void stop_on_signals(void) {
    static const int signals[] = {SIGTERM, SIGINT, SIGUSR1, SIGHUP};
    SYS_CHECK(signal(SIGPIPE, SIG_IGN) != SIG_ERR, "signal(SIGPIPE)");
    for (size_t i = 0; i < sizeof signals / sizeof *signals; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = run_stop_on_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART | (signals[i] == SIGINT ? SA_RESETHAND : 0);
        SYS_CHECK(sigaction(signals[i], &sa, NULL) == 0, "sigaction");
    }
}

/* The run stopped early: every rank exits with GOL_EXIT_STOPPED, and the user learns how to go on. */
static gol_status stopped_status(const gol_config *cfg, const gol_run_result *res) {
    if (cfg->no_output)
        return gol_fail(GOL_EXIT_STOPPED, "stopped by a signal at generation %lld (no output to "
                        "resume from: --no-output)", (long long)res->sched.g_end);
    return gol_fail(GOL_EXIT_STOPPED,
                    "stopped by a signal at generation %lld, written as the last frame of %s; "
                    "resume the series with --restart %s --output %s",
                    (long long)res->sched.g_end, cfg->output, cfg->output, cfg->output);
}

/* An early stop after setup_parse: what setup holds (a pattern, a series) is freed first. */
static int stop_early(gol_status st, const char *text, gol_setup *setup, const finish_terms *e) {
    setup_free(setup);
    return finish(st, text, e);
}

/* The writer thread makes MPI-IO calls while the main thread exchanges halos, which needs
 * MPI_THREAD_MULTIPLE. Below it, io/output.c writes synchronously (DESIGN); the user hears why. */
static void notice_thread_level(int provided, const gol_config *cfg, int rank) {
    if (provided >= MPI_THREAD_MULTIPLE || cfg->no_output || cfg->quiet || rank != 0) return;
    fprintf(stderr,
            "golmpi: this MPI gives thread level %d, below MPI_THREAD_MULTIPLE (%d): frames are "
            "written on the main thread, without overlapping the generations\n",
            provided, MPI_THREAD_MULTIPLE);
}

/* The fatal messages' log beside the output (io/output_names.h), then the guard (halo/heartbeat.h),
 * then the start-up phase, where GOLMPI_DEBUG_HOLD may hold this rank. */
static void watch_the_run(const gol_config *cfg, MPI_Comm comm, finish_terms *end) {
    if (!cfg->no_output) {
        char base[GOL_PATH_MAX], log[GOL_PATH_MAX + 16];
        config_output_base(cfg, base, sizeof base);
        output_file_name(base, OUTPUT_LOG, log, sizeof log);
        gol_fatal_log_to(log);
    }
    heartbeat_start_guard(comm, cfg->timeout_s); /* stopped by gol_end_agreed */
    end->timeout_s = cfg->timeout_s;
    gol_phase_enter(GOL_PHASE_STARTUP, -1);
}

/* The summary (and --stats) of a finished run, which is then freed. */
static void report_run(const gol_backend *backend, const gol_plan *plan, const gol_config *cfg,
                       gol_run_result *result, int argc, char **argv, time_t start_time,
                       MPI_Comm comm) {
    int nranks;
    MPI_CHECK(MPI_Comm_size(comm, &nranks));
    gol_phase_enter(GOL_PHASE_REPORT, -1);
    gol_report_info info = {.backend = backend_name(backend), .kernel = backend_kernel(backend),
                            .halo = plan->halo->name, .halo_depth = plan->depth, .nranks = nranks,
                            .threads = plan->threads, .argc = argc, .argv = argv,
                            .start_time = start_time,
                            .gpu = plan->backend == GOL_BACKEND_CUDA ? &plan->gpu : NULL,
                            .shape = backend_shape_choice(backend)};
    report_summary(cfg, &result->sched, result, &info, comm);
    free(result->output.population);
    free(result->output.generations);
    chunk_table_free(&result->chunks);
}

/* --tune: the CUDA backend made (its create times every shape on every rank, records the
 * fastest and prints the table: cuda/shape_choice.h) and taken down again. */
static gol_status tune_shapes(const gol_plan *plan, const gol_config *cfg, MPI_Comm comm) {
    if (plan->backend != GOL_BACKEND_CUDA)
        return gol_fail(GOL_EXIT_NOGPU, "--tune times the CUDA kernel's shapes, and this run has "
                        "no GPU (the CPU backend)");
    backend_destroy(backend_create(plan, cfg, comm));
    return gol_ok();
}

int main(int argc, char **argv) {
    time_t start_time = time(NULL); /* for --stats */
    int provided, rank;
    stop_on_signals(); /* a signal during MPI_Init must not kill a rank of a job being stopped */
    /* before MPI is up, MPI_Abort cannot stop the other ranks; MPI's own error handler does */
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "golmpi: MPI_Init_thread failed\n");
        return 1;
    }
    MPI_Comm comm = MPI_COMM_WORLD;
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    trace_init();

    gol_setup setup;
    const char *text = NULL;
    finish_terms end = {0.0, rank};
    gol_status st = setup_parse(argc, argv, comm, &setup, &text);
    if (st.code != GOL_OK) return stop_early(st, text, &setup, &end);
    const gol_config *cfg = &setup.cfg;
    notice_thread_level(provided, cfg, rank);
    watch_the_run(cfg, comm, &end); /* from here on no phase waits without a deadline */

    gol_plan plan; /* every fact of the run, decided once */
    char notice[1024]; /* the longest: ranks sharing a GPU without MPS (src/plan_make.c) */
    st = plan_make(&setup, comm, &plan, notice, sizeof notice);
    if (st.code != GOL_OK) return stop_early(st, NULL, &setup, &end);
    if (rank == 0 && notice[0] && !cfg->quiet) fprintf(stderr, "%s\n", notice);
    if (!cfg->quiet) startup_table(plan.backend, plan.halo->name, comm); /* who runs where */
    if (cfg->tune) /* the kernel shapes timed and recorded as the backend is made; no run */
        return stop_early(tune_shapes(&plan, cfg, comm), NULL, &setup, &end);

    /* too big for the nodes, or an output in the way: a message, before anything is allocated */
    st = admit_run(&setup, &plan, comm);
    if (st.code != GOL_OK) return stop_early(st, NULL, &setup, &end);
    if (cfg->dry_run) {
        plan_print(&plan, cfg, comm);
        return stop_early(gol_ok(), NULL, &setup, &end);
    }

    gol_backend *backend; /* holding the initial state: made in place, or built here and loaded */
    st = setup_start(&setup, &plan, comm, &backend);
    if (st.code != GOL_OK) return stop_early(st, NULL, &setup, &end);

    gol_run_result result;
    gol_run_inputs in = {&plan, cfg, &setup.sched, setup.has_series ? &setup.series : NULL};
    run_generations(backend, &in, comm, &result);

    report_run(backend, &plan, cfg, &result, argc, argv, start_time, comm);
    backend_destroy(backend);
    setup_free(&setup);
    return finish(result.stopped ? stopped_status(cfg, &result) : gol_ok(), NULL, &end);
}
