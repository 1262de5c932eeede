/* The command line: one table of options, from which getopt_long's table, --help and the
 * defaults all come. Every rank parses the same argv and so reaches the same verdict; messages are
 * returned, never printed, so rank 0 alone shows them. */
#ifndef GOLMPI_OPTIONS_H
#define GOLMPI_OPTIONS_H

#include "core/config.h"

/* Parse argv into cfg. Returns GOL_OK, GOL_EXIT_DONE after --help/--version (text in *out_text,
 * which the caller prints on rank 0), or GOL_EXIT_USAGE with the reason in msg. */
gol_status config_parse(int argc, char **argv, gol_config *cfg, const char **out_text);

#endif
