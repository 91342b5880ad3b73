/* Benchmark timing engine (see bench_timer.h). */
#include "bench/bench_timer.h"

#include "core/clock.h"

BenchTiming bench_time(void (*fn)(void* arg), void* arg, int warmup, int repeats) {
    for (int i = 0; i < warmup; i++) fn(arg);
    BenchTiming t = {.avg = 0.0, .min = 1e300, .max = 0.0, .repeats = repeats};
    for (int i = 0; i < repeats; i++) {
        double t0 = clock_now();
        fn(arg);
        double dt = clock_now() - t0;
        t.avg += dt;
        if (dt < t.min) t.min = dt;
        if (dt > t.max) t.max = dt;
    }
    if (repeats > 0) t.avg /= repeats;
    return t;
}
