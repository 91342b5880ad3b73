/* The monotonic wall clock (see clock.h). */
#include "core/clock.h"

#include <time.h>

double clock_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}
