/* polite_wait (see polite_wait.h): MPI_Test in a loop, spinning briefly, then napping. */
#include "swarm/net/polite_wait.h"

#include <time.h>

#include "core/check.h"
#include "core/clock.h"

void polite_wait(MPI_Request* req) {
    int done = 0;
    double t0 = clock_now();
    struct timespec nap = {0, POLITE_NAP_US * 1000L};
    for (;;) {
        mpiCheck(MPI_Test(req, &done, MPI_STATUS_IGNORE));
        if (done) return;
        if (clock_now() - t0 > POLITE_SPIN_S) nanosleep(&nap, NULL);
    }
}
