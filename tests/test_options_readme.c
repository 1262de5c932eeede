/* README.md's "Command line" table against the program's option table (src/options.c): every
 * option in one is in the other, with the same default, and every rule name that --rule takes is
 * documented. The table is read through options_table(), never copied here, so a default changed
 * in the code and not in README.md (or the reverse) fails, naming the option.
 *
 * usage: test_options_readme README.md */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rule.h"
#include "src/options.h"

#include "tests/expect.h"

#define MAX_ROWS 64

typedef struct readme_option {
    char name[64];     /* "size" for `--size N` */
    char default_[96]; /* the default cell, trimmed, backticks dropped; "" when empty */
} readme_option;

static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) n = 0;
    if (s) s[n] = '\0';
    fclose(f);
    return s;
}

/* The "## Command line" section, cut off at the next "## " heading. NULL when absent. */
static char *command_line_section(char *readme) {
    char *start = strstr(readme, "\n## Command line\n");
    if (!start) return NULL;
    start += 1;
    char *end = strstr(start + 3, "\n## ");
    if (end) end[1] = '\0';
    return start;
}

/* Splits a table row at the '|' that are not escaped as "\|"; returns the number of cells. */
static int split_row(char *line, char **cells, int max) {
    int n = 0;
    char *p = line + 1; /* past the leading '|' */
    while (n < max && *p) {
        cells[n++] = p;
        while (*p && !(*p == '|' && p[-1] != '\\'))
            p++;
        if (!*p) break;
        *p++ = '\0';
    }
    return n;
}

/* Trims spaces and drops backticks: " `life.h5` " -> "life.h5". */
static void clean_cell(const char *in, char *out, size_t len) {
    size_t k = 0;
    for (const char *p = in; *p && k + 1 < len; p++)
        if (*p != '`') out[k++] = *p;
    out[k] = '\0';
    while (k > 0 && out[k - 1] == ' ')
        out[--k] = '\0';
    size_t lead = strspn(out, " ");
    memmove(out, out + lead, strlen(out + lead) + 1);
}

/* Every `--name ...` span of the first cell is one option with the row's default. */
static int add_row_options(const char *first, const char *def, readme_option *rows, int n) {
    for (const char *p = strstr(first, "`--"); p && n < MAX_ROWS; p = strstr(p + 1, "`--")) {
        size_t k = strcspn(p + 3, " `\\|");
        if (k >= sizeof rows[n].name) continue;
        memcpy(rows[n].name, p + 3, k);
        rows[n].name[k] = '\0';
        clean_cell(def, rows[n].default_, sizeof rows[n].default_);
        n++;
        p = strchr(p + 1, '`'); /* past this span's closing backtick */
        if (!p) break;
    }
    return n;
}

/* The table's options; the header and the "| --- |" line name none. */
static int parse_table(char *section, readme_option *rows) {
    int n = 0;
    for (char *line = strtok(section, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] != '|') continue;
        char *cells[8];
        if (split_row(line, cells, 8) < 3) continue;
        n = add_row_options(cells[0], cells[2], rows, n);
    }
    return n;
}

static const readme_option *find(const readme_option *rows, int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (strcmp(rows[i].name, name) == 0) return &rows[i];
    return NULL;
}

static void check_options(const readme_option *rows, int n) {
    size_t count;
    const gol_option *table = options_table(&count);
    EXPECT(count > 20, "options_table has only %zu rows", count);
    for (size_t i = 0; i < count; i++) {
        const gol_option *o = &table[i];
        const readme_option *r = find(rows, n, o->name);
        EXPECT(r, "--%s is in the option table but not in README.md's Command line table", o->name);
        const char *want = o->default_text ? o->default_text : "";
        EXPECT(!r || strcmp(r->default_, want) == 0,
               "--%s: README.md's default is '%s', the option table's is '%s'", o->name,
               r ? r->default_ : "", want);
    }
    for (int i = 0; i < n; i++) {
        bool known = false;
        for (size_t k = 0; k < count; k++)
            known = known || strcmp(table[k].name, rows[i].name) == 0;
        EXPECT(known, "README.md's Command line table has --%s, which the program does not take",
               rows[i].name);
    }
}

/* Each name rule_parse accepts appears, in backticks, in the section. */
static void check_rule_names(const char *section) {
    size_t n;
    const gol_named_rule *names = rule_names(&n);
    EXPECT(n > 0, "rule_names is empty");
    for (size_t i = 0; i < n; i++) {
        char quoted[64];
        snprintf(quoted, sizeof quoted, "`%s`", names[i].name);
        EXPECT(strstr(section, quoted), "README.md's Command line section does not name rule %s",
               quoted);
        EXPECT(strstr(section, names[i].rule), "README.md's Command line section lacks %s (%s)",
               names[i].rule, names[i].name);
    }
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s README.md\n", argv[0]);
        return 2;
    }
    char *readme = read_file(argv[1]);
    if (!readme) {
        perror(argv[1]);
        return 1;
    }
    char *section = command_line_section(readme);
    EXPECT(section, "%s has no '## Command line' section", argv[1]);
    if (section) {
        char *copy = strdup(section); /* strtok cuts the table apart; the names need it whole */
        readme_option rows[MAX_ROWS];
        int n = parse_table(copy, rows);
        check_options(rows, n);
        check_rule_names(section);
        free(copy);
    }
    free(readme);
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    else
        printf("test_options_readme: all passed\n");
    return failures ? 1 : 0;
}
