/* The few-row product of decode steps (model/small_gemm.h) against a double-precision sum,
 * for row counts 1..SMALL_GEMM_MAX_ROWS and widths that are and are not multiples of its
 * vector width, with and without a bias; and each row's result bit for bit the same whatever
 * rows share the call (a completion's tokens must not depend on how many are decoded beside it). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "model/small_gemm.h"
#include "../test_assert.h"

int main(void) {
    RngStream rng = rng_stream(5, 0, 0, RNG_TEST);
    const int widths[] = {1, 7, 16, 17, 64, 577};
    double worst = 0;
    for (int wi = 0; wi < 6; wi++)
        for (int M = 1; M <= SMALL_GEMM_MAX_ROWS; M += 7) {
            int IC = widths[wi], OC = 23;
            float *x = malloc(sizeof(float) * M * IC), *w = malloc(sizeof(float) * OC * IC), b[23], *y = malloc(sizeof(float) * M * OC);
            float alone[23];
            for (int i = 0; i < M * IC; i++) x[i] = rng_normal(&rng);
            for (int i = 0; i < OC * IC; i++) w[i] = rng_normal(&rng);
            for (int o = 0; o < OC; o++) b[o] = rng_normal(&rng);
            for (int with_bias = 0; with_bias < 2; with_bias++) {
                small_gemm(y, x, w, with_bias ? b : NULL, M, IC, OC);
                for (int m = 0; m < M; m++)
                    for (int o = 0; o < OC; o++) {
                        double want = with_bias ? b[o] : 0.0, mag = fabs(want);
                        for (int k = 0; k < IC; k++) {
                            want += (double)x[m * IC + k] * w[o * IC + k];
                            mag += fabs((double)x[m * IC + k] * w[o * IC + k]);
                        }
                        double err = fabs(y[m * OC + o] - want) / (mag + 1e-30);
                        if (err > worst) worst = err;
                        EXPECT(err < 1e-6, "M %d IC %d bias %d: out[%d][%d] = %.9g, want %.9g", M, IC, with_bias, m, o,
                               y[m * OC + o], want);
                    }
                for (int m = 0; m < M; m++) {
                    small_gemm(alone, x + (size_t)m * IC, w, with_bias ? b : NULL, 1, IC, OC);
                    EXPECT(memcmp(alone, y + (size_t)m * OC, sizeof alone) == 0,
                           "M %d IC %d bias %d: row %d differs from the same row alone", M, IC, with_bias, m);
                }
            }
            free(x);
            free(w);
            free(y);
        }
    printf("small_gemm: worst relative error %.3g (of the sum of magnitudes)\n", worst);
    return test_finish("small gemm");
}
