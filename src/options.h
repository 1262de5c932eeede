/* The command line: one table of options, from which getopt_long's table, --help and the
 * defaults all come. Every rank parses the same argv and so reaches the same verdict; messages are
 * returned, never printed, so rank 0 alone shows them. */
#ifndef GOLMPI_OPTIONS_H
#define GOLMPI_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/config.h"

typedef struct gol_option gol_option;
typedef struct option_context option_context; /* private to options.c */

/* Puts one option's value into the config. Returns GOL_OK, GOL_EXIT_USAGE with a one-line
 * message naming the option, or GOL_EXIT_DONE (--help, --version). The defaults go through the
 * same function, so a default that the option itself would refuse fails config_parse. */
typedef gol_status (*option_apply_fn)(const gol_option *opt, const char *arg, option_context *ctx);

/* One row of the table. The first six fields are what a user sees (--help, README.md); the rest
 * say how options.c applies the value. */
struct gol_option {
    const char *name;         /* long name without the dashes: "size" for --size */
    const char *metavar;      /* the value's name in --help: "N", "FILE"; NULL: takes no value */
    const char *default_text; /* as --help and README.md show it; NULL: no default to show */
    bool default_is_prose;    /* "random", "centred": says what happens; not a value to apply */
    const char *group;        /* --help's heading ("Grid", ...); NULL: the closing -h/-V lines */
    const char *help;         /* one line; each '\n' starts a continuation line */

    char short_name;                /* 'h' for -h; 0: none */
    bool short_name_unlisted;       /* accepted, but --help does not show it */
    const char *(*help_more)(void); /* more lines, each after a '\n', built when --help runs */
    option_apply_fn apply;
    size_t field;           /* offsetof(gol_config, ...) for the shared apply functions */
    int64_t lo, hi;         /* integers: the accepted range ... */
    const char *range_text; /* ... and what the out-of-range message says is expected */
};

/* The table, read-only, in --help's order; *n gets the number of rows. */
const gol_option *options_table(size_t *n);

/* Parse argv into cfg. Returns GOL_OK, GOL_EXIT_DONE after --help/--version (text in *out_text,
 * which the caller prints on rank 0), or GOL_EXIT_USAGE with the reason in msg. */
gol_status config_parse(int argc, char **argv, gol_config *cfg, const char **out_text);

/* The man page, golmpi.1 in troff, from the same table and exit codes as --help (built and
 * installed by CMake through tools/golmpi_man.c). Static text. */
const char *options_man_page(void);

#endif
