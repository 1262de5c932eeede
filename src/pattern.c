/* Pattern files: run-length encoded (RLE, with Golly's bounded-grid rule suffix) and plaintext
 * .cells, into the grid's own packed bit layout. Every rank reads the same file, so every rank
 * reaches the same verdict on a bad one. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/check.h"
#include "core/quote.h"
#include "core/rule.h"
#include "src/pattern.h"

#define PATTERN_MAX_SIDE INT64_C(2147483647)
/* The pattern is held densely on every rank; past 2^36 cells (8 GiB of bits) a pattern file is
 * surely a mistake, and failing beats an out-of-memory abort. The cap counts the cells as held:
 * rows padded to whole 64-cell words, so "x = 1, y = 2147483647" (2^31 words, 16 GiB) is over
 * it although its 2^31 cells are not. */
#ifndef PATTERN_MAX_WORDS /* tests/fuzz.cmake sets a smaller cap, to stay in libFuzzer's memory */
#define PATTERN_MAX_WORDS (INT64_C(1) << 30)
#endif

static gol_status pattern_alloc(gol_pattern *p, int64_t width, int64_t height, int line) {
    if (width < 1 || height < 1)
        return gol_fail(GOL_EXIT_USAGE, "line %d: the pattern is empty (%" PRId64 " x %" PRId64
                        " cells)", line, width, height);
    int64_t nwords = (width + 63) / 64;
    if (width > PATTERN_MAX_SIDE || height > PATTERN_MAX_SIDE ||
        nwords > PATTERN_MAX_WORDS / height)
        return gol_fail(GOL_EXIT_USAGE,
                        "line %d: the pattern is %" PRId64 " x %" PRId64
                        " cells, more than a pattern file may hold (2^31 per side, 2^36 in all, "
                        "each row counted in whole 64-cell words: 8 GiB on every rank)",
                        line, width, height);
    /* within the cap, yet more than this machine has: a message, not an abort */
    uint64_t *bits = calloc((size_t)(nwords * height), sizeof(uint64_t));
    if (!bits)
        return gol_fail(GOL_EXIT_USAGE,
                        "line %d: the %" PRId64 " x %" PRId64 " pattern needs %.1f GiB on every "
                        "rank, more than this machine can give",
                        line, width, height, (double)(nwords * height) * 8 / (1 << 30));
    p->width = width;
    p->height = height;
    p->nwords = nwords;
    p->bits = bits;
    return gol_ok();
}

static inline void set_cell(gol_pattern *p, int64_t x, int64_t y) {
    p->bits[y * p->nwords + x / 64] |= (uint64_t)1 << (x % 64);
}

/* Cells [x, x + n) of row y alive, a word at a time: a run of 2^31 cells is 2^25 stores, not
 * 2^31 (it took seconds). */
static void set_run(gol_pattern *p, int64_t x, int64_t y, int64_t n) {
    uint64_t *row = p->bits + y * p->nwords;
    int64_t end = x + n; /* exclusive */
    int64_t w0 = x / 64, w1 = (end - 1) / 64;
    uint64_t first = ~(uint64_t)0 << (x % 64);
    uint64_t last = ~(uint64_t)0 >> (63 - (end - 1) % 64);
    if (w0 == w1) {
        row[w0] |= first & last;
        return;
    }
    row[w0] |= first;
    if (w1 > w0 + 1) memset(row + w0 + 1, 0xff, (size_t)(w1 - w0 - 1) * sizeof *row);
    row[w1] |= last;
}

/* ---- RLE -------------------------------------------------------------------------------- */

typedef struct text_cursor {
    const char *s, *end;
    int line;
} text_cursor;

/* A decimal number of at most 2^31-1, for header values and run counts. */
static bool read_count(text_cursor *c, int64_t *out) {
    int64_t v = 0;
    if (c->s >= c->end || !isdigit((unsigned char)*c->s)) return false;
    while (c->s < c->end && isdigit((unsigned char)*c->s)) {
        v = v * 10 + (*c->s - '0');
        if (v > PATTERN_MAX_SIDE) return false;
        c->s++;
    }
    *out = v;
    return true;
}

/* Golly's bounded grid: ":T64,64" is a torus, ":P64,64" a plane with dead cells beyond it; one
 * number means a square. Zero sides (infinite strips), twists and the other topologies are not
 * grids this program can run. */
static gol_status parse_grid_suffix(const char *suffix, int line, gol_pattern *p) {
    char kind = (char)toupper((unsigned char)suffix[0]);
    if (kind != 'T' && kind != 'P')
        return gol_fail(GOL_EXIT_USAGE,
                        "line %d: bounded grid ':%s' is not supported; only ':Tw,h' (torus) and "
                        ":Pw,h (plane) are",
                        line, suffix);
    text_cursor c = {suffix + 1, suffix + strlen(suffix), line};
    int64_t w, h;
    if (!read_count(&c, &w))
        return gol_fail(GOL_EXIT_USAGE, "line %d: bounded grid ':%s': expected a width after '%c'",
                        line, suffix, suffix[0]);
    h = w;
    if (c.s < c.end && *c.s == ',') {
        c.s++;
        if (!read_count(&c, &h))
            return gol_fail(GOL_EXIT_USAGE,
                            "line %d: bounded grid ':%s': expected a height after ','", line,
                            suffix);
    }
    if (c.s != c.end)
        return gol_fail(GOL_EXIT_USAGE,
                        "line %d: bounded grid ':%s': unexpected '%c' (twisted or shifted grids "
                        "are not supported)",
                        line, suffix, *c.s);
    if (w == 0 || h == 0)
        return gol_fail(GOL_EXIT_USAGE,
                        "line %d: bounded grid ':%s' is infinite in one direction; golmpi needs "
                        "both sides finite",
                        line, suffix);
    p->has_grid = true;
    p->grid_width = w;
    p->grid_height = h;
    p->grid_boundary = kind == 'T' ? GOL_BOUNDARY_TORUS : GOL_BOUNDARY_DEAD;
    return gol_ok();
}

static gol_status parse_rule_value(const char *value, int line, gol_pattern *p) {
    char buf[96];
    snprintf(buf, sizeof buf, "%s", value);
    char *colon = strchr(buf, ':');
    if (colon) {
        *colon = '\0';
        GOL_TRY(parse_grid_suffix(colon + 1, line, p));
    }
    gol_status st = rule_parse(buf, &p->rule, p->rule_text, sizeof p->rule_text);
    if (st.code) return gol_fail(st.code, "line %d: %s", line, st.msg);
    p->has_rule = true;
    return gol_ok();
}

static bool starts_key(const char *s, size_t n) {
    size_t i = 0;
    while (i < n && isspace((unsigned char)s[i])) i++;
    size_t k = i;
    while (i < n && (isalpha((unsigned char)s[i]) || s[i] == '_')) i++;
    if (i == k) return false;
    while (i < n && isspace((unsigned char)s[i])) i++;
    return i < n && s[i] == '=';
}

/* "x = 3, y = 3, rule = B3/S23": keys in any order, spaces anywhere around them. */
static gol_status parse_rle_header(const char *s, size_t n, int line, gol_pattern *p,
                                   int64_t *w, int64_t *h) {
    bool have_x = false, have_y = false;
    size_t i = 0;
    while (i < n) {
        while (i < n && isspace((unsigned char)s[i])) i++;
        size_t k0 = i;
        while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '_')) i++;
        size_t k1 = i;
        while (i < n && isspace((unsigned char)s[i])) i++;
        if (k1 == k0 || i >= n || s[i] != '=')
            return gol_fail(GOL_EXIT_USAGE,
                            "line %d: bad RLE header '%s'; expected 'x = W, y = H[, rule = R]'",
                            line, gol_quote_n(s, n > 80 ? 80 : n).s);
        i++;
        while (i < n && isspace((unsigned char)s[i])) i++;
        size_t v0 = i;
        /* A value ends at a comma that starts the next "key =": Golly's ":T64,64" has a
         * comma of its own. */
        while (i < n && !(s[i] == ',' && starts_key(s + i + 1, n - i - 1))) i++;
        size_t v1 = i;
        while (v1 > v0 && isspace((unsigned char)s[v1 - 1])) v1--;
        if (i < n) i++; /* the comma */
        char key[16], value[96];
        if (k1 - k0 >= sizeof key || v1 - v0 >= sizeof value)
            return gol_fail(GOL_EXIT_USAGE, "line %d: RLE header entry too long", line);
        memcpy(key, s + k0, k1 - k0);
        key[k1 - k0] = '\0';
        memcpy(value, s + v0, v1 - v0);
        value[v1 - v0] = '\0';

        if (strcmp(key, "x") == 0 || strcmp(key, "y") == 0) {
            text_cursor c = {value, value + strlen(value), line};
            int64_t v;
            if (!read_count(&c, &v) || c.s != c.end)
                return gol_fail(GOL_EXIT_USAGE,
                                "line %d: RLE header: %s = '%s' is not a size from 0 to "
                                "2147483647",
                                line, key, value);
            if (key[0] == 'x') *w = v, have_x = true;
            else *h = v, have_y = true;
        } else if (strcmp(key, "rule") == 0) {
            GOL_TRY(parse_rule_value(value, line, p));
        } else {
            return gol_fail(GOL_EXIT_USAGE,
                            "line %d: RLE header: unknown key '%s' (expected x, y and rule)",
                            line, key);
        }
    }
    if (!have_x || !have_y)
        return gol_fail(GOL_EXIT_USAGE, "line %d: RLE header lacks %s; expected 'x = W, y = H'",
                        line, have_x ? "y" : "x");
    return gol_ok();
}

/* A run count and the tag after it: "12o", "3 $", a count split from its tag by a line break. */
static gol_status read_run(text_cursor *c, int64_t *n, char *tag) {
    if (!read_count(c, n))
        return gol_fail(GOL_EXIT_USAGE, "line %d: run count is larger than 2147483647", c->line);
    while (c->s < c->end && isspace((unsigned char)*c->s)) {
        if (*c->s == '\n') c->line++;
        c->s++;
    }
    if (c->s >= c->end)
        return gol_fail(GOL_EXIT_USAGE, "line %d: run count %" PRId64
                        " at the end of the file has no b, o or $ after it",
                        c->line, *n);
    *tag = *c->s;
    if (*n == 0) /* the tag may be any byte, NUL too */
        return gol_fail(GOL_EXIT_USAGE, "line %d: run count 0 before '%s'", c->line,
                        gol_quote_n(tag, 1).s);
    return gol_ok();
}

static gol_status bad_tag(int line, char ch) {
    if (isalpha((unsigned char)ch) || ch == '.')
        return gol_fail(GOL_EXIT_USAGE,
                        "line %d: '%c' is a multi-state cell; golmpi reads two-state "
                        "RLE only (b, o, $, !)",
                        line, ch);
    if (isgraph((unsigned char)ch))
        return gol_fail(GOL_EXIT_USAGE,
                        "line %d: unexpected '%c' in the RLE body (expected counts and "
                        "b, o, $, !)",
                        line, ch);
    return gol_fail(GOL_EXIT_USAGE, "line %d: unexpected byte 0x%02x in the RLE body", line,
                    (unsigned char)ch);
}

/* What a walk of the body found: the live cells' extent from (0,0), and whether it ended at '!'. */
typedef struct rle_extent {
    int64_t w, h;
    bool bang;
} rle_extent;

/* Walks the body once to measure it (p->bits NULL) and once to fill it. Runs: [count] b|o|$,
 * ending at '!' or, as Golly allows, at the end of the file. Every run costs O(1) to measure and
 * O(count / 64) to fill. */
static gol_status rle_walk(text_cursor c, gol_pattern *p, rle_extent *ext) {
    int64_t x = 0, y = 0;
    memset(ext, 0, sizeof *ext);
    while (c.s < c.end) {
        char ch = *c.s;
        if (isspace((unsigned char)ch)) {
            if (ch == '\n') c.line++;
            c.s++;
            continue;
        }
        if (ch == '!') {
            ext->bang = true;
            break;
        }
        int64_t n = 1;
        if (isdigit((unsigned char)ch)) {
            GOL_TRY(read_run(&c, &n, &ch));
        }
        c.s++;
        if (ch == 'b' || ch == 'o') {
            if (x + n > PATTERN_MAX_SIDE)
                return gol_fail(GOL_EXIT_USAGE,
                                "line %d: the pattern is wider than 2147483647 cells", c.line);
            if (ch == 'o') {
                if (p->bits) set_run(p, x, y, n);
                if (x + n > ext->w) ext->w = x + n;
                if (y + 1 > ext->h) ext->h = y + 1;
            }
            x += n;
        } else if (ch == '$') {
            if (y + n >= PATTERN_MAX_SIDE)
                return gol_fail(GOL_EXIT_USAGE,
                                "line %d: the pattern is taller than 2147483647 cells", c.line);
            y += n;
            x = 0;
        } else {
            return bad_tag(c.line, ch);
        }
    }
    return gol_ok();
}

/* The next line of text: [*line_start, *line_end) without the newline. */
static bool next_line(text_cursor *c, const char **ls, const char **le) {
    if (c->s >= c->end) return false;
    *ls = c->s;
    const char *nl = memchr(c->s, '\n', (size_t)(c->end - c->s));
    *le = nl ? nl : c->end;
    c->s = nl ? nl + 1 : c->end;
    c->line++;
    return true;
}

static bool blank(const char *s, const char *e) {
    for (; s < e; s++)
        if (!isspace((unsigned char)*s)) return false;
    return true;
}

gol_status pattern_parse_rle(const char *text, size_t len, gol_pattern *p) {
    memset(p, 0, sizeof *p);
    text_cursor c = {text, text + len, 0};
    const char *ls = NULL, *le = NULL;
    bool found = false;
    while (next_line(&c, &ls, &le)) {
        const char *t = ls;
        while (t < le && isspace((unsigned char)*t)) t++;
        if (t == le || *t == '#') continue;
        found = true;
        break;
    }
    if (!found)
        return gol_fail(GOL_EXIT_USAGE, "line %d: no RLE header 'x = W, y = H' (the file holds "
                        "only comments or nothing)", c.line > 0 ? c.line : 1);
    int header_line = c.line;
    const char *t = ls;
    while (t < le && isspace((unsigned char)*t)) t++;
    if (*t != 'x')
        return gol_fail(GOL_EXIT_USAGE, "line %d: expected the RLE header 'x = W, y = H', got "
                        "'%s'", header_line, gol_quote_n(t, (size_t)(le - t > 40 ? 40 : le - t)).s);
    int64_t hw = 0, hh = 0;
    GOL_TRY(parse_rle_header(t, (size_t)(le - t), header_line, p, &hw, &hh));

    text_cursor body = {c.s, c.end, header_line + 1};
    rle_extent ext;
    GOL_TRY(rle_walk(body, p, &ext));
    /* "x = 3, y = 3" and nothing else is more likely a file cut short than an all-dead pattern,
     * which says so with '!' */
    if (ext.w == 0 && !ext.bang)
        return gol_fail(GOL_EXIT_USAGE,
                        "line %d: the pattern has no live cells and its body does not end in '!' "
                        "(is the file cut short? an all-dead pattern is the header, then '!')",
                        header_line);
    GOL_TRY(pattern_alloc(p, hw > ext.w ? hw : ext.w, hh > ext.h ? hh : ext.h, header_line));
    gol_status st = rle_walk(body, p, &ext);
    if (st.code) pattern_free(p); /* cannot differ from the first walk; kept for safety */
    return st;
}

/* ---- plaintext .cells -------------------------------------------------------------------- */

/* One walk measures (p->bits NULL), the next fills. '!' lines are comments; a row holds '.'
 * (dead) and 'O' or '*' (alive); short rows are padded with dead cells. */
static gol_status cells_walk(const char *text, size_t len, gol_pattern *p, int64_t *w,
                             int64_t *h) {
    text_cursor c = {text, text + len, 0};
    const char *ls, *le;
    int64_t y = 0;
    *w = *h = 0;
    while (next_line(&c, &ls, &le)) {
        if (ls < le && *ls == '!') continue;
        while (le > ls && isspace((unsigned char)le[-1])) le--; /* CR, trailing blanks */
        if (y >= PATTERN_MAX_SIDE)
            return gol_fail(GOL_EXIT_USAGE, "line %d: the pattern is taller than 2147483647 cells",
                            c.line);
        if ((int64_t)(le - ls) > PATTERN_MAX_SIDE)
            return gol_fail(GOL_EXIT_USAGE, "line %d: the row is wider than 2147483647 cells",
                            c.line);
        for (const char *s = ls; s < le; s++) {
            int64_t x = s - ls;
            if (*s == 'O' || *s == '*') {
                if (p->bits) set_cell(p, x, y);
            } else if (*s != '.') {
                if (isgraph((unsigned char)*s) || *s == ' ')
                    return gol_fail(GOL_EXIT_USAGE,
                                    "line %d, column %" PRId64 ": unexpected '%c' (a .cells row "
                                    "holds '.', 'O' or '*')",
                                    c.line, x + 1, *s);
                return gol_fail(GOL_EXIT_USAGE,
                                "line %d, column %" PRId64 ": unexpected byte 0x%02x", c.line,
                                x + 1, (unsigned char)*s);
            }
        }
        y++;
        /* Blank lines inside the pattern are rows of dead cells; trailing ones add nothing. */
        if (le > ls) {
            *h = y;
            if (le - ls > *w) *w = le - ls;
        }
    }
    return gol_ok();
}

gol_status pattern_parse_cells(const char *text, size_t len, gol_pattern *p) {
    memset(p, 0, sizeof *p);
    int64_t w, h;
    GOL_TRY(cells_walk(text, len, p, &w, &h));
    if (w == 0 || h == 0)
        return gol_fail(GOL_EXIT_USAGE, "no pattern rows (only '!' comments or blank lines)");
    GOL_TRY(pattern_alloc(p, w, h, 1));
    gol_status st = cells_walk(text, len, p, &w, &h);
    if (st.code) pattern_free(p);
    return st;
}

/* ---- files ------------------------------------------------------------------------------- */

typedef enum { FMT_UNKNOWN, FMT_RLE, FMT_CELLS } pattern_format;

/* The first line that is not blank or a '#' comment decides: "x = ..." is RLE, a '!' comment or a
 * row of '.', 'O', '*' is .cells. */
static pattern_format sniff_format(const char *text, size_t len) {
    text_cursor c = {text, text + len, 0};
    const char *ls, *le;
    while (next_line(&c, &ls, &le)) {
        if (blank(ls, le)) continue;
        if (*ls == '!' || *ls == '.' || *ls == 'O' || *ls == '*') return FMT_CELLS;
        const char *t = ls;
        while (t < le && isspace((unsigned char)*t)) t++;
        if (*t == '#') continue;
        if (*t == 'x') {
            t++;
            while (t < le && isspace((unsigned char)*t)) t++;
            if (t < le && *t == '=') return FMT_RLE;
        }
        return FMT_UNKNOWN;
    }
    return FMT_UNKNOWN;
}

static bool has_extension(const char *path, const char *ext) {
    size_t n = strlen(path), k = strlen(ext);
    return n > k && strcasecmp(path + n - k, ext) == 0;
}

static const char *file_kind(mode_t mode) {
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

static gol_status not_regular(const char *what, const char *path, mode_t mode) {
    if (S_ISDIR(mode)) return gol_fail(GOL_EXIT_USAGE, "%s %s: %s", what, path, strerror(EISDIR));
    return gol_fail(GOL_EXIT_USAGE, "%s %s: is %s, not a regular file; golmpi reads its input "
                    "from regular files only", what, path, file_kind(mode));
}

gol_status input_check_regular(const char *what, const char *path) {
    struct stat st;
    if (stat(path, &st) != 0 || S_ISREG(st.st_mode)) return gol_ok();
    return not_regular(what, path, st.st_mode);
}

/* Reading a FIFO waits for a writer and a device may never end, so a pattern is a regular file:
 * stat first (opening some devices does something), then open without blocking and judge what
 * was opened, so the file cannot be swapped in between. */
static gol_status open_regular(const char *path, FILE **f) {
    GOL_TRY(input_check_regular("pattern", path));
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return gol_fail(GOL_EXIT_USAGE, "pattern %s: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int err = errno;
        close(fd);
        return gol_fail(GOL_EXIT_USAGE, "pattern %s: %s", path, strerror(err));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return not_regular("pattern", path, sb.st_mode);
    }
    /* O_NONBLOCK stays: it changes nothing for a regular file */
    *f = fdopen(fd, "rb");
    if (!*f) {
        int err = errno;
        close(fd);
        return gol_fail(GOL_EXIT_USAGE, "pattern %s: %s", path, strerror(err));
    }
    return gol_ok();
}

gol_status pattern_load(const char *path, gol_pattern *p) {
    memset(p, 0, sizeof *p);
    FILE *f = NULL;
    GOL_TRY(open_regular(path, &f));
    size_t cap = 1 << 16, len = 0;
    char *text = gol_xmalloc(cap);
    for (;;) {
        if (len == cap) {
            cap *= 2;
            char *bigger = realloc(text, cap);
            if (!bigger) {
                free(text);
                fclose(f);
                return gol_fail(GOL_EXIT_USAGE, "pattern %s: too large to read into memory",
                                path);
            }
            text = bigger;
        }
        size_t got = fread(text + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    if (ferror(f)) {
        int err = errno;
        free(text);
        fclose(f);
        return gol_fail(GOL_EXIT_USAGE, "pattern %s: %s", path, strerror(err ? err : EIO));
    }
    fclose(f);
    if (len == 0) {
        free(text);
        return gol_fail(GOL_EXIT_USAGE, "pattern %s: the file is empty", path);
    }

    pattern_format fmt = sniff_format(text, len);
    if (fmt == FMT_UNKNOWN) {
        if (has_extension(path, ".rle")) fmt = FMT_RLE;
        else if (has_extension(path, ".cells") || has_extension(path, ".txt")) fmt = FMT_CELLS;
    }
    gol_status st;
    if (fmt == FMT_RLE) st = pattern_parse_rle(text, len, p);
    else if (fmt == FMT_CELLS) st = pattern_parse_cells(text, len, p);
    else
        st = gol_fail(GOL_EXIT_USAGE,
                      "neither RLE (a header line 'x = W, y = H') nor plaintext .cells (rows of "
                      "'.', 'O', '*')");
    free(text);
    if (st.code) {
        pattern_free(p);
        return gol_fail(st.code, "pattern %s: %s", path, st.msg);
    }
    return st;
}

void pattern_free(gol_pattern *p) {
    free(p->bits);
    memset(p, 0, sizeof *p);
}
