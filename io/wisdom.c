#include "io/wisdom.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/check.h"
#include "core/poll.h"

#define WISDOM_TAG "wisdom1"
#define WISDOM_LOCK_WAIT_S 30.0 /* another job's merge takes milliseconds; a hung one is skipped   \
                                 */
#define WISDOM_FILE_MAX (16 << 20)

enum { F_WHERE, F_WHAT, F_WEIGHT, F_VALUE, N_FIELDS };
typedef enum { LINE_OK, LINE_CORRUPT, LINE_OTHER } line_kind;

static void notice_add(wisdom_notice *n, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Each fault once: a line already there is not added again (a read and a write of one run). */
static void notice_add(wisdom_notice *n, const char *fmt, ...) {
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    for (const char *at = strstr(n->text, line); at; at = strstr(at + 1, line))
        if ((at == n->text || at[-1] == '\n') && (at[strlen(line)] == '\n' || !at[strlen(line)]))
            return;
    size_t used = strlen(n->text);
    snprintf(n->text + used, sizeof n->text - used, "%s%s", used ? "\n" : "", line);
}

bool wisdom_path(const char *option, char *path, size_t len) {
    if (option && strcmp(option, "off") == 0) return false;
    const char *env = getenv("GOLMPI_WISDOM"), *cache = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (option && *option)
        snprintf(path, len, "%s", option);
    else if (env && *env)
        snprintf(path, len, "%s", env);
    else if (cache && *cache)
        snprintf(path, len, "%s/golmpi/wisdom", cache);
    else if (home && *home)
        snprintf(path, len, "%s/.cache/golmpi/wisdom", home);
    else
        return false;
    return true;
}

void wisdom_field(const char *s, char *out, size_t len) {
    snprintf(out, len, "%s", s);
    for (char *c = out; *c; c++)
        if (*c == '\t' || *c == '\n' || *c == '\r') *c = ' ';
}

static uint32_t fnv1a(const char *s, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

/* The whole file, NUL-terminated; "" when it does not exist; NULL when it cannot be read. */
static char *read_all(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return errno == ENOENT ? gol_xcalloc(1, 1) : NULL;
    char *text = gol_xmalloc(WISDOM_FILE_MAX + 1);
    size_t n = fread(text, 1, WISDOM_FILE_MAX, f);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(text);
        return NULL;
    }
    text[n] = '\0';
    return text;
}

/* Splits line (no newline; modified) into its fields. */
static line_kind parse_line(char *line, char *field[N_FIELDS]) {
    if (strncmp(line, WISDOM_TAG "\t", strlen(WISDOM_TAG) + 1) != 0)
        return strncmp(line, "wisdom", 6) == 0 && line[6] >= '2' && line[6] <= '9' ? LINE_OTHER
                                                                                   : LINE_CORRUPT;
    char *sum = strstr(line, "\tfnv=");
    if (!sum) return LINE_CORRUPT;
    char *end = NULL;
    unsigned long want = strtoul(sum + 5, &end, 16);
    if (end == sum + 5 || *end || want != fnv1a(line, (size_t)(sum - line))) return LINE_CORRUPT;
    *sum = '\0';
    char *p = line + strlen(WISDOM_TAG) + 1;
    for (int i = 0; i < N_FIELDS; i++) {
        field[i] = p;
        char *tab = strchr(p, '\t');
        if (!tab != (i == N_FIELDS - 1)) return LINE_CORRUPT;
        if (tab) *tab = '\0', p = tab + 1;
    }
    return LINE_OK;
}

/* Calls each(line, kind, fields, arg) for every non-empty line of text (modified). */
typedef void line_fn(const char *raw, line_kind kind, char *const field[N_FIELDS], void *arg);
static void for_lines(char *text, line_fn *each, void *arg) {
    char raw[4 * WISDOM_FIELD_MAX + 64];
    for (char *line = text; *line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        if (*line) {
            snprintf(raw, sizeof raw, "%s", line);
            char *field[N_FIELDS] = {0};
            line_kind kind = strlen(line) >= sizeof raw ? LINE_CORRUPT : parse_line(line, field);
            each(raw, kind, field, arg);
        }
        if (!nl) break;
        line = nl + 1;
    }
}

typedef struct find_ctx {
    const char *where, *what;
    char *value;
    size_t value_len;
    bool found;
    int corrupt;
    char foreign[WISDOM_FIELD_MAX];
} find_ctx;

static void find_one(const char *raw, line_kind kind, char *const field[N_FIELDS], void *arg) {
    (void)raw;
    find_ctx *c = arg;
    if (kind == LINE_CORRUPT) c->corrupt++;
    if (kind != LINE_OK || strcmp(field[F_WHAT], c->what) != 0) return;
    if (strcmp(field[F_WHERE], c->where) != 0) {
        snprintf(c->foreign, sizeof c->foreign, "%s", field[F_WHERE]);
        return;
    }
    snprintf(c->value, c->value_len, "%s", field[F_VALUE]);
    c->found = true;
}

static void notice_corrupt(wisdom_notice *n, const char *path, int lines) {
    if (lines)
        notice_add(n, "wisdom: %d corrupt or truncated line%s of %s ignored", lines,
                   lines == 1 ? "" : "s", path);
}

bool wisdom_find(const char *path, const char *where, const char *what, char *value,
                 size_t value_len, wisdom_notice *notice) {
    char *text = read_all(path);
    if (!text) {
        notice_add(notice, "wisdom: %s cannot be read (%s); ignored", path, strerror(errno));
        return false;
    }
    find_ctx c = {.where = where, .what = what, .value = value, .value_len = value_len};
    for_lines(text, find_one, &c);
    free(text);
    notice_corrupt(notice, path, c.corrupt);
    if (!c.found && c.foreign[0])
        notice_add(notice,
                   "wisdom: %s has a record for this run from another GPU or build "
                   "(%s), ignored",
                   path, c.foreign);
    return c.found;
}

/* ---- writing ---- */

typedef struct merge_ctx {
    const char *const *where, *const *what;
    int n, weight;
    bool *kept; /* kept[i]: the file's record for key i weighs more: it stays */
    FILE *out;
    int corrupt;
    bool failed;
} merge_ctx;

static void merge_one(const char *raw, line_kind kind, char *const field[N_FIELDS], void *arg) {
    merge_ctx *c = arg;
    if (kind == LINE_CORRUPT) { /* dropped: not a record, and said once */
        c->corrupt++;
        return;
    }
    for (int i = 0; kind == LINE_OK && i < c->n; i++) {
        if (strcmp(field[F_WHERE], c->where[i]) != 0 || strcmp(field[F_WHAT], c->what[i]) != 0)
            continue;
        if (atoi(field[F_WEIGHT]) <= c->weight) return; /* replaced by the new record */
        c->kept[i] = true;
    }
    if (fprintf(c->out, "%s\n", raw) < 0) c->failed = true;
}

static void put_line(merge_ctx *c, int i, const char *value) {
    char line[4 * WISDOM_FIELD_MAX + 64];
    int n = snprintf(line, sizeof line, WISDOM_TAG "\t%s\t%s\t%d\t%s", c->where[i], c->what[i],
                     c->weight, value);
    if (n < 0 || (size_t)n >= sizeof line) return;
    if (fprintf(c->out, "%s\tfnv=%08x\n", line, fnv1a(line, (size_t)n)) < 0) c->failed = true;
}

/* mkdir -p of path's directory; dir receives it. */
static void make_dir(const char *path, char *dir, size_t len) {
    snprintf(dir, len, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash) {
        snprintf(dir, len, ".");
        return;
    }
    *slash = '\0';
    for (char *p = dir + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            (void)mkdir(dir, 0755);
            *p = '/';
        }
    if (*dir) (void)mkdir(dir, 0755);
}

static int lock_taken(void *arg, double since) {
    (void)since;
    return flock(*(int *)arg, LOCK_EX | LOCK_NB) == 0;
}

/* The merged file into tmp, renamed over path; false (with errno) on a failure. */
static bool write_merged(const char *path, const char *tmp, merge_ctx *c, const char *value) {
    char *text = read_all(path);
    if (!text) return false;
    c->out = fopen(tmp, "w");
    if (!c->out) {
        free(text);
        return false;
    }
    for_lines(text, merge_one, c);
    free(text);
    for (int i = 0; i < c->n; i++)
        if (!c->kept[i]) put_line(c, i, value);
    bool ok = !c->failed && fflush(c->out) == 0 && fsync(fileno(c->out)) == 0;
    ok = fclose(c->out) == 0 && ok;
    ok = ok && rename(tmp, path) == 0;
    if (!ok) unlink(tmp);
    return ok;
}

bool wisdom_put(const char *path, const char *const *where, const char *const *what, int n,
                const char *value, int weight, wisdom_notice *notice) {
    char dir[4096], lock[4200], tmp[4200];
    make_dir(path, dir, sizeof dir);
    snprintf(lock, sizeof lock, "%s.lock", path);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    /* rename would replace a file its owner made read-only (root too may write it): such a
     * file is only read */
    struct stat st;
    bool read_only = stat(path, &st) == 0 && (access(path, W_OK) != 0 || !(st.st_mode & 0222));
    int fd = read_only ? -1 : open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        notice_add(notice, "wisdom: %s is read-only here; read, left as it is", path);
        return false;
    }
    bool ok = false;
    if (gol_poll_every(lock_taken, &fd, WISDOM_LOCK_WAIT_S, 0.01)) {
        bool kept[64] = {false};
        merge_ctx c = {
            .where = where, .what = what, .n = n < 64 ? n : 64, .weight = weight, .kept = kept};
        ok = write_merged(path, tmp, &c, value);
        if (!ok)
            notice_add(notice, "wisdom: %s not written (%s); left as it was", path,
                       strerror(errno));
        notice_corrupt(notice, path, c.corrupt);
    } else {
        notice_add(notice, "wisdom: %s stayed locked by another job for %.0f s; not written", lock,
                   WISDOM_LOCK_WAIT_S);
    }
    close(fd); /* releases the lock */
    return ok;
}
