/* Every numeric option, found from the option table (not a list kept here), refuses white space
 * around its number (a newline, a tab, a carriage return, a vertical tab, a form feed, a space,
 * before or after) with the same message as a leading space, and takes the bare number. An option
 * is numeric when it takes a value, is not a file (its metavar has no "FILE"), refuses "x" and
 * takes "1" (or "3,4": --at). Issue 20: $'\n64' ran a 64x64 grid where ' 64' was refused. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "src/options.h"
#include "tests/expect.h"

static gol_status parse_one(const char *name, const char *value) {
    char opt[64], val[64];
    snprintf(opt, sizeof opt, "--%s", name);
    snprintf(val, sizeof val, "%s", value);
    char prog[] = "golmpi";
    char *argv[] = {prog, opt, val, NULL};
    gol_config cfg;
    const char *text = NULL;
    return config_parse(3, argv, &cfg, &text);
}

/* The message without what it quotes: the text before the first quote and after the last. */
static void frame_of(const char *msg, char *out, size_t len) {
    const char *q1 = strchr(msg, '\''), *q2 = strrchr(msg, '\'');
    if (!q1 || q1 == q2) {
        snprintf(out, len, "%s", msg);
        return;
    }
    snprintf(out, len, "%.*s''%s", (int)(q1 - msg), msg, q2 + 1);
}

/* The value was taken: the run is fine, or only a later cross-check of the options objects
 * ("--width given without --height"); a refused value's message starts "--name: ". */
static bool value_taken(const char *name, const char *value) {
    char head[64];
    gol_status st = parse_one(name, value);
    snprintf(head, sizeof head, "--%s: ", name);
    return st.code == GOL_OK || strncmp(st.msg, head, strlen(head)) != 0;
}

static const char *probe_value(const gol_option *o) {
    static const char *const probes[] = {"1", "3,4"};
    if (!o->metavar || strstr(o->metavar, "FILE")) return NULL;
    for (size_t i = 0; i < sizeof probes / sizeof *probes; i++)
        if (value_taken(o->name, probes[i]) && !value_taken(o->name, "x")) return probes[i];
    return NULL;
}

static int check_option(const gol_option *o, const char *good) {
    static const char *const spaces[] = {"\n", "\t", "\r", "\v", "\f", " "};
    char want[1100], got[1100], text[64];
    snprintf(text, sizeof text, " %s", good);
    gol_status ref = parse_one(o->name, text);
    EXPECT(ref.code == GOL_EXIT_USAGE, "--%s ' %s' accepted", o->name, good);
    frame_of(ref.msg, want, sizeof want);
    for (size_t i = 0; i < sizeof spaces / sizeof *spaces; i++) {
        for (int after = 0; after < 2; after++) {
            snprintf(text, sizeof text, "%s%s", after ? good : spaces[i], after ? spaces[i] : good);
            gol_status st = parse_one(o->name, text);
            EXPECT(st.code == GOL_EXIT_USAGE, "--%s with white space 0x%02x %s '%s' accepted",
                   o->name, spaces[i][0], after ? "after" : "before", good);
            frame_of(st.msg, got, sizeof got);
            EXPECT(strcmp(got, want) == 0, "--%s, 0x%02x %s: '%s', not as a space: '%s'", o->name,
                   spaces[i][0], after ? "after" : "before", st.msg, ref.msg);
        }
    }
    /* --at's second number too: "3, 4" */
    if (strchr(good, ',')) {
        gol_status st = parse_one(o->name, "3,\n4");
        EXPECT(st.code == GOL_EXIT_USAGE, "--%s '3,\\n4' accepted", o->name);
    }
    return 1;
}

int main(void) {
    size_t n;
    const gol_option *t = options_table(&n);
    int numeric = 0;
    char names[1024] = "";
    for (size_t i = 0; i < n; i++) {
        const char *good = probe_value(&t[i]);
        if (!good) continue;
        numeric += check_option(&t[i], good);
        strncat(names, " --", sizeof names - strlen(names) - 1);
        strncat(names, t[i].name, sizeof names - strlen(names) - 1);
    }
    /* the ones the issue named must be among them, or the probe missed them */
    EXPECT(strstr(names, "--size ") && strstr(names, "--seed ") && strstr(names, "--density "),
           "the numeric options found:%s", names);
    printf("white space around a number refused like a leading space, by %d options:%s\n", numeric,
           names);
    return failures ? 1 : 0;
}
