/* config_parse on tables of named cases: each good command line with the fields it must set,
 * checked exactly (a failure names the case, the field, the expected and the actual value); each
 * bad one a single usage error whose message names the culprit. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/rule.h"

#include "src/options.h"
#include "tests/expect.h"

/* Splits "a|b|c" into a fresh argv (getopt permutes argv, so it must be writable). '|' rather
 * than spaces so that an argument may hold a space. */
typedef struct argv_buf {
    int argc;
    char *argv[64];
    char text[1024];
} argv_buf;

static void make_argv(argv_buf *b, const char *args) {
    snprintf(b->text, sizeof b->text, "golmpi%s%s", *args ? "|" : "", args);
    b->argc = 0;
    char *s = b->text;
    for (;;) {
        b->argv[b->argc++] = s;
        char *bar = strchr(s, '|');
        if (!bar) break;
        *bar = '\0';
        s = bar + 1;
    }
    b->argv[b->argc] = NULL;
}

static gol_status parse(const char *args, gol_config *cfg, const char **text) {
    argv_buf b;
    make_argv(&b, args);
    return config_parse(b.argc, b.argv, cfg, text);
}

/* The fields a case may name: where each lives in gol_config and how to read it. The enums are
 * named by this test's own lists, indexed by the constants of core/config.h. */
typedef enum { K_INT, K_UINT, K_BOOL, K_DBL, K_STR, K_ENUM } field_kind;
typedef struct field {
    const char *name;
    size_t offset, size;
    field_kind kind;
    const char *const *enum_names; /* K_ENUM: the name of each value */
    size_t n_enum;
} field;

static const char *const boundary_names[] = {
    [GOL_BOUNDARY_TORUS] = "torus", [GOL_BOUNDARY_DEAD] = "dead"};
static const char *const backend_names[] = {
    [GOL_BACKEND_AUTO] = "auto", [GOL_BACKEND_CPU] = "cpu", [GOL_BACKEND_CUDA] = "cuda"};
static const char *const format_names[] = {[GOL_FRAME_U8] = "u8", [GOL_FRAME_PACKED] = "packed"};

/* K_INT fields are int64_t; the other integer kinds are read at their own width. */
#define FIELD_AT(f) #f, offsetof(gol_config, f), sizeof(((gol_config *)0)->f)
#define FIELD(f, kind)                                                                             \
    { FIELD_AT(f), kind, NULL, 0 }
#define ENUM_FIELD(f, names)                                                                       \
    { FIELD_AT(f), K_ENUM, names, sizeof names / sizeof *names }
static const field fields[] = {
    FIELD(width, K_INT),
    FIELD(height, K_INT),
    FIELD(steps, K_INT),
    FIELD(save_every, K_INT),
    FIELD(chunk, K_INT),
    FIELD(output, K_STR),
    FIELD(no_output, K_BOOL),
    FIELD(force, K_BOOL),
    FIELD(seed, K_UINT),
    FIELD(density, K_DBL),
    FIELD(pattern, K_STR),
    FIELD(at_given, K_BOOL),
    FIELD(at_x, K_INT),
    FIELD(at_y, K_INT),
    FIELD(rule.birth, K_UINT),
    FIELD(rule.survive, K_UINT),
    FIELD(rule_text, K_STR),
    ENUM_FIELD(boundary, boundary_names),
    ENUM_FIELD(backend, backend_names),
    FIELD(halo, K_STR),
    ENUM_FIELD(frame_format, format_names),
    FIELD(restart, K_STR),
    FIELD(stats, K_STR),
    FIELD(quiet, K_BOOL),
    FIELD(no_graphs, K_BOOL),
    FIELD(size_given, K_BOOL),
    FIELD(rule_given, K_BOOL),
    FIELD(boundary_given, K_BOOL),
};

/* A field as text; a few names are not fields but what config.h's functions make of the
 * config (the output base and the enums' names), so a case checks those too. */
static void field_text(const gol_config *c, const char *name, char *out, size_t len) {
    if (!strcmp(name, "base")) {
        config_output_base(c, out, len);
        return;
    }
    const char *fn = !strcmp(name, "boundary_name")  ? config_boundary_name(c->boundary)
                     : !strcmp(name, "backend_name") ? config_backend_name(c->backend)
                     : !strcmp(name, "frame_format_name")
                         ? config_frame_format_name(c->frame_format)
                         : NULL;
    if (fn) {
        snprintf(out, len, "%s", fn);
        return;
    }
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
        const field *f = &fields[i];
        if (strcmp(f->name, name)) continue;
        const char *p = (const char *)c + f->offset;
        uint64_t u = 0; /* an integer, bool or enum, read at its own width */
        if (f->kind != K_STR && f->kind != K_DBL) {
            if (f->size == 1)
                u = *(const uint8_t *)p;
            else if (f->size == 2)
                u = *(const uint16_t *)p;
            else if (f->size == 4)
                u = *(const uint32_t *)p;
            else
                u = *(const uint64_t *)p;
        }
        switch (f->kind) {
        case K_INT:
            snprintf(out, len, "%lld", (long long)(int64_t)u);
            return;
        case K_UINT:
            snprintf(out, len, "%llu", (unsigned long long)u);
            return;
        case K_BOOL:
            snprintf(out, len, "%d", (int)u);
            return;
        case K_DBL:
            snprintf(out, len, "%.17g", *(const double *)p);
            return;
        case K_STR:
            snprintf(out, len, "%s", p);
            return;
        case K_ENUM:
            snprintf(out, len, "%s", u < f->n_enum ? f->enum_names[u] : "(out of range)");
            return;
        }
    }
    snprintf(out, len, "(no field '%s' in the test's table)", name);
}

/* Whether a field's text says what `want` says: numbers compare as numbers (so "0x48" or
 * "0.125" may be written as is), everything else as text. */
static int field_is(const char *name, const char *got, const char *want) {
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
        if (strcmp(fields[i].name, name)) continue;
        char *end;
        if (fields[i].kind == K_DBL) return strtod(got, &end) == strtod(want, &end);
        if (fields[i].kind == K_UINT && *want)
            return strtoull(got, &end, 0) == strtoull(want, &end, 0);
    }
    return !strcmp(got, want);
}

/* A command line that parses, and what it must set: "field=value ..." (an empty value is an
 * empty string). A failure names the case, the field, and the expected and the actual value. */
typedef struct good_case {
    const char *name, *args, *want;
} good_case;

static void run_good(const good_case *k) {
    gol_config cfg;
    const char *text = "unset";
    gol_status st = parse(k->args, &cfg, &text);
    if (st.code != GOL_OK || text != NULL) {
        failures++;
        fprintf(stderr, "FAIL case '%s' ('%s'): rejected (code %d, %s) or set out_text\n", k->name,
                k->args, st.code, st.msg);
        return;
    }
    char want[1024];
    snprintf(want, sizeof want, "%s", k->want);
    for (char *save = NULL, *tok = strtok_r(want, " ", &save); tok;
         tok = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) {
            failures++;
            fprintf(stderr, "FAIL case '%s': '%s' is not field=value\n", k->name, tok);
            continue;
        }
        *eq = '\0';
        char got[GOL_PATH_MAX + 64];
        field_text(&cfg, tok, got, sizeof got);
        if (!field_is(tok, got, eq + 1)) {
            failures++;
            fprintf(stderr, "FAIL case '%s' ('%s'): field %s: expected '%s', got '%s'\n", k->name,
                    k->args, tok, eq + 1, got);
        }
    }
}

/* A command line that is one usage error: one line, no prefix, naming the culprit (`needle`);
 * the case is named by its command line. */
typedef struct bad_case {
    const char *args, *needle;
} bad_case;

static void run_bad(const bad_case *k) {
    gol_config cfg;
    const char *text = NULL;
    gol_status st = parse(k->args, &cfg, &text);
    const char *msg = st.msg;
    const char *why = st.code != GOL_EXIT_USAGE      ? "exit code"
                      : !strstr(msg, k->needle)      ? "message"
                      : strchr(msg, '\n')            ? "message (more than one line)"
                      : strstr(msg, "golmpi: error") ? "message (carries the prefix)"
                                                     : NULL;
    if (why) {
        failures++;
        fprintf(stderr,
                "FAIL bad case '%s': field %s: expected code %d and a message with '%s', "
                "got code %d, '%s'\n",
                k->args, why, GOL_EXIT_USAGE, k->needle, st.code, msg);
    }
}

#define CONWAY "rule.birth=0x8 rule.survive=0xc rule_text=B3/S23" /* GOL_RULE_CONWAY_* */
static const good_case good[] = {
    {"defaults", "",
     "width=4096 height=4096 steps=1000 save_every=250 chunk=2 output=life.h5 no_output=0 "
     "force=0 seed=1 density=0.5 pattern= at_given=0 " CONWAY " boundary=torus backend=auto "
     "halo=auto frame_format=u8 restart= stats= quiet=0 no_graphs=0 size_given=0 rule_given=0 "
     "boundary_given=0 base=life frame_format_name=u8 backend_name=auto boundary_name=torus"},
    {"--size", "--size|16384", "width=16384 height=16384 size_given=1"},
    {"--width/--height", "--width|100|--height=37", "width=100 height=37 size_given=1"},
    {"largest width", "--width|2147483647|--height|1", "width=2147483647 height=1"},
    {"2^50 cells", "--width|1073741824|--height|1048576", "width=1073741824 height=1048576"},
    {"every option",
     "--steps|0|--save-every|1|--chunk|7|--output|runs/x.h5|--force|--seed|"
     "18446744073709551615|--density|0.125|--rule|b36/s23|--boundary|dead|"
     "--backend|cuda|--halo|nccl|--frame-format|packed|--stats|s.json|--no-graphs|--quiet",
     "steps=0 save_every=1 chunk=7 output=runs/x.h5 force=1 seed=18446744073709551615 "
     "density=0.125 rule_text=B36/S23 rule.birth=0x48 rule.survive=0x0c rule_given=1 "
     "boundary=dead boundary_given=1 backend=cuda halo=nccl frame_format=packed stats=s.json "
     "no_graphs=1 quiet=1 size_given=0 base=runs/x frame_format_name=packed-lsb "
     "boundary_name=dead backend_name=cuda"},
    {"pattern/at", "--pattern|tests/patterns/glider.rle|--at|5,7|--size|64|--density|1|--seed|0",
     "pattern=tests/patterns/glider.rle at_given=1 at_x=5 at_y=7 density=1 seed=0"},
    {"--at 0,0", "--pattern|p.rle|--at|0,0", "at_given=1 at_x=0 at_y=0 size_given=0"},
    {"--no-output with --stats",
     "--no-output|--stats|run.json|--density=0|--rule|23/3|--boundary|torus",
     "no_output=1 stats=run.json density=0 rule_given=1 boundary_given=1 boundary=torus"},
    {"restart", "--restart|life.h5|--steps|10|--backend|cpu|--halo|mpi|--frame-format|u8",
     "restart=life.h5 steps=10 backend=cpu halo=mpi frame_format=u8"},
    /* a hidden halo mode: accepted, not advertised */
    {"--halo none", "--halo|none", "halo=none"},
    {"-q", "-q", "quiet=1"},
};

static const bad_case bad[] = {
    {"--bogus", "unknown option '--bogus'"},
    {"-x", "unknown option '-x'"},
    {"-qx", "unknown option '-x'"},
    {"--quiet=1", "'--quiet' takes no value"},
    {"--steps", "'--steps' needs a value"},
    {"--size|16|extra", "unexpected argument 'extra'"},
    {"--size|abc", "--size: 'abc' is not an integer"},
    {"--size|0", "--size: '0' is out of range"},
    {"--size|-5", "--size: '-5'"},
    {"--size|12x", "'12x' is not an integer"},
    {"--size|", "'' is not an integer"},
    {"--size|99999999999999999999999", "out of range"},
    {"--size|2147483648", "out of range"},
    {"--width|2147483648|--height|1", "--width"},
    {"--width|1073741824|--height|1048577", "2^50"},
    {"--size|16|--width|8|--height|8", "either --size or --width/--height"},
    {"--width|8", "--width given without --height"},
    {"--height|8", "--height given without --width"},
    {"--steps|-1", "--steps: '-1'"},
    {"--steps|abc", "--steps: 'abc' is not an integer"},
    {"--steps|1.5", "--steps: '1.5' is not an integer"},
    {"--save-every|0", "--save-every: '0'"},
    {"--chunk|0", "--chunk: '0'"},
    {"--chunk|-2", "--chunk: '-2'"},
    {"--density|1.5", "--density: '1.5' is outside 0..1"},
    {"--density|-0.1", "outside 0..1"},
    {"--density|nan", "outside 0..1"},
    {"--density|half", "--density: 'half' is not a number"},
    {"--seed|-1", "--seed: '-1'"},
    {"--seed|18446744073709551616", "--seed"},
    {"--seed|x1", "--seed: 'x1'"},
    {"--rule|B9/S23", "--rule: rule 'B9/S23'"},
    {"--rule|B3/S23:T64,64", "bounded"},
    {"--boundary|klein", "--boundary: 'klein' is not one of torus, dead"},
    {"--backend|opencl", "--backend: 'opencl' is not one of auto, cpu, cuda"},
    {"--halo|ucx", "--halo: 'ucx' is not one of auto, mpi, nccl"},
    {"--frame-format|x", "--frame-format: 'x' is not one of u8, packed"},
    {"--output|life.hdf5", "--output: 'life.hdf5' does not end in .h5"},
    {"--output|runs/.h5", "no name before .h5"},
    {"--output|", "--output: the file name is empty"},
    {"--no-output|--output|a.h5", "--no-output and --output"},
    {"--pattern|p.rle|--at|5", "--at: '5' is not of the form X,Y"},
    {"--pattern|p.rle|--at|5,", "--at: '5,'"},
    {"--pattern|p.rle|--at|,5", "--at: ',5'"},
    {"--pattern|p.rle|--at|a,b", "--at: 'a,b'"},
    {"--pattern|p.rle|--at|1,2,3", "--at: '1,2,3'"},
    {"--pattern|p.rle|--at|-1,2", "--at: '-1,2' is out of range"},
    {"--at|1,2", "--at places a pattern; it needs --pattern"},
    {"--pattern|p.rle|--size|32|--at|32,0", "outside the 32 x 32 grid"},
    {"--pattern|p.rle|--restart|life.h5", "--restart"},
    {"--backend|cpu|--halo|nccl", "--halo nccl"},
    {"--pattern|", "--pattern: the file name is empty"},
};

int main(void) {
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        run_good(&good[i]);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        run_bad(&bad[i]);

    /* --help and --version stop with text, not an error */
    gol_config h;
    const char *text = NULL;
    gol_status st = parse("--size|8|--help", &h, &text);
    EXPECT(st.code == GOL_EXIT_DONE && text, "--help: code %d", st.code);
    static const char *const help_needles[] = {"--size",
                                               "--width",
                                               "--height",
                                               "--steps",
                                               "--save-every",
                                               "--chunk",
                                               "--output",
                                               "--no-output",
                                               "--force",
                                               "--seed",
                                               "--density",
                                               "--pattern",
                                               "--at",
                                               "--rule",
                                               "--boundary",
                                               "--backend",
                                               "--halo",
                                               "--frame-format",
                                               "--restart",
                                               "--stats",
                                               "--no-graphs",
                                               "--quiet",
                                               "--help",
                                               "--version",
                                               "default 4096",
                                               "default 1000",
                                               "default 250",
                                               "default 2)",
                                               "default life.h5",
                                               "default 0.5",
                                               "default B3/S23",
                                               "default torus",
                                               "default auto",
                                               "default u8",
                                               "mpirun -n 4 golmpi --size 16384"};
    for (size_t i = 0; text && i < sizeof help_needles / sizeof *help_needles; i++)
        EXPECT(strstr(text, help_needles[i]), "--help lacks '%s'", help_needles[i]);
    EXPECT(text && strstr(text, "auto | mpi | nccl") && !strstr(text, "none"),
           "--help lists the visible halo modes only");
    size_t n_names;
    const gol_named_rule *names = rule_names(&n_names);
    for (size_t i = 0; text && i < n_names; i++)
        EXPECT(strstr(text, names[i].name), "--help lacks the rule name '%s'", names[i].name);
    text = NULL;
    st = parse("-h", &h, &text);
    EXPECT(st.code == GOL_EXIT_DONE && text, "-h");
    text = NULL;
    st = parse("--version", &h, &text);
    EXPECT(st.code == GOL_EXIT_DONE && text &&
               !strncmp(text, "golmpi " GOLMPI_VERSION, 7 + strlen(GOLMPI_VERSION)),
           "--version: '%s'", text ? text : "(null)");
    EXPECT(!strcmp(GOLMPI_VERSION, "0.1.0"), "version macro '%s'", GOLMPI_VERSION);

    /* a bad parse followed by a good one: getopt's state is reset */
    run_bad(&(bad_case){"-qx", "'-x'"});
    run_good(&(good_case){"parse after an error", "--steps|3", "steps=3 quiet=0"});

    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    else
        printf("test_config: all passed\n");
    return failures ? 1 : 0;
}
