/* User errors are values: a function that can fail on bad input returns a gol_status, and the
 * caller passes it up to main, which agrees on it across ranks and prints it once. */
#ifndef GOLMPI_STATUS_H
#define GOLMPI_STATUS_H

#include <mpi.h>
#include <stdarg.h>

#include "core/exit_codes.h"

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
