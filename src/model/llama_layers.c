/* CPU layers of the Llama/Qwen2 family (llama_layers.h): loops over rows calling the row
 * arithmetic of llama_math.h. */
#include "model/llama_layers.h"

#include <string.h>

#include "model/llama_math.h"

void embedding_forward(float* out, const int* inp, const float* embed, int N, int C) {
    for (int n = 0; n < N; n++) memcpy(out + (size_t)n * C, embed + (size_t)inp[n] * C, (size_t)C * sizeof(float));
}

void embedding_backward(float* dembed, const float* dout, const int* inp, int N, int C) {
    for (int n = 0; n < N; n++) {
        const float* d = dout + (size_t)n * C;
        float* de = dembed + (size_t)inp[n] * C;
        for (int i = 0; i < C; i++) de[i] += d[i];
    }
}

void rmsnorm_forward(float* out, float* rstd, const float* inp, const float* w, int N, int C, float eps) {
    for (int n = 0; n < N; n++) rmsnorm_row(out + (size_t)n * C, &rstd[n], inp + (size_t)n * C, w, C, eps);
}

void rmsnorm_backward(float* dinp, float* dw, const float* dout, const float* inp, const float* w, const float* rstd,
                      int N, int C) {
    for (int n = 0; n < N; n++)
        rmsnorm_row_backward(dinp + (size_t)n * C, dw, dout + (size_t)n * C, inp + (size_t)n * C, w, rstd[n], C);
}

/* The heads of one row that RoPE rotates: the queries, then the keys right after them. */
static void rope_row(float* x, const float* c, const float* s, int heads, int hd, int backward) {
    int half = hd / 2;
    for (int h = 0; h < heads; h++) {
        float* v = x + (size_t)h * hd;
        for (int i = 0; i < half; i++) {
            if (backward) rope_pair_backward(&v[i], &v[i + half], c[i], s[i]);
            else rope_pair(&v[i], &v[i + half], c[i], s[i]);
        }
    }
}

static void rope_apply(float* qkv, const int* pos, const float* cos_t, const float* sin_t, int N, int row, int n_head,
                       int n_kv_head, int hd, int backward) {
    int half = hd / 2;
    for (int n = 0; n < N; n++) {
        const float* c = cos_t + (size_t)pos[n] * half;
        const float* s = sin_t + (size_t)pos[n] * half;
        rope_row(qkv + (size_t)n * row, c, s, n_head + n_kv_head, hd, backward);
    }
}

void rope_forward(float* qkv, const int* pos, const float* cos_t, const float* sin_t, int N, int row, int n_head,
                  int n_kv_head, int head_dim) {
    rope_apply(qkv, pos, cos_t, sin_t, N, row, n_head, n_kv_head, head_dim, 0);
}

void rope_backward(float* dqkv, const int* pos, const float* cos_t, const float* sin_t, int N, int row, int n_head,
                   int n_kv_head, int head_dim) {
    rope_apply(dqkv, pos, cos_t, sin_t, N, row, n_head, n_kv_head, head_dim, 1);
}

void swiglu_forward(float* h, const float* gu, int N, int F, int det) {
    for (int n = 0; n < N; n++) {
        const float* g = gu + (size_t)n * 2 * F;
        float* o = h + (size_t)n * F;
        for (int i = 0; i < F; i++) o[i] = swiglu_value(g[i], g[F + i], det);
    }
}

void swiglu_backward(float* dgu, const float* dh, const float* gu, int N, int F, int det) {
    for (int n = 0; n < N; n++) {
        const float* g = gu + (size_t)n * 2 * F;
        const float* d = dh + (size_t)n * F;
        float* dg = dgu + (size_t)n * 2 * F;
        for (int i = 0; i < F; i++) swiglu_grad(&dg[i], &dg[F + i], d[i], g[i], g[F + i], det);
    }
}
