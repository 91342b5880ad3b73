/* Rotary positions, Hugging Face's rotate-half layout: in place on the query heads and then the
 * key heads of each fused q | k | v row, channel i paired with i + head_dim / 2, rotated by the
 * angle of the row's position; the backward rotates gradients back (the transpose). The
 * cos/sin table is llama_rope_table's, computed once on the host and uploaded by the backend,
 * so both backends rotate by the same floats. Twins rope_forward and rope_backward of
 * src/model/llama_layers.c, bit for bit: a thread per pair calls llama_math.h's rope_pair or
 * rope_pair_backward (the deterministic mode uses these as they are). */
#ifndef SAPO_KERNELS_ROPE_CUH
#define SAPO_KERNELS_ROPE_CUH

#include "cuda_common.cuh"
#include "model/llama_math.h"

SAPO_CUDA_NS_BEGIN

/* Thread (n, head, i) of N rows, heads = n_head + n_kv_head (the keys follow the queries), i <
 * half = head_dim / 2. */
__global__ void cuda_rope_forward_kernel(float* qkv, const int* pos, const float* cos_t, const float* sin_t, int N,
                                         int row, int heads, int head_dim) {
    int half = head_dim / 2;
    GRID_STRIDE_LOOP(e, (size_t)N * heads * half) {
        size_t n = e / ((size_t)heads * half), h = e / half % heads, i = e % half;
        float* v = qkv + n * row + h * head_dim;
        size_t at = (size_t)pos[n] * half + i;
        rope_pair(&v[i], &v[i + half], cos_t[at], sin_t[at]);
    }
}
void cuda_rope_forward(const CudaCtx* x, float* qkv, const int* pos, const float* cos_t, const float* sin_t, int N,
                       int row, int n_head, int n_kv_head, int head_dim) {
    size_t n = (size_t)N * (n_head + n_kv_head) * (head_dim / 2);
    if (!n) return;
    SAPO_LAUNCH(cuda_rope_forward_kernel, grid_for(n), BLOCK, 0, x->stream, qkv, pos, cos_t, sin_t, N, row,
                n_head + n_kv_head, head_dim);
}

__global__ void cuda_rope_backward_kernel(float* dqkv, const int* pos, const float* cos_t, const float* sin_t, int N,
                                          int row, int heads, int head_dim) {
    int half = head_dim / 2;
    GRID_STRIDE_LOOP(e, (size_t)N * heads * half) {
        size_t n = e / ((size_t)heads * half), h = e / half % heads, i = e % half;
        float* v = dqkv + n * row + h * head_dim;
        size_t at = (size_t)pos[n] * half + i;
        rope_pair_backward(&v[i], &v[i + half], cos_t[at], sin_t[at]);
    }
}
void cuda_rope_backward(const CudaCtx* x, float* dqkv, const int* pos, const float* cos_t, const float* sin_t, int N,
                        int row, int n_head, int n_kv_head, int head_dim) {
    size_t n = (size_t)N * (n_head + n_kv_head) * (head_dim / 2);
    if (!n) return;
    SAPO_LAUNCH(cuda_rope_backward_kernel, grid_for(n), BLOCK, 0, x->stream, dqkv, pos, cos_t, sin_t, N, row,
                n_head + n_kv_head, head_dim);
}

SAPO_CUDA_NS_END

#endif
