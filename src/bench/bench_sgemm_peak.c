/* The sgemm peak of bench_sgemm_peak.h: square products of three sizes, the best rate. */
#include "bench/bench_sgemm_peak.h"

#include <cblas.h>
#include <stdlib.h>

#include "core/check.h"
#include "core/clock.h"

double bench_sgemm_peak_gflops(int repeats, FILE* log) {
    double best = 0.0;
    int sizes[3] = {256, 512, 1024};
    for (int k = 0; k < 3; k++) {
        int n = sizes[k];
        float* a = mallocCheck(sizeof(float) * n * n);
        float* b = mallocCheck(sizeof(float) * n * n);
        float* c = mallocCheck(sizeof(float) * n * n);
        for (int i = 0; i < n * n; i++) a[i] = b[i] = 1e-3f * (float)(i % 97);
        int reps = n <= 256 ? 20 * repeats : n <= 512 ? 4 * repeats : repeats;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        double t0 = clock_now();
        for (int r = 0; r < reps; r++)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        double gf = 2.0 * n * n * (double)n * reps / (clock_now() - t0) / 1e9;
        if (log) fprintf(log, "# sgemm %4d x %4d x %4d: %7.1f GFLOP/s\n", n, n, n, gf);
        if (gf > best) best = gf;
        free(a);
        free(b);
        free(c);
    }
    return best;
}
