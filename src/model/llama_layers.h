/* The Llama/Qwen2 family's CPU layers, forward and backward, on row-major float arrays
 * (N rows): embedding without positions, RMSNorm, RoPE applied in place to the queries and
 * keys of fused q|k|v rows, SwiGLU. Matrix products, attention (attention_forward_gqa) and
 * log-probs come from cpu_layers.h. Backward functions accumulate (+=) into parameter
 * gradients, as the chain rule sums over uses. */
#ifndef SAPO_MODEL_LLAMA_LAYERS_H
#define SAPO_MODEL_LLAMA_LAYERS_H

#include <stddef.h>

/* out (N, C) = embed[inp[i]] */
void embedding_forward(float* out, const int* inp, const float* embed, int N, int C);
void embedding_backward(float* dembed, const float* dout, const int* inp, int N, int C);

/* RMSNorm of each row (llama_math.h); rstd (N) kept for the backward pass. */
void rmsnorm_forward(float* out, float* rstd, const float* inp, const float* w, int N, int C, float eps);
/* dinp += ..., dw += ... */
void rmsnorm_backward(float* dinp, float* dw, const float* dout, const float* inp, const float* w, const float* rstd,
                      int N, int C);

/* Rotates, in place, the n_head query heads and n_kv_head key heads (head_dim each) of every
 * fused row (row floats apart) by its position pos[i], with the table cos/sin (n_ctx,
 * head_dim / 2) of llama_rope_table. rope_backward applies the transpose to gradients. */
void rope_forward(float* qkv, const int* pos, const float* cos_t, const float* sin_t, int N, int row, int n_head,
                  int n_kv_head, int head_dim);
void rope_backward(float* dqkv, const int* pos, const float* cos_t, const float* sin_t, int N, int row, int n_head,
                   int n_kv_head, int head_dim);

/* h (N, F) = silu(gu[:, :F]) * gu[:, F:]; gu is the fused gate|up product (N, 2F). */
void swiglu_forward(float* h, const float* gu, int N, int F, int det);
/* dgu (N, 2F) = the gradients of gate and up from dh (overwritten, not accumulated). */
void swiglu_backward(float* dgu, const float* dh, const float* gu, int N, int F, int det);

#endif
