/* CPU reference layers (see cpu_layers.h): plain loops for the element-wise work, OpenBLAS
 * sgemm for every matrix product, including attention's per-head products. */
#include "model/cpu_layers.h"

#include <cblas.h>
#include <math.h>
#include <string.h>
#include <time.h>

SgemmProfile cpu_sgemm_profile = {0, 0.0, 0.0};

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* Every matrix product of the model goes through here, so the benchmark can measure the
 * share of time and the rate achieved in sgemm. */
static void sgemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N, int K, float alpha, const float* A, int lda,
                  const float* B, int ldb, float beta, float* C, int ldc) {
    double t0 = cpu_sgemm_profile.enabled ? now_seconds() : 0.0;
    cblas_sgemm(CblasRowMajor, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    if (cpu_sgemm_profile.enabled) {
        cpu_sgemm_profile.seconds += now_seconds() - t0;
        cpu_sgemm_profile.flops += 2.0 * M * N * K;
    }
}

void encoder_forward(float* out, const int* inp, const int* pos, const float* wte, const float* wpe, int N, int C) {
    for (int n = 0; n < N; n++) {
        float* o = out + (size_t)n * C;
        const float* we = wte + (size_t)inp[n] * C;
        const float* pe = wpe + (size_t)pos[n] * C;
        for (int i = 0; i < C; i++) o[i] = we[i] + pe[i];
    }
}

void encoder_backward(float* dwte, float* dwpe, const float* dout, const int* inp, const int* pos, int N, int C) {
    for (int n = 0; n < N; n++) {
        const float* d = dout + (size_t)n * C;
        float* dwe = dwte + (size_t)inp[n] * C;
        float* dpe = dwpe + (size_t)pos[n] * C;
        for (int i = 0; i < C; i++) {
            dwe[i] += d[i];
            dpe[i] += d[i];
        }
    }
}

void packed_positions(int* pos, const Segment* segs, int n_segs) {
    for (int s = 0; s < n_segs; s++) {
        int first = segs[s].prefix >= 0 ? segs[segs[s].prefix].len : 0;
        for (int i = 0; i < segs[s].len; i++) pos[segs[s].start + i] = first + i;
    }
}

void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* w, const float* b, int N, int C) {
    for (int n = 0; n < N; n++) {
        const float* x = inp + (size_t)n * C;
        float m = 0.0f;
        for (int i = 0; i < C; i++) m += x[i];
        m /= C;
        float v = 0.0f;
        for (int i = 0; i < C; i++) v += (x[i] - m) * (x[i] - m);
        v /= C;
        float s = 1.0f / sqrtf(v + 1e-5f);
        float* o = out + (size_t)n * C;
        for (int i = 0; i < C; i++) o[i] = (x[i] - m) * s * w[i] + b[i];
        mean[n] = m;
        rstd[n] = s;
    }
}

void layernorm_backward(float* dinp, float* dw, float* db, const float* dout, const float* inp, const float* w,
                        const float* mean, const float* rstd, int N, int C) {
    for (int n = 0; n < N; n++) {
        const float* d = dout + (size_t)n * C;
        const float* x = inp + (size_t)n * C;
        float* dx = dinp + (size_t)n * C;
        float m = mean[n], s = rstd[n];
        /* two reductions, then the input gradient in one pass */
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
            db[i] += d[i];
            dw[i] += norm * d[i];
            dx[i] += (dnorm - dnorm_mean - norm * dnorm_norm_mean) * s;
        }
    }
}

void matmul_forward(float* out, const float* inp, const float* w, const float* bias, int N, int IC, int OC) {
    if (bias) {
        for (int n = 0; n < N; n++) memcpy(out + (size_t)n * OC, bias, (size_t)OC * sizeof(float));
    }
    sgemm(CblasNoTrans, CblasTrans, N, OC, IC, 1.0f, inp, IC, w, IC, bias ? 1.0f : 0.0f, out, OC);
}

void matmul_backward(float* dinp, float* dw, float* dbias, const float* dout, const float* inp, const float* w,
                     int N, int IC, int OC) {
    /* dinp (N, IC) += dout (N, OC) @ w (OC, IC) */
    sgemm(CblasNoTrans, CblasNoTrans, N, IC, OC, 1.0f, dout, OC, w, IC, 1.0f, dinp, IC);
    /* dw (OC, IC) += dout^T (OC, N) @ inp (N, IC) */
    sgemm(CblasTrans, CblasNoTrans, OC, IC, N, 1.0f, dout, OC, inp, IC, 1.0f, dw, IC);
    if (dbias) {
        for (int n = 0; n < N; n++) {
            const float* d = dout + (size_t)n * OC;
            for (int o = 0; o < OC; o++) dbias[o] += d[o];
        }
    }
}

/* Row t of a (n, ctx) score block attends to columns 0..plen + t: softmax over those, zero
 * after. */
static void causal_softmax_rows(float* a, int n, int ctx, int plen) {
    for (int t = 0; t < n; t++) {
        float* row = a + (size_t)t * ctx;
        int last = plen + t;
        softmax_inplace(row, last + 1);
        for (int j = last + 1; j < ctx; j++) row[j] = 0.0f;
    }
}

void attention_forward(float* out, float* att, const float* qkv, const Segment* segs, int n_segs, int C, int NH) {
    int hs = C / NH, C3 = 3 * C;
    float scale = 1.0f / sqrtf((float)hs);
    float* a = att;
    for (int s = 0; s < n_segs; s++) {
        const Segment* g = &segs[s];
        const Segment* p = g->prefix >= 0 ? &segs[g->prefix] : NULL;
        int n = g->len, plen = p ? p->len : 0, ctx = plen + n;
        for (int h = 0; h < NH; h++, a += (size_t)n * ctx) {
            const float* q = qkv + (size_t)g->start * C3 + h * hs;
            const float* k = q + C;
            const float* v = q + 2 * C;
            float* y = out + (size_t)g->start * C + h * hs;
            /* scores (n, ctx) = scale * q [k_prefix; k]^T */
            if (plen) {
                const float* kp = qkv + (size_t)p->start * C3 + C + h * hs;
                sgemm(CblasNoTrans, CblasTrans, n, plen, hs, scale, q, C3, kp, C3, 0.0f, a, ctx);
            }
            sgemm(CblasNoTrans, CblasTrans, n, n, hs, scale, q, C3, k, C3, 0.0f, a + plen, ctx);
            causal_softmax_rows(a, n, ctx, plen);
            /* y (n, hs) = att [v_prefix; v] */
            if (plen) {
                const float* vp = qkv + (size_t)p->start * C3 + 2 * C + h * hs;
                sgemm(CblasNoTrans, CblasNoTrans, n, hs, plen, 1.0f, a, ctx, vp, C3, 0.0f, y, C);
            }
            sgemm(CblasNoTrans, CblasNoTrans, n, hs, n, 1.0f, a + plen, ctx, v, C3, plen ? 1.0f : 0.0f, y, C);
        }
    }
}

void attention_backward(float* dqkv, float* datt, const float* dout, const float* qkv, const float* att,
                        const Segment* segs, int n_segs, int C, int NH) {
    int hs = C / NH, C3 = 3 * C;
    float scale = 1.0f / sqrtf((float)hs);
    const float* a = att;
    for (int s = 0; s < n_segs; s++) {
        const Segment* g = &segs[s];
        const Segment* p = g->prefix >= 0 ? &segs[g->prefix] : NULL;
        int n = g->len, plen = p ? p->len : 0, ctx = plen + n;
        for (int h = 0; h < NH; h++, a += (size_t)n * ctx) {
            const float* q = qkv + (size_t)g->start * C3 + h * hs;
            const float* k = q + C;
            const float* v = q + 2 * C;
            float* dq = dqkv + (size_t)g->start * C3 + h * hs;
            float* dk = dq + C;
            float* dv = dq + 2 * C;
            const float* dy = dout + (size_t)g->start * C + h * hs;
            const float* kp = p ? qkv + (size_t)p->start * C3 + C + h * hs : NULL;
            const float* vp = p ? kp + C : NULL;
            float* dkp = p ? dqkv + (size_t)p->start * C3 + C + h * hs : NULL;
            float* dvp = p ? dkp + C : NULL;
            /* datt (n, ctx) = dy [v_prefix; v]^T;  d[v_prefix; v] += att^T dy */
            if (plen) {
                sgemm(CblasNoTrans, CblasTrans, n, plen, hs, 1.0f, dy, C, vp, C3, 0.0f, datt, ctx);
                sgemm(CblasTrans, CblasNoTrans, plen, hs, n, 1.0f, a, ctx, dy, C, 1.0f, dvp, C3);
            }
            sgemm(CblasNoTrans, CblasTrans, n, n, hs, 1.0f, dy, C, v, C3, 0.0f, datt + plen, ctx);
            sgemm(CblasTrans, CblasNoTrans, n, hs, n, 1.0f, a + plen, ctx, dy, C, 1.0f, dv, C3);
            /* softmax backward, in place: dscore = att * (datt - sum(att * datt)) */
            for (int t = 0; t < n; t++) {
                const float* arow = a + (size_t)t * ctx;
                float* drow = datt + (size_t)t * ctx;
                int last = plen + t;
                float dot = 0.0f;
                for (int j = 0; j <= last; j++) dot += arow[j] * drow[j];
                for (int j = 0; j <= last; j++) drow[j] = arow[j] * (drow[j] - dot);
                for (int j = last + 1; j < ctx; j++) drow[j] = 0.0f;
            }
            /* dq += scale dscore [k_prefix; k];  d[k_prefix; k] += scale dscore^T q */
            if (plen) {
                sgemm(CblasNoTrans, CblasNoTrans, n, hs, plen, scale, datt, ctx, kp, C3, 1.0f, dq, C3);
                sgemm(CblasTrans, CblasNoTrans, plen, hs, n, scale, datt, ctx, q, C3, 1.0f, dkp, C3);
            }
            sgemm(CblasNoTrans, CblasNoTrans, n, hs, n, scale, datt + plen, ctx, k, C3, 1.0f, dq, C3);
            sgemm(CblasTrans, CblasNoTrans, n, hs, n, scale, datt + plen, ctx, q, C3, 1.0f, dk, C3);
        }
    }
}

#define GELU_SCALE 0.7978845608028654f /* sqrt(2 / pi) */

/* tanh through one exponential: glibc's tanhf (via expm1f) dominated the training step, and
 * exp_poly lets the GELU loops vectorize. Absolute error stays below 1e-7, far inside the
 * PyTorch tolerance. */
static inline float tanh_fast(float u) {
    u = u > 9.0f ? 9.0f : u < -9.0f ? -9.0f : u;
    return 1.0f - 2.0f / (exp_poly(2.0f * u) + 1.0f);
}

void gelu_forward(float* out, float* th, const float* inp, int N) {
    for (int i = 0; i < N; i++) {
        float x = inp[i];
        float t = tanh_fast(GELU_SCALE * (x + 0.044715f * x * x * x));
        th[i] = t;
        out[i] = 0.5f * x * (1.0f + t);
    }
}

void gelu_backward(float* dinp, const float* inp, const float* th, const float* dout, int N) {
    for (int i = 0; i < N; i++) {
        float x = inp[i], t = th[i];
        float local = 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * GELU_SCALE * (1.0f + 3.0f * 0.044715f * x * x);
        dinp[i] += local * dout[i];
    }
}

void residual_forward(float* out, const float* a, const float* b, int N) {
    for (int i = 0; i < N; i++) out[i] = a[i] + b[i];
}

/* Max and sum in 8 lanes (then the lanes in a fixed order): a single running max or sum is
 * a chain the vectorizer cannot break without changing the rounding, and it cost more than
 * the exponentials. */
float softmax_inplace(float* row, int n) {
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
    return mx + logf(sum);
}

void logprob_forward(float* logprobs, float* probs, const float* logits, const int* targets, int N, int V, int pad,
                     float scale) {
    for (int n = 0; n < N; n++) {
        const float* z = logits + (size_t)n * V;
        float* p = probs + (size_t)n * V;
        if (scale == 1.0f) memcpy(p, z, (size_t)V * sizeof(float));
        else for (int v = 0; v < V; v++) p[v] = z[v] * scale;
        float lse = softmax_inplace(p, V);
        logprobs[n] = targets[n] == pad ? 0.0f : z[targets[n]] * scale - lse;
    }
}

void logprob_backward(float* dlogits, const float* dlogprobs, const float* probs, const int* targets, int N, int V,
                      int pad, float scale) {
    for (int n = 0; n < N; n++) {
        float* d = dlogits + (size_t)n * V;
        float g = targets[n] == pad ? 0.0f : dlogprobs[n] * scale;
        if (g == 0.0f) {
            memset(d, 0, (size_t)V * sizeof(float));
            continue;
        }
        const float* p = probs + (size_t)n * V;
        for (int v = 0; v < V; v++) d[v] = -g * p[v];
        d[targets[n]] += g;
    }
}
