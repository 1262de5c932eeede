/* The wisdom file's faults (io/wisdom.h): a record read back; a corrupt and a truncated line
 * ignored with one notice, the rest still read; a record of another GPU or build not taken, with
 * a notice; a record never replaced by one of less weight; a read-only file read and left as it
 * is; a line of another format version kept; and jobs writing at once (forked processes, each
 * its own records) losing none. Never fatal. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/wisdom.h"
#include "tests/expect.h"

static char dir[256], path[300];

static char *slurp(const char *p) {
    FILE *f = fopen(p, "rb");
    if (!f) return strdup(""); /* fails the checks, not the test program */
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strdup(buf);
}

static void spill(const char *p, const char *text) {
    FILE *f = fopen(p, "wb");
    fputs(text, f);
    fclose(f);
}

static bool put1(const char *where, const char *what, const char *value, int weight,
                 wisdom_notice *n) {
    return wisdom_put(path, &where, &what, 1, value, weight, n);
}

static bool find1(const char *where, const char *what, char *value, wisdom_notice *n) {
    return wisdom_find(path, where, what, value, WISDOM_FIELD_MAX, n);
}

static void test_round_trip_and_weight(void) {
    wisdom_notice n = {""};
    char v[WISDOM_FIELD_MAX];
    EXPECT(!find1("gpu=A", "rows=8", v, &n), "an absent file has no record");
    EXPECT(n.text[0] == '\0', "an absent file is no fault: '%s'", n.text);
    EXPECT(put1("gpu=A", "rows=8", "shape=short", 2, &n), "first put: %s", n.text);
    EXPECT(find1("gpu=A", "rows=8", v, &n) && !strcmp(v, "shape=short"), "read back: '%s'", v);
    EXPECT(put1("gpu=A", "rows=8", "shape=half", 4, &n), "a heavier record");
    EXPECT(put1("gpu=A", "rows=8", "shape=unrolled", 3, &n), "a lighter record: the put succeeds");
    EXPECT(find1("gpu=A", "rows=8", v, &n) && !strcmp(v, "shape=half"),
           "never replaced by less: '%s'", v);
    EXPECT(put1("gpu=A", "rows=8", "shape=baseline", 4, &n), "an equal weight replaces");
    EXPECT(find1("gpu=A", "rows=8", v, &n) && !strcmp(v, "shape=baseline"), "replaced: '%s'", v);
    char *text = slurp(path);
    EXPECT(text && strstr(text, "shape=baseline") && !strstr(text, "shape=half"),
           "one line a key: %s", text ? text : "(none)");
    free(text);
    EXPECT(n.text[0] == '\0', "no notice so far: '%s'", n.text);
}

static void test_foreign(void) {
    wisdom_notice n = {""};
    char v[WISDOM_FIELD_MAX];
    EXPECT(!find1("gpu=B build=other", "rows=8", v, &n), "another GPU's record is not taken");
    EXPECT(strstr(n.text, "another GPU or build") != NULL, "a notice: '%s'", n.text);
    EXPECT(put1("gpu=B build=other", "rows=8", "shape=short", 1, &n), "its own record");
    EXPECT(find1("gpu=A", "rows=8", v, &n) && !strcmp(v, "shape=baseline"),
           "the first GPU's record stays: '%s'", v);
}

/* One character of the record changed: its checksum no longer holds. */
static void test_corrupt(void) {
    wisdom_notice n = {""};
    char v[WISDOM_FIELD_MAX];
    put1("gpu=A", "rows=16", "shape=short", 2, &n);
    char *text = slurp(path);
    char *at = strstr(text, "rows=16\t2\tshape=short");
    EXPECT(at != NULL, "the record is there: %s", text);
    if (at) at[strlen("rows=16\t2\tshape=")] = 'S';
    spill(path, text);
    free(text);
    EXPECT(!find1("gpu=A", "rows=16", v, &n), "a corrupt record is not taken: '%s'", v);
    EXPECT(find1("gpu=A", "rows=8", v, &n), "the other records still are");
    EXPECT(strstr(n.text, "1 corrupt or truncated line") != NULL, "a notice: '%s'", n.text);
    EXPECT(strchr(n.text, '\n') == NULL, "said once: '%s'", n.text);
    EXPECT(put1("gpu=A", "rows=16", "shape=half", 2, &n), "rewritten without it");
    EXPECT(find1("gpu=A", "rows=16", v, &n) && !strcmp(v, "shape=half"), "the new record: %s", v);
}

/* The file cut inside its last line, as a job killed while writing by hand would leave it. */
static void test_truncated(void) {
    wisdom_notice n = {""};
    char v[WISDOM_FIELD_MAX];
    put1("gpu=A", "rows=32", "shape=unrolled", 2, &n);
    char *text = slurp(path);
    size_t len = strlen(text);
    text[len - 6] = '\0';
    spill(path, text);
    free(text);
    EXPECT(!find1("gpu=A", "rows=32", v, &n), "a truncated record is not taken");
    EXPECT(find1("gpu=A", "rows=16", v, &n) && !strcmp(v, "shape=half"), "the rest is read");
    EXPECT(strstr(n.text, "corrupt or truncated") != NULL, "a notice: '%s'", n.text);
}

/* A line of a later format is not this build's to drop. */
static void test_other_version(void) {
    wisdom_notice n = {""};
    char *text = slurp(path);
    size_t len = strlen(text) + 64;
    char *more = malloc(len);
    /* after the truncated line, which lacks its newline */
    snprintf(more, len, "%s\nwisdom2\tfuture\tline\n", text);
    spill(path, more);
    free(more);
    free(text);
    EXPECT(put1("gpu=A", "rows=64", "shape=short", 1, &n), "put beside a later format's line");
    text = slurp(path);
    EXPECT(strstr(text, "wisdom2\tfuture\tline\n") != NULL, "kept as it was: %s", text);
    free(text);
}

static void test_read_only(void) {
    wisdom_notice n = {""};
    char v[WISDOM_FIELD_MAX];
    char *before = slurp(path);
    chmod(path, 0444);
    EXPECT(find1("gpu=A", "rows=64", v, &n), "a read-only file is read");
    EXPECT(!put1("gpu=A", "rows=128", "shape=half", 2, &n), "and not written");
    char *after = slurp(path);
    EXPECT(!strcmp(before, after), "left as it was");
    EXPECT(strstr(n.text, "read-only") != NULL, "a notice: '%s'", n.text);
    struct stat st;
    EXPECT(stat(path, &st) == 0 && (st.st_mode & 0777) == 0444, "its mode too");
    chmod(path, 0644);
    free(before);
    free(after);
}

/* JOBS processes put PUTS records each at once; every record is there after. */
static void test_concurrent(void) {
    enum { JOBS = 6, PUTS = 25 };
    for (int j = 0; j < JOBS; j++) {
        if (fork() != 0) continue;
        for (int i = 0; i < PUTS; i++) {
            char what[64];
            wisdom_notice n = {""};
            snprintf(what, sizeof what, "job=%d put=%d", j, i);
            if (!put1("gpu=A", what, "shape=short", 1, &n)) _exit(1);
        }
        _exit(0);
    }
    int ok = 1, status;
    for (int j = 0; j < JOBS; j++)
        ok &= wait(&status) > 0 && WIFEXITED(status) && !WEXITSTATUS(status);
    EXPECT(ok, "every job wrote");
    int found = 0;
    wisdom_notice n = {""};
    for (int j = 0; j < JOBS; j++)
        for (int i = 0; i < PUTS; i++) {
            char what[64], v[WISDOM_FIELD_MAX];
            snprintf(what, sizeof what, "job=%d put=%d", j, i);
            found += find1("gpu=A", what, v, &n);
        }
    EXPECT_EQ(found, JOBS * PUTS, "no record lost by jobs writing at once");
    EXPECT(n.text[0] == '\0', "no fault: '%s'", n.text);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "ls %s | grep -c tmp", dir);
    FILE *p = popen(cmd, "r");
    int tmps = -1;
    if (p && fscanf(p, "%d", &tmps) != 1) tmps = -1;
    if (p) pclose(p);
    EXPECT_EQ(tmps, 0, "no temporary file left");
}

static void test_path(void) {
    char p[512];
    setenv("XDG_CACHE_HOME", "/x/cache", 1);
    unsetenv("GOLMPI_WISDOM");
    EXPECT(wisdom_path("", p, sizeof p) && !strcmp(p, "/x/cache/golmpi/wisdom"), "XDG: %s", p);
    setenv("GOLMPI_WISDOM", "/y/w", 1);
    EXPECT(wisdom_path("", p, sizeof p) && !strcmp(p, "/y/w"), "GOLMPI_WISDOM: %s", p);
    EXPECT(wisdom_path("/z/w", p, sizeof p) && !strcmp(p, "/z/w"), "--wisdom PATH: %s", p);
    EXPECT(!wisdom_path("off", p, sizeof p), "--wisdom off");
    unsetenv("GOLMPI_WISDOM");
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", "/h", 1);
    EXPECT(wisdom_path("", p, sizeof p) && !strcmp(p, "/h/.cache/golmpi/wisdom"), "HOME: %s", p);
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/golmpi_wisdom_%ld", (long)getpid());
    snprintf(path, sizeof path, "%s/sub/wisdom", dir); /* sub/ does not exist: made */
    test_round_trip_and_weight();
    test_foreign();
    test_corrupt();
    test_truncated();
    test_other_version();
    test_read_only();
    snprintf(dir, sizeof dir, "/tmp/golmpi_wisdom_%ld/sub", (long)getpid());
    test_concurrent();
    test_path();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf /tmp/golmpi_wisdom_%ld", (long)getpid());
    if (system(cmd) != 0) fprintf(stderr, "could not remove the test's files\n");
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
