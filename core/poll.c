#include "core/poll.h"

#include <mpi.h>
#include <sched.h>
#include <time.h>

/* Asks back to back, yielding the core, for spin_s, then naps nap_s between asks. */
static int poll_loop(gol_poll_done done, void *arg, double limit_s, double spin_s, double nap_s) {
    const double since = MPI_Wtime();
    const struct timespec nap = {(time_t)nap_s, (long)((nap_s - (double)(time_t)nap_s) * 1e9)};
    for (;;) {
        if (done(arg, since)) return 1;
        double waited = MPI_Wtime() - since;
        if (limit_s > 0 && waited > limit_s) return 0;
        if (waited < spin_s) {
            sched_yield(); /* a peer on this core, when oversubscribed, gets to run */
        } else {
            struct timespec ts = nap;
            nanosleep(&ts, NULL);
        }
    }
}

int gol_poll_until(gol_poll_done done, void *arg, double limit_s) {
    return poll_loop(done, arg, limit_s, GOL_POLL_SPIN_S, GOL_POLL_NAP_NS * 1e-9);
}

int gol_poll_every(gol_poll_done done, void *arg, double limit_s, double nap_s) {
    return poll_loop(done, arg, limit_s, 0.0, nap_s);
}
