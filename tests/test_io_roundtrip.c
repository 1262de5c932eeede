/* The output API end to end, at any rank count: known frames go out through the writer thread,
 * then output_check must refuse to overwrite them, restart must read back exactly the last frame,
 * and every frame write must have been collective. tests/check_output.py and check_xdmf.py then
 * check the files themselves against the manifests this program leaves next to them.
 *
 * usage: test_io_roundtrip OUTDIR [sync]
 * OUTDIR is created; it must hold no earlier run. "sync" asks MPI for MPI_THREAD_FUNNELED only,
 * so the output must fall back to writing on the main thread, with the same files. */
#include <errno.h>
#include <hdf5.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/output.h"
#include "io/restart.h"
#include "backend/backend.h"
#include "core/check.h"
#include "core/rule.h"

static int failures;

#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            int r_;                                                                                \
            MPI_Comm_rank(MPI_COMM_WORLD, &r_);                                                    \
            fprintf(stderr, "rank %d: %s:%d: FAILED %s: ", r_, __FILE__, __LINE__, #cond);         \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

typedef struct run_spec {
    const char *base; /* file stem inside OUTDIR */
    int64_t width, height;
    int64_t g_start, g_end, save_every, chunk;
    gol_frame_format fmt;
    gol_boundary boundary;
    const char *rule;
    uint64_t seed;
    double density;
    /* 0, or the run stops at this generation, as on a signal (output_stop_at), before g_end: it
     * becomes the last frame, and the files are those of a run planned to end there */
    int64_t stop;
} run_spec;

/* The pattern every check recomputes on its own: (x, y) is alive at generation g iff
 * (7x + 13y + 31g) % 101 < 30. It repeats only every 101 generations, so a frame written in the
 * wrong place cannot pass for the right one. */
static int alive(int64_t x, int64_t y, int64_t g) { return (x * 7 + y * 13 + g * 31) % 101 < 30; }

static gol_slab make_slab(const run_spec *r, int rank, int nranks) {
    gol_slab s;
    memset(&s, 0, sizeof s);
    s.width = r->width;
    s.height = r->height;
    int64_t base = r->height / nranks, extra = r->height % nranks;
    s.rows = base + (rank < extra ? 1 : 0);
    s.row0 = rank * base + (rank < extra ? rank : extra);
    s.nwords = (r->width + 63) / 64;
    s.rank = rank;
    s.nranks = nranks;
    s.boundary = r->boundary;
    return s;
}

static void make_config(const run_spec *r, const char *dir, bool force, gol_config *cfg) {
    memset(cfg, 0, sizeof *cfg);
    cfg->width = r->width;
    cfg->height = r->height;
    cfg->steps = r->g_end - r->g_start;
    cfg->save_every = r->save_every;
    cfg->chunk = r->chunk;
    snprintf(cfg->output, sizeof cfg->output, "%s/%s.h5", dir, r->base);
    cfg->force = force;
    cfg->seed = r->seed;
    cfg->density = r->density;
    gol_status st = rule_parse(r->rule, &cfg->rule, cfg->rule_text, sizeof cfg->rule_text);
    if (st.code != GOL_OK) gol_die(__FILE__, __LINE__, "rule_parse", "test", st.msg);
    cfg->boundary = r->boundary;
    cfg->frame_format = r->fmt;
}

static gol_schedule make_schedule(const run_spec *r) {
    gol_schedule s = {r->g_start, r->g_end, r->save_every, r->chunk};
    return s;
}

static void fill_frame(const run_spec *r, const gol_slab *s, int64_t g, uint8_t *dst) {
    int64_t rb = frame_row_bytes(r->width, r->fmt);
    memset(dst, 0, (size_t)(s->rows * rb));
    for (int64_t y = 0; y < s->rows; y++)
        for (int64_t x = 0; x < r->width; x++) {
            if (!alive(x, s->row0 + y, g)) continue;
            if (r->fmt == GOL_FRAME_PACKED)
                dst[y * rb + x / 8] |= (uint8_t)(1u << (x % 8));
            else
                dst[y * rb + x] = 1;
        }
}

static void write_manifest(const run_spec *r, const char *dir, int nranks) {
    char path[GOL_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s.manifest.json", dir, r->base);
    FILE *fp = fopen(path, "w");
    SYS_CHECK(fp != NULL, path);
    fprintf(fp,
            "{\"base\": \"%s\", \"width\": %lld, \"height\": %lld, \"g_start\": %lld, "
            "\"g_end\": %lld, \"save_every\": %lld, \"chunk\": %lld, \"encoding\": \"%s\", "
            "\"boundary\": \"%s\", \"rule\": \"%s\", \"seed\": %llu, \"density\": %.17g, "
            "\"ranks\": %d}\n",
            r->base, (long long)r->width, (long long)r->height, (long long)r->g_start,
            (long long)r->g_end, (long long)r->save_every, (long long)r->chunk,
            r->fmt == GOL_FRAME_PACKED ? "packed-lsb" : "u8",
            r->boundary == GOL_BOUNDARY_DEAD ? "dead" : "torus", r->rule,
            (unsigned long long)r->seed, r->density, nranks);
    SYS_CHECK(fclose(fp) == 0, path);
}

/* The restart side: the index and the last chunk file must both give the last frame, exactly. */
static void check_restart(const run_spec *r, const char *path, const gol_slab *s) {
    gol_restart_info info;
    gol_status st = restart_probe(path, &info);
    EXPECT(st.code == GOL_OK, "restart_probe(%s): %s", path, st.msg);
    if (st.code != GOL_OK) return;
    EXPECT(info.width == r->width && info.height == r->height, "%s: size %lldx%lld", path,
           (long long)info.width, (long long)info.height);
    EXPECT(info.generation == r->g_end, "%s: generation %lld", path, (long long)info.generation);
    EXPECT(strcmp(info.rule_text, r->rule) == 0, "%s: rule %s", path, info.rule_text);
    EXPECT(info.boundary == r->boundary, "%s: boundary", path);
    EXPECT(info.seed == r->seed && info.density == r->density, "%s: seed/density", path);

    int64_t words = s->rows * s->nwords;
    uint64_t *got = gol_xmalloc((size_t)(words > 0 ? words : 1) * sizeof *got);
    memset(got, 0xa5, (size_t)(words > 0 ? words : 1) * sizeof *got);
    st = restart_load_rows(path, s, got);
    EXPECT(st.code == GOL_OK, "restart_load_rows(%s): %s", path, st.msg);
    int64_t bad = 0;
    for (int64_t y = 0; y < s->rows && st.code == GOL_OK; y++)
        for (int64_t w = 0; w < s->nwords; w++) {
            uint64_t want = 0;
            for (int64_t b = 0; b < 64 && w * 64 + b < r->width; b++)
                want |= (uint64_t)alive(w * 64 + b, s->row0 + y, r->g_end) << b;
            if (got[y * s->nwords + w] != want) bad++;
        }
    EXPECT(bad == 0, "%s: %lld words of the restarted rows differ", path, (long long)bad);
    free(got);
}

static void run_one(const run_spec *planned, const char *dir, int rank, int nranks) {
    gol_config cfg;
    make_config(planned, dir, false, &cfg);
    gol_schedule sched = make_schedule(planned);
    run_spec stopped = *planned, *r = &stopped; /* what the files must hold */
    if (planned->stop) stopped.g_end = planned->stop;
    gol_slab slab = make_slab(r, rank, nranks);

    gol_status st = output_check(&cfg, &sched, MPI_COMM_WORLD);
    EXPECT(st.code == GOL_OK, "output_check before the run: %s", st.msg);

    int64_t frame_bytes = slab.rows * frame_row_bytes(r->width, r->fmt);
    uint8_t *slot_h[2];
    for (int s = 0; s < 2; s++)
        slot_h[s] = gol_xmalloc((size_t)(r->chunk * frame_bytes + 1));

    gol_output *o = output_open(&cfg, &slab, &sched, MPI_COMM_WORLD);
    int64_t nchunks = schedule_chunks(&sched), bytes = 0;
    for (int64_t c = 0; c < schedule_chunks(&sched); c++) {
        int s = (int)(c % 2);
        output_wait_slot(o, s); /* the writer may still hold this buffer */
        int64_t first = schedule_chunk_first(&sched, c);
        for (int64_t f = 0; f < schedule_chunk_frames(&sched, c); f++) {
            int64_t g = schedule_frame_generation(&sched, first + f);
            if (r->g_end < g) { /* the stop comes first: its generation is the run's last frame */
                g = r->g_end;
                sched = schedule_truncate(&sched, g);
                output_stop_at(o, g);
            }
            fill_frame(r, &slab, g, slot_h[s] + f * frame_bytes);
            output_write_frame(o, s, c, f, slot_h[s]); /* each frame as soon as it is in */
        }
        int64_t n = schedule_chunk_frames(&sched, c);
        bytes += n * r->height * frame_row_bytes(r->width, r->fmt) + n * 8;
    }
    gol_output_stats stats;
    output_close(o, &stats);
    for (int s = 0; s < 2; s++)
        free(slot_h[s]);

    nchunks = schedule_chunks(&sched);
    EXPECT(stats.files == nchunks, "%s: stats.files %lld, want %lld", r->base,
           (long long)stats.files, (long long)nchunks);
    EXPECT(stats.bytes_written == bytes, "%s: stats.bytes_written %lld, want %lld", r->base,
           (long long)stats.bytes_written, (long long)bytes);
    EXPECT(stats.transfer == IO_TRANSFER_COLLECTIVE, "%s: a frame write was not collective",
           r->base);
    EXPECT(stats.write_s > 0 && stats.wait_s >= 0, "%s: times %g %g", r->base, stats.write_s,
           stats.wait_s);
    free(stats.generations); /* rank 0's series is the caller's (LeakSanitizer saw it) */
    free(stats.population);

    /* the files exist now: no second run may silently overwrite them */
    st = output_check(&cfg, &sched, MPI_COMM_WORLD);
    EXPECT(st.code == GOL_EXIT_USAGE && strstr(st.msg, "exists; pass --force"),
           "output_check after the run: %d %s", st.code, st.msg);
    cfg.force = true;
    st = output_check(&cfg, &sched, MPI_COMM_WORLD);
    EXPECT(st.code == GOL_OK, "output_check --force: %s", st.msg);

    char index[GOL_PATH_MAX + 64], last[GOL_PATH_MAX + 64], stem[GOL_PATH_MAX + 64];
    snprintf(index, sizeof index, "%s/%s.h5", dir, r->base);
    snprintf(stem, sizeof stem, "%s/%s", dir, r->base);
    int64_t first = schedule_chunk_first(&sched, nchunks - 1);
    output_chunk_name(stem, schedule_frame_generation(&sched, first), r->g_end, last, sizeof last);
    check_restart(r, index, &slab);
    check_restart(r, last, &slab);
    if (rank == 0) write_manifest(r, dir, nranks);
}

static void check_refusals(const char *dir, int rank) {
    run_spec r = {"refuse",           16,       8, 0,  40, 10, 2, GOL_FRAME_U8,
                  GOL_BOUNDARY_TORUS, "B3/S23", 1, 0.5};
    gol_config cfg;
    gol_schedule sched = make_schedule(&r);

    /* a leftover .part of one of this run's chunk names is not output: it goes */
    char stray[GOL_PATH_MAX + 64];
    snprintf(stray, sizeof stray, "%s/refuse_000020-000030.h5.part", dir);
    if (rank == 0) {
        FILE *fp = fopen(stray, "w");
        SYS_CHECK(fp && fclose(fp) == 0, stray);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    make_config(&r, dir, false, &cfg);
    gol_status st = output_check(&cfg, &sched, MPI_COMM_WORLD);
    EXPECT(st.code == GOL_OK && access(stray, F_OK) != 0, "stray .part: %d %s", st.code, st.msg);
    MPI_Barrier(MPI_COMM_WORLD);
    /* a name of another schedule is not this run's business */
    snprintf(stray, sizeof stray, "%s/refuse_000020-000031.h5", dir);
    if (rank == 0) {
        FILE *fp = fopen(stray, "w");
        SYS_CHECK(fp && fclose(fp) == 0, stray);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    st = output_check(&cfg, &sched, MPI_COMM_WORLD);
    EXPECT(st.code == GOL_OK, "unrelated file refused: %s", st.msg);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) unlink(stray);

    char nodir[GOL_PATH_MAX];
    snprintf(nodir, sizeof nodir, "%s/no/such/dir", dir);
    make_config(&r, nodir, false, &cfg);
    st = output_check(&cfg, &sched, MPI_COMM_WORLD);
    EXPECT(st.code == GOL_EXIT_USAGE && strstr(st.msg, "does not exist"), "missing dir: %s",
           st.msg);

    gol_restart_info info;
    char path[GOL_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/missing.h5", dir);
    st = restart_probe(path, &info);
    EXPECT(st.code == GOL_EXIT_USAGE, "restart from a missing file: %d", st.code);
    snprintf(path, sizeof path, "%s/u8run.xmf", dir);
    st = restart_probe(path, &info);
    EXPECT(st.code == GOL_EXIT_USAGE && strstr(st.msg, "not an HDF5 file"),
           "restart from a text file: %d %s", st.code, st.msg);
}

int main(int argc, char **argv) {
    bool sync = argc == 3 && strcmp(argv[2], "sync") == 0;
    int provided;
    MPI_CHECK(
        MPI_Init_thread(&argc, &argv, sync ? MPI_THREAD_FUNNELED : MPI_THREAD_MULTIPLE, &provided));
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argc < 2 || argc > 3 || (argc == 3 && !sync)) {
        if (rank == 0) fprintf(stderr, "usage: %s OUTDIR [sync]\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    if (sync && provided >= MPI_THREAD_MULTIPLE && rank == 0)
        printf("note: MPI gave MPI_THREAD_MULTIPLE for FUNNELED; the threaded path runs\n");
    const char *dir = argv[1];
    if (rank == 0 && mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "cannot create %s: %s\n", dir, strerror(errno));
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* three u8 chunks, the last of one frame (a name without the range) */
    run_spec u8 = {"u8run",
                   77,
                   23,
                   0,
                   27,
                   5,
                   3,
                   GOL_FRAME_U8,
                   GOL_BOUNDARY_TORUS,
                   "B3/S23",
                   12345678901234567ULL,
                   0.3};
    /* packed, starting mid-run as after a restart, and another rule and boundary */
    run_spec packed = {"packed",          77,        23, 10,  40, 7, 2, GOL_FRAME_PACKED,
                       GOL_BOUNDARY_DEAD, "B36/S23", 7,  0.25};
    /* fewer rows than four ranks: a rank with no rows joins with an empty selection */
    run_spec tiny = {"tiny", 9, 3, 0, 2, 1, 2, GOL_FRAME_U8, GOL_BOUNDARY_TORUS, "B3/S23", 1, 0.5};

    run_one(&u8, dir, rank, nranks);
    run_one(&packed, dir, rank, nranks);
    run_one(&tiny, dir, rank, nranks);
    /* stopped inside a chunk: the chunk begun for frames 20-35 ends with 20 and 22 (its file,
     * made for four frames, is replaced by one of two); and stopped before a chunk's last frame:
     * 20 and 22 instead of 20 and 25 (as many frames, so the file made for them is kept, under
     * another name) */
    run_spec cut = {"cut",    77, 23,  0, 60, 5, 4, GOL_FRAME_U8, GOL_BOUNDARY_TORUS,
                    "B3/S23", 3,  0.5, 22};
    run_spec cut_last = {"cutlast",          77,       23, 0,   60, 5, 2, GOL_FRAME_PACKED,
                         GOL_BOUNDARY_TORUS, "B3/S23", 3,  0.5, 22};
    run_one(&cut, dir, rank, nranks);
    run_one(&cut_last, dir, rank, nranks);
    check_refusals(dir, rank);
    /* every file, dataset and attribute that the output and restart opened is closed again */
    ssize_t open_ids = H5Fget_obj_count((hid_t)H5F_OBJ_ALL, H5F_OBJ_ALL);
    EXPECT(open_ids == 0, "%zd HDF5 objects left open", open_ids);

    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_io_roundtrip: %d ranks (thread level %d): %s\n", nranks, provided,
               total ? "FAILED" : "ok");
    MPI_Finalize();
    return total ? 1 : 0;
}
