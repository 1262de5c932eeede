#include "src/setup.h"

#include <limits.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/check.h"
#include "core/phase.h"
#include "core/rule.h"
#include "io/format.h"
#include "io/golfile.h"
#include "io/output_names.h"
#include "src/init.h"
#include "src/options.h"

/* A pattern's rule and Golly bounded grid fill in what the user did not say. */
static gol_status resolve_pattern(gol_setup *s) {
    gol_config *cfg = &s->cfg;
    gol_pattern *p = &s->pattern;
    if (p->has_rule && !cfg->rule_given) {
        cfg->rule = p->rule;
        rule_format(p->rule, cfg->rule_text, sizeof cfg->rule_text);
    }
    if (p->has_grid && !cfg->size_given) {
        cfg->width = p->grid_width;
        cfg->height = p->grid_height;
    }
    if (p->has_grid && !cfg->boundary_given) cfg->boundary = p->grid_boundary;
    if (p->width > cfg->width || p->height > cfg->height)
        return gol_fail(GOL_EXIT_USAGE, "pattern %s is %lld x %lld cells, larger than the %lld x %lld grid",
                        cfg->pattern, (long long)p->width, (long long)p->height,
                        (long long)cfg->width, (long long)cfg->height);
    if (cfg->at_given) {
        if (cfg->at_x < 0 || cfg->at_y < 0 || cfg->at_x + p->width > cfg->width ||
            cfg->at_y + p->height > cfg->height)
            return gol_fail(GOL_EXIT_USAGE,
                            "--at %lld,%lld: the %lld x %lld pattern does not fit in the %lld x %lld "
                            "grid there (its top-left cell must be in 0..%lld, 0..%lld)",
                            (long long)cfg->at_x, (long long)cfg->at_y, (long long)p->width,
                            (long long)p->height, (long long)cfg->width, (long long)cfg->height,
                            (long long)(cfg->width - p->width), (long long)(cfg->height - p->height));
        s->at_x = cfg->at_x;
        s->at_y = cfg->at_y;
    } else {
        s->at_x = (cfg->width - p->width) / 2;
        s->at_y = (cfg->height - p->height) / 2;
    }
    return gol_ok();
}

/* A restart continues the file's grid: its size, rule and boundary, unless the user asked for
 * others explicitly, which cannot give the uninterrupted run and is refused. */
static gol_status resolve_restart(gol_setup *s) {
    gol_config *cfg = &s->cfg;
    const gol_restart_info *r = &s->restart;
    if (cfg->size_given && (cfg->width != r->width || cfg->height != r->height))
        return gol_fail(GOL_EXIT_USAGE, "--restart %s: the file's grid is %lld x %lld, not %lld x %lld",
                        cfg->restart, (long long)r->width, (long long)r->height,
                        (long long)cfg->width, (long long)cfg->height);
    if (cfg->rule_given && (cfg->rule.birth != r->rule.birth || cfg->rule.survive != r->rule.survive))
        return gol_fail(GOL_EXIT_USAGE, "--restart %s: the file's rule is %s, not %s", cfg->restart,
                        r->rule_text, cfg->rule_text);
    if (cfg->boundary_given && cfg->boundary != r->boundary)
        return gol_fail(GOL_EXIT_USAGE, "--restart %s: the file's boundary is %s, not %s",
                        cfg->restart, config_boundary_name(r->boundary),
                        config_boundary_name(cfg->boundary));
    cfg->width = r->width;
    cfg->height = r->height;
    cfg->rule = r->rule;
    rule_format(r->rule, cfg->rule_text, sizeof cfg->rule_text);
    cfg->boundary = r->boundary;
    cfg->seed = r->seed;
    cfg->density = r->density;
    return gol_ok();
}

/* ---- output paths that would overwrite an input or another output -------------------------- */

/* Which of this run's output files (io/output_names.h) `path` names, or NULL. */
static const char *output_named(const gol_config *cfg, const char *path) {
    if (cfg->no_output) return NULL;
    char base[GOL_PATH_MAX];
    config_output_base(cfg, base, sizeof base);
    return output_name_of(base, path);
}

/* --stats is written at the very end of the run, so whatever would stop it must be found now; and
 * it must not replace an input or an output of this run. A --pattern that is also an output would
 * be replaced by it (with --force). */
static gol_status check_output_paths(const gol_config *cfg) {
    const char *out;
    if (cfg->pattern[0] && (out = output_named(cfg, cfg->pattern)))
        return gol_fail(GOL_EXIT_USAGE,
                        "--pattern %s is %s of --output %s; it would be overwritten: choose "
                        "another --output",
                        cfg->pattern, out, cfg->output);
    /* the index itself is the resume (continue_series); any other of the output's files is not
     * a restart file, and the run would replace or remove it */
    if (cfg->restart[0] && (out = output_named(cfg, cfg->restart)) &&
        !io_same_file(cfg->restart, cfg->output))
        return gol_fail(GOL_EXIT_USAGE,
                        "--restart %s is %s of --output %s; it would be overwritten: choose "
                        "another --output",
                        cfg->restart, out, cfg->output);
    if (!cfg->stats[0]) return gol_ok();
    char dir[GOL_PATH_MAX];
    const char *name;
    path_split(cfg->stats, dir, sizeof dir, &name);
    struct stat st;
    if (access(dir, W_OK) != 0)
        return gol_fail(GOL_EXIT_USAGE, "--stats %s: cannot write into directory '%s'", cfg->stats,
                        dir);
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return gol_fail(GOL_EXIT_USAGE, "--stats %s: '%s' is not a directory", cfg->stats, dir);
    if (!*name || (stat(cfg->stats, &st) == 0 && S_ISDIR(st.st_mode)))
        return gol_fail(GOL_EXIT_USAGE, "--stats %s is a directory; it needs a file name",
                        cfg->stats);
    if (cfg->pattern[0] && io_same_file(cfg->stats, cfg->pattern))
        return gol_fail(GOL_EXIT_USAGE, "--stats %s is the --pattern file; it would be overwritten",
                        cfg->stats);
    if (cfg->restart[0] && io_same_file(cfg->stats, cfg->restart))
        return gol_fail(GOL_EXIT_USAGE, "--stats %s is the --restart file; it would be overwritten",
                        cfg->stats);
    if ((out = output_named(cfg, cfg->stats)))
        return gol_fail(GOL_EXIT_USAGE,
                        "--stats %s is %s of --output %s; it would be overwritten: choose "
                        "another name",
                        cfg->stats, out, cfg->output);
    return gol_ok();
}

/* --restart X.h5 --output X.h5 continues X's series (DESIGN: Checkpoint and resume): the chunks
 * the index lists stay in it, the restart generation's frame (the series' last) is not written
 * again, and --steps counts from the series' first generation, so the same command line resumes a
 * stopped run and ends where the run that never stopped ends. A series already that far is
 * nothing to do: exit 0, said on stdout. */
static gol_status continue_series(gol_setup *s, const char **text) {
    static char done[GOL_PATH_MAX + 256];
    gol_config *cfg = &s->cfg;
    if (cfg->no_output || !io_same_file(cfg->restart, cfg->output)) return gol_ok();
    GOL_TRY(io_series_read(cfg->restart, &s->series));
    s->has_series = true;
    const io_series *ser = &s->series;
    if (ser->generations[ser->nframes - 1] != s->restart.generation)
        return gol_fail(GOL_EXIT_USAGE, "--restart %s: its last frame is generation %lld, but its "
                        "/generations ends at %lld", cfg->restart,
                        (long long)s->restart.generation,
                        (long long)ser->generations[ser->nframes - 1]);
    int64_t first = ser->generations[0];
    s->sched.g_end = first + cfg->steps; /* steps <= INT64_MAX/2, generations far below */
    s->sched.skip_start = 1;
    if (s->sched.g_end > s->sched.g_start) return gol_ok();
    snprintf(done, sizeof done,
             "golmpi: %s already reaches generation %lld (from generation %lld, --steps %lld): "
             "nothing to do\n",
             cfg->output, (long long)s->restart.generation, (long long)first,
             (long long)cfg->steps);
    if (text) *text = done;
    return gol_fail(GOL_EXIT_DONE, "series complete");
}

static gol_status parse_local(int argc, char **argv, gol_setup *s, const char **text) {
    gol_config *cfg = &s->cfg;
    GOL_TRY(config_parse(argc, argv, cfg, text));
    if (cfg->pattern[0]) {
        GOL_TRY(pattern_load(cfg->pattern, &s->pattern));
        s->has_pattern = true;
        GOL_TRY(resolve_pattern(s));
    }
    if (cfg->restart[0]) {
        /* before io/ opens it: HDF5 would wait forever on a FIFO */
        GOL_TRY(input_check_regular("--restart", cfg->restart));
        GOL_TRY(restart_probe(cfg->restart, &s->restart));
        s->has_restart = true;
        GOL_TRY(resolve_restart(s));
    }
    s->sched.g_start = s->has_restart ? s->restart.generation : 0;
    s->sched.g_end = s->sched.g_start + cfg->steps;
    s->sched.save_every = cfg->save_every;
    s->sched.frames_per_chunk = cfg->chunk;
    if (s->has_restart) {
        GOL_TRY(continue_series(s, text));
    }
    return check_output_paths(cfg);
}

gol_status setup_parse(int argc, char **argv, MPI_Comm comm, gol_setup *s, const char **text) {
    memset(s, 0, sizeof *s);
    return status_agree(parse_local(argc, argv, s, text), comm);
}

gol_status setup_initial_state(const gol_setup *s, const gol_slab *slab, uint64_t *rows_h,
                               MPI_Comm comm) {
    gol_status st = gol_ok();
    if (s->has_restart)
        st = restart_load_rows(s->cfg.restart, slab, rows_h);
    else
        init_pattern(&s->pattern, s->at_x, s->at_y, slab, rows_h);
    return status_agree(st, comm);
}

gol_status setup_start(const gol_setup *s, const gol_plan *plan, MPI_Comm comm,
                       gol_backend **backend) {
    const gol_config *cfg = &s->cfg;
    const gol_slab *slab = &plan->slab;
    *backend = NULL;
    gol_phase_enter(GOL_PHASE_WIREUP, -1);
    omp_set_num_threads(plan->threads);
    if (!s->has_restart && !s->has_pattern) {
        *backend = backend_create(plan, cfg, comm);
        backend_init_random(*backend, cfg->seed, cfg->density);
        return gol_ok();
    }
    uint64_t *rows_h = gol_xcalloc((size_t)(slab->rows * slab->nwords), sizeof *rows_h);
    gol_status st = setup_initial_state(s, slab, rows_h, comm);
    if (st.code == GOL_OK) {
        *backend = backend_create(plan, cfg, comm);
        backend_load(*backend, rows_h);
    }
    free(rows_h);
    return st;
}

void setup_free(gol_setup *s) {
    if (s->has_pattern) pattern_free(&s->pattern);
    s->has_pattern = false;
    if (s->has_series) io_series_free(&s->series);
    s->has_series = false;
}
