/* The CUDA twins of the CPU reference layers (src/model/cpu_layers.h): the same names with a
 * cuda_ prefix, the same meaning, the same shapes (row-major, N = rows, C = channels) and the
 * same accumulate (+=) rule for gradients. Each kernel NAME_kernel has a launcher NAME that
 * picks the grid and checks the launch; composite operations (matmul, attention, layernorm
 * backward) call several launchers and cuBLAS.
 *
 * Numerics: fp32 throughout. cuBLAS sgemm runs in CUBLAS_DEFAULT_MATH (full fp32, no TF32)
 * unless the context enables TF32 (SAPO_CUDA_TF32=1): parity with the CPU stays tight by
 * default. Every reduction has a fixed order (warp butterflies, fixed chunking, no atomics),
 * so a run repeats bit for bit on the same GPU; the sums are ordered differently from the
 * CPU's sequential loops, hence small differences, not identical bits. */
#ifndef SAPO_KERNELS_CUDA_LAYERS_CUH
#define SAPO_KERNELS_CUDA_LAYERS_CUH

#include <stddef.h>

#include "cuda_compat.h"

/* In the CPU emulation every file is compiled into one translation unit that may be linked
 * next to the real CUDA library: the emulated launchers get internal linkage. */
#ifdef SAPO_CUDA_EMULATE
#define SAPO_CUDA_NS_BEGIN namespace {
#define SAPO_CUDA_NS_END }
#else
#define SAPO_CUDA_NS_BEGIN
#define SAPO_CUDA_NS_END
#endif

enum {
    CUDA_COLSUM_MAX_CHUNKS = 64, /* row chunks of the two-pass column sums */
    CUDA_SUMSQ_BLOCKS = 256,     /* partial sums of the gradient norm */
};

SAPO_CUDA_NS_BEGIN

/* What every launcher needs: the stream, the cuBLAS handle bound to it, and scratch. */
typedef struct {
    cudaStream_t stream;
    cublasHandle_t blas;
    const float* ones; /* at least max_rows ones: bias gradients as one sgemv */
    float* partials;   /* CUDA_COLSUM_MAX_CHUNKS x 2 x C floats: layernorm weight/bias gradients */
    double* sumsq;     /* CUDA_SUMSQ_BLOCKS partials, then the total */
} CudaCtx;

void cuda_fill(const CudaCtx* x, float* out, float value, size_t n);

/* out (N, C) = wte[inp[n]] + wpe[position]; position = n % T, or pos[n] when pos != NULL. */
void cuda_encoder_forward(const CudaCtx* x, float* out, const int* inp, const int* pos, const float* wte,
                          const float* wpe, int N, int T, int C);
/* dwte[v] += sum of dout rows n with inp[n] == v, in increasing n (rows listed by token:
 * tok_rows[tok_start[v] .. tok_start[v+1]), built on the host); dwpe[t] += sum over b. */
void cuda_encoder_backward_wte(const CudaCtx* x, float* dwte, const float* dout, const int* tok_start,
                               const int* tok_rows, int V, int C);
void cuda_encoder_backward_wpe(const CudaCtx* x, float* dwpe, const float* dout, int B, int T, int C);

void cuda_layernorm_forward(const CudaCtx* x, float* out, float* mean, float* rstd, const float* inp, const float* w,
                            const float* b, int N, int C);
void cuda_layernorm_backward_dinp(const CudaCtx* x, float* dinp, const float* dout, const float* inp, const float* w,
                                  const float* mean, const float* rstd, int N, int C);
/* Per chunk of rows: partials[chunk][0..C) = sum norm*dout, [C..2C) = sum dout. */
void cuda_layernorm_backward_params(const CudaCtx* x, float* partials, const float* dout, const float* inp,
                                    const float* mean, const float* rstd, int N, int C, int n_chunks);
/* dst[c] += sum over k < n_chunks of partials[k * stride + c], k in order. */
void cuda_colsum_finish(const CudaCtx* x, float* dst, const float* partials, int n_chunks, int stride, int n_cols);
void cuda_layernorm_backward(const CudaCtx* x, float* dinp, float* dw, float* db, const float* dout, const float* inp,
                             const float* w, const float* mean, const float* rstd, int N, int C);

void cuda_bias_broadcast(const CudaCtx* x, float* out, const float* bias, int N, int OC);
/* out (N, OC) = inp (N, IC) @ w^T + bias (bias may be NULL): cuBLAS sgemm. */
void cuda_matmul_forward(const CudaCtx* x, float* out, const float* inp, const float* w, const float* bias, int N, int IC,
                         int OC);
void cuda_matmul_backward(const CudaCtx* x, float* dinp, float* dw, float* dbias, const float* dout, const float* inp,
                          const float* w, int N, int IC, int OC);

/* qkv (B, T, 3C) -> q, k, v (B, NH, T, hs) each. */
void cuda_qkv_split(const CudaCtx* x, float* q, float* k, float* v, const float* qkv, int B, int T, int C, int NH);
/* y (B, NH, T, hs) -> out (B, T, C). */
void cuda_heads_merge(const CudaCtx* x, float* out, const float* y, int B, int T, int C, int NH);
/* dout (B, T, C) -> dy (B, NH, T, hs). */
void cuda_heads_split(const CudaCtx* x, float* dy, const float* dout, int B, int T, int C, int NH);
/* dqkv (B, T, 3C) += dq, dk, dv (B, NH, T, hs). */
void cuda_qkv_merge_add(const CudaCtx* x, float* dqkv, const float* dq, const float* dk, const float* dv, int B, int T,
                        int C, int NH);
/* rows of T scores, row r at time t = r % T: causal softmax in place (zeros above t). */
void cuda_causal_softmax(const CudaCtx* x, float* att, int rows, int T);
/* datt = att * (datt - sum(att * datt)) on the causal part, zeros above, in place. */
void cuda_causal_softmax_backward(const CudaCtx* x, float* datt, const float* att, int rows, int T);

/* Scratch for attention: q, k, v, y (and in the backward dy, dq, dk, dv) of BT*C floats each. */
typedef struct {
    float *q, *k, *v, *y, *dq, *dk, *dv;
} AttnScratch;
void cuda_attention_forward(const CudaCtx* x, float* out, float* att, const float* qkv, const AttnScratch* s, int B,
                            int T, int C, int NH);
/* datt (B, NH, T, T) is scratch; dqkv is accumulated. */
void cuda_attention_backward(const CudaCtx* x, float* dqkv, float* datt, const float* dout, const float* qkv,
                             const float* att, const AttnScratch* s, int B, int T, int C, int NH);

void cuda_gelu_forward(const CudaCtx* x, float* out, float* th, const float* inp, size_t N);
void cuda_gelu_backward(const CudaCtx* x, float* dinp, const float* inp, const float* th, const float* dout, size_t N);
void cuda_residual_forward(const CudaCtx* x, float* out, const float* a, const float* b, size_t N);

void cuda_logprob_forward(const CudaCtx* x, float* logprobs, float* probs, const float* logits, const int* targets, int N,
                          int V, int pad);
void cuda_logprob_backward(const CudaCtx* x, float* dlogits, const float* dlogprobs, const float* probs,
                           const int* targets, int N, int V, int pad);

/* One AdamW step, the CPU's float formula; the step's scalars come from the host. */
void cuda_adamw(const CudaCtx* x, float* params, const float* grads, float* m, float* v, size_t n, float beta1,
                float beta2, float eps, float grad_scale, float step_size, float decay, float bc2_sqrt);

/* sum of x[i]^2 in double into x->sumsq[CUDA_SUMSQ_BLOCKS] (device); fixed order. */
void cuda_sumsq_partial(const CudaCtx* x, const float* data, size_t n);
void cuda_sumsq_final(const CudaCtx* x);
void cuda_sumsq(const CudaCtx* x, const float* data, size_t n);

/* Generation. The KV cache of one layer is (slots, n_ctx, C) for keys and for values. */
/* kcache/vcache[b][t] = k, v of qkv row (b, t), for b < B, t < T. */
void cuda_kv_store_prefill(const CudaCtx* x, float* kcache, float* vcache, const float* qkv, int B, int T, int C,
                           size_t slot_stride);
/* out[b] = x[b, lens[b] - 1] for rows of C. */
void cuda_gather_last(const CudaCtx* x, float* out, const float* in, const int* lens, int B, int T, int C);
/* Row i of q3 (n, 3C) stores its k, v at cache slot slots[i], position pos[i]. */
void cuda_kv_store_decode(const CudaCtx* x, float* kcache, float* vcache, const float* q3, const int* slots,
                          const int* pos, int n, int C, size_t slot_stride);
/* y (n, C): row i attends over positions 0..pos[i] of its cache slot. */
void cuda_decode_attention(const CudaCtx* x, float* y, const float* q3, const float* kcache, const float* vcache,
                           const int* slots, const int* pos, int n, int C, int NH, size_t slot_stride, int n_ctx);

SAPO_CUDA_NS_END

#endif
