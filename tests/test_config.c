/* config_parse on tables of good and bad command lines: every field checked exactly, every bad
 * line a single usage error whose message names the culprit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/rule.h"

#include "tests/expect.h"
#include "src/options.h"

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

static gol_config parse_ok(const char *args) {
    gol_config cfg;
    const char *text = "unset";
    gol_status st = parse(args, &cfg, &text);
    EXPECT(st.code == GOL_OK, "'%s' rejected: %s", args, st.msg);
    EXPECT(text == NULL, "'%s' set out_text", args);
    return cfg;
}

static void parse_bad(const char *args, const char *needle) {
    gol_config cfg;
    const char *text = NULL;
    gol_status st = parse(args, &cfg, &text);
    EXPECT(st.code == GOL_EXIT_USAGE, "'%s' accepted (code %d)", args, st.code);
    EXPECT(strstr(st.msg, needle) != NULL, "'%s': message '%s' lacks '%s'", args, st.msg, needle);
    EXPECT(strchr(st.msg, '\n') == NULL, "'%s': message is more than one line", args);
    EXPECT(strstr(st.msg, "golmpi: error") == NULL, "'%s': message carries the prefix", args);
}

int main(void) {
    gol_config c = parse_ok("");
    EXPECT(c.width == 4096 && c.height == 4096 && c.steps == 1000 && c.save_every == 250 &&
               c.chunk == 2 && !strcmp(c.output, "life.h5") && !c.no_output && !c.force &&
               c.seed == 1 && c.density == 0.5 && !c.pattern[0] && !c.at_given &&
               c.rule.birth == GOL_RULE_CONWAY_BIRTH &&
               c.rule.survive == GOL_RULE_CONWAY_SURVIVE && !strcmp(c.rule_text, "B3/S23") &&
               c.boundary == GOL_BOUNDARY_TORUS && c.backend == GOL_BACKEND_AUTO &&
               !strcmp(c.halo, "auto") && c.frame_format == GOL_FRAME_U8 && !c.restart[0] &&
               !c.stats[0] && !c.quiet && !c.no_graphs && !c.size_given && !c.rule_given &&
               !c.boundary_given,
           "defaults");

    c = parse_ok("--size|16384");
    EXPECT(c.width == 16384 && c.height == 16384 && c.size_given, "--size");
    c = parse_ok("--width|100|--height=37");
    EXPECT(c.width == 100 && c.height == 37 && c.size_given, "--width/--height");
    c = parse_ok("--width|2147483647|--height|1");
    EXPECT(c.width == 2147483647 && c.height == 1, "largest width");
    c = parse_ok("--width|1073741824|--height|1048576"); /* exactly 2^50 cells */
    EXPECT(c.width == 1073741824 && c.height == 1048576, "2^50 cells");

    c = parse_ok("--steps|0|--save-every|1|--chunk|7|--output|runs/x.h5|--force|--seed|"
                 "18446744073709551615|--density|0.125|--rule|b36/s23|--boundary|dead|"
                 "--backend|cuda|--halo|nccl|--frame-format|packed|--stats|s.json|--no-graphs|"
                 "--quiet");
    EXPECT(c.steps == 0 && c.save_every == 1 && c.chunk == 7 && !strcmp(c.output, "runs/x.h5") &&
               c.force && c.seed == UINT64_MAX && c.density == 0.125 &&
               !strcmp(c.rule_text, "B36/S23") && c.rule.birth == 0x48 &&
               c.rule.survive == 0x0c && c.rule_given && c.boundary == GOL_BOUNDARY_DEAD &&
               c.boundary_given && c.backend == GOL_BACKEND_CUDA && !strcmp(c.halo, "nccl") &&
               c.frame_format == GOL_FRAME_PACKED && !strcmp(c.stats, "s.json") &&
               c.no_graphs && c.quiet && !c.size_given,
           "every option");
    char base[64];
    config_output_base(&c, base, sizeof base);
    EXPECT(!strcmp(base, "runs/x"), "base '%s'", base);
    EXPECT(!strcmp(config_frame_format_name(c.frame_format), "packed-lsb"), "packed name");
    EXPECT(!strcmp(config_boundary_name(c.boundary), "dead"), "boundary name");
    EXPECT(!strcmp(config_backend_name(c.backend), "cuda"), "backend name");
    EXPECT(!strcmp(c.halo, "nccl"), "halo name");

    c = parse_ok("--pattern|tests/patterns/glider.rle|--at|5,7|--size|64|--density|1|--seed|0");
    EXPECT(!strcmp(c.pattern, "tests/patterns/glider.rle") && c.at_given && c.at_x == 5 &&
               c.at_y == 7 && c.density == 1.0 && c.seed == 0,
           "pattern/at");
    c = parse_ok("--pattern|p.rle|--at|0,0");
    EXPECT(c.at_given && c.at_x == 0 && c.at_y == 0 && !c.size_given, "--at 0,0");
    c = parse_ok("--no-output|--stats|run.json|--density=0|--rule|23/3|--boundary|torus");
    EXPECT(c.no_output && !strcmp(c.stats, "run.json") && c.density == 0.0 && c.rule_given &&
               c.boundary_given && c.boundary == GOL_BOUNDARY_TORUS,
           "--no-output with --stats");
    c = parse_ok("--restart|life.h5|--steps|10|--backend|cpu|--halo|mpi|--frame-format|u8");
    EXPECT(!strcmp(c.restart, "life.h5") && c.steps == 10 && c.backend == GOL_BACKEND_CPU &&
               !strcmp(c.halo, "mpi") && c.frame_format == GOL_FRAME_U8,
           "restart");
    /* a hidden halo mode: accepted, not advertised */
    c = parse_ok("--halo|none");
    EXPECT(!strcmp(c.halo, "none"), "--halo none: '%s'", c.halo);
    EXPECT(!strcmp(config_frame_format_name(GOL_FRAME_U8), "u8"), "u8 name");
    EXPECT(!strcmp(config_backend_name(GOL_BACKEND_AUTO), "auto") &&
               !strcmp(config_boundary_name(GOL_BOUNDARY_TORUS), "torus"),
           "auto names");
    c = parse_ok("");
    config_output_base(&c, base, sizeof base);
    EXPECT(!strcmp(base, "life"), "default base '%s'", base);
    c = parse_ok("-q");
    EXPECT(c.quiet, "-q");

    /* --help and --version stop with text, not an error */
    gol_config h;
    const char *text = NULL;
    gol_status st = parse("--size|8|--help", &h, &text);
    EXPECT(st.code == GOL_EXIT_DONE && text, "--help: code %d", st.code);
    static const char *const help_needles[] = {
        "--size", "--width", "--height", "--steps", "--save-every", "--chunk", "--output",
        "--no-output", "--force", "--seed", "--density", "--pattern", "--at", "--rule",
        "--boundary", "--backend", "--halo", "--frame-format", "--restart", "--stats",
        "--no-graphs", "--quiet", "--help", "--version", "default 4096", "default 1000",
        "default 250", "default 2)", "default life.h5", "default 0.5", "default B3/S23",
        "default torus", "default auto", "default u8", "mpirun -n 4 golmpi --size 16384"};
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
    EXPECT(st.code == GOL_EXIT_DONE && text && !strncmp(text, "golmpi " GOLMPI_VERSION, 7 + strlen(GOLMPI_VERSION)),
           "--version: '%s'", text ? text : "(null)");
    EXPECT(!strcmp(GOLMPI_VERSION, "0.1.0"), "version macro '%s'", GOLMPI_VERSION);

    /* bad command lines */
    parse_bad("--bogus", "unknown option '--bogus'");
    parse_bad("-x", "unknown option '-x'");
    parse_bad("-qx", "unknown option '-x'");
    parse_bad("--quiet=1", "'--quiet' takes no value");
    parse_bad("--steps", "'--steps' needs a value");
    parse_bad("--size|16|extra", "unexpected argument 'extra'");
    parse_bad("--size|abc", "--size: 'abc' is not an integer");
    parse_bad("--size|0", "--size: '0' is out of range");
    parse_bad("--size|-5", "--size: '-5'");
    parse_bad("--size|12x", "'12x' is not an integer");
    parse_bad("--size|", "'' is not an integer");
    parse_bad("--size|99999999999999999999999", "out of range");
    parse_bad("--size|2147483648", "out of range");
    parse_bad("--width|2147483648|--height|1", "--width");
    parse_bad("--width|1073741824|--height|1048577", "2^50");
    parse_bad("--size|16|--width|8|--height|8", "either --size or --width/--height");
    parse_bad("--width|8", "--width given without --height");
    parse_bad("--height|8", "--height given without --width");
    parse_bad("--steps|-1", "--steps: '-1'");
    parse_bad("--steps|abc", "--steps: 'abc' is not an integer");
    parse_bad("--steps|1.5", "--steps: '1.5' is not an integer");
    parse_bad("--save-every|0", "--save-every: '0'");
    parse_bad("--chunk|0", "--chunk: '0'");
    parse_bad("--chunk|-2", "--chunk: '-2'");
    parse_bad("--density|1.5", "--density: '1.5' is outside 0..1");
    parse_bad("--density|-0.1", "outside 0..1");
    parse_bad("--density|nan", "outside 0..1");
    parse_bad("--density|half", "--density: 'half' is not a number");
    parse_bad("--seed|-1", "--seed: '-1'");
    parse_bad("--seed|18446744073709551616", "--seed");
    parse_bad("--seed|x1", "--seed: 'x1'");
    parse_bad("--rule|B9/S23", "--rule: rule 'B9/S23'");
    parse_bad("--rule|B3/S23:T64,64", "bounded");
    parse_bad("--boundary|klein", "--boundary: 'klein' is not one of torus, dead");
    parse_bad("--backend|opencl", "--backend: 'opencl' is not one of auto, cpu, cuda");
    parse_bad("--halo|ucx", "--halo: 'ucx' is not one of auto, mpi, nccl");
    parse_bad("--frame-format|x", "--frame-format: 'x' is not one of u8, packed");
    parse_bad("--output|life.hdf5", "--output: 'life.hdf5' does not end in .h5");
    parse_bad("--output|runs/.h5", "no name before .h5");
    parse_bad("--output|", "--output: the file name is empty");
    parse_bad("--no-output|--output|a.h5", "--no-output and --output");
    parse_bad("--pattern|p.rle|--at|5", "--at: '5' is not of the form X,Y");
    parse_bad("--pattern|p.rle|--at|5,", "--at: '5,'");
    parse_bad("--pattern|p.rle|--at|,5", "--at: ',5'");
    parse_bad("--pattern|p.rle|--at|a,b", "--at: 'a,b'");
    parse_bad("--pattern|p.rle|--at|1,2,3", "--at: '1,2,3'");
    parse_bad("--pattern|p.rle|--at|-1,2", "--at: '-1,2' is out of range");
    parse_bad("--at|1,2", "--at places a pattern; it needs --pattern");
    parse_bad("--pattern|p.rle|--size|32|--at|32,0", "outside the 32 x 32 grid");
    parse_bad("--pattern|p.rle|--restart|life.h5", "--restart");
    parse_bad("--backend|cpu|--halo|nccl", "--halo nccl");
    parse_bad("--pattern|", "--pattern: the file name is empty");

    /* a bad parse followed by a good one: getopt's state is reset */
    parse_bad("-qx", "'-x'");
    c = parse_ok("--steps|3");
    EXPECT(c.steps == 3 && !c.quiet, "parse after an error");

    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    else printf("test_config: all passed\n");
    return failures ? 1 : 0;
}
