#include "core/check.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <syslog.h>
#include <time.h>
#include <hdf5.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/quote.h"
#include "core/exit_codes.h"

/* This process's host name and world rank (-1 before MPI_Init), for messages on the way out. */
static int whoami(char *host, size_t len) {
    snprintf(host, len, "?");
    gethostname(host, len - 1);
    host[len - 1] = '\0'; /* gethostname need not terminate a truncated name */
    int rank = -1, inited = 0;
    MPI_Initialized(&inited);
    if (inited) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

/* ---- the one fatal path (DESIGN: Errors) ---------------------------------------------- */

/* How long the whole fatal path may take, from its first step to the end of MPI_Abort, before
 * the process ends itself: Open MPI's MPI_Abort waits on the local daemon, which may wait on one
 * that is unreachable (52.7 s seen after a link cut), and telling the others is MPI too. It
 * covers the wait for the told ranks' word (TELL_WAIT_S) and 2.5 s more. */
#define FATAL_DEADLINE_S 4
/* After telling the other ranks that a peer is lost, how long to wait for their word that each
 * wrote its own line, before MPI_Abort (whose kill would cut them short): their helpers take the
 * notice within a tick (20 ms), but an oversubscribed node may starve them for longer. */
#define TELL_WAIT_S 1.5

static char log_path[4096]; /* "" until the output is known: syslog */
static int (*tell_fn)(void *, int);
static void (*heard_fn)(void *, int, double);
static void *tell_arg;
static int fatal_taken; /* atomic: the first thread on the fatal path ends the process */
static int told_once;   /* atomic: the other ranks were told (gol_tell_others) */

void gol_fatal_log_to(const char *path) {
    snprintf(log_path, sizeof log_path, "%s", path ? path : "");
}

void gol_on_peer_lost(int (*tell)(void *, int), void (*heard)(void *, int, double), void *arg) {
    tell_fn = tell;
    heard_fn = heard;
    tell_arg = arg;
}

static void *grace_main(void *arg) {
    struct timespec ts = {FATAL_DEADLINE_S, 0};
    while (nanosleep(&ts, &ts) != 0) {
    }
    _exit((int)(intptr_t)arg);
}

/* A second thread that reaches the fatal path while the first is on it waits to be ended with
 * the process: one message, one abort. The first starts the deadline that ends the process with
 * `code` whatever the steps after this one block in. */
static void fatal_claim(int code) {
    if (__atomic_exchange_n(&fatal_taken, 1, __ATOMIC_SEQ_CST))
        for (;;)
            pause();
    pthread_t t;
    if (pthread_create(&t, NULL, grace_main, (void *)(intptr_t)code) == 0) pthread_detach(t);
}

/* The line also goes where it outlives mpirun's node: the output's log, appended in one write
 * (O_APPEND keeps the ranks' lines whole), or syslog where there is no output. */
static void log_line(const char *line) {
    if (!log_path[0]) {
        openlog("golmpi", LOG_PID, LOG_USER);
        syslog(LOG_ERR, "%s", line);
        closelog();
        return;
    }
    char buf[1400], stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
    int n = snprintf(buf, sizeof buf, "%s %s\n", stamp, line);
    if (n < 0) return;
    if (n >= (int)sizeof buf) n = (int)sizeof buf - 1, buf[n - 1] = '\n';
    int fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return; /* the message is on stderr all the same */
    ssize_t w = write(fd, buf, (size_t)n);
    (void)w;
    close(fd);
}

static void die_print(const char *file, int line, const char *call, const char *lib,
                      const char *err) {
    char host[256], one[1200];
    int rank = whoami(host, sizeof host);
    fprintf(stderr, "golmpi: %s error on host %s, rank %d, %s:%d\n  call: %s\n  error: %s\n", lib,
            host, rank, file, line, call, err);
    fflush(stderr);
    snprintf(one, sizeof one, "golmpi: %s error on host %s, rank %d, %s:%d: %s: %s", lib, host,
             rank, file, line, call, err);
    log_line(one);
}

/* MPI_Abort, under fatal_claim's deadline. */
static void __attribute__((noreturn)) die_abort(int code) {
    int inited = 0, finalized = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (inited && !finalized) MPI_Abort(MPI_COMM_WORLD, code);
    _exit(code);
}

void gol_die(const char *file, int line, const char *call, const char *lib, const char *err) {
    fatal_claim(1);
    die_print(file, line, call, lib, err);
    die_abort(1);
}

/* Without after: once the line is written the other ranks are told (the hook; lost: the lost
 * rank, -1 when the message alone names it), and their word that each wrote its own line is
 * awaited before the abort. With after: a told rank; after(arg) runs once its line is written. */
static void __attribute__((noreturn)) abort_line(int lost, void (*after)(void *), void *arg,
                                                 const char *fmt, va_list ap) {
    char host[256], raw[1024], msg[1024], line[1400];
    fatal_claim(GOL_EXIT_PEER);
    int rank = whoami(host, sizeof host);
    vsnprintf(raw, sizeof raw, fmt, ap);
    gol_escape(msg, sizeof msg, raw); /* it may quote a path or a file's bytes */
    snprintf(line, sizeof line, "golmpi: rank %d on host %s: %s", rank, host, msg);
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
    log_line(line);
    /* told after the line is written: a rank that finds the same peer lost and hears from this
     * one knows this line is out */
    if (!after) gol_tell_others(lost);
    if (after) after(arg);
    if (after && !gol_telling()) {
        /* a told rank leaves the abort to the rank that told it, which waits for every told
         * rank's word first: this rank's own MPI_Abort would cut the slower ones short (a rank
         * whose after() told the others, as the CUDA watchdog's does, is that rank) */
        struct timespec ts = {(time_t)TELL_WAIT_S, (long)((TELL_WAIT_S - (int)TELL_WAIT_S) * 1e9)};
        ts.tv_nsec += 250000000L;
        nanosleep(&ts, NULL);
    }
    /* its own exit code (mpirun passes MPI_Abort's on): a job script can tell a lost peer, to
     * requeue and resume, from a failure that would only fail again */
    die_abort(GOL_EXIT_PEER);
}

bool gol_telling(void) { return __atomic_load_n(&told_once, __ATOMIC_SEQ_CST) != 0; }

void gol_tell_others(int lost) {
    if (!tell_fn || __atomic_exchange_n(&told_once, 1, __ATOMIC_SEQ_CST)) return;
    int told = tell_fn(tell_arg, lost);
    if (told > 0 && heard_fn) heard_fn(tell_arg, told, TELL_WAIT_S);
}

void gol_abort_msg(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    abort_line(-1, NULL, NULL, fmt, ap);
}

void gol_abort_peer(int lost, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    abort_line(lost, NULL, NULL, fmt, ap);
}

void gol_abort_then(void (*after)(void *), void *arg, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    abort_line(-1, after, arg, fmt, ap);
}

/* A deadline for a call that may block for ever where no other thread can look (MPI_Finalize):
 * a thread that sleeps through it, then takes the fatal path without MPI. */
static struct {
    double seconds;
    char msg[1024];
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int armed; /* under mu */
    pthread_t thread;
} deadline = {0, "", PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};
static int deadline_rank = -1; /* taken when armed: MPI may be gone when it fires */

static void *deadline_main(void *arg) {
    (void)arg;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)deadline.seconds;
    until.tv_nsec += (long)((deadline.seconds - (double)(time_t)deadline.seconds) * 1e9);
    if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
    pthread_mutex_lock(&deadline.mu);
    int rc = 0;
    while (deadline.armed && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&deadline.cv, &deadline.mu, &until);
    int fire = deadline.armed;
    pthread_mutex_unlock(&deadline.mu);
    if (!fire) return NULL;
    if (__atomic_exchange_n(&fatal_taken, 1, __ATOMIC_SEQ_CST)) return NULL;
    char host[256], line[1400];
    int rank = -1;
    snprintf(host, sizeof host, "?");
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    rank = deadline_rank;
    snprintf(line, sizeof line, "golmpi: rank %d on host %s: %s", rank, host, deadline.msg);
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
    log_line(line);
    _exit(GOL_EXIT_PEER); /* MPI itself is what hangs: no MPI_Abort */
}

void gol_deadline_arm(double seconds, const char *fmt, ...) {
    if (!(seconds > 0) || seconds > 1e8) return; /* --timeout 0: wait for ever */
    int inited = 0, finalized = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (inited && !finalized) MPI_Comm_rank(MPI_COMM_WORLD, &deadline_rank);
    va_list ap;
    va_start(ap, fmt);
    char raw[1024];
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    gol_escape(deadline.msg, sizeof deadline.msg, raw);
    deadline.seconds = seconds;
    deadline.armed = 1;
    pthread_t t;
    int rc = pthread_create(&t, NULL, deadline_main, NULL);
    errno = rc;
    SYS_CHECK(rc == 0, "pthread_create(deadline)");
    deadline.thread = t;
}

void gol_deadline_disarm(void) {
    pthread_mutex_lock(&deadline.mu);
    int was = deadline.armed;
    deadline.armed = 0;
    pthread_cond_broadcast(&deadline.cv);
    pthread_mutex_unlock(&deadline.mu);
    if (was) pthread_join(deadline.thread, NULL);
}

const char *gol_mpi_errstr(int code) {
    static char buf[MPI_MAX_ERROR_STRING + 1];
    int len = 0;
    if (MPI_Error_string(code, buf, &len) != MPI_SUCCESS) snprintf(buf, sizeof buf, "code %d", code);
    return buf;
}

/* The innermost message of HDF5's error stack names the real cause. */
static herr_t h5_walk(unsigned n, const H5E_error2_t *e, void *data) {
    (void)n;
    char *buf = data;
    snprintf(buf, 512, "%s() in %s: %s", e->func_name, e->file_name, e->desc);
    return 0;
}

const char *gol_h5_errstr(void) {
    static char buf[512];
    snprintf(buf, sizeof buf, "(no HDF5 error stack)");
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, h5_walk, buf);
    return buf;
}

const char *gol_sys_errstr(void) { return strerror(errno); }

void *gol_xmalloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        char what[64];
        snprintf(what, sizeof what, "malloc(%zu)", bytes);
        gol_die(__FILE__, __LINE__, what, "system", "out of host memory");
    }
    return p;
}

void *gol_xmalloc_aligned(size_t bytes, size_t align) {
    void *p = NULL;
    if (posix_memalign(&p, align, bytes ? bytes : 1) != 0) {
        char what[80];
        snprintf(what, sizeof what, "posix_memalign(%zu, %zu)", align, bytes);
        gol_die(__FILE__, __LINE__, what, "system", "out of host memory");
    }
    return p;
}

void *gol_xcalloc(size_t count, size_t size) {
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p) {
        char what[64];
        snprintf(what, sizeof what, "calloc(%zu, %zu)", count, size);
        gol_die(__FILE__, __LINE__, what, "system", "out of host memory");
    }
    return p;
}

static struct {
    void (*fn)(void *);
    void *arg;
} at_finalize[8];
static int at_finalize_n;

void gol_at_finalize(void (*fn)(void *), void *arg) {
    if (at_finalize_n == (int)(sizeof at_finalize / sizeof *at_finalize))
        gol_die(__FILE__, __LINE__, "gol_at_finalize", "golmpi", "too many finalize hooks");
    at_finalize[at_finalize_n].fn = fn;
    at_finalize[at_finalize_n++].arg = arg;
}

void gol_forget_at_finalize(void (*fn)(void *), void *arg) {
    for (int i = 0; i < at_finalize_n; i++)
        if (at_finalize[i].fn == fn && at_finalize[i].arg == arg) {
            for (at_finalize_n--; i < at_finalize_n; i++) /* the others keep their order */
                at_finalize[i] = at_finalize[i + 1];
            return;
        }
}

void gol_finalize_now(void) {
    while (at_finalize_n > 0) {
        at_finalize_n--;
        at_finalize[at_finalize_n].fn(at_finalize[at_finalize_n].arg);
    }
    MPI_Finalize();
}

static struct {
    void (*fn)(void *, double);
    void *arg;
} watch[4];
static int watch_n;

void gol_watch_add(void (*fn)(void *, double), void *arg) {
    if (watch_n == (int)(sizeof watch / sizeof *watch))
        gol_die(__FILE__, __LINE__, "gol_watch_add", "golmpi", "too many watchdogs");
    watch[watch_n].fn = fn;
    watch[watch_n++].arg = arg;
}

void gol_watch_remove(void (*fn)(void *, double), void *arg) {
    for (int i = 0; i < watch_n; i++)
        if (watch[i].fn == fn && watch[i].arg == arg) {
            for (watch_n--; i < watch_n; i++)
                watch[i] = watch[i + 1];
            return;
        }
}

void gol_watch_poll(double since) {
    for (int i = 0; i < watch_n; i++)
        watch[i].fn(watch[i].arg, since);
}

#ifdef GOLMPI_HAVE_CUDA
void gol_die_cuda(const char *file, int line, const char *call, const char *name,
                  const char *str) {
    char err[512];
    snprintf(err, sizeof err, "%s: %s", name, str);
    gol_die(file, line, call, "CUDA", err);
}
#endif

#ifdef GOLMPI_HAVE_NCCL
void gol_die_nccl(const char *file, int line, const char *call, ncclResult_t rc) {
    char err[768];
    snprintf(err, sizeof err, "%s (last: %s)", ncclGetErrorString(rc), ncclGetLastError(NULL));
    gol_die(file, line, call, "NCCL", err);
}
#endif
