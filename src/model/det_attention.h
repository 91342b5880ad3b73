/* Attention in the deterministic mode (model.deterministic), one query or one key of one head
 * at a time, shared by the CPU reference (training forward and backward, KV-cache decoding)
 * and the CUDA kernels (one thread per query or key and head): the same function on every
 * path, so the weights, outputs and gradients have the same bits on any CPU or GPU, and a
 * decoded token's logits equal the training forward's at that position (what `sapo verify`
 * relies on). Keys and values are addressed as base + j * stride (hs floats each, contiguous):
 * a query sees np prefix keys (its prompt's) and then n_own keys of its own segment.
 * Every dot product and every weighted sum is one fmaf chain in a fixed order: over the head's
 * channels for a score, over the keys (prefix first) for an output, over the reading queries
 * (own segment first, then each completion of a prompt in segment order) for a key's
 * gradient. Only the softmax goes through det_math.h's softmax_row (8 lanes). */
#ifndef SAPO_MODEL_DET_ATTENTION_H
#define SAPO_MODEL_DET_ATTENTION_H

#include "model/det_math.h"

/* out[j] = scale * sum_d q[d] k_j[d], j < n, each one chain over d; 8 keys at a time (eight
 * independent chains: the same bits, more in flight). */
SAPO_HD static inline void det_scores(float* out, const float* q, const float* k, long stride, int n, int hs,
                                      float scale) {
    int j = 0;
    for (; j + 8 <= n; j += 8) {
        float acc[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
        const float* kj = k + (long)j * stride;
        for (int d = 0; d < hs; d++) {
            float qd = q[d];
            for (int u = 0; u < 8; u++) acc[u] = fmaf(qd, kj[u * stride + d], acc[u]);
        }
        for (int u = 0; u < 8; u++) out[j + u] = scale * acc[u];
    }
    for (; j < n; j++) {
        const float* kj = k + (long)j * stride;
        float acc = 0.0f;
        for (int d = 0; d < hs; d++) acc = fmaf(q[d], kj[d], acc);
        out[j] = scale * acc;
    }
}

/* y[d] = sum_j w[j] v_j[d] over the prefix values then the own ones, one chain per d. */
SAPO_HD static inline void det_weighted_sum(float* y, const float* w, const float* vp, long pstride, int np,
                                            const float* v, long stride, int n_own, int hs) {
    for (int d = 0; d < hs; d++) y[d] = 0.0f;
    for (int j = 0; j < np; j++) {
        float a = w[j];
        const float* vj = vp + (long)j * pstride;
        for (int d = 0; d < hs; d++) y[d] = fmaf(a, vj[d], y[d]);
    }
    for (int j = 0; j < n_own; j++) {
        float a = w[np + j];
        const float* vj = v + (long)j * stride;
        for (int d = 0; d < hs; d++) y[d] = fmaf(a, vj[d], y[d]);
    }
}

/* One query: row[0..np + n_own) = softmax of its scores, zero up to ctx; y (hs) the output. */
SAPO_HD static inline void det_attend_query(float* row, int ctx, float* y, const float* q, const float* kp,
                                            const float* vp, long pstride, int np, const float* k, const float* v,
                                            long stride, int n_own, int hs, float scale) {
    int n = np + n_own;
    if (np > 0) det_scores(row, q, kp, pstride, np, hs, scale);
    det_scores(row + np, q, k, stride, n_own, hs, scale);
    float sum;
    softmax_row(row, n, &sum);
    for (int j = n; j < ctx; j++) row[j] = 0.0f;
    det_weighted_sum(y, row, vp, pstride, np, v, stride, n_own, hs);
}

/* One query's backward: grow[j] = scale * a_j (dy.v_j - sum_i a_i dy.v_i) (the score
 * gradient, scaled; zero after the query's keys up to ctx), and dq += sum_j grow[j] k_j. */
SAPO_HD static inline void det_attend_query_backward(float* grow, int ctx, float* dq, const float* arow,
                                                     const float* dy, const float* kp, const float* vp, long pstride,
                                                     int np, const float* k, const float* v, long stride, int n_own,
                                                     int hs, float scale) {
    int n = np + n_own;
    if (np > 0) det_scores(grow, dy, vp, pstride, np, hs, 1.0f);
    det_scores(grow + np, dy, v, stride, n_own, hs, 1.0f);
    float dot = 0.0f;
    for (int j = 0; j < n; j++) dot = fmaf(arow[j], grow[j], dot);
    for (int j = 0; j < n; j++) grow[j] = scale * (arow[j] * (grow[j] - dot));
    for (int j = n; j < ctx; j++) grow[j] = 0.0f;
    for (int j = 0; j < np; j++) {
        float g = grow[j];
        const float* kj = kp + (long)j * pstride;
        for (int d = 0; d < hs; d++) dq[d] = fmaf(g, kj[d], dq[d]);
    }
    for (int j = 0; j < n_own; j++) {
        float g = grow[np + j];
        const float* kj = k + (long)j * stride;
        for (int d = 0; d < hs; d++) dq[d] = fmaf(g, kj[d], dq[d]);
    }
}

/* One key's gradients from one reading segment: the queries t0 <= t < t1 of its weights a and
 * score gradients g (rows of ctx, the key at column col), their queries q (+ t qstride) and
 * output gradients dy (+ t dystride): dk += sum_t g[t][col] q_t, dv += sum_t a[t][col] dy_t. */
SAPO_HD static inline void det_attend_key_backward(float* dk, float* dv, const float* g, const float* a, int ctx,
                                                   int col, int t0, int t1, const float* q, long qstride,
                                                   const float* dy, long dystride, int hs) {
    for (int t = t0; t < t1; t++) {
        float gt = g[(long)t * ctx + col], at = a[(long)t * ctx + col];
        const float* qt = q + (long)t * qstride;
        const float* dyt = dy + (long)t * dystride;
        for (int d = 0; d < hs; d++) {
            dk[d] = fmaf(gt, qt[d], dk[d]);
            dv[d] = fmaf(at, dyt[d], dv[d]);
        }
    }
}

#endif
