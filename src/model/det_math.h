/* Float arithmetic shared by the CPU reference (C), the CUDA kernels and their CPU emulation
 * (C++): small inline functions whose IEEE operations are the same whatever compiles them, so
 * a result computed through them has the same bits on every path. Rules that keep it so:
 * plain + - * / and sqrtf (correctly rounded everywhere), fmaf only where written (the builds
 * never contract: -ffp-contract=off, nvcc --fmad=false), no libm transcendental function
 * (glibc picks expf/logf/powf variants by CPU feature, CUDA's differ again), sums in a fixed
 * order. The deterministic mode (model.deterministic, docs/DETERMINISM.md) computes
 * every softmax, exponential and logarithm through here; exp_poly, the softmax rows, the
 * LayerNorm rows and the GELU are also the default CPU path's own code. */
#ifndef SAPO_MODEL_DET_MATH_H
#define SAPO_MODEL_DET_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define SAPO_HD __host__ __device__
#else
#define SAPO_HD
#endif

/* e^x for x in [-87, 88] (clamped there) to about 1 ulp, in plain arithmetic so that loops
 * over it vectorize (a libm call stops the vectorizer; the softmaxes and GELU spend most of
 * their time in it). 2^n * e^r with n = round(x / ln 2), r reduced in two parts (Cody-Waite),
 * e^r by its degree-7 Taylor polynomial on |r| <= ln2 / 2. */
SAPO_HD static inline float exp_poly(float x) {
    x = x < -87.0f ? -87.0f : x > 88.0f ? 88.0f : x;
#if defined(__CUDA_ARCH__)
    float n = floorf(x * 1.44269504088896341f + 0.5f);
#else
    float n = __builtin_floorf(x * 1.44269504088896341f + 0.5f);
#endif
    float r = x - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float p = 1.0f / 5040.0f;
    p = p * r + 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    int32_t bits = ((int32_t)n + 127) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

/* ln x to about 1 ulp for finite x > 0 (subnormals included); -inf at 0, NaN below, x itself
 * for +inf and NaN. x = 2^e m with m in [sqrt(1/2), sqrt(2)); ln m = 2 atanh(s), s = (m-1)/(m+1),
 * by its odd series to s^11 (|s| < 0.172); e ln 2 in two parts. */
SAPO_HD static inline float log_det(float x) {
    if (!(x > 0.0f)) return x == 0.0f ? -INFINITY : NAN;
    if (x == INFINITY) return x;
    int e = 0;
    if (x < 1.17549435e-38f) { /* subnormal: scale into the normal range first */
        x *= 8388608.0f;       /* 2^23, exact */
        e = -23;
    }
    int32_t bits;
    memcpy(&bits, &x, sizeof bits);
    e += ((bits >> 23) & 0xff) - 127;
    bits = (bits & 0x007fffff) | 0x3f800000;
    float m;
    memcpy(&m, &bits, sizeof m);
    if (m > 1.41421356f) {
        m *= 0.5f;
        e += 1;
    }
    float f = m - 1.0f;
    float s = f / (2.0f + f);
    float z = s * s;
    float p = 2.0f / 11.0f;
    p = p * z + 2.0f / 9.0f;
    p = p * z + 2.0f / 7.0f;
    p = p * z + 2.0f / 5.0f;
    p = p * z + 2.0f / 3.0f;
    p = p * z + 2.0f;
    float fe = (float)e;
    return fe * 0.693359375f + (s * p + fe * -2.12194440e-4f);
}

/* b^n for n >= 0 by binary powering in double (exact operations in a fixed order), rounded
 * once to float: the bias corrections of AdamW without powf. */
SAPO_HD static inline float pow_det(float b, long n) {
    double r = 1.0, x = b;
    for (; n > 0; n >>= 1) {
        if (n & 1) r *= x;
        x *= x;
    }
    return (float)r;
}

/* row[0..n) = softmax(row[0..n)) in place; returns the max and writes sum(exp(row - max)) to
 * *sum (log-partition = max + log(sum)). Max and sum in 8 lanes, then the lanes in a fixed
 * order: a single running max or sum is a chain the vectorizer cannot break without changing
 * the rounding, and it cost more than the exponentials. */
SAPO_HD static inline float softmax_row(float* row, int n, float* sum_out) {
    float m8[8], s8[8];
    for (int k = 0; k < 8; k++) m8[k] = row[0];
    int j = 0;
    for (; j + 8 <= n; j += 8)
        for (int k = 0; k < 8; k++) m8[k] = row[j + k] > m8[k] ? row[j + k] : m8[k];
    float mx = m8[0];
    for (int k = 1; k < 8; k++) mx = m8[k] > mx ? m8[k] : mx;
    for (; j < n; j++) mx = row[j] > mx ? row[j] : mx;
    for (j = 0; j < n; j++) row[j] = exp_poly(row[j] - mx);
    for (int k = 0; k < 8; k++) s8[k] = 0.0f;
    for (j = 0; j + 8 <= n; j += 8)
        for (int k = 0; k < 8; k++) s8[k] += row[j + k];
    float sum = ((s8[0] + s8[1]) + (s8[2] + s8[3])) + ((s8[4] + s8[5]) + (s8[6] + s8[7]));
    for (; j < n; j++) sum += row[j];
    float inv = 1.0f / sum;
    for (j = 0; j < n; j++) row[j] *= inv;
    *sum_out = sum;
    return mx;
}

/* LayerNorm of one row of C (eps 1e-5): out = (x - mean) / std * w + b; sequential sums. */
SAPO_HD static inline void layernorm_row(float* o, float* mean, float* rstd, const float* x, const float* w,
                                         const float* b, int C) {
    float m = 0.0f;
    for (int i = 0; i < C; i++) m += x[i];
    m /= C;
    float v = 0.0f;
    for (int i = 0; i < C; i++) v += (x[i] - m) * (x[i] - m);
    v /= C;
    float s = 1.0f / sqrtf(v + 1e-5f);
    for (int i = 0; i < C; i++) o[i] = (x[i] - m) * s * w[i] + b[i];
    *mean = m;
    *rstd = s;
}

/* The input gradient of one LayerNorm row, accumulated into dx: two sequential reductions,
 * then one pass. (The weight and bias gradients sum over rows: layernorm_param_grad.) */
SAPO_HD static inline void layernorm_row_dinp(float* dx, const float* d, const float* x, const float* w, float m,
                                              float s, int C) {
    float dnorm_mean = 0.0f, dnorm_norm_mean = 0.0f;
    for (int i = 0; i < C; i++) {
        float norm = (x[i] - m) * s;
        float dnorm = w[i] * d[i];
        dnorm_mean += dnorm;
        dnorm_norm_mean += dnorm * norm;
    }
    dnorm_mean /= C;
    dnorm_norm_mean /= C;
    for (int i = 0; i < C; i++) {
        float norm = (x[i] - m) * s;
        float dnorm = w[i] * d[i];
        dx[i] += (dnorm - dnorm_mean - norm * dnorm_norm_mean) * s;
    }
}

/* One row's share of the LayerNorm weight and bias gradients at channel i. */
SAPO_HD static inline void layernorm_param_grad(float* dw, float* db, float d, float x, float m, float s) {
    float norm = (x - m) * s;
    *db += d;
    *dw += norm * d;
}

#ifndef GELU_SCALE
#define GELU_SCALE 0.7978845608028654f /* sqrt(2 / pi) */
#endif

/* tanh through one exponential: glibc's tanhf (via expm1f) dominated the training step, and
 * exp_poly lets the GELU loops vectorize. Absolute error stays below 1e-7. */
SAPO_HD static inline float tanh_poly(float u) {
    u = u > 9.0f ? 9.0f : u < -9.0f ? -9.0f : u;
    return 1.0f - 2.0f / (exp_poly(2.0f * u) + 1.0f);
}

/* GELU (tanh approximation) of x; *th keeps the tanh for the backward pass. */
SAPO_HD static inline float gelu_value(float x, float* th) {
    float t = tanh_poly(GELU_SCALE * (x + 0.044715f * x * x * x));
    *th = t;
    return 0.5f * x * (1.0f + t);
}

/* d GELU / dx at x, given its tanh t. */
SAPO_HD static inline float gelu_slope(float x, float t) {
    return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * GELU_SCALE * (1.0f + 3.0f * 0.044715f * x * x);
}

/* The deterministic gradient norm sums squares in DET_SUMSQ_CHUNKS chunks (chunk k is
 * [k ceil(n / chunks), ...), sequentially in double), then the chunks in order: a split that
 * depends on n alone, one thread per chunk on a GPU. */
#define DET_SUMSQ_CHUNKS 256
SAPO_HD static inline double det_sumsq_chunk(const float* x, size_t n, int k) {
    size_t per = (n + DET_SUMSQ_CHUNKS - 1) / DET_SUMSQ_CHUNKS, lo = (size_t)k * per, hi = lo + per;
    if (hi > n) hi = n;
    double acc = 0.0;
    for (size_t i = lo; i < hi; i++) acc += (double)x[i] * x[i];
    return acc;
}

#endif
