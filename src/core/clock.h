/* The monotonic wall clock every layer times itself with (rounds, exchanges, benchmarks):
 * seconds since an arbitrary fixed point, for differences only. */
#ifndef SAPO_CORE_CLOCK_H
#define SAPO_CORE_CLOCK_H

/* CLOCK_MONOTONIC in seconds. */
double clock_now(void);

#endif
