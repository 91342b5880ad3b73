/* Few-row matrix products (see small_gemm.h): for each output column, its weight row against
 * up to four input rows at once, eight lanes at a time (GCC vector extensions: SSE or AVX as
 * -march allows), so each weight vector loaded serves four products. Multiply-adds may be
 * fused here (the build otherwise forbids contraction): this path serves only the default
 * numerics, never the deterministic mode. */
#include "model/small_gemm.h"

#include <string.h>

typedef float v8sf __attribute__((vector_size(32)));

#define SMALL_GEMM_FAST __attribute__((optimize("fp-contract=fast")))

static inline v8sf load8(const float* p) {
    v8sf v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline float hsum(v8sf v) {
    float s = 0.0f;
    for (int i = 0; i < 8; i++) s += v[i];
    return s;
}

/* out[r * OC] = dot(x + r * IC, w) for r < R (R = 1..4), sums in lanes then in order. */
SMALL_GEMM_FAST static inline void dots(float* out, int OC, const float* x, int IC, const float* w, int R, float b) {
    v8sf a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
    const float *x0 = x, *x1 = x + IC, *x2 = x + 2 * (size_t)IC, *x3 = x + 3 * (size_t)IC;
    int k = 0;
    for (; k + 8 <= IC; k += 8) {
        v8sf wv = load8(w + k);
        a0 += load8(x0 + k) * wv;
        if (R > 1) a1 += load8(x1 + k) * wv;
        if (R > 2) a2 += load8(x2 + k) * wv;
        if (R > 3) a3 += load8(x3 + k) * wv;
    }
    float s[4] = {hsum(a0), hsum(a1), hsum(a2), hsum(a3)};
    for (; k < IC; k++) {
        s[0] += x0[k] * w[k];
        if (R > 1) s[1] += x1[k] * w[k];
        if (R > 2) s[2] += x2[k] * w[k];
        if (R > 3) s[3] += x3[k] * w[k];
    }
    for (int r = 0; r < R; r++) out[(size_t)r * OC] = b + s[r];
}

SMALL_GEMM_FAST void small_gemm(float* out, const float* inp, const float* w, const float* bias, int M, int IC,
                                int OC) {
    for (int m0 = 0; m0 < M; m0 += 4) {
        int R = M - m0 < 4 ? M - m0 : 4;
        const float* x = inp + (size_t)m0 * IC;
        for (int o = 0; o < OC; o++)
            dots(out + (size_t)m0 * OC + o, OC, x, IC, w + (size_t)o * IC, R, bias ? bias[o] : 0.0f);
    }
}
