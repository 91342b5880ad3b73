/* The Llama/Qwen2 family's element-wise and row arithmetic, one inline function per piece,
 * shared by the CPU layers (llama_layers.c) and, like det_math.h, written so the CUDA kernels
 * can call the same functions: RMSNorm and its backward, one RoPE rotation pair and its
 * transpose, SiLU-gated products and their derivatives. Sums run in index order, so a row's
 * result does not depend on the backend; the deterministic mode's exponential is exp_poly. */
#ifndef SAPO_MODEL_LLAMA_MATH_H
#define SAPO_MODEL_LLAMA_MATH_H

#include <math.h>

#include "model/det_math.h" /* SAPO_HD, exp_poly */

/* o = w * x / sqrt(mean(x^2) + eps), as Hugging Face's RMSNorm in fp32; *rstd keeps the
 * reciprocal for the backward pass. */
SAPO_HD static inline void rmsnorm_row(float* o, float* rstd, const float* x, const float* w, int C, float eps) {
    float ss = 0.0f;
    for (int i = 0; i < C; i++) ss += x[i] * x[i];
    float r = 1.0f / sqrtf(ss / (float)C + eps);
    *rstd = r;
    for (int i = 0; i < C; i++) o[i] = w[i] * (x[i] * r);
}

/* dx += r (w d) - x r^3 mean((w d) x); dw += d x r. */
SAPO_HD static inline void rmsnorm_row_backward(float* dx, float* dw, const float* d, const float* x, const float* w,
                                                float r, int C) {
    float dot = 0.0f;
    for (int i = 0; i < C; i++) dot += w[i] * d[i] * x[i];
    float k = dot * r * r * r / (float)C;
    for (int i = 0; i < C; i++) {
        dx[i] += r * (w[i] * d[i]) - x[i] * k;
        dw[i] += d[i] * (x[i] * r);
    }
}

/* Hugging Face's rotate-half RoPE of one pair (x[i], x[i + hd/2]) by the angle whose cosine
 * and sine are c, s: (a c - b s, b c + a s). */
SAPO_HD static inline void rope_pair(float* a, float* b, float c, float s) {
    float x1 = *a, x2 = *b;
    *a = x1 * c - x2 * s;
    *b = x2 * c + x1 * s;
}

/* The transpose (the rotation back): the gradient of rope_pair's inputs from its outputs'. */
SAPO_HD static inline void rope_pair_backward(float* da, float* db, float c, float s) {
    float d1 = *da, d2 = *db;
    *da = d1 * c + d2 * s;
    *db = d2 * c - d1 * s;
}

/* sigmoid(x) = 1 / (1 + exp(-x)): expf, or exp_poly in the deterministic mode. */
SAPO_HD static inline float sigmoid_value(float x, int det) {
    return 1.0f / (1.0f + (det ? exp_poly(-x) : expf(-x)));
}

/* SwiGLU of one pair: silu(g) * u. */
SAPO_HD static inline float swiglu_value(float g, float u, int det) { return g * sigmoid_value(g, det) * u; }

/* Its gradients from dh: dg = dh u sig (1 + g (1 - sig)), du = dh silu(g). */
SAPO_HD static inline void swiglu_grad(float* dg, float* du, float dh, float g, float u, int det) {
    float sg = sigmoid_value(g, det);
    *dg = dh * u * (sg * (1.0f + g * (1.0f - sg)));
    *du = dh * (g * sg);
}

#endif
