/* How a run ends (core/ending.h): the helper registry and the agreed end, then the fatal path. */
#include "core/ending.h"

#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "core/exit_codes.h"
#include "core/quote.h"

/* ---- helper threads ------------------------------------------------------------------------ */

static struct {
    void (*stop)(void *);
    void *arg;
} helper[8];
static int helper_n;

void gol_helper_add(void (*stop)(void *), void *arg) {
    if (helper_n == (int)(sizeof helper / sizeof *helper))
        gol_die(__FILE__, __LINE__, "gol_helper_add", "golmpi", "too many helper threads");
    helper[helper_n].stop = stop;
    helper[helper_n++].arg = arg;
}

void gol_helper_remove(void (*stop)(void *), void *arg) {
    for (int i = 0; i < helper_n; i++)
        if (helper[i].stop == stop && helper[i].arg == arg) {
            for (helper_n--; i < helper_n; i++) /* the others keep their order */
                helper[i] = helper[i + 1];
            return;
        }
}

void gol_helpers_stop(void) {
    while (helper_n > 0) {
        helper_n--;
        helper[helper_n].stop(helper[helper_n].arg);
    }
}

static void deadline_arm(double seconds, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void deadline_disarm(void);

/* MPI_Finalize waits on every rank (Open MPI's PMIx fence): the helpers are stopped first (no MPI
 * call may run beside it; the heartbeat's stop meets every rank, so a rank lost before it is
 * named there); one lost inside MPI_Finalize is past every helper, and only a deadline outside
 * the call ends the wait. */
int gol_end_agreed(double timeout_s) {
    gol_helpers_stop();
    deadline_arm(timeout_s, "finalize: MPI_Finalize did not return in %g s (--timeout): some "
                 "rank stopped answering after every neighbour said its last; exiting",
                 timeout_s);
    int rc = MPI_Finalize();
    deadline_disarm();
    return rc;
}

/* ---- the fatal path --------------------------------------------------------------------------- */

/* How long the whole fatal path may take, from its first step to the end of MPI_Abort, before
 * the process ends itself: Open MPI's MPI_Abort waits on the local daemon, which may wait on one
 * that is unreachable (52.7 s seen after a link cut), and telling the others is MPI too. It
 * covers the wait for the told ranks' word (TELL_WAIT_S) and 1.5 s more: with the guard's finding
 * at --timeout + 1 s, every rank is then gone by --timeout + 4 s, within the bound of --timeout +
 * 5 s whatever MPI_Abort waits on (on one node it waits for the daemon to kill a stopped rank),
 * with a second left for a loaded node's scheduling. */
#define FATAL_DEADLINE_S 3
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

int gol_host_rank(char *host, unsigned len) {
    snprintf(host, len, "?");
    gethostname(host, len - 1);
    host[len - 1] = '\0'; /* gethostname need not terminate a truncated name */
    int rank = -1, inited = 0, finalized = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (inited && !finalized) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

void gol_fatal_log_to(const char *path) {
    snprintf(log_path, sizeof log_path, "%s", path ? path : "");
}

void gol_on_peer_lost(int (*tell)(void *, int), void (*heard)(void *, int, double), void *arg) {
    tell_fn = tell;
    heard_fn = heard;
    tell_arg = arg;
}

/* The line the deadline prints, made when the path begins (MPI may be unusable when it fires):
 * without it the user would see only mpiexec's report of an exit code, with no word of why the
 * rank never reached MPI_Abort. */
static char grace_line[512];

static void *grace_main(void *arg) {
    struct timespec ts = {FATAL_DEADLINE_S, 0};
    while (nanosleep(&ts, &ts) != 0) {
    }
    ssize_t w = write(STDERR_FILENO, grace_line, strlen(grace_line));
    (void)w;
    _exit((int)(intptr_t)arg);
}

/* A second thread that reaches the fatal path while the first is on it waits to be ended with
 * the process: one message, one abort. The first starts the deadline that ends the process with
 * `code` whatever the steps after this one block in. */
static void fatal_claim(int code) {
    if (__atomic_exchange_n(&fatal_taken, 1, __ATOMIC_SEQ_CST))
        for (;;)
            pause();
    char host[256];
    int rank = gol_host_rank(host, sizeof host);
    snprintf(grace_line, sizeof grace_line,
             "golmpi: rank %d on host %s: the way out blocked for %d s (telling the others, a "
             "teardown or MPI_Abort); exiting %d without MPI_Abort\n",
             rank, host, FATAL_DEADLINE_S, code);
    pthread_t t;
    if (pthread_create(&t, NULL, grace_main, (void *)(intptr_t)code) == 0) pthread_detach(t);
}

bool gol_fatal_taken(void) { return __atomic_load_n(&fatal_taken, __ATOMIC_SEQ_CST) != 0; }

/* The line also goes where it outlives mpirun's node: the output's log, appended in one write
 * (O_APPEND keeps the ranks' lines whole), or syslog where there is no output. It ends with the
 * exit code, so that a job script learns the ranks' code from the log when the launcher fails to
 * relay it (Open MPI 4.1.4's mpirun lost two ranks' simultaneous MPI_Abort messages to
 * "ORTE_ERROR_LOG: Data unpack had inadequate space"). */
static void log_line(const char *line, int code) {
    if (!log_path[0]) {
        openlog("golmpi", LOG_PID, LOG_USER);
        syslog(LOG_ERR, "%s (exit %d)", line, code);
        closelog();
        return;
    }
    char buf[1400], stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
    int n = snprintf(buf, sizeof buf, "%s %s (exit %d)\n", stamp, line, code);
    if (n < 0) return;
    if (n >= (int)sizeof buf) n = (int)sizeof buf - 1, buf[n - 1] = '\n';
    int fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return; /* the message is on stderr all the same */
    ssize_t w = write(fd, buf, (size_t)n);
    (void)w;
    close(fd);
}

void gol_fatal(const gol_fatal_end *e) {
    fatal_claim(e->code);
    if (e->text) {
        fputs(e->text, stderr);
        fflush(stderr);
    }
    if (e->line) log_line(e->line, e->code);
    if (e->first) e->first(e->arg);
    int inited = 0, finalized = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (inited && !finalized && !e->without_mpi) MPI_Abort(MPI_COMM_WORLD, e->code);
    _exit(e->code);
}

bool gol_telling(void) { return __atomic_load_n(&told_once, __ATOMIC_SEQ_CST) != 0; }

void gol_tell_others(int lost) {
    if (!tell_fn || __atomic_exchange_n(&told_once, 1, __ATOMIC_SEQ_CST)) return;
    int told = tell_fn(tell_arg, lost);
    if (told > 0 && heard_fn) heard_fn(tell_arg, told, TELL_WAIT_S);
}

/* What a peer's loss does first: a finder tells the others (lost: the lost rank, -1 when its
 * message alone names it) once its line is written, so a rank that finds the same peer lost and
 * hears from this one knows the line is out; a told rank runs after(arg) and leaves the abort to
 * the rank that told it, which waits for every told rank's word first. A rank whose after() told
 * the others itself (the CUDA watchdog: its line, then the telling and NCCL's teardown) is that
 * rank: it aborts at once. */
typedef struct peer_first {
    int lost;
    void (*after)(void *);
    void *arg;
} peer_first;

static void tell_or_answer(void *arg) {
    const peer_first *p = arg;
    if (!p->after) {
        gol_tell_others(p->lost);
        return;
    }
    p->after(p->arg);
    if (gol_telling()) return; /* after() told the others (the CUDA watchdog's): abort at once */
    struct timespec ts = {(time_t)TELL_WAIT_S, (long)((TELL_WAIT_S - (int)TELL_WAIT_S) * 1e9)};
    ts.tv_nsec += 250000000L;
    nanosleep(&ts, NULL);
}

/* Its own exit code (mpirun passes MPI_Abort's on): a job script can tell a lost peer, to requeue
 * and resume, from a failure that would only fail again. */
static void __attribute__((noreturn)) abort_line(int lost, void (*after)(void *), void *arg,
                                                 const char *fmt, va_list ap) {
    char host[256], raw[1024], msg[1024], line[1400], text[1402];
    int rank = gol_host_rank(host, sizeof host);
    vsnprintf(raw, sizeof raw, fmt, ap);
    gol_escape(msg, sizeof msg, raw); /* it may quote a path or a file's bytes */
    snprintf(line, sizeof line, "golmpi: rank %d on host %s: %s", rank, host, msg);
    snprintf(text, sizeof text, "%s\n", line);
    peer_first first = {lost, after, arg};
    gol_fatal(&(gol_fatal_end){.code = GOL_EXIT_PEER, .text = text, .line = line,
                               .first = tell_or_answer, .arg = &first});
}

/* A library failure: the call, the library's own words and where, on stderr and in the log. */
void gol_die(const char *file, int line, const char *call, const char *lib, const char *err) {
    char host[256], text[4096], one[1200];
    int rank = gol_host_rank(host, sizeof host);
    snprintf(text, sizeof text, "golmpi: %s error on host %s, rank %d, %s:%d\n  call: %s\n  error: %s\n",
             lib, host, rank, file, line, call, err);
    snprintf(one, sizeof one, "golmpi: %s error on host %s, rank %d, %s:%d: %s: %s", lib, host,
             rank, file, line, call, err);
    gol_fatal(&(gol_fatal_end){.code = 1, .text = text, .line = one});
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

/* ---- the agreed end's deadline ------------------------------------------------------------ */

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

/* Sleeps until the deadline or the disarm; 1 when the deadline passed armed. */
static int deadline_passed(void) {
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
    return fire;
}

static void *deadline_main(void *arg) {
    (void)arg;
    if (!deadline_passed() || gol_fatal_taken()) return NULL;
    char host[256], line[1400], text[1402];
    snprintf(host, sizeof host, "?");
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    snprintf(line, sizeof line, "golmpi: rank %d on host %s: %s", deadline_rank, host,
             deadline.msg);
    snprintf(text, sizeof text, "%s\n", line);
    gol_fatal(&(gol_fatal_end){.code = GOL_EXIT_PEER, .text = text, .line = line,
                               .without_mpi = true});
}

/* Past `seconds`, one line "golmpi: rank R on host H: <message>" (stderr and the log) and
 * _exit(GOL_EXIT_PEER), no MPI. seconds <= 0 (--timeout 0): none. One at a time. */
static void deadline_arm(double seconds, const char *fmt, ...) {
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
    if (rc != 0) gol_die(__FILE__, __LINE__, "pthread_create(deadline)", "system", strerror(rc));
    deadline.thread = t;
}

static void deadline_disarm(void) {
    pthread_mutex_lock(&deadline.mu);
    int was = deadline.armed;
    deadline.armed = 0;
    pthread_cond_broadcast(&deadline.cv);
    pthread_mutex_unlock(&deadline.mu);
    if (was) pthread_join(deadline.thread, NULL);
}
