/* golmpi's exit codes, apart from the status values that carry them (core/status.h), so that
 * core/check.c, which ends a run with one of them, needs nothing else of status.h. --help, the man
 * page and README.md list them (tests/test_man.sh reads them here). */
#ifndef GOLMPI_EXIT_CODES_H
#define GOLMPI_EXIT_CODES_H

enum {
    GOL_OK = 0,
    GOL_EXIT_DONE = -1, /* --help or --version: not an error, but stop with exit code 0 */
    GOL_EXIT_USAGE = 2, /* bad command line, bad input file, impossible sizes or rank counts */
    GOL_EXIT_NOGPU = 3, /* --backend cuda where some rank has no usable GPU */
    GOL_EXIT_STOPPED = 4, /* a signal stopped the run early; its output ends in a checkpoint */
    GOL_EXIT_OUTPUT = 5,  /* the output could not be written (a full disk; a file that does not
                           * read back as written): every rank aborts with it (io/output_guard.h) */
    GOL_EXIT_PEER = 6, /* a peer stopped answering past --timeout (its node lost, a link cut): every
                        * rank aborts with it; the output holds every finished chunk, to resume */
    GOL_EXIT_SKIP = 77, /* tests only: ctest's SKIP_RETURN_CODE */
};

#endif
