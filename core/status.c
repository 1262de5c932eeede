#include "core/status.h"

#include <stdio.h>

#include "core/check.h"
#include "core/quote.h"

/* Messages quote input (a pattern's bytes, an argument, a path): escaped here, once for all of
 * them, so no caller can forget. */
gol_status gol_fail(int code, const char *fmt, ...) {
    gol_status s;
    char raw[sizeof s.msg];
    s.code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    gol_escape(s.msg, sizeof s.msg, raw);
    return s;
}

gol_status status_agree(gol_status s, MPI_Comm comm) {
    int rank, nranks;
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    MPI_CHECK(MPI_Comm_size(comm, &nranks));
    int mine = s.code != GOL_OK ? rank : nranks, first;
    MPI_CHECK(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm));
    if (first < nranks) MPI_CHECK(MPI_Bcast(&s, (int)sizeof s, MPI_BYTE, first, comm));
    return s;
}
