/* Pattern parsers: exact cells for RLE and .cells (runs, multi-digit counts, "$" runs, Golly
 * headers), and every malformed input a usage error with a line number.
 * usage: test_pattern PATTERN_DIR SCRATCH_DIR */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "src/pattern.h"

#include "tests/expect.h"

static int64_t population(const gol_pattern *p) {
    int64_t n = 0;
    for (int64_t i = 0; i < p->height * p->nwords; i++) n += __builtin_popcountll(p->bits[i]);
    return n;
}

/* Compares every cell with rows of '.'/'O', and checks that no bit is set past the width. */
static void expect_cells(const char *what, const gol_pattern *p, int64_t w, int64_t h,
                         const char *const *rows) {
    EXPECT(p->width == w && p->height == h, "%s: size %lld x %lld, want %lld x %lld", what,
           (long long)p->width, (long long)p->height, (long long)w, (long long)h);
    if (p->width != w || p->height != h || !p->bits) return;
    EXPECT(p->nwords == (w + 63) / 64, "%s: nwords %lld", what, (long long)p->nwords);
    int bad = 0;
    for (int64_t y = 0; y < h; y++) {
        size_t len = strlen(rows[y]);
        for (int64_t x = 0; x < w; x++) {
            int want = (size_t)x < len && rows[y][x] == 'O';
            if (pattern_cell(p, x, y) != want && bad++ < 5)
                EXPECT(0, "%s: cell (%lld,%lld) is %d, want %d", what, (long long)x, (long long)y,
                       pattern_cell(p, x, y), want);
        }
        uint64_t last = p->bits[y * p->nwords + p->nwords - 1];
        uint64_t pad = (w % 64) ? ~((~(uint64_t)0) >> (64 - w % 64)) : 0;
        EXPECT((last & pad) == 0, "%s: row %lld has bits set past the width", what, (long long)y);
    }
}

static const char *const glider_rows[] = {".O.", "..O", "OOO"};

static void rle_ok(const char *what, const char *text, gol_pattern *p) {
    gol_status st = pattern_parse_rle(text, strlen(text), p);
    EXPECT(st.code == GOL_OK, "%s: rejected: %s", what, st.msg);
    if (st.code) memset(p, 0, sizeof *p);
}

static void rle_bad(const char *text, const char *needle) {
    gol_pattern p;
    gol_status st = pattern_parse_rle(text, strlen(text), &p);
    EXPECT(st.code == GOL_EXIT_USAGE, "accepted (code %d): %s", st.code, text);
    EXPECT(strstr(st.msg, needle) != NULL, "message '%s' lacks '%s' (input %s)", st.msg, needle,
           text);
    EXPECT(strncmp(st.msg, "line ", 5) == 0, "message '%s' names no line", st.msg);
    if (st.code == GOL_OK) pattern_free(&p);
}

static void cells_bad(const char *text, const char *needle) {
    gol_pattern p;
    gol_status st = pattern_parse_cells(text, strlen(text), &p);
    EXPECT(st.code == GOL_EXIT_USAGE, "accepted (code %d): %s", st.code, text);
    EXPECT(strstr(st.msg, needle) != NULL, "message '%s' lacks '%s'", st.msg, needle);
    if (st.code == GOL_OK) pattern_free(&p);
}

static void load_bad(const char *path, const char *needle) {
    gol_pattern p;
    gol_status st = pattern_load(path, &p);
    EXPECT(st.code == GOL_EXIT_USAGE, "%s accepted (code %d)", path, st.code);
    EXPECT(strstr(st.msg, needle) != NULL, "%s: message '%s' lacks '%s'", path, st.msg, needle);
    EXPECT(strstr(st.msg, path) != NULL, "%s: message '%s' does not name the file", path, st.msg);
    EXPECT(p.bits == NULL, "%s: bits left allocated", path);
    if (st.code == GOL_OK) pattern_free(&p);
}

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
        exit(1);
    }
    fputs(text, f);
    fclose(f);
}

static void test_files(const char *dir) {
    char path[4096];
    gol_pattern p;
    gol_status st;

    snprintf(path, sizeof path, "%s/glider.rle", dir);
    st = pattern_load(path, &p);
    EXPECT(st.code == GOL_OK, "glider.rle: %s", st.msg);
    if (!st.code) {
        expect_cells("glider.rle", &p, 3, 3, glider_rows);
        EXPECT(p.has_rule && p.rule.birth == GOL_RULE_CONWAY_BIRTH &&
                   p.rule.survive == GOL_RULE_CONWAY_SURVIVE && !strcmp(p.rule_text, "B3/S23"),
               "glider.rle rule '%s'", p.rule_text);
        EXPECT(!p.has_grid, "glider.rle has no bounded grid");
        pattern_free(&p);
        EXPECT(p.bits == NULL && p.width == 0, "pattern_free leaves the struct cleared");
    }

    snprintf(path, sizeof path, "%s/glider.cells", dir);
    st = pattern_load(path, &p);
    EXPECT(st.code == GOL_OK, "glider.cells: %s", st.msg);
    if (!st.code) {
        expect_cells("glider.cells", &p, 3, 3, glider_rows);
        EXPECT(!p.has_rule && !p.has_grid, "a .cells file carries no rule or grid");
        pattern_free(&p);
    }

    snprintf(path, sizeof path, "%s/gosper.rle", dir);
    st = pattern_load(path, &p);
    EXPECT(st.code == GOL_OK, "gosper.rle: %s", st.msg);
    if (!st.code) {
        static const char *const gun[] = {
            "........................O...........",
            "......................O.O...........",
            "............OO......OO............OO",
            "...........O...O....OO............OO",
            "OO........O.....O...OO..............",
            "OO........O...O.OO....O.O...........",
            "..........O.....O.......O...........",
            "...........O...O....................",
            "............OO......................",
        };
        expect_cells("gosper.rle", &p, 36, 9, gun);
        EXPECT(population(&p) == 36, "gosper gun has %lld cells, want 36",
               (long long)population(&p));
        pattern_free(&p);
    }

    snprintf(path, sizeof path, "%s/glider_torus.rle", dir);
    st = pattern_load(path, &p);
    EXPECT(st.code == GOL_OK, "glider_torus.rle: %s", st.msg);
    if (!st.code) {
        expect_cells("glider_torus.rle", &p, 3, 3, glider_rows);
        EXPECT(p.has_grid && p.grid_width == 64 && p.grid_height == 64 &&
                   p.grid_boundary == GOL_BOUNDARY_TORUS,
               "grid %d %lld x %lld", p.has_grid, (long long)p.grid_width,
               (long long)p.grid_height);
        EXPECT(p.has_rule && !strcmp(p.rule_text, "B3/S23"), "rule '%s'", p.rule_text);
        pattern_free(&p);
    }

    snprintf(path, sizeof path, "%s/big60.rle", dir);
    st = pattern_load(path, &p);
    EXPECT(st.code == GOL_OK, "big60.rle: %s", st.msg);
    if (!st.code) {
        EXPECT(p.width == 60 && p.height == 60 && population(&p) == 5 &&
                   pattern_cell(&p, 59, 59) && pattern_cell(&p, 1, 1),
               "big60: %lld x %lld", (long long)p.width, (long long)p.height);
        pattern_free(&p);
    }

    snprintf(path, sizeof path, "%s/malformed.rle", dir);
    load_bad(path, "line 3: 'q'");
    snprintf(path, sizeof path, "%s/not_a_pattern.txt", dir);
    load_bad(path, "line 1");
    snprintf(path, sizeof path, "%s/no_such_file.rle", dir);
    load_bad(path, "No such file or directory");
    load_bad(dir, "Is a directory");
    /* a device or a FIFO would block or never end: refused before it is read */
    load_bad("/dev/zero", "is a character device, not a regular file");
}

static void test_scratch(const char *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/empty.rle", dir);
    write_file(path, "");
    load_bad(path, "empty");
    snprintf(path, sizeof path, "%s/comments_only.rle", dir);
    write_file(path, "#N nothing\n#C here\n");
    load_bad(path, "header");
    snprintf(path, sizeof path, "%s/unknown_format", dir);
    write_file(path, "hello\n");
    load_bad(path, "neither RLE");
    snprintf(path, sizeof path, "%s/fifo.rle", dir);
    unlink(path);
    EXPECT(mkfifo(path, 0600) == 0, "mkfifo %s: %s", path, strerror(errno));
    load_bad(path, "is a FIFO, not a regular file"); /* a hang before */
    unlink(path);

    /* content wins over the extension */
    gol_pattern p;
    snprintf(path, sizeof path, "%s/really_rle.cells", dir);
    write_file(path, "x = 3, y = 3\r\nbo$2bo$3o!\r\n");
    gol_status st = pattern_load(path, &p);
    EXPECT(st.code == GOL_OK, "RLE named .cells: %s", st.msg);
    if (!st.code) {
        expect_cells("really_rle.cells", &p, 3, 3, glider_rows);
        pattern_free(&p);
    }
    snprintf(path, sizeof path, "%s/cells_no_ext", dir);
    write_file(path, "OO\nOO\n");
    st = pattern_load(path, &p);
    EXPECT(st.code == GOL_OK, ".cells without extension: %s", st.msg);
    if (!st.code) {
        static const char *const block[] = {"OO", "OO"};
        expect_cells("cells_no_ext", &p, 2, 2, block);
        pattern_free(&p);
    }
}

static void test_rle_text(void) {
    gol_pattern p;

    /* whitespace and line breaks anywhere, a count split from its tag, junk after '!' */
    rle_ok("spaces", "# c\n\n  x=3 ,y= 3,rule=b3/s23  \nb o$2b\no$3 o!\nthis line is ignored q\n",
           &p);
    expect_cells("spaces", &p, 3, 3, glider_rows);
    pattern_free(&p);

    /* Golly accepts a body without '!' at the end of the file */
    rle_ok("no bang", "x = 3, y = 3\nbo$2bo$3o\n", &p);
    expect_cells("no bang", &p, 3, 3, glider_rows);
    EXPECT(!p.has_rule, "no rule in the header");
    pattern_free(&p);

    /* multi-digit runs across a word boundary */
    rle_ok("multi-digit", "x = 130, y = 2\n120b10o$64b2o!", &p);
    EXPECT(p.width == 130 && p.height == 2 && p.nwords == 3, "multi-digit size");
    if (p.bits) {
        for (int64_t x = 0; x < 130; x++) {
            EXPECT(pattern_cell(&p, x, 0) == (x >= 120), "row 0 cell %lld", (long long)x);
            EXPECT(pattern_cell(&p, x, 1) == (x == 64 || x == 65), "row 1 cell %lld",
                   (long long)x);
        }
        EXPECT(p.bits[1] == (0xffull << 56) && p.bits[2] == 0x3ull, "row 0 words %llx %llx",
               (unsigned long long)p.bits[1], (unsigned long long)p.bits[2]);
    }
    pattern_free(&p);

    /* "$" runs leave empty rows */
    rle_ok("dollar runs", "x = 2, y = 5\no3$bo$!", &p);
    {
        static const char *const rows[] = {"O.", "..", "..", ".O", ".."};
        expect_cells("dollar runs", &p, 2, 5, rows);
    }
    pattern_free(&p);

    /* the size is the larger of the header and the body */
    rle_ok("header larger", "x = 70, y = 4\n2o!", &p);
    EXPECT(p.width == 70 && p.height == 4 && population(&p) == 2, "header larger: %lld x %lld",
           (long long)p.width, (long long)p.height);
    pattern_free(&p);
    rle_ok("body larger", "x = 1, y = 1\n3o$bo!", &p);
    {
        static const char *const rows[] = {"OOO", ".O."};
        expect_cells("body larger", &p, 3, 2, rows);
    }
    pattern_free(&p);

    /* rule spellings and Golly bounded grids */
    rle_ok("23/3", "x = 1, y = 1, rule = 23/3\no!", &p);
    EXPECT(p.has_rule && !strcmp(p.rule_text, "B3/S23"), "23/3 -> '%s'", p.rule_text);
    pattern_free(&p);
    rle_ok("highlife", "x = 1, y = 1, rule = B36/S23\no!", &p);
    EXPECT(p.has_rule && !strcmp(p.rule_text, "B36/S23") && p.rule.birth == 0x48,
           "highlife -> '%s'", p.rule_text);
    pattern_free(&p);
    rle_ok("plane", "x = 1, y = 1, rule = B3/S23:P10,20\no!", &p);
    EXPECT(p.has_grid && p.grid_width == 10 && p.grid_height == 20 &&
               p.grid_boundary == GOL_BOUNDARY_DEAD,
           "plane grid");
    pattern_free(&p);
    rle_ok("square torus", "x = 1, y = 1, rule = B3/S23:T64\no!", &p);
    EXPECT(p.has_grid && p.grid_width == 64 && p.grid_height == 64 &&
               p.grid_boundary == GOL_BOUNDARY_TORUS,
           "square torus");
    pattern_free(&p);

    /* a pattern with no live cells but a size is valid */
    rle_ok("all dead", "x = 4, y = 2\n!", &p);
    EXPECT(p.width == 4 && p.height == 2 && population(&p) == 0, "all dead");
    pattern_free(&p);

    /* malformed RLE */
    rle_bad("bo$2bo$3o!", "line 1: expected the RLE header");
    rle_bad("#C only comments\n", "no RLE header");
    rle_bad("x = 3a, y = 3\nbo$2bo$3o!", "'3a'");
    rle_bad("x = 3\nbo!", "lacks y");
    rle_bad("x = 3, y = 3, colour = red\no!", "unknown key 'colour'");
    rle_bad("x = 3, y = 3\nbo$2bqo$3o!", "line 2: 'q'");
    rle_bad("x = 3, y = 3\nbo$\n2b%o$3o!", "line 3: unexpected '%'");
    rle_bad("x = 3, y = 3\n.A$B.!", "multi-state");
    rle_bad("x = 3, y = 3, rule = B9/S23\no!", "B9/S23");
    rle_bad("x = 3, y = 3, rule = B3/S23:K64,64\no!", "K64,64");
    rle_bad("x = 3, y = 3, rule = B3/S23:T0,64\no!", "infinite");
    rle_bad("x = 3, y = 3, rule = B3/S23:T64+1,64\no!", "'+'");
    rle_bad("x = 1, y = 1\n2147483647bo!", "wider than 2147483647");
    rle_bad("x = 1, y = 1\n3000000000o!", "larger than 2147483647");
    rle_bad("x = 1, y = 1\no2147483647$o!", "taller than 2147483647");
    rle_bad("x = 1, y = 1\no\n\n12", "line 4: run count 12");
    rle_bad("x = 0, y = 0\n!", "empty");
    rle_bad("x = 3000000, y = 3000000\no!", "more than a pattern file may hold");
    rle_bad("x = 1, y = 1\n0o!", "run count 0");
    /* the cap counts the words held, rows padded to 64 cells: 2^31 cells but 2^31 words */
    rle_bad("x = 1, y = 2147483647\n!", "more than a pattern file may hold");
    rle_bad("x = 1, y = 1\no2147483646$o!", "more than a pattern file may hold");
    /* no live cells and no '!': a file cut short, not an all-dead pattern */
    rle_bad("x = 3, y = 3\n", "line 1: the pattern has no live cells");
    rle_bad("x = 3, y = 3", "no live cells");
    rle_bad("#C c\nx = 3, y = 3\n3b$3b$\n", "line 2: the pattern has no live cells");
    rle_bad("x = 1, y = 2147483647", "no live cells");
}

/* Runs are filled a word at a time: every start and length around word edges, cell by cell. */
static void test_rle_runs(void) {
    for (int x0 = 0; x0 < 70; x0++)
        for (int n = 1; n < 140; n++) {
            char text[64], skip[16] = ""; /* "0b" is a run count of 0, refused */
            if (x0) snprintf(skip, sizeof skip, "%db", x0);
            snprintf(text, sizeof text, "x = 1, y = 2\n%s%do$%do!", skip, n, n);
            gol_pattern p;
            gol_status st = pattern_parse_rle(text, strlen(text), &p);
            EXPECT(st.code == GOL_OK, "%s: %s", text, st.msg);
            if (st.code) continue;
            int bad = 0;
            for (int64_t x = 0; x < p.width; x++)
                bad += pattern_cell(&p, x, 0) != (x >= x0 && x < x0 + n) ||
                       pattern_cell(&p, x, 1) != (x < n);
            EXPECT(bad == 0 && p.width == x0 + n && population(&p) == 2 * n,
                   "%s: %d wrong cells, width %lld", text, bad, (long long)p.width);
            pattern_free(&p);
        }

    /* a run of 2^30 cells is 2^24 word stores, not 2^30 bit sets (that took seconds) */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    gol_pattern p;
    const char *text = "x = 1, y = 1\n3b1073741824o!";
    gol_status st = pattern_parse_rle(text, strlen(text), &p);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    EXPECT(st.code == GOL_OK, "a run of 2^30 cells: %s", st.msg);
    if (st.code) return;
    EXPECT(p.width == 3 + (INT64_C(1) << 30) && population(&p) == INT64_C(1) << 30,
           "a run of 2^30 cells: width %lld", (long long)p.width);
    EXPECT(s < 2.0, "a run of 2^30 cells took %.2f s to read", s);
    pattern_free(&p);
}

static void test_cells_text(void) {
    gol_pattern p;
    gol_status st;
    const char *text = "!Name: ragged\r\n!\r\n.O\r\n\r\n*..O\r\nO\r\n\r\n\r\n";
    st = pattern_parse_cells(text, strlen(text), &p);
    EXPECT(st.code == GOL_OK, "ragged .cells: %s", st.msg);
    if (!st.code) {
        static const char *const rows[] = {".O", "", "O..O", "O"};
        expect_cells("ragged", &p, 4, 4, rows);
        pattern_free(&p);
    }
    text = "!c\n....\n....\n";
    st = pattern_parse_cells(text, strlen(text), &p);
    EXPECT(st.code == GOL_OK && p.width == 4 && p.height == 2 && population(&p) == 0,
           "all-dead .cells: %s", st.msg);
    if (!st.code) pattern_free(&p);

    cells_bad(".O.\n..X\nOOO\n", "line 2, column 3: unexpected 'X'");
    cells_bad("!only\n!comments\n", "no pattern rows");
    cells_bad("", "no pattern rows");
    cells_bad(".O.\n. O\n", "line 2, column 2");
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s PATTERN_DIR SCRATCH_DIR\n", argv[0]);
        return 2;
    }
    mkdir(argv[2], 0755);
    test_rle_text();
    test_rle_runs();
    test_cells_text();
    test_files(argv[1]);
    test_scratch(argv[2]);
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    else printf("test_pattern: all passed\n");
    return failures ? 1 : 0;
}
