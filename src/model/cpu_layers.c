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

void encoder_forward(float* out, const int* inp, const float* wte, const float* wpe, int B, int T, int C) {
    for (int b = 0; b < B; b++) {
        for (int t = 0; t < T; t++) {
            float* o = out + ((size_t)b * T + t) * C;
            const float* we = wte + (size_t)inp[b * T + t] * C;
            const float* pe = wpe + (size_t)t * C;
            for (int i = 0; i < C; i++) o[i] = we[i] + pe[i];
        }
    }
}

void encoder_backward(float* dwte, float* dwpe, const float* dout, const int* inp, int B, int T, int C) {
    for (int b = 0; b < B; b++) {
        for (int t = 0; t < T; t++) {
            const float* d = dout + ((size_t)b * T + t) * C;
            float* dwe = dwte + (size_t)inp[b * T + t] * C;
            float* dpe = dwpe + (size_t)t * C;
            for (int i = 0; i < C; i++) {
                dwe[i] += d[i];
                dpe[i] += d[i];
            }
        }
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

void attention_forward(float* out, float* att, const float* qkv, int B, int T, int C, int NH) {
    int hs = C / NH;
    float scale = 1.0f / sqrtf((float)hs);
    int C3 = 3 * C;
    for (int b = 0; b < B; b++) {
        for (int h = 0; h < NH; h++) {
            const float* q = qkv + (size_t)b * T * C3 + h * hs;
            const float* k = q + C;
            const float* v = q + 2 * C;
            float* a = att + ((size_t)b * NH + h) * T * T;
            /* scores (T, T) = scale * q k^T; only the lower triangle is used */
            sgemm(CblasNoTrans, CblasTrans, T, T, hs, scale, q, C3, k, C3, 0.0f, a, T);
            for (int t = 0; t < T; t++) {
                float* row = a + (size_t)t * T;
                float mx = row[0];
                for (int j = 1; j <= t; j++) mx = row[j] > mx ? row[j] : mx;
                float sum = 0.0f;
                for (int j = 0; j <= t; j++) {
                    row[j] = expf(row[j] - mx);
                    sum += row[j];
                }
                float inv = 1.0f / sum;
                for (int j = 0; j <= t; j++) row[j] *= inv;
                for (int j = t + 1; j < T; j++) row[j] = 0.0f;
            }
            /* y (T, hs) = att (T, T) @ v (T, hs) */
            sgemm(CblasNoTrans, CblasNoTrans, T, hs, T, 1.0f, a, T, v, C3, 0.0f,
                        out + (size_t)b * T * C + h * hs, C);
        }
    }
}

void attention_backward(float* dqkv, float* datt, const float* dout, const float* qkv, const float* att,
                        int B, int T, int C, int NH) {
    int hs = C / NH;
    float scale = 1.0f / sqrtf((float)hs);
    int C3 = 3 * C;
    for (int b = 0; b < B; b++) {
        for (int h = 0; h < NH; h++) {
            const float* q = qkv + (size_t)b * T * C3 + h * hs;
            const float* k = q + C;
            const float* v = q + 2 * C;
            float* dq = dqkv + (size_t)b * T * C3 + h * hs;
            float* dk = dq + C;
            float* dv = dq + 2 * C;
            const float* a = att + ((size_t)b * NH + h) * T * T;
            const float* dy = dout + (size_t)b * T * C + h * hs;
            /* datt (T, T) = dy (T, hs) @ v^T;  dv += att^T @ dy */
            sgemm(CblasNoTrans, CblasTrans, T, T, hs, 1.0f, dy, C, v, C3, 0.0f, datt, T);
            sgemm(CblasTrans, CblasNoTrans, T, hs, T, 1.0f, a, T, dy, C, 1.0f, dv, C3);
            /* softmax backward, in place: dscore = att * (datt - sum(att * datt)) */
            for (int t = 0; t < T; t++) {
                const float* arow = a + (size_t)t * T;
                float* drow = datt + (size_t)t * T;
                float dot = 0.0f;
                for (int j = 0; j <= t; j++) dot += arow[j] * drow[j];
                for (int j = 0; j <= t; j++) drow[j] = arow[j] * (drow[j] - dot);
                for (int j = t + 1; j < T; j++) drow[j] = 0.0f;
            }
            /* dq += scale * dscore @ k;  dk += scale * dscore^T @ q */
            sgemm(CblasNoTrans, CblasNoTrans, T, hs, T, scale, datt, T, k, C3, 1.0f, dq, C3);
            sgemm(CblasTrans, CblasNoTrans, T, hs, T, scale, datt, T, q, C3, 1.0f, dk, C3);
        }
    }
}

#define GELU_SCALE 0.7978845608028654f /* sqrt(2 / pi) */

/* tanh through one expf: glibc's tanhf (via expm1f) dominated the training step. Absolute
 * error stays below 1e-7, far inside the PyTorch tolerance. */
static inline float tanh_fast(float u) {
    if (u > 9.0f) return 1.0f;
    if (u < -9.0f) return -1.0f;
    return 1.0f - 2.0f / (expf(2.0f * u) + 1.0f);
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

void logprob_forward(float* logprobs, float* probs, const float* logits, const int* targets, int N, int V, int pad) {
    for (int n = 0; n < N; n++) {
        const float* z = logits + (size_t)n * V;
        float* p = probs + (size_t)n * V;
        float mx = z[0];
        for (int v = 1; v < V; v++) mx = z[v] > mx ? z[v] : mx;
        float sum = 0.0f;
        for (int v = 0; v < V; v++) {
            p[v] = expf(z[v] - mx);
            sum += p[v];
        }
        float inv = 1.0f / sum;
        for (int v = 0; v < V; v++) p[v] *= inv;
        logprobs[n] = targets[n] == pad ? 0.0f : z[targets[n]] - mx - logf(sum);
    }
}

void logprob_backward(float* dlogits, const float* dlogprobs, const float* probs, const int* targets, int N, int V,
                      int pad) {
    for (int n = 0; n < N; n++) {
        float* d = dlogits + (size_t)n * V;
        float g = targets[n] == pad ? 0.0f : dlogprobs[n];
        if (g == 0.0f) {
            memset(d, 0, (size_t)V * sizeof(float));
            continue;
        }
        const float* p = probs + (size_t)n * V;
        for (int v = 0; v < V; v++) d[v] = -g * p[v];
        d[targets[n]] += g;
    }
}
