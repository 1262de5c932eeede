#include "src/report.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/check.h"
#include "cuda/shape_choice.h"
#include "src/provenance.h"

static double per_s(double count, double seconds) { return seconds > 0 ? count / seconds : 0.0; }

/* The per-rank times, each as max (the figure that bounds the run), min and mean over ranks. */
enum { T_COMPUTE, T_HALO, T_FRAME, T_WRITE, T_WAIT, N_TIMES };
static const char *const time_names[N_TIMES] = {"compute_s", "halo_s", "frame_s", "io_write_s",
                                                "io_wait_s"};

typedef struct report_spread {
    double max[N_TIMES], min[N_TIMES], mean[N_TIMES];
} report_spread;

enum { HOST_LEN = 64 };

/* What --stats needs beyond the summary: the spread of the times and every rank's host. */
typedef struct report_ctx {
    const gol_config *cfg;
    const gol_schedule *sched;
    const gol_run_result *res;
    const gol_report_info *info;
    const report_spread *t;
    const char *hosts; /* rank 0: nranks names of HOST_LEN bytes */
    double updates;
    int64_t halo_messages; /* all ranks' together */
} report_ctx;

static void gather_spread(const gol_run_result *res, MPI_Comm comm, int nranks, report_spread *t) {
    double mine[N_TIMES] = {res->times.compute_s, res->times.halo_s, res->times.frame_s,
                            res->output.write_s, res->output.wait_s};
    double sum[N_TIMES];
    MPI_CHECK(MPI_Allreduce(mine, t->max, N_TIMES, MPI_DOUBLE, MPI_MAX, comm));
    MPI_CHECK(MPI_Allreduce(mine, t->min, N_TIMES, MPI_DOUBLE, MPI_MIN, comm));
    MPI_CHECK(MPI_Allreduce(mine, sum, N_TIMES, MPI_DOUBLE, MPI_SUM, comm));
    for (int i = 0; i < N_TIMES; i++)
        t->mean[i] = sum[i] / nranks;
}

/* rank 0 gets every rank's host name (nranks x HOST_LEN bytes; the caller frees), others NULL */
static char *gather_hosts(MPI_Comm comm, int rank, int nranks) {
    char me[HOST_LEN] = "";
    if (gethostname(me, sizeof me - 1) != 0) snprintf(me, sizeof me, "?");
    char *all = rank == 0 ? gol_xmalloc((size_t)nranks * HOST_LEN) : NULL;
    MPI_CHECK(MPI_Gather(me, HOST_LEN, MPI_CHAR, all, HOST_LEN, MPI_CHAR, 0, comm));
    return all;
}

/* ---- --stats ---------------------------------------------------------------------------- */

static void add_int(cJSON *o, const char *name, int64_t v) {
    cJSON_AddNumberToObject(o, name, (double)v); /* exact below 2^53 cells or bytes */
}

/* "kernel_shape": the shape, why ("wisdom", "measured", "tuned", "model", "asked by --kernel",
 * "not used at depth 1") and each shape's seconds a generation behind it (null: not timed); null
 * on the CPU backend. */
static void json_shape(cJSON *o, const shape_choice_result *r) {
    if (!r) {
        cJSON_AddNullToObject(o, "kernel_shape");
        return;
    }
    cJSON *shape = cJSON_AddObjectToObject(o, "kernel_shape");
    cJSON_AddStringToObject(shape, "name", gol_shapes[r->shape].name);
    cJSON_AddStringToObject(shape, "reason", shape_choice_how_name(r->how));
    cJSON *secs = cJSON_AddObjectToObject(shape, "seconds_per_generation");
    for (int s = 0; s < GOL_SHAPE_COUNT; s++) {
        if (r->seconds[s] >= 0) cJSON_AddNumberToObject(secs, gol_shapes[s].name, r->seconds[s]);
        else cJSON_AddNullToObject(secs, gol_shapes[s].name);
    }
}

/* The fields scripts already read (jobs/scaling.sbatch, bench/, tests/): names unchanged. */
static void json_figures(cJSON *o, const report_ctx *c) {
    const gol_run_result *res = c->res;
    cJSON_AddStringToObject(o, "version", GOLMPI_VERSION);
    cJSON_AddStringToObject(o, "backend", c->info->backend);
    cJSON_AddStringToObject(o, "kernel", c->info->kernel);
    json_shape(o, c->info->shape);
    cJSON_AddStringToObject(o, "halo", c->info->halo);
    add_int(o, "halo_depth", c->info->halo_depth);
    add_int(o, "halo_messages", c->halo_messages);
    cJSON_AddNumberToObject(o, "halo_messages_per_generation",
                            res->generations ? (double)c->halo_messages / res->generations : 0.0);
    add_int(o, "ranks", c->info->nranks);
    add_int(o, "threads_per_rank", c->info->threads);
    if (c->info->gpu) {
        add_int(o, "ranks_per_gpu", c->info->gpu->ranks_per_gpu);
        cJSON_AddBoolToObject(o, "mps", c->info->gpu->mps);
    } else { /* the CPU backend: no GPU to share */
        cJSON_AddNullToObject(o, "ranks_per_gpu");
        cJSON_AddNullToObject(o, "mps");
    }
    add_int(o, "width", c->cfg->width);
    add_int(o, "height", c->cfg->height);
    cJSON_AddStringToObject(o, "rule", c->cfg->rule_text);
    cJSON_AddStringToObject(o, "boundary", config_boundary_name(c->cfg->boundary));
    add_int(o, "generation_start", c->sched->g_start);
    add_int(o, "generation_end", c->sched->g_end);
    add_int(o, "generations", res->generations);
    cJSON_AddNumberToObject(o, "cell_updates", c->updates);
    cJSON_AddNumberToObject(o, "wall_s", res->wall_s);
    /* two rates, named for what they divide by: the whole run's wall time, or compute alone */
    cJSON_AddNumberToObject(o, "whole_run_cell_updates_per_s", per_s(c->updates, res->wall_s));
    cJSON_AddNumberToObject(o, "compute_cell_updates_per_s",
                            per_s(c->updates, c->t->max[T_COMPUTE]));
    for (int i = 0; i < N_TIMES; i++)
        cJSON_AddNumberToObject(o, time_names[i], c->t->max[i]);
    add_int(o, "frames", res->frames);
    add_int(o, "files", res->output.files);
    add_int(o, "bytes_written", res->output.bytes_written);
    if (c->cfg->no_output) {
        cJSON_AddNullToObject(o, "collective_io");
        cJSON_AddNullToObject(o, "io_transfer");
    } else {
        cJSON_AddBoolToObject(o, "collective_io", res->output.transfer == IO_TRANSFER_COLLECTIVE);
        cJSON_AddStringToObject(o, "io_transfer", io_transfer_name(res->output.transfer));
    }
    add_int(o, "population", res->population);
}

/* min/mean/max over ranks of each time, and the write bandwidth: the bytes of all ranks over the
 * slowest rank's time in HDF5 (the ranks write at once), null without output. */
static void json_spread(cJSON *o, const report_ctx *c) {
    cJSON *over = cJSON_AddObjectToObject(o, "times_over_ranks");
    for (int i = 0; i < N_TIMES; i++) {
        cJSON *one = cJSON_AddObjectToObject(over, time_names[i]);
        cJSON_AddNumberToObject(one, "min", c->t->min[i]);
        cJSON_AddNumberToObject(one, "mean", c->t->mean[i]);
        cJSON_AddNumberToObject(one, "max", c->t->max[i]);
    }
    double write_s = c->t->max[T_WRITE];
    if (c->cfg->no_output || write_s <= 0)
        cJSON_AddNullToObject(o, "io_bandwidth_bytes_per_s");
    else
        cJSON_AddNumberToObject(o, "io_bandwidth_bytes_per_s",
                                (double)c->res->output.bytes_written / write_s);
}

/* The unique hosts in rank order, each with its rank count and ranks. */
static void json_hosts(cJSON *o, const report_ctx *c) {
    cJSON *hosts = cJSON_AddArrayToObject(o, "hosts");
    int n = c->info->nranks;
    for (int r = 0; r < n; r++) {
        const char *h = c->hosts + (size_t)r * HOST_LEN;
        int seen = 0;
        for (int k = 0; k < r && !seen; k++)
            seen = strcmp(h, c->hosts + (size_t)k * HOST_LEN) == 0;
        if (seen) continue;
        cJSON *host = cJSON_CreateObject(), *ranks = cJSON_CreateArray();
        cJSON_AddStringToObject(host, "name", h);
        int count = 0;
        for (int k = r; k < n; k++) {
            if (strcmp(h, c->hosts + (size_t)k * HOST_LEN) != 0) continue;
            cJSON_AddItemToArray(ranks, cJSON_CreateNumber(k));
            count++;
        }
        add_int(host, "ranks", count);
        cJSON_AddItemToObject(host, "rank_list", ranks);
        cJSON_AddItemToArray(hosts, host);
    }
}

/* The command line (argv as given, and joined), when it ran, and what it ran with. */
static void json_provenance(cJSON *o, const report_ctx *c) {
    cJSON *argv = cJSON_AddArrayToObject(o, "argv");
    size_t len = 1;
    for (int i = 0; i < c->info->argc; i++)
        len += strlen(c->info->argv[i]) + 1;
    char *line = gol_xcalloc(len, 1);
    for (int i = 0; i < c->info->argc; i++) {
        cJSON_AddItemToArray(argv, cJSON_CreateString(c->info->argv[i]));
        if (i) strcat(line, " ");
        strcat(line, c->info->argv[i]);
    }
    cJSON_AddStringToObject(o, "command_line", line);
    free(line);
    char when[32];
    provenance_iso_time(c->info->start_time, when, sizeof when);
    cJSON_AddStringToObject(o, "start_time", when);
    provenance_iso_time(time(NULL), when, sizeof when);
    cJSON_AddStringToObject(o, "end_time", when);
    json_hosts(o, c);
    add_int(o, "threads", c->info->threads); /* per rank, as threads_per_rank */
    gol_versions v;
    provenance_versions(&v);
    cJSON_AddStringToObject(o, "git_commit", v.commit);
    cJSON *ver = cJSON_AddObjectToObject(o, "versions");
    cJSON_AddStringToObject(ver, "golmpi", v.golmpi);
    cJSON_AddStringToObject(ver, "git_commit", v.commit);
    cJSON_AddStringToObject(ver, "compiler", v.compiler);
    cJSON_AddStringToObject(ver, "cuda_compiler", v.cuda_compiler);
    cJSON_AddStringToObject(ver, "mpi", v.mpi);
    cJSON_AddStringToObject(ver, "mpi_standard", v.mpi_standard);
    cJSON_AddStringToObject(ver, "hdf5", v.hdf5);
    cJSON_AddStringToObject(ver, "cuda_runtime", v.cuda_runtime);
    cJSON_AddStringToObject(ver, "cuda_driver", v.cuda_driver);
    cJSON_AddStringToObject(ver, "nccl", v.nccl);
}

/* The live cells of every frame (as /population holds them); without output, the one value known:
 * the last generation's. */
static void json_population(cJSON *o, const report_ctx *c) {
    cJSON *series = cJSON_AddObjectToObject(o, "population_series");
    cJSON *gens = cJSON_AddArrayToObject(series, "generation");
    cJSON *pops = cJSON_AddArrayToObject(series, "population");
    const gol_output_stats *out = &c->res->output;
    if (!out->population) {
        cJSON_AddItemToArray(gens, cJSON_CreateNumber((double)c->sched->g_end));
        cJSON_AddItemToArray(pops, cJSON_CreateNumber((double)c->res->population));
        return;
    }
    for (int64_t f = 0; f < out->frames; f++) {
        cJSON_AddItemToArray(gens, cJSON_CreateNumber((double)out->generations[f]));
        cJSON_AddItemToArray(pops, cJSON_CreateNumber((double)out->population[f]));
    }
}

/* How the run ended: finished, or stopped by a signal at the generation it checkpointed. Errors
 * write no --stats: bad input stops before anything is written, and a library or I/O failure ends
 * every rank with its one message and exit code (README, Exit codes). */
static void json_status(cJSON *o, const report_ctx *c) {
    cJSON *st = cJSON_AddObjectToObject(o, "status");
    bool stopped = c->res->stopped;
    cJSON_AddStringToObject(st, "state", stopped ? "stopped" : "finished");
    add_int(st, "exit_code", stopped ? GOL_EXIT_STOPPED : 0);
    add_int(st, "generation", c->sched->g_end);
    char text[96];
    if (stopped)
        snprintf(text, sizeof text, "stopped by a signal at generation %lld",
                 (long long)c->sched->g_end);
    else
        snprintf(text, sizeof text, "finished at generation %lld", (long long)c->sched->g_end);
    cJSON_AddStringToObject(st, "message", text);
}

/* This run's part of a series: its generations, times, rates and how it ended. */
static cJSON *this_segment(const cJSON *root) {
    static const char *const keys[] = {
        "generation_start", "generation_end", "generations", "ranks", "backend", "wall_s",
        "compute_s", "whole_run_cell_updates_per_s", "compute_cell_updates_per_s", "start_time",
        "end_time", "status"};
    cJSON *seg = cJSON_CreateObject();
    SYS_CHECK(seg != NULL, "cJSON_CreateObject(--stats)");
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, keys[i]);
        if (v) cJSON_AddItemToObject(seg, keys[i], cJSON_Duplicate(v, true));
    }
    return seg;
}

/* The segments of the series this run continues: those of the --stats file already there, when
 * this run resumes (--restart) the same output from the generation that file ends at; a file of
 * a single run (no "segments") counts as one. NULL otherwise. */
static cJSON *earlier_segments(const report_ctx *c) {
    if (!c->cfg->restart[0]) return NULL;
    FILE *f = fopen(c->cfg->stats, "r");
    if (!f) return NULL;
    char *text = NULL;
    size_t cap = 0, len = 0, got;
    do {
        text = realloc(text, cap += 65536);
        SYS_CHECK(text != NULL, "realloc(--stats)");
        len += got = fread(text + len, 1, cap - len - 1, f);
    } while (got > 0);
    fclose(f);
    text[len] = '\0';
    cJSON *old = cJSON_Parse(text), *segs = NULL;
    free(text);
    const cJSON *end = cJSON_GetObjectItemCaseSensitive(old, "generation_end");
    const cJSON *out = cJSON_GetObjectItemCaseSensitive(old, "output");
    bool same = cJSON_IsNumber(end) && (int64_t)end->valuedouble == c->sched->g_start &&
                (!out || (cJSON_IsString(out) && strcmp(out->valuestring, c->cfg->output) == 0));
    if (same) {
        segs = cJSON_DetachItemFromObjectCaseSensitive(old, "segments");
        if (!cJSON_IsArray(segs)) {
            cJSON_Delete(segs);
            segs = cJSON_CreateArray();
            cJSON_AddItemToArray(segs, this_segment(old));
        }
    }
    cJSON_Delete(old);
    return segs;
}

/* Every segment of the series, this run's last; the top-level figures stay this run's. */
static void json_segments(cJSON *root, const report_ctx *c) {
    cJSON *segs = earlier_segments(c);
    if (!segs) segs = cJSON_CreateArray();
    cJSON_AddItemToArray(segs, this_segment(root));
    cJSON_AddItemToObject(root, "segments", segs);
}

static void write_stats(const report_ctx *c) {
    cJSON *root = cJSON_CreateObject();
    SYS_CHECK(root != NULL, "cJSON_CreateObject(--stats)");
    json_figures(root, c);
    json_spread(root, c);
    json_provenance(root, c);
    json_population(root, c);
    json_status(root, c);
    if (c->cfg->no_output)
        cJSON_AddNullToObject(root, "output");
    else
        cJSON_AddStringToObject(root, "output", c->cfg->output);
    json_segments(root, c);
    chunk_table_json(root, &c->res->chunks);
    char *text = cJSON_Print(root);
    SYS_CHECK(text != NULL, "cJSON_Print(--stats)");
    FILE *f = fopen(c->cfg->stats, "w");
    SYS_CHECK(f != NULL, "fopen(--stats)");
    SYS_CHECK(fputs(text, f) >= 0 && fputc('\n', f) != EOF, "write(--stats)");
    SYS_CHECK(fclose(f) == 0, "fclose(--stats)");
    cJSON_free(text);
    cJSON_Delete(root);
}

/* ---- the summary ------------------------------------------------------------------------ */

/* The first and the last frame's population; the last alone without frames. */
static void print_population(const report_ctx *c) {
    const gol_output_stats *out = &c->res->output;
    if (out->population && out->frames > 1)
        printf("  population  %lld at generation %lld, %lld at generation %lld\n",
               (long long)out->population[0], (long long)out->generations[0],
               (long long)out->population[out->frames - 1],
               (long long)out->generations[out->frames - 1]);
    else
        printf("  population  %lld at generation %lld\n", (long long)c->res->population,
               (long long)c->sched->g_end);
}

static void print_summary(const report_ctx *c) {
    const gol_config *cfg = c->cfg;
    const gol_run_result *res = c->res;
    const gol_report_info *info = c->info;
    const double *m = c->t->max;
    printf("golmpi %s: %lld x %lld %s %s, generations %lld..%lld on %d rank%s "
           "(%s backend, %s kernel, %s halo, %d thread%s/rank)\n",
           GOLMPI_VERSION, (long long)cfg->width, (long long)cfg->height,
           config_boundary_name(cfg->boundary), cfg->rule_text, (long long)c->sched->g_start,
           (long long)c->sched->g_end, info->nranks, info->nranks == 1 ? "" : "s", info->backend,
           info->kernel, info->halo, info->threads, info->threads == 1 ? "" : "s");
    printf("  wall time   %10.3f s   whole-run rate %.3e cell updates/s (start to end)\n",
           res->wall_s, per_s(c->updates, res->wall_s));
    printf("  compute     %10.3f s   compute rate %.3e cell updates/s (max over ranks)\n",
           m[T_COMPUTE], per_s(c->updates, m[T_COMPUTE]));
    printf("  halo        %10.3f s   (max over ranks), depth %lld: %lld messages, %.2f a "
           "generation\n",
           m[T_HALO], (long long)info->halo_depth, (long long)c->halo_messages,
           res->generations ? (double)c->halo_messages / res->generations : 0.0);
    if (!cfg->no_output) {
        printf("  frames      %10.3f s   unpack/copy (max over ranks)\n", m[T_FRAME]);
        printf("  I/O         %10.3f s   in HDF5 on the writer thread, %.3f s waited for it\n",
               m[T_WRITE], m[T_WAIT]);
        printf("  output      %lld frames in %lld files, %.1f MiB, %s writes -> %s\n",
               (long long)res->frames, (long long)res->output.files,
               (double)res->output.bytes_written / 1048576.0,
               io_transfer_name(res->output.transfer), cfg->output);
    }
    if (info->shape) {
        char shape[512];
        shape_choice_describe(info->shape, shape, sizeof shape);
        printf("  kernel shape %s\n", shape);
    }
    print_population(c);
    fflush(stdout);
}

void report_summary(const gol_config *cfg, const gol_schedule *sched, const gol_run_result *res,
                    const gol_report_info *info, MPI_Comm comm) {
    int rank, nranks;
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    MPI_CHECK(MPI_Comm_size(comm, &nranks));
    report_spread t;
    gather_spread(res, comm, nranks, &t);
    int64_t messages = 0;
    MPI_CHECK(MPI_Reduce(&res->times.halo_messages, &messages, 1, MPI_INT64_T, MPI_SUM, 0, comm));
    char *hosts = cfg->stats[0] ? gather_hosts(comm, rank, nranks) : NULL;
    if (rank == 0) {
        double updates = (double)cfg->width * (double)cfg->height * (double)res->generations;
        report_ctx c = {.cfg = cfg,
                        .sched = sched,
                        .res = res,
                        .info = info,
                        .t = &t,
                        .hosts = hosts,
                        .updates = updates,
                        .halo_messages = messages};
        if (!cfg->quiet) print_summary(&c);
        if (cfg->stats[0]) write_stats(&c);
    }
    free(hosts);
}
