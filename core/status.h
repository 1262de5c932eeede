/* User errors are values: a function that can fail on bad input returns a gol_status, and the
 * caller passes it up to main, which agrees on it across ranks and prints it once. */
#ifndef GOLMPI_STATUS_H
#define GOLMPI_STATUS_H

#include <mpi.h>
#include <stdarg.h>

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

typedef struct gol_status {
    int code; /* GOL_OK, GOL_EXIT_DONE or an exit code */
    char msg[1024];
} gol_status;

static inline gol_status gol_ok(void) {
    gol_status s;
    s.code = GOL_OK;
    s.msg[0] = '\0';
    return s;
}

/* printf-style: gol_fail(GOL_EXIT_USAGE, "--size: '%s' is not a positive integer", arg) */
gol_status gol_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Collective: every rank learns the first failure (the lowest failing rank's status), so all
 * exit alike. */
gol_status status_agree(gol_status s, MPI_Comm comm);

/* Relays a failure up in one line: evaluates expr (a gol_status) once and returns it from the
 * calling function unless it is GOL_OK. GOL_TRY(pattern_load(path, &p)); */
#define GOL_TRY(expr)                                                                      \
    do {                                                                                   \
        gol_status gol_try_st_ = (expr);                                                   \
        if (gol_try_st_.code != GOL_OK) return gol_try_st_;                                \
    } while (0)

#endif
