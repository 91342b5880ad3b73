/* This machine's sgemm rate on large square matrices, the yardstick the benchmarks set the
 * model's own products against ("share of the sgemm peak"). */
#ifndef SAPO_BENCH_BENCH_SGEMM_PEAK_H
#define SAPO_BENCH_BENCH_SGEMM_PEAK_H

#include <stdio.h>

/* The best GFLOP/s of sgemm at 256, 512 and 1024 square, on the calling thread's BLAS
 * threads; `repeats` scales the products timed; each size's line ("# sgemm ...") goes to
 * `log` unless it is NULL. */
double bench_sgemm_peak_gflops(int repeats, FILE* log);

#endif
