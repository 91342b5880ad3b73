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
#include "cuda_segments.h"   /* CudaSeg */
#include "model/block_loop.h" /* BlockOps, Model, PackedBatch */

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
    const float* ones; /* at least max_tokens ones: bias gradients as one sgemv */
    float* partials;   /* CUDA_COLSUM_MAX_CHUNKS x 2 x C floats: layernorm weight/bias gradients */
    double* sumsq;     /* CUDA_SUMSQ_BLOCKS partials, then the total */
    int det;           /* model.deterministic: the launchers below hand over to cuda_det_* */
    float* det_scores; /* deterministic decode: (max_rows, NH, n_ctx) attention weights */
} CudaCtx;

void cuda_fill(const CudaCtx* x, float* out, float value, size_t n);

/* out (N, C) = wte[inp[n]] + wpe[pos[n]] */
void cuda_encoder_forward(const CudaCtx* x, float* out, const int* inp, const int* pos, const float* wte,
                          const float* wpe, int N, int C);
/* The embedding gradients without atomics: dtable[e] += the dout rows that read entry e, in
 * increasing row order as the CPU adds them (rows[start[e] .. start[e+1]), a counting sort
 * built on the host). Once for wte (entries = tokens), once for wpe (entries = positions). */
void cuda_encoder_backward(const CudaCtx* x, float* dtable, const float* dout, const int* start, const int* rows,
                           int n_entries, int C);

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

/* Causal attention over the segments, one warp per (token, head): scores against the prefix
 * then the own keys, softmax, y. qkv (N, 3C); out (N, C); seg_of[n] = the segment of token n. */
void cuda_attention_forward(const CudaCtx* x, float* out, float* att, const float* qkv, const CudaSeg* segs,
                            const int* seg_of, int N, int C, int NH);
/* Two passes, no atomics: per (query, head) the weights' gradient into datt (att's layout,
 * scratch) and dq; then per (key, head) dk and dv summed over every query that read the key,
 * its own segment's first, then each child segment's in order. dqkv is accumulated. */
void cuda_attention_backward(const CudaCtx* x, float* dqkv, float* datt, const float* dout, const float* qkv,
                             const float* att, const CudaSeg* segs, const int* children, const int* seg_of, int N,
                             int C, int NH);

void cuda_gelu_forward(const CudaCtx* x, float* out, float* th, const float* inp, size_t N);
void cuda_gelu_backward(const CudaCtx* x, float* dinp, const float* inp, const float* th, const float* dout, size_t N);
void cuda_residual_forward(const CudaCtx* x, float* out, const float* a, const float* b, size_t N);

/* log softmax(scale * logits) at the targets (scale = 1 / the sampling temperature) */
void cuda_logprob_forward(const CudaCtx* x, float* logprobs, float* probs, const float* logits, const int* targets, int N,
                          int V, int pad, float scale);
void cuda_logprob_backward(const CudaCtx* x, float* dlogits, const float* dlogprobs, const float* probs,
                           const int* targets, int N, int V, int pad, float scale);

/* One AdamW step, the CPU's float formula; the step's scalars come from the host. */
void cuda_adamw(const CudaCtx* x, float* params, const float* grads, float* m, float* v, size_t n, float beta1,
                float beta2, float eps, float grad_scale, float step_size, float decay, float bc2_sqrt);

/* sum of x[i]^2 in double into x->sumsq[CUDA_SUMSQ_BLOCKS] (device); fixed order. */
void cuda_sumsq_partial(const CudaCtx* x, const float* data, size_t n);
void cuda_sumsq_final(const CudaCtx* x);
void cuda_sumsq(const CudaCtx* x, const float* data, size_t n);

/* Generation. Per layer, the prompt caches are (max_prefixes, n_ctx, C) for keys and for
 * values (slot stride prefix_stride) and the row caches (max_rows, row_ctx, C) (row_stride). */
/* Prefill: token n of segment s stores its k, v at slot s, index n - start of s. */
void cuda_kv_store_prefill(const CudaCtx* x, float* kprefix, float* vprefix, const float* qkv, const CudaSeg* segs,
                           const int* seg_of, int N, int C, size_t prefix_stride);
/* Row i of q3 (n, 3C) stores its k, v in cache row rows[i] at index pos[i] - prefix_len[i]. */
void cuda_kv_store_decode(const CudaCtx* x, float* krow, float* vrow, const float* q3, const int* rows,
                          const int* prefix_len, const int* pos, int n, int C, size_t row_stride);
/* y (n, C): row i attends to positions 0..prefix_len[i]-1 of prompt slot prefix[i], then to
 * its own cached positions 0..pos[i] - prefix_len[i]. */
void cuda_decode_attention(const CudaCtx* x, float* y, const float* q3, const float* kprefix, const float* vprefix,
                           const float* krow, const float* vrow, const int* rows, const int* prefix,
                           const int* prefix_len, const int* pos, int n, int C, int NH, size_t prefix_stride,
                           size_t row_stride, int n_ctx);

/* The deterministic mode (the cuda_det_* kernels of each family header): the CPU's
 * deterministic arithmetic bit for bit (det_matmul.h, det_math.h, det_attention.h). The
 * launchers above call these when x->det is set; the backend calls cuda_det_sumsq and adds the
 * chunks on the host. */
void cuda_det_gemm(const CudaCtx* x, int ta, int tb, int M, int N, int K, float alpha, const float* A, int lda,
                   const float* B, int ldb, float beta, float* C, int ldc);
void cuda_det_layernorm_forward(const CudaCtx* x, float* out, float* mean, float* rstd, const float* inp,
                                const float* w, const float* b, int N, int C);
void cuda_det_layernorm_backward(const CudaCtx* x, float* dinp, float* dw, float* db, const float* dout,
                                 const float* inp, const float* w, const float* mean, const float* rstd, int N, int C);
void cuda_det_attention_forward(const CudaCtx* x, float* out, float* att, const float* qkv, const CudaSeg* segs,
                                const int* seg_of, int N, int C, int NH);
void cuda_det_attention_backward(const CudaCtx* x, float* dqkv, float* datt, const float* dout, const float* qkv,
                                 const float* att, const CudaSeg* segs, const int* children, const int* seg_of, int N,
                                 int C, int NH);
void cuda_det_decode_attention(const CudaCtx* x, float* y, const float* q3, const float* kprefix, const float* vprefix,
                               const float* krow, const float* vrow, const int* rows, const int* prefix,
                               const int* prefix_len, const int* pos, int n, int C, int NH, size_t prefix_stride,
                               size_t row_stride, int n_ctx);
void cuda_det_gelu_forward(const CudaCtx* x, float* out, float* th, const float* inp, size_t N);
void cuda_det_logprob_forward(const CudaCtx* x, float* logprobs, float* probs, const float* logits, const int* targets,
                              int N, int V, int pad, float scale);
/* x->sumsq[k] = chunk k's sum of squares (det_sumsq_chunk), k < DET_SUMSQ_CHUNKS */
void cuda_det_sumsq(const CudaCtx* x, const float* data, size_t n);

/* ---- the Llama/Qwen2 family (rmsnorm.cuh, rope.cuh, swiglu.cuh, gqa_attention.cuh, rows.cuh):
 * twins of src/model/llama_layers.h and of the _gqa attentions of cpu_layers.h, the same
 * names with a cuda_ prefix; the row arithmetic is llama_math.h's, called on the device. */
/* dst row i = src row idx[i] (C floats): the embedding, the head's rows. */
void cuda_gather_rows(const CudaCtx* x, float* dst, const float* src, const int* idx, int n, int C);
/* dst row idx[i] += src row i; the idx[i] must be distinct (the head's rows are): a thread
 * owns an element, and a repeated row would race. Repeated rows (the embedding's gradient)
 * go through cuda_encoder_backward's counting sort instead. */
void cuda_scatter_add_rows(const CudaCtx* x, float* dst, const float* src, const int* idx, int n, int C);
void cuda_rmsnorm_forward(const CudaCtx* x, float* out, float* rstd, const float* inp, const float* w, int N, int C,
                          float eps);
/* dinp += ..., dw += ... (dw through x->partials, row chunks then the chunks in order) */
void cuda_rmsnorm_backward(const CudaCtx* x, float* dinp, float* dw, const float* dout, const float* inp,
                           const float* w, const float* rstd, int N, int C);
/* In place on the n_head query and n_kv_head key heads of each fused row (row floats apart),
 * by the position pos[i], with llama_rope_table's cos/sin (n_ctx, head_dim / 2) on the device. */
void cuda_rope_forward(const CudaCtx* x, float* qkv, const int* pos, const float* cos_t, const float* sin_t, int N,
                       int row, int n_head, int n_kv_head, int head_dim);
void cuda_rope_backward(const CudaCtx* x, float* dqkv, const int* pos, const float* cos_t, const float* sin_t, int N,
                        int row, int n_head, int n_kv_head, int head_dim);
/* h (N, F) = silu(gate) * up of the fused gu (N, 2F); dgu overwritten. exp_poly when x->det. */
void cuda_swiglu_forward(const CudaCtx* x, float* h, const float* gu, int N, int F);
void cuda_swiglu_backward(const CudaCtx* x, float* dgu, const float* dh, const float* gu, int N, int F);
/* Grouped-query attention over the segments (AttnShape's fused rows q | k | v, out (N, n_head
 * * head_dim)); att in the CPU's layout (per segment and query head). The backward's second
 * pass runs per (key, key/value head), summing over the group's query heads. */
void cuda_attention_forward_gqa(const CudaCtx* x, float* out, float* att, const float* qkv, const CudaSeg* segs,
                                const int* seg_of, int N, AttnShape sh);
void cuda_attention_backward_gqa(const CudaCtx* x, float* dqkv, float* datt, const float* dout, const float* qkv,
                                 const float* att, const CudaSeg* segs, const int* children, const int* seg_of, int N,
                                 AttnShape sh);
/* The KV caches hold n_kv_head * head_dim floats a position (keys after RoPE). */
void cuda_kv_store_prefill_gqa(const CudaCtx* x, float* kprefix, float* vprefix, const float* qkv,
                               const CudaSeg* segs, const int* seg_of, int N, AttnShape sh, size_t prefix_stride);
void cuda_kv_store_decode_gqa(const CudaCtx* x, float* krow, float* vrow, const float* qkv, const int* rows,
                              const int* prefix_len, const int* pos, int n, AttnShape sh, size_t row_stride);
/* y (n, n_head * head_dim); scores: (n, n_head, n_ctx) scratch in device memory (a row's
 * weights need not fit in shared memory: n_ctx is max_position_embeddings). */
void cuda_decode_attention_gqa(const CudaCtx* x, float* y, float* scores, const float* qkv, const float* kprefix,
                               const float* vprefix, const float* krow, const float* vrow, const int* rows,
                               const int* prefix, const int* prefix_len, const int* pos, int n, AttnShape sh,
                               size_t prefix_stride, size_t row_stride, int n_ctx);
void cuda_det_rmsnorm_forward(const CudaCtx* x, float* out, float* rstd, const float* inp, const float* w, int N,
                              int C, float eps);
void cuda_det_rmsnorm_backward(const CudaCtx* x, float* dinp, float* dw, const float* dout, const float* inp,
                               const float* w, const float* rstd, int N, int C);
void cuda_det_attention_forward_gqa(const CudaCtx* x, float* out, float* att, const float* qkv, const CudaSeg* segs,
                                    const int* seg_of, int N, AttnShape sh);
void cuda_det_attention_backward_gqa(const CudaCtx* x, float* dqkv, float* datt, const float* dout, const float* qkv,
                                     const float* att, const CudaSeg* segs, const int* children, const int* seg_of,
                                     int N, AttnShape sh);
void cuda_det_decode_attention_gqa(const CudaCtx* x, float* y, float* scores, const float* qkv, const float* kprefix,
                                   const float* vprefix, const float* krow, const float* vrow, const int* rows,
                                   const int* prefix, const int* prefix_len, const int* pos, int n, AttnShape sh,
                                   size_t prefix_stride, size_t row_stride, int n_ctx);

/* ---- what the two backends (cuda_backend.cu: byte_gpt, llama_cuda_backend.cu: llama) share,
 * defined in cuda_backend.cu ------------------------------------------------------------- */
/* The first member of either backend's state, so that m->state and the layer operations' ctx
 * point at it too (a standard-layout struct and its first member are interconvertible): the
 * ModelBackend entries below and CUDA_BLOCK_OPS' matmul, residual and zero take either. */
typedef struct {
    CudaCtx ctx;
    int device;
    int tf32;    /* SAPO_CUDA_TF32 */
    void* block; /* the one device allocation */
    size_t block_bytes;
    float *params, *grads, *mom1, *mom2; /* device twins of the Model's host buffers */
} CudaCore;

/* The GPU of this rank, a stream, a cuBLAS handle bound to it (TF32 only with
 * SAPO_CUDA_TF32), det = model.deterministic; close waits for the stream, frees the block. */
void cuda_core_open(CudaCore* k, int det);
void cuda_core_close(CudaCore* k);
void cuda_to_device(const CudaCore* k, void* dst, const void* src, size_t bytes);
void cuda_to_host(const CudaCore* k, void* dst, const void* src, size_t bytes);
void cuda_stream_sync(const CudaCore* k);
void cuda_zero(const CudaCore* k, float* p, size_t n);
/* Stops the process with "cuda backend: what". */
void cuda_die(const char* what);
void* cuda_host_alloc(size_t bytes);

/* Carves named buffers out of the one allocation: add() them all, then place(). */
typedef struct {
    void** ptr[96];
    size_t bytes[96];
    int n;
} Carver;
size_t align256(size_t bytes); /* as cudaMalloc itself */
void carve_add(Carver* c, void** ptr, size_t bytes);
#define CARVE(c, field, count) carve_add((c), (void**)&(field), (size_t)(count) * sizeof *(field))
/* One cudaMalloc for them all into k->block (k->block_bytes its size, set on failure too). */
cudaError_t carve_place(Carver* c, CudaCore* k);

/* One forward's layout (tokens, positions, the segment table, ...) built in host memory and
 * sent in one copy: put/take append 256-aligned arrays at *used and return their device
 * address (take: the caller fills *host). */
typedef struct {
    char *dev, *host;
    size_t bytes;
} CudaLayout;
void* cuda_lay_put(CudaLayout* l, size_t* used, const void* src, size_t bytes);
void* cuda_lay_take(CudaLayout* l, size_t* used, size_t bytes, void** host);
void cuda_lay_send(const CudaCore* k, const CudaLayout* l, size_t used);

/* The checks the CPU backend leaves to packed_check, here against this model's capacity:
 * segments, prefixes, attention weights, tokens and targets (< vocab, or no_target). */
void cuda_check_batch(const Model* m, const PackedBatch* pb, int no_target);

/* ModelBackend entries on the CudaCore that m->state starts with. */
void cuda_core_upload(Model* m);
void cuda_core_download(Model* m);
void cuda_core_zero_grad(Model* m);
float cuda_core_grad_norm(Model* m);
void cuda_core_adamw(Model* m, const AdamWConfig* hp, float grad_scale);

/* OnState<cuda_X>::call is the launcher cuda_X as a layer operation: the CudaCtx of the state
 * ctx points at (through its CudaCore) for cuda_X's const CudaCtx*; the compiler checks that
 * the operation's entry and the launcher take the same arguments. */
template <auto F>
struct OnState;
template <class... A, void (*F)(const CudaCtx*, A...)>
struct OnState<F> {
    static void call(void* ctx, A... a) { F(&((const CudaCore*)ctx)->ctx, a...); }
};

/* The byte_gpt's layer operations (ctx: its CudaState); matmul_forward/backward,
 * residual_forward and zero need only the CudaCore at the start of ctx, so the llama backend's
 * LlamaOps use them as its common operations. */
extern const BlockOps CUDA_BLOCK_OPS;

SAPO_CUDA_NS_END

#endif
