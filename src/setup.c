#include "src/setup.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/check.h"
#include "core/rule.h"
#include "io/format.h"
#include "io/golfile.h"
#include "io/output_names.h"
#include "kernels/mem_need.h"
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
    gol_status st = io_series_read(cfg->restart, &s->series);
    if (st.code != GOL_OK) return st;
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
        /* before io/ opens it: HDF5 would wait forever on a FIFO */
        st = input_check_regular("--restart", cfg->restart);
        if (st.code != GOL_OK) return st;
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
    if (s->has_restart) {
        st = continue_series(s, text);
        if (st.code != GOL_OK) return st;
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
    else if (s->has_pattern)
        init_pattern(&s->pattern, s->at_x, s->at_y, slab, rows_h);
    else
        init_random(s->cfg.seed, s->cfg.density, slab, rows_h);
    return status_agree(st, comm);
}

gol_status setup_start(const gol_setup *s, const gol_slab *slab, gol_backend_kind kind,
                       const char *halo, MPI_Comm comm, gol_backend **backend) {
    const gol_config *cfg = &s->cfg;
    *backend = NULL;
    if (!s->has_restart && !s->has_pattern) {
        *backend = backend_create(kind, halo, slab, cfg, comm);
        backend_init_random(*backend, cfg->seed, cfg->density);
        return gol_ok();
    }
    uint64_t *rows_h = gol_xcalloc((size_t)(slab->rows * slab->nwords), sizeof *rows_h);
    gol_status st = setup_initial_state(s, slab, rows_h, comm);
    if (st.code == GOL_OK) {
        *backend = backend_create(kind, halo, slab, cfg, comm);
        backend_load(*backend, rows_h);
    }
    free(rows_h);
    return st;
}

/* ---- memory: refuse what cannot fit, before anything is allocated ------------------------- */

#define GIB(bytes) ((double)(bytes) / (double)(INT64_C(1) << 30))

/* Host bytes of one rank, by what holds them: summed over the ranks of a node as doubles, since a
 * grid that cannot fit may need more than int64 bytes on a node of many ranks. */
enum { HOST_BACKEND, HOST_START, HOST_READ, HOST_SLOTS, HOST_BASE, HOST_PEAK, HOST_N };

/* The restart frame's bytes per stored row (u8 or packed), which restart_load_rows reads in one
 * buffer beside the start state; the width (u8, the larger) when the file says nothing. */
static int64_t restart_row_bytes(const gol_setup *s) {
    int64_t bytes = s->cfg.width;
    golfile *g = golfile_open(s->cfg.restart);
    if (!g) return bytes;
    const golfile_facts *f = golfile_facts_of(g);
    if (f->frames_ndims == 3 && f->frames_dims[2] > 0) bytes = f->frames_dims[2];
    golfile_close(g);
    return bytes;
}

/* Its peak is the largest of three moments: the start state while the restart frame is read into
 * it; the start state while the backend loads it; the backend with the two frame slots (run.c). A
 * pattern is left out: it was allocated while parsing, so the memory it holds is not available
 * any more. */
static void host_need(const gol_setup *s, const gol_slab *slab, gol_mem_need bk, double *h) {
    const gol_config *cfg = &s->cfg;
    int64_t start = mem_mul(mem_mul(slab->rows, slab->nwords), 8);
    int64_t read = s->has_restart ? mem_mul(slab->rows, restart_row_bytes(s)) : 0;
    int64_t frames = cfg->no_output ? 0 : schedule_chunk_frames(&s->sched, 0);
    int64_t slots = mem_mul(
        2, mem_mul(frames, mem_mul(slab->rows, frame_row_bytes(slab->width, cfg->frame_format))));
    int64_t base = mem_add(start, read); /* the peak without frame slots, for the advice */
    if (mem_add(start, bk.host) > base) base = mem_add(start, bk.host);
    int64_t peak = mem_add(bk.host, slots) > base ? mem_add(bk.host, slots) : base;
    h[HOST_BACKEND] = (double)bk.host, h[HOST_START] = (double)start, h[HOST_READ] = (double)read;
    h[HOST_SLOTS] = (double)slots, h[HOST_BASE] = (double)base, h[HOST_PEAK] = (double)peak;
}

/* "12.3 GiB", or MiB below a tenth of a GiB, so that a small part does not read as nothing. */
static const char *human(double bytes, char *buf, size_t len) {
    if (bytes >= 0.1 * (double)(INT64_C(1) << 30))
        snprintf(buf, len, "%.1f GiB", GIB(bytes));
    else
        snprintf(buf, len, "%.1f MiB", bytes / (double)(1 << 20));
    return buf;
}

/* "grids 931.3 GiB, start state 465.7 GiB, ...": the parts that are there. */
static void host_parts(const double *sum, gol_backend_kind kind, char *out, size_t len) {
    const char *label[] = {kind == GOL_BACKEND_CUDA ? "pinned halo rows" : "grids", "start state",
                           "restart frame", "frame slots"};
    size_t at = 0;
    out[0] = '\0';
    for (int i = HOST_BACKEND; i <= HOST_SLOTS && at < len; i++) {
        char n[32];
        if (sum[i] <= 0) continue;
        at += (size_t)snprintf(out + at, len - at, "%s%s %s", at ? ", " : "", label[i],
                               human(sum[i], n, sizeof n));
    }
}

/* The ranks of one node share its memory: their needs add up against what the node has left. */
static gol_status check_host(const gol_setup *s, const gol_slab *slab, gol_backend_kind kind,
                             MPI_Comm node) {
    double mine[HOST_N], sum[HOST_N];
    host_need(s, slab, backend_need(kind, slab, &s->cfg), mine);
    MPI_CHECK(MPI_Allreduce(mine, sum, HOST_N, MPI_DOUBLE, MPI_SUM, node));
    int64_t avail = mem_host_available(), least;
    MPI_CHECK(MPI_Allreduce(&avail, &least, 1, MPI_INT64_T, MPI_MIN, node));
    if (least < 0 || sum[HOST_PEAK] <= (double)least) return gol_ok(); /* unknown: let it try */
    int nlocal;
    MPI_CHECK(MPI_Comm_size(node, &nlocal));
    char host[256] = "?", parts[256], need[32], have[32];
    gethostname(host, sizeof host - 1);
    host_parts(sum, kind, parts, sizeof parts);
    /* the grid alone fits: the frames are what to cut */
    bool slots_weigh = sum[HOST_BASE] <= (double)least;
    return gol_fail(GOL_EXIT_USAGE,
                    "the %lld x %lld grid does not fit in memory: the %d rank(s) on node %s need "
                    "%s of host memory (%s), and the node has %s available; %s",
                    (long long)slab->width, (long long)slab->height, nlocal, host,
                    human(sum[HOST_PEAK], need, sizeof need), parts,
                    human((double)least, have, sizeof have),
                    slots_weigh ? "give fewer frames per chunk file (--chunk), --frame-format "
                                  "packed, or --no-output"
                                : "use more nodes, or a smaller grid");
}

/* Ranks that share a GPU share its memory: their needs add up against what it has free. */
static gol_status check_device(const gol_setup *s, const gol_slab *slab, MPI_Comm node) {
    int device;
    int64_t free_b = mem_device_free(node, &device), least;
    MPI_Comm gpu;
    MPI_CHECK(MPI_Comm_split(node, device < 0 ? MPI_UNDEFINED : device, 0, &gpu));
    if (gpu == MPI_COMM_NULL) return gol_ok(); /* no device: backend_select decided otherwise */
    double mine = (double)backend_cuda_need(slab, &s->cfg).device, sum;
    MPI_CHECK(MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, gpu));
    MPI_CHECK(MPI_Allreduce(&free_b, &least, 1, MPI_INT64_T, MPI_MIN, gpu));
    int sharing;
    MPI_CHECK(MPI_Comm_size(gpu, &sharing));
    MPI_CHECK(MPI_Comm_free(&gpu));
    if (sum <= (double)least) return gol_ok();
    char host[256] = "?", need[32], have[32], reserve[32];
    gethostname(host, sizeof host - 1);
    return gol_fail(GOL_EXIT_USAGE,
                    "the %lld x %lld grid does not fit on the GPUs: GPU %d of node %s needs %s of "
                    "device memory for its %d rank(s) (two grids each, u8 frame staging, and %s "
                    "for NCCL and CUDA graphs), and has %s free; use more GPUs, or a smaller grid",
                    (long long)slab->width, (long long)slab->height, device, host,
                    human(sum, need, sizeof need), sharing,
                    human((double)MEM_CUDA_RESERVE * sharing, reserve, sizeof reserve),
                    human((double)least, have, sizeof have));
}

gol_status setup_check_memory(const gol_setup *s, const gol_slab *slab, gol_backend_kind kind,
                              MPI_Comm comm) {
    MPI_Comm node;
    MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    gol_status st = check_host(s, slab, kind, node);
    /* collective over the node: every rank goes in, whatever the host said */
    if (kind == GOL_BACKEND_CUDA) {
        gol_status dev = check_device(s, slab, node);
        if (st.code == GOL_OK) st = dev;
    }
    MPI_CHECK(MPI_Comm_free(&node));
    return status_agree(st, comm);
}

void setup_free(gol_setup *s) {
    if (s->has_pattern) pattern_free(&s->pattern);
    s->has_pattern = false;
    if (s->has_series) io_series_free(&s->series);
    s->has_series = false;
}
