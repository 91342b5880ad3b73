/* The timing engine every benchmark shares: warm-up iterations untimed, then repeats timed
 * one by one, reported as avg/min/max seconds (the clock itself is core/clock.h). */
#ifndef SAPO_BENCH_BENCH_TIMER_H
#define SAPO_BENCH_BENCH_TIMER_H

typedef struct {
    double avg, min, max; /* seconds per repeat */
    int repeats;
} BenchTiming;

/* Calls fn(arg) warmup times untimed, then repeats times timed. */
BenchTiming bench_time(void (*fn)(void* arg), void* arg, int warmup, int repeats);

#endif
