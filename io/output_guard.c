/* The output lock and the way out of a failed write (io/output_guard.h). */
#include "io/output_guard.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "core/config.h"
#include "core/poll.h"
#include "core/quote.h"
#include "io/output_names.h"

/* The locks this process holds: a process-wide resource, like its open files, so a list here
 * rather than in a gol_output (the lock is taken in output_check, before any gol_output exists,
 * and must be given back at exit whatever the path out). */
typedef struct held_lock {
    struct held_lock *next;
    char path[GOL_PATH_MAX + 16];
    char text[512]; /* what we wrote: a lock that says anything else is no longer ours */
    pid_t owner;    /* a forked child does not give back its parent's lock */
} held_lock;

static held_lock *held;

typedef struct lock_owner {
    char host[256];
    long pid;
    unsigned long long start; /* /proc/<pid>/stat's starttime: tells a reused pid apart */
    char since[64];
    char job[32];  /* SLURM_JOB_ID, or "-" outside Slurm */
    long restarts; /* SLURM_RESTART_COUNT: a requeued job keeps its id and counts its restarts */
} lock_owner;

static void lock_path(const char *base, char *path, size_t len) {
    output_file_name(base, OUTPUT_LOCK, path, len);
}

/* Field 22 of /proc/<pid>/stat (its start time), counted after the ')' that ends the command
 * name; *zombie: field 3 says it has exited (a killed process nobody reaped yet). */
static bool process_start(long pid, unsigned long long *start, bool *zombie) {
    char name[64], buf[1024];
    snprintf(name, sizeof name, "/proc/%ld/stat", pid);
    FILE *fp = fopen(name, "r");
    if (!fp) return false;
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    if (!p) return false;
    p++; /* at the space before field 3 */
    *zombie = p[1] == 'Z' || p[1] == 'X';
    for (int field = 3; field < 22 && p; field++)
        p = strchr(p + 1, ' ');
    return p && sscanf(p, " %llu", start) == 1;
}

/* Which instance of which Slurm job this process belongs to. */
static void slurm_instance(lock_owner *o) {
    const char *id = getenv("SLURM_JOB_ID"), *restarts = getenv("SLURM_RESTART_COUNT");
    bool in_job = id && *id && strlen(id) < sizeof o->job && strspn(id, "0123456789") == strlen(id);
    snprintf(o->job, sizeof o->job, "%s", in_job ? id : "-");
    o->restarts = in_job && restarts ? strtol(restarts, NULL, 10) : 0;
}

static void this_owner(lock_owner *o) {
    snprintf(o->host, sizeof o->host, "?");
    gethostname(o->host, sizeof o->host - 1);
    o->host[sizeof o->host - 1] = '\0';
    o->pid = (long)getpid();
    o->start = 0;
    bool zombie;
    process_start(o->pid, &o->start, &zombie);
    time_t now = time(NULL);
    struct tm tm;
    strftime(o->since, sizeof o->since, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    slurm_instance(o);
}

static void owner_text(const lock_owner *o, char *text, size_t len) {
    snprintf(text, len, "golmpi-lock host=%s pid=%ld start=%llu since=%s job=%s.%ld\n", o->host,
             o->pid, o->start, o->since, o->job, o->restarts);
}

/* job= is optional: a lock written before it was added names no job. */
static bool parse_owner(const char *text, lock_owner *o) {
    snprintf(o->job, sizeof o->job, "-");
    o->restarts = 0;
    return sscanf(text, "golmpi-lock host=%255s pid=%ld start=%llu since=%63s job=%31[-0-9].%ld",
                  o->host, &o->pid, &o->start, o->since, o->job, &o->restarts) >= 4;
}

/* The lock's run was an earlier instance of this very Slurm job: Slurm requeues a job only once
 * its instance has ended (a lost node's processes with it), so that run is over, wherever it ran.
 * This is what lets a job that lost its first node, where rank 0 held the lock, resume. */
static bool earlier_instance(const lock_owner *o, const lock_owner *me) {
    return strcmp(me->job, "-") != 0 && strcmp(o->job, me->job) == 0 && o->restarts < me->restarts;
}

/* The lock's text, or "" when it cannot be read; false when it is gone. */
static bool read_text(const char *path, char *text, size_t len) {
    text[0] = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno != ENOENT;
    ssize_t n = read(fd, text, len - 1);
    close(fd);
    text[n > 0 ? n : 0] = '\0';
    return true;
}

/* Is the lock's process still there? Only this host's processes can be seen. A pid that is alive
 * but started at another time was reused by an unrelated process, and a zombie has exited: either
 * way the run that locked is gone. */
static bool owner_alive(const lock_owner *o) {
    if (kill((pid_t)o->pid, 0) != 0 && errno != EPERM) return false;
    unsigned long long start;
    bool zombie = false;
    if (process_start(o->pid, &start, &zombie) && (zombie || (o->start && start != o->start)))
        return false;
    return true;
}

static void give_back_all(void) {
    while (held) {
        held_lock *h = held;
        held = h->next;
        char now[sizeof h->text];
        if (h->owner == getpid() && read_text(h->path, now, sizeof now) &&
            strcmp(now, h->text) == 0)
            unlink(h->path);
        free(h);
    }
}

static void remember(const char *path, const char *text) {
    static bool registered;
    if (!registered) registered = atexit(give_back_all) == 0;
    held_lock *h = gol_xcalloc(1, sizeof *h);
    snprintf(h->path, sizeof h->path, "%s", path);
    snprintf(h->text, sizeof h->text, "%s", text);
    h->owner = getpid();
    h->next = held;
    held = h;
}

static held_lock *find_held(const char *path) {
    for (held_lock *h = held; h; h = h->next)
        if (strcmp(h->path, path) == 0 && h->owner == getpid()) return h;
    return NULL;
}

void output_lock_release(const char *base) {
    char path[GOL_PATH_MAX + 16];
    lock_path(base, path, sizeof path);
    for (held_lock **p = &held; *p; p = &(*p)->next) {
        held_lock *h = *p;
        if (strcmp(h->path, path) != 0 || h->owner != getpid()) continue;
        char now[sizeof h->text];
        if (read_text(h->path, now, sizeof now) && strcmp(now, h->text) == 0) unlink(h->path);
        *p = h->next;
        free(h);
        return;
    }
}

/* O_EXCL: of two runs that create the lock at once, exactly one succeeds. 1: created; 0: it
 * exists; -1: an error, in *st. */
static int create_lock(const char *path, const char *text, gol_status *st) {
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        if (errno == EEXIST) return 0;
        *st = gol_fail(GOL_EXIT_USAGE, "cannot create the output lock '%s': %s", path,
                       strerror(errno));
        return -1;
    }
    size_t len = strlen(text);
    bool ok = write(fd, text, len) == (ssize_t)len;
    int err = errno;
    if (close(fd) != 0 && ok) {
        ok = false;
        err = errno;
    }
    if (!ok) {
        unlink(path);
        *st =
            gol_fail(GOL_EXIT_USAGE, "cannot write the output lock '%s': %s", path, strerror(err));
        return -1;
    }
    return 1;
}

/* The stale lock is moved aside and removed only if it still says what we judged: when two runs
 * take over at once, the second finds the first one's new lock there instead and puts it back. */
static bool remove_stale(const char *path, const char *seen) {
    char aside[GOL_PATH_MAX + 64], now[512];
    snprintf(aside, sizeof aside, "%s.stale.%ld", path, (long)getpid());
    if (rename(path, aside) != 0) return errno == ENOENT; /* gone already: try again */
    bool same = read_text(aside, now, sizeof now) && strcmp(now, seen) == 0;
    if (!same && link(aside, path) != 0) {
        /* a third run locked in between: it keeps the output, and this one is refused below */
    }
    unlink(aside);
    return same;
}

static gol_status refuse_held(const char *base, const char *path, const lock_owner *o,
                              bool same_host) {
    if (same_host)
        return gol_fail(GOL_EXIT_USAGE,
                        "output '%s.h5' is being written by another run: golmpi pid %ld on host "
                        "%s (since %s) holds the lock '%s'; wait for it to end or choose another "
                        "--output",
                        base, o->pid, o->host, o->since, path);
    return gol_fail(GOL_EXIT_USAGE,
                    "output '%s.h5' is locked by golmpi pid %ld on host %s (since %s): the lock "
                    "'%s' comes from another host, where this run cannot see whether that process "
                    "still runs; if it has ended, remove the lock (rm '%s') and run again",
                    base, o->pid, o->host, o->since, path, path);
}

enum lock_state { LOCK_GONE, LOCK_STALE, LOCK_MINE };

/* One look at the lock: it is gone, or its text names a golmpi run. */
typedef struct lock_look {
    const char *path;
    char *seen;
    size_t seen_len;
    lock_owner *owner;
    bool gone;
} lock_look;

static int lock_readable(void *arg, double since) {
    (void)since;
    lock_look *l = arg;
    l->gone = !read_text(l->path, l->seen, l->seen_len);
    return l->gone || parse_owner(l->seen, l->owner);
}

/* The lock exists: whose is it? A lock being written this very moment reads empty, so an
 * unreadable text is read again, every 0.1 s, for a second before it counts as foreign. */
static gol_status judge(const char *base, const char *path, const lock_owner *me, char *seen,
                        size_t seen_len, enum lock_state *state) {
    lock_owner o;
    *state = LOCK_GONE;
    lock_look look = {path, seen, seen_len, &o, false};
    if (!gol_poll_every(lock_readable, &look, 1.0, 0.1))
        return gol_fail(GOL_EXIT_USAGE,
                        "the output lock '%s' exists but does not name a golmpi run; if no "
                        "run writes to '%s.h5', remove it (rm '%s') and run again",
                        path, base, path);
    if (look.gone) return gol_ok(); /* gone: create it again */
    bool same_host = strcmp(o.host, me->host) == 0;
    if (same_host && o.pid == me->pid && o.start == me->start) {
        *state = LOCK_MINE;
        return gol_ok();
    }
    bool over = same_host ? !owner_alive(&o) : earlier_instance(&o, me);
    if (!over) return refuse_held(base, path, &o, same_host);
    *state = LOCK_STALE;
    return gol_ok();
}

gol_status output_lock_take(const char *base, char *notice, size_t len, bool *took_over) {
    char path[GOL_PATH_MAX + 16], text[512], seen[512];
    lock_path(base, path, sizeof path);
    *took_over = false;
    if (find_held(path)) return gol_ok();
    lock_owner me;
    this_owner(&me);
    owner_text(&me, text, sizeof text);
    for (int attempt = 0; attempt < 8; attempt++) {
        gol_status st = gol_ok();
        int made = create_lock(path, text, &st);
        if (made < 0) return st;
        if (made > 0) {
            remember(path, text);
            return gol_ok();
        }
        enum lock_state state;
        GOL_TRY(judge(base, path, &me, seen, sizeof seen, &state));
        if (state == LOCK_MINE) {
            remember(path, seen);
            return gol_ok();
        }
        if (state == LOCK_GONE) continue;
        lock_owner o;
        parse_owner(seen, &o);
        if (!remove_stale(path, seen)) continue; /* another run took it over first */
        *took_over = true;
        snprintf(notice, len,
                 "golmpi: took over the output lock '%s' of golmpi pid %ld on host %s (since %s), "
                 "which is no longer running",
                 path, o.pid, o.host, o.since);
    }
    return gol_fail(GOL_EXIT_USAGE, "cannot take the output lock '%s': other runs keep taking it",
                    path);
}

/* ---- the way out ----------------------------------------------------------------------- */

static herr_t first_entry(unsigned n, const H5E_error2_t *e, void *data) {
    if (n == 0) snprintf(data, 512, "%s() in %s: %s", e->func_name, e->file_name, e->desc);
    return 0;
}

const char *io_h5_cause(void) {
    static char buf[512];
    snprintf(buf, sizeof buf, "(no HDF5 error stack)");
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, first_entry, buf); /* upward: the innermost first */
    return buf;
}

void io_free_space_note(const char *path, char *text, size_t len) {
    char dir[GOL_PATH_MAX];
    const char *name;
    path_split(path, dir, sizeof dir, &name);
    struct statvfs sv;
    text[0] = '\0';
    if (statvfs(dir, &sv) == 0)
        snprintf(text, len, "; %llu bytes are free on its file system",
                 (unsigned long long)sv.f_bavail * (unsigned long long)sv.f_frsize);
}

/* The output failures' first step on the fatal path: the lock goes, so the next run may resume. */
static void give_back_first(void *arg) {
    (void)arg;
    give_back_all();
}

/* Not logged: the fatal log lives beside the output, on the file system that just failed. */
static void __attribute__((noreturn)) abort_all(const char *text) {
    gol_fatal(&(gol_fatal_end){.code = GOL_EXIT_OUTPUT, .text = text, .first = give_back_first});
}

void io_write_failed(const char *file, const char *fmt, ...) {
    char host[256], raw[1024], msg[1024], text[2048];
    int rank = gol_host_rank(host, sizeof host);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    gol_escape(msg, sizeof msg, raw);
    char space[128];
    io_free_space_note(file, space, sizeof space);
    snprintf(text, sizeof text,
             "golmpi: rank %d on host %s: cannot write '%s': %s%s. It is left unfinished; the "
             "index and the .xmf cover only the files finished before it\n",
             rank, host, gol_quote(file).s, msg, space);
    abort_all(text);
}

bool io_room_for(MPI_Comm comm, const char *file, int64_t need, char *msg, size_t len) {
    int rank = 0;
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    char text[1024] = "";
    if (rank == 0) {
        char dir[GOL_PATH_MAX];
        const char *name;
        path_split(file, dir, sizeof dir, &name);
        struct statvfs sv;
        /* a directory removed, renamed or made read-only under the run fails here, agreed, and
         * not later inside a collective create that only MPI_Abort can end */
        if (statvfs(dir, &sv) != 0 || access(dir, W_OK | X_OK) != 0)
            snprintf(text, sizeof text,
                     "cannot write '%s': its directory '%.400s' is gone or not writable (%s). It is "
                     "not written; the index and the .xmf cover the files finished before it",
                     file, dir, strerror(errno));
        else if ((int64_t)(sv.f_bavail * (unsigned long long)sv.f_frsize) < need)
            snprintf(text, sizeof text,
                     "cannot write '%s': no space left on its file system (it needs %lld bytes, "
                     "%llu are free). It is not written; the index and the .xmf cover the files "
                     "finished before it",
                     file, (long long)need,
                     (unsigned long long)sv.f_bavail * (unsigned long long)sv.f_frsize);
    }
    MPI_CHECK(MPI_Bcast(text, sizeof text, MPI_CHAR, 0, comm));
    snprintf(msg, len, "%s", text);
    return text[0] == '\0';
}

void io_exit_all(MPI_Comm comm, const char *msg, double timeout_s) {
    int rank = 0;
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    gol_helpers_stop(); /* the writer ends the chunk in flight, then NCCL and the heartbeat stop */
    if (rank == 0) {
        fprintf(stderr, "golmpi: error: %s\n", msg);
        fflush(stderr);
    }
    give_back_all();
    MPI_CHECK(MPI_Barrier(comm));
    gol_end_agreed(timeout_s);
    exit(GOL_EXIT_OUTPUT);
}

void io_write_failed_all(MPI_Comm comm, const char *msg) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0) {
        char safe[1024];
        gol_escape(safe, sizeof safe, msg);
        fprintf(stderr, "golmpi: error: %s\n", safe);
        fflush(stderr);
    }
    /* no rank may abort before rank 0 has printed: an abort kills rank 0 at once */
    MPI_Barrier(comm);
    abort_all(NULL);
}
