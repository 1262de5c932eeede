#include "src/setup.h"

#include <string.h>
#include <unistd.h>

#include "core/check.h"
#include "src/init.h"
#include "core/rule.h"
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

static gol_status check_stats_path(const gol_config *cfg) {
    if (!cfg->stats[0]) return gol_ok();
    char dir[GOL_PATH_MAX];
    const char *name;
    path_split(cfg->stats, dir, sizeof dir, &name);
    if (access(dir, W_OK) != 0)
        return gol_fail(GOL_EXIT_USAGE, "--stats %s: cannot write into directory '%s'", cfg->stats, dir);
    return gol_ok();
}

static gol_status parse_local(int argc, char **argv, gol_setup *s, const char **text) {
    gol_config *cfg = &s->cfg;
    gol_status st = config_parse(argc, argv, cfg, text);
    if (st.code != GOL_OK) return st;
    if (cfg->pattern[0]) {
        st = pattern_load(cfg->pattern, &s->pattern);
        if (st.code != GOL_OK) return st;
        s->has_pattern = true;
        st = resolve_pattern(s);
        if (st.code != GOL_OK) return st;
    }
    if (cfg->restart[0]) {
        st = restart_probe(cfg->restart, &s->restart);
        if (st.code != GOL_OK) return st;
        s->has_restart = true;
        st = resolve_restart(s);
        if (st.code != GOL_OK) return st;
    }
    s->sched.g_start = s->has_restart ? s->restart.generation : 0;
    s->sched.g_end = s->sched.g_start + cfg->steps;
    s->sched.save_every = cfg->save_every;
    s->sched.chunk = cfg->chunk;
    return check_stats_path(cfg);
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
    else if (s->has_pattern)
        init_pattern(&s->pattern, s->at_x, s->at_y, slab, rows_h);
    else
        init_random(s->cfg.seed, s->cfg.density, slab, rows_h);
    return status_agree(st, comm);
}

void setup_free(gol_setup *s) {
    if (s->has_pattern) pattern_free(&s->pattern);
    s->has_pattern = false;
}
