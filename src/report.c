#include "src/report.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/check.h"

static double per_s(double count, double seconds) { return seconds > 0 ? count / seconds : 0.0; }

typedef struct report_max {
    double compute_s, halo_s, frame_s, write_s, wait_s;
} report_max;

static void write_stats(const gol_config *cfg, const gol_schedule *sched, const gol_run_result *res,
                        const gol_report_info *info, const report_max *m, double updates) {
    FILE *f = fopen(cfg->stats, "w");
    SYS_CHECK(f != NULL, "fopen(--stats)");
    fprintf(f,
            "{\n  \"version\": \"%s\",\n  \"backend\": \"%s\",\n  \"halo\": \"%s\",\n"
            "  \"ranks\": %d,\n  \"threads_per_rank\": %d,\n  \"width\": %lld,\n  \"height\": %lld,\n"
            "  \"rule\": \"%s\",\n  \"boundary\": \"%s\",\n  \"generation_start\": %lld,\n"
            "  \"generation_end\": %lld,\n  \"generations\": %lld,\n  \"cell_updates\": %.0f,\n"
            "  \"wall_s\": %.6f,\n  \"cell_updates_per_s\": %.6e,\n"
            "  \"compute_cell_updates_per_s\": %.6e,\n  \"compute_s\": %.6f,\n  \"halo_s\": %.6f,\n"
            "  \"frame_s\": %.6f,\n  \"io_write_s\": %.6f,\n  \"io_wait_s\": %.6f,\n"
            "  \"frames\": %lld,\n  \"files\": %lld,\n  \"bytes_written\": %lld,\n"
            "  \"collective_io\": %s,\n  \"population\": %lld\n}\n",
            GOLMPI_VERSION, info->backend, info->halo, info->nranks, info->threads,
            (long long)cfg->width, (long long)cfg->height, cfg->rule_text,
            config_boundary_name(cfg->boundary), (long long)sched->g_start, (long long)sched->g_end,
            (long long)res->generations, updates, res->wall_s,
            per_s(updates, res->wall_s),
            per_s(updates, m->compute_s), m->compute_s, m->halo_s, m->frame_s,
            m->write_s, m->wait_s, (long long)res->frames, (long long)res->output.files,
            (long long)res->output.bytes_written,
            cfg->no_output ? "null" : (res->output.collective ? "true" : "false"),
            (long long)res->population);
    SYS_CHECK(fclose(f) == 0, "fclose(--stats)");
}

void report_summary(const gol_config *cfg, const gol_schedule *sched, const gol_run_result *res,
                    const gol_report_info *info, MPI_Comm comm) {
    int rank;
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    report_max mine = {res->times.compute_s, res->times.halo_s, res->times.frame_s,
                       res->output.write_s, res->output.wait_s},
               m;
    MPI_CHECK(MPI_Allreduce(&mine, &m, 5, MPI_DOUBLE, MPI_MAX, comm));
    if (rank != 0) return;
    double updates = (double)cfg->width * (double)cfg->height * (double)res->generations;
    if (!cfg->quiet) {
        printf("golmpi %s: %lld x %lld %s %s, generations %lld..%lld on %d rank%s "
               "(%s backend, %s halo, %d thread%s/rank)\n",
               GOLMPI_VERSION, (long long)cfg->width, (long long)cfg->height,
               config_boundary_name(cfg->boundary), cfg->rule_text, (long long)sched->g_start,
               (long long)sched->g_end, info->nranks, info->nranks == 1 ? "" : "s", info->backend,
               info->halo, info->threads, info->threads == 1 ? "" : "s");
        printf("  wall time   %10.3f s   %.3e cell updates/s\n", res->wall_s,
               per_s(updates, res->wall_s));
        printf("  compute     %10.3f s   %.3e cell updates/s (max over ranks)\n", m.compute_s,
               per_s(updates, m.compute_s));
        printf("  halo        %10.3f s   (max over ranks)\n", m.halo_s);
        if (!cfg->no_output) {
            printf("  frames      %10.3f s   unpack/copy (max over ranks)\n", m.frame_s);
            printf("  I/O         %10.3f s   in HDF5 on the writer thread, %.3f s waited for it\n",
                   m.write_s, m.wait_s);
            printf("  output      %lld frames in %lld files, %.1f MiB, %s writes -> %s\n",
                   (long long)res->frames, (long long)res->output.files,
                   (double)res->output.bytes_written / 1048576.0,
                   res->output.collective ? "collective" : "independent", cfg->output);
        }
        printf("  population  %lld at generation %lld\n", (long long)res->population,
               (long long)sched->g_end);
        fflush(stdout);
    }
    if (cfg->stats[0]) write_stats(cfg, sched, res, info, &m, updates);
}
