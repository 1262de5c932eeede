#include "core/poll.h"

#include <mpi.h>
#include <sched.h>
#include <time.h>

int gol_poll_until(gol_poll_done done, void *arg, double limit_s) {
    const double since = MPI_Wtime();
    for (;;) {
        if (done(arg, since)) return 1;
        double waited = MPI_Wtime() - since;
        if (limit_s > 0 && waited > limit_s) return 0;
        if (waited < GOL_POLL_SPIN_S) {
            sched_yield(); /* a peer on this core, when oversubscribed, gets to run */
        } else {
            struct timespec ts = {0, GOL_POLL_NAP_NS};
            nanosleep(&ts, NULL);
        }
    }
}
