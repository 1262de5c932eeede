/* output_check: everything about the output that can be known before a byte is written, decided
 * on rank 0 while it holds the output's lock, and agreed by every rank (io/output.h). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/check.h"
#include "io/format.h"
#include "io/output.h"
#include "io/output_guard.h"
#include "io/tuning.h"

/* Where the output goes: "<dir>/<stem>" is the base, the index is "<base>.h5". */
typedef struct out_names {
    char base[GOL_PATH_MAX], dir[GOL_PATH_MAX];
    const char *stem; /* inside base */
} out_names;

static void chunk_generations(const gol_schedule *s, int64_t chunk, int64_t *g0, int64_t *g1) {
    int64_t first = schedule_chunk_first(s, chunk);
    *g0 = schedule_frame_generation(s, first);
    *g1 = schedule_frame_generation(s, first + schedule_chunk_frames(s, chunk) - 1);
}

/* Is `entry` (a name in the output directory) one of this run's chunk names? The first generation
 * picks the only candidate chunk by bisection, so a run of a billion chunks costs one directory
 * listing, not a billion stat calls. */
static bool is_chunk_of_run(const char *entry, const char *stem, const gol_schedule *s) {
    if (!output_is_chunk_name(entry, stem)) return false;
    long long g0 = strtoll(entry + strlen(stem) + 1, NULL, 10);
    int64_t lo = 0, hi = schedule_chunks(s) - 1;
    while (lo < hi) { /* the last chunk whose first generation is <= g0 */
        int64_t mid = lo + (hi - lo + 1) / 2;
        int64_t m0, m1;
        chunk_generations(s, mid, &m0, &m1);
        if (m0 <= g0)
            lo = mid;
        else
            hi = mid - 1;
    }
    int64_t c0, c1;
    chunk_generations(s, lo, &c0, &c1);
    if (c0 != g0) return false;
    char want[GOL_PATH_MAX + 64];
    output_chunk_name(stem, c0, c1, want, sizeof want);
    return strcmp(entry, want) == 0;
}

static gol_status check_dir(const char *dir) {
    struct stat st;
    if (stat(dir, &st) != 0)
        return gol_fail(GOL_EXIT_USAGE, "output directory '%s' does not exist", dir);
    if (!S_ISDIR(st.st_mode))
        return gol_fail(GOL_EXIT_USAGE, "output directory '%s' is not a directory", dir);
    if (access(dir, W_OK | X_OK) != 0)
        return gol_fail(GOL_EXIT_USAGE, "output directory '%s' is not writable", dir);
    return gol_ok();
}

/* Open MPI 4.1's OMPIO asks every shared-file-pointer component about each file it opens, and
 * the 'lockedfile' component formats "<path>.locktest.<rank>" into a 256-byte buffer: a longer
 * path kills every rank ("buffer overflow detected"). It also creates and removes one such file
 * per rank per chunk beside the output. golmpi uses no shared file pointers, so it leaves that
 * component out, unless the user chose the components (OMPI_MCA_sharedfp). OMPIO reads the
 * setting at the first MPI_File_open; no other thread runs yet (setenv is not thread-safe). */
static void leave_out_lockedfile(void) {
#ifdef OMPI_MAJOR_VERSION
    setenv("OMPI_MCA_sharedfp", "^lockedfile", 0);
#endif
}

/* Will OMPIO still query 'lockedfile' (the user asked for it)? */
static const char *lockedfile_chosen(void) {
#ifdef OMPI_MAJOR_VERSION
    const char *v = getenv("OMPI_MCA_sharedfp");
    if (!v) return "Open MPI's default";
    bool named = strstr(v, "lockedfile") != NULL;
    if (v[0] == '^' ? !named : named) return "OMPI_MCA_sharedfp";
#endif
    return NULL;
}

static int digits(int64_t v) {
    int n = 1;
    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
}

/* Every name the run makes must fit the file system (NAME_MAX per name, PATH_MAX in all): the
 * longest is a chunk's .part, "<stem>_<g0>-<g1>.h5.part", bounded here by the last generation. */
static gol_status check_name_lengths(const out_names *n, const gol_schedule *sched, int nranks) {
    char longest[2 * GOL_PATH_MAX]; /* output_chunk_name's longer form, and ".part" */
    snprintf(longest, sizeof longest, "%s_%06lld-%06lld.h5.part", n->base, (long long)sched->g_end,
             (long long)sched->g_end);
    const char *name = longest + (n->stem - n->base);
    long name_max = pathconf(n->dir, _PC_NAME_MAX);
    if (name_max <= 0) name_max = NAME_MAX;
    if ((long)strlen(name) > name_max)
        return gol_fail(GOL_EXIT_USAGE,
                        "--output: the chunk file names would be up to %zu characters long "
                        "('%s'); this file system allows %ld characters in a name",
                        strlen(name), name, name_max);
    if (strlen(longest) >= PATH_MAX)
        return gol_fail(GOL_EXIT_USAGE,
                        "--output: the chunk file paths would be %zu characters long; the system "
                        "allows %d",
                        strlen(longest), PATH_MAX - 1);
    const char *who = lockedfile_chosen();
    size_t limit = 255 - strlen(".locktest.") - (size_t)digits(nranks - 1);
    if (who && strlen(longest) > limit)
        return gol_fail(GOL_EXIT_USAGE,
                        "--output: the chunk file paths would be %zu characters long; Open MPI's "
                        "'lockedfile' component (chosen by %s) cannot open paths longer than %zu "
                        "characters: use a shorter path, or OMPI_MCA_sharedfp=^lockedfile",
                        strlen(longest), who, limit);
    return gol_ok();
}

/* The .part files of this output that a killed run left: never finished, so not output. */
typedef struct stale_parts {
    char **names;
    size_t count, cap;
} stale_parts;

static void stale_add(stale_parts *s, const char *name) {
    if (s->count == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 8;
        char **grown = gol_xmalloc(s->cap * sizeof *grown);
        if (s->count) memcpy(grown, s->names, s->count * sizeof *grown);
        free(s->names);
        s->names = grown;
    }
    s->names[s->count] = gol_xmalloc(strlen(name) + 1);
    strcpy(s->names[s->count++], name);
}

static void stale_free(stale_parts *s) {
    for (size_t i = 0; i < s->count; i++)
        free(s->names[i]);
    free(s->names);
}

/* What is `entry` to this output? 0: nothing; 1: a file this run will write under its final
 * name; 2: a .part of this output (of this run's names or of any other chunk of the stem). */
static int classify(const char *entry, const char *stem, const gol_schedule *sched) {
    char name[GOL_PATH_MAX];
    snprintf(name, sizeof name, "%s", entry);
    size_t len = strlen(name);
    bool part = len > 5 && strcmp(name + len - 5, ".part") == 0;
    if (part) name[len - 5] = '\0';
    size_t sl = strlen(stem);
    bool index = strncmp(name, stem, sl) == 0 &&
                 (strcmp(name + sl, ".h5") == 0 || strcmp(name + sl, ".xmf") == 0);
    if (part) return index || output_is_chunk_name(name, stem) ? 2 : 0;
    return index || is_chunk_of_run(name, stem, sched) ? 1 : 0;
}

static gol_status refuse_existing(const out_names *n, const char *entry, bool is_dir) {
    char path[2 * GOL_PATH_MAX]; /* as the user named the output: "life.h5", "./life.h5" */
    bool in_dir = strchr(n->base, '/') != NULL;
    snprintf(path, sizeof path, "%s%s%s", in_dir ? n->dir : "",
             in_dir && strcmp(n->dir, "/") != 0 ? "/" : "", entry);
    if (is_dir)
        return gol_fail(GOL_EXIT_USAGE,
                        "output file '%s' is a directory; --force replaces files, not "
                        "directories: choose another --output",
                        path);
    return gol_fail(GOL_EXIT_USAGE,
                    "output file '%s' exists; pass --force to replace it or choose another "
                    "--output",
                    path);
}

/* One listing of the directory: files of this run that exist (refused without --force), names
 * of this run taken by directories (refused: a rename cannot replace them), stale .part files. */
static gol_status scan_dir(const out_names *n, const gol_schedule *sched, bool force,
                           stale_parts *stale) {
    DIR *d = opendir(n->dir);
    if (!d) return gol_fail(GOL_EXIT_USAGE, "output directory '%s' cannot be read", n->dir);
    gol_status st = gol_ok();
    struct dirent *e;
    while (st.code == GOL_OK && (e = readdir(d)) != NULL) {
        int kind = classify(e->d_name, n->stem, sched);
        if (kind == 0) continue;
        char path[2 * GOL_PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", n->dir, e->d_name);
        struct stat sb;
        bool is_dir = lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
        if (is_dir || (kind == 1 && !force))
            st = refuse_existing(n, e->d_name, is_dir);
        else if (kind == 2)
            stale_add(stale, e->d_name);
    }
    closedir(d);
    return st;
}

/* Remove them, and say so in one line (the first few names, then how many more). */
static gol_status remove_stale(const out_names *n, const stale_parts *stale) {
    if (stale->count == 0) return gol_ok();
    char list[768] = "";
    for (size_t i = 0; i < stale->count; i++) {
        char path[2 * GOL_PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", n->dir, stale->names[i]);
        if (unlink(path) != 0 && errno != ENOENT)
            return gol_fail(GOL_EXIT_USAGE, "cannot remove the stale '%s' of an earlier run: %s",
                            path, strerror(errno));
        size_t used = strlen(list);
        if (i < 3)
            snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", stale->names[i]);
        else if (i == 3)
            snprintf(list + used, sizeof list - used, " and %zu more", stale->count - 3);
    }
    fprintf(stderr,
            "golmpi: removed %zu unfinished .part file%s of an earlier run to '%s.h5' (%s): they "
            "were never output\n",
            stale->count, stale->count == 1 ? "" : "s", n->base, list);
    return gol_ok();
}

/* Under the lock: what exists, then the stale files go. */
static gol_status check_locked(const out_names *n, const gol_config *cfg,
                               const gol_schedule *sched) {
    stale_parts stale = {0};
    gol_status st = scan_dir(n, sched, cfg->force, &stale);
    /* --dry-run writes nothing: a stale file stays (the real run removes it) */
    if (st.code == GOL_OK && !cfg->dry_run) st = remove_stale(n, &stale);
    stale_free(&stale);
    return st;
}

static gol_status check_on_root(const gol_config *cfg, const gol_schedule *sched, int nranks) {
    out_names n;
    config_output_base(cfg, n.base, sizeof n.base);
    path_split(n.base, n.dir, sizeof n.dir, &n.stem);
    GOL_TRY(check_dir(n.dir));
    GOL_TRY(check_name_lengths(&n, sched, nranks));

    /* the lock first: two runs to one output must not both pass the checks below */
    char notice[1024];
    bool took_over;
    GOL_TRY(output_lock_take(n.base, notice, sizeof notice, &took_over));
    if (took_over) fprintf(stderr, "%s\n", notice);
    gol_status st = check_locked(&n, cfg, sched);
    /* --dry-run only asks whether the lock could be taken: it leaves no file behind */
    if (st.code != GOL_OK || cfg->dry_run) output_lock_release(n.base);
    return st;
}

gol_status output_check(const gol_config *cfg, const gol_schedule *sched, MPI_Comm comm) {
    int rank, nranks;
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    MPI_CHECK(MPI_Comm_size(comm, &nranks));
    gol_status st = gol_ok();
    if (cfg->no_output) return st;
    leave_out_lockedfile();
    st = io_tuning_check(); /* before the lock: a bad setting writes nothing */
    if (rank == 0 && st.code == GOL_OK) st = check_on_root(cfg, sched, nranks);
    MPI_CHECK(MPI_Bcast(&st, (int)sizeof st, MPI_BYTE, 0, comm));
    return st;
}
