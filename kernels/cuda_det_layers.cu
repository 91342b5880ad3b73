/* The deterministic mode's kernels (model.deterministic; CudaCtx.det): the CUDA twins of the
 * CPU's deterministic path, bit for bit. No cuBLAS, no atomics, no warp reductions, no CUDA
 * expf/logf: each thread computes whole output elements with the very functions the CPU calls
 * (src/model/det_math.h, det_attention.h: host and device code from one source), and the
 * products follow det_matmul.h's definition (one fmaf chain per element, k in order). The
 * launchers of cuda_layers.cu hand over to these when x->det is set; each kernel NAME_kernel
 * has its launcher NAME here. Slow on purpose where a fixed order forbids splitting a sum
 * (one thread per LayerNorm row, per softmax row, per gradient-norm chunk). */
#include <math.h>

#include "cuda_layers.cuh"
#include "model/det_attention.h"
#include "model/det_math.h"

static_assert(DET_SUMSQ_CHUNKS <= CUDA_SUMSQ_BLOCKS, "the gradient-norm chunks fit CudaCtx.sumsq");

SAPO_CUDA_NS_BEGIN

static const int DET_BLOCK = 128;
static unsigned det_grid(size_t n) { return (unsigned)((n + DET_BLOCK - 1) / DET_BLOCK); }

/* ---- the product of det_matmul.h: thread (i, j) owns C[i][j] --------------------------------- */
__global__ void cuda_det_gemm_kernel(int ta, int tb, int M, int N, int K, float alpha, const float* A, int lda,
                                     const float* B, int ldb, float beta, float* C, int ldc) {
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= M || j >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; k++) {
        float a = ta ? A[(size_t)k * lda + i] : A[(size_t)i * lda + k];
        float b = tb ? B[(size_t)j * ldb + k] : B[(size_t)k * ldb + j];
        acc = fmaf(a, b, acc);
    }
    float r = alpha * acc;
    size_t at = (size_t)i * ldc + j;
    C[at] = beta != 0.0f ? C[at] + r : r;
}
void cuda_det_gemm(const CudaCtx* x, int ta, int tb, int M, int N, int K, float alpha, const float* A, int lda,
                   const float* B, int ldb, float beta, float* C, int ldc) {
    if (M <= 0 || N <= 0) return;
    dim3 block(32, 4), grid((unsigned)((N + 31) / 32), (unsigned)((M + 3) / 4));
    SAPO_LAUNCH(cuda_det_gemm_kernel, grid, block, 0, x->stream, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

/* ---- LayerNorm: a thread per row (forward, input gradient), a thread per channel (weights) -- */
__global__ void cuda_det_layernorm_forward_kernel(float* out, float* mean, float* rstd, const float* inp,
                                                  const float* w, const float* b, int N, int C) {
    int n = blockIdx.x * blockDim.x + threadIdx.x;
    if (n < N) layernorm_row(out + (size_t)n * C, &mean[n], &rstd[n], inp + (size_t)n * C, w, b, C);
}
void cuda_det_layernorm_forward(const CudaCtx* x, float* out, float* mean, float* rstd, const float* inp,
                                const float* w, const float* b, int N, int C) {
    SAPO_LAUNCH(cuda_det_layernorm_forward_kernel, det_grid(N), DET_BLOCK, 0, x->stream, out, mean, rstd, inp, w, b, N,
                C);
}

__global__ void cuda_det_layernorm_dinp_kernel(float* dinp, const float* dout, const float* inp, const float* w,
                                               const float* mean, const float* rstd, int N, int C) {
    int n = blockIdx.x * blockDim.x + threadIdx.x;
    if (n < N)
        layernorm_row_dinp(dinp + (size_t)n * C, dout + (size_t)n * C, inp + (size_t)n * C, w, mean[n], rstd[n], C);
}
/* channel i: every row in order, as the CPU's row loop adds them */
__global__ void cuda_det_layernorm_params_kernel(float* dw, float* db, const float* dout, const float* inp,
                                                 const float* mean, const float* rstd, int N, int C) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= C) return;
    float w = dw[i], b = db[i];
    for (int n = 0; n < N; n++)
        layernorm_param_grad(&w, &b, dout[(size_t)n * C + i], inp[(size_t)n * C + i], mean[n], rstd[n]);
    dw[i] = w;
    db[i] = b;
}
void cuda_det_layernorm_backward(const CudaCtx* x, float* dinp, float* dw, float* db, const float* dout,
                                 const float* inp, const float* w, const float* mean, const float* rstd, int N, int C) {
    SAPO_LAUNCH(cuda_det_layernorm_dinp_kernel, det_grid(N), DET_BLOCK, 0, x->stream, dinp, dout, inp, w, mean, rstd, N,
                C);
    SAPO_LAUNCH(cuda_det_layernorm_params_kernel, det_grid(C), DET_BLOCK, 0, x->stream, dw, db, dout, inp, mean, rstd, N,
                C);
}

/* ---- attention: a thread per (query, head), then per (key, head) ---------------------------- */
__global__ void cuda_det_attention_forward_kernel(float* out, float* att, const float* qkv, const CudaSeg* segs,
                                                  const int* seg_of, int N, int C, int NH) {
    int i = blockIdx.x * blockDim.x + threadIdx.x, h = blockIdx.y;
    if (i >= N) return;
    const CudaSeg sg = segs[seg_of[i]];
    int hs = C / NH, C3 = 3 * C, t = i - sg.start, ctx = sg.plen + sg.len;
    float scale = 1.0f / sqrtf((float)hs);
    const float* k = qkv + (size_t)sg.start * C3 + C + h * hs;
    const float* kp = sg.plen ? qkv + (size_t)sg.pstart * C3 + C + h * hs : k;
    det_attend_query(att + sg.att + ((size_t)h * sg.len + t) * ctx, ctx, out + (size_t)i * C + h * hs,
                     qkv + (size_t)i * C3 + h * hs, kp, kp + C, C3, sg.plen, k, k + C, C3, t + 1, hs, scale);
}
void cuda_det_attention_forward(const CudaCtx* x, float* out, float* att, const float* qkv, const CudaSeg* segs,
                                const int* seg_of, int N, int C, int NH) {
    dim3 grid(det_grid(N), (unsigned)NH);
    SAPO_LAUNCH(cuda_det_attention_forward_kernel, grid, DET_BLOCK, 0, x->stream, out, att, qkv, segs, seg_of, N, C, NH);
}

__global__ void cuda_det_attention_query_kernel(float* dqkv, float* datt, const float* dout, const float* qkv,
                                                const float* att, const CudaSeg* segs, const int* seg_of, int N, int C,
                                                int NH) {
    int i = blockIdx.x * blockDim.x + threadIdx.x, h = blockIdx.y;
    if (i >= N) return;
    const CudaSeg sg = segs[seg_of[i]];
    int hs = C / NH, C3 = 3 * C, t = i - sg.start, ctx = sg.plen + sg.len;
    float scale = 1.0f / sqrtf((float)hs);
    size_t row = sg.att + ((size_t)h * sg.len + t) * ctx;
    const float* k = qkv + (size_t)sg.start * C3 + C + h * hs;
    const float* kp = sg.plen ? qkv + (size_t)sg.pstart * C3 + C + h * hs : k;
    det_attend_query_backward(datt + row, ctx, dqkv + (size_t)i * C3 + h * hs, att + row, dout + (size_t)i * C + h * hs,
                              kp, kp + C, C3, sg.plen, k, k + C, C3, t + 1, hs, scale);
}
/* key j: its own segment's queries first, then each completion reading it (children, in order) */
__global__ void cuda_det_attention_key_kernel(float* dqkv, const float* datt, const float* dout, const float* qkv,
                                              const float* att, const CudaSeg* segs, const int* children,
                                              const int* seg_of, int N, int C, int NH) {
    int j = blockIdx.x * blockDim.x + threadIdx.x, h = blockIdx.y;
    if (j >= N) return;
    const CudaSeg sg = segs[seg_of[j]];
    int hs = C / NH, C3 = 3 * C, p = j - sg.start;
    float* dk = dqkv + (size_t)j * C3 + C + h * hs;
    int ctx = sg.plen + sg.len;
    size_t blk = sg.att + (size_t)h * sg.len * ctx;
    det_attend_key_backward(dk, dk + C, datt + blk, att + blk, ctx, sg.plen + p, p, sg.len,
                            qkv + (size_t)sg.start * C3 + h * hs, C3, dout + (size_t)sg.start * C + h * hs, C, hs);
    for (int c = 0; c < sg.n_children; c++) {
        const CudaSeg r = segs[children[sg.child0 + c]];
        int rctx = r.plen + r.len;
        size_t rb = r.att + (size_t)h * r.len * rctx;
        det_attend_key_backward(dk, dk + C, datt + rb, att + rb, rctx, p, 0, r.len, qkv + (size_t)r.start * C3 + h * hs,
                                C3, dout + (size_t)r.start * C + h * hs, C, hs);
    }
}
void cuda_det_attention_backward(const CudaCtx* x, float* dqkv, float* datt, const float* dout, const float* qkv,
                                 const float* att, const CudaSeg* segs, const int* children, const int* seg_of, int N,
                                 int C, int NH) {
    dim3 grid(det_grid(N), (unsigned)NH);
    SAPO_LAUNCH(cuda_det_attention_query_kernel, grid, DET_BLOCK, 0, x->stream, dqkv, datt, dout, qkv, att, segs, seg_of,
                N, C, NH);
    SAPO_LAUNCH(cuda_det_attention_key_kernel, grid, DET_BLOCK, 0, x->stream, dqkv, datt, dout, qkv, att, segs, children,
                seg_of, N, C, NH);
}

/* decode: row i, head h; scores in scratch (n, NH, n_ctx) */
__global__ void cuda_det_decode_attention_kernel(float* y, float* scratch, const float* q3, const float* kprefix,
                                                 const float* vprefix, const float* krow, const float* vrow,
                                                 const int* rows, const int* prefix, const int* prefix_len,
                                                 const int* pos, int n, int C, int NH, size_t prefix_stride,
                                                 size_t row_stride, int n_ctx) {
    int i = blockIdx.x * blockDim.x + threadIdx.x, h = blockIdx.y;
    if (i >= n) return;
    int hs = C / NH, plen = prefix_len[i], own = pos[i] - plen + 1;
    float scale = 1.0f / sqrtf((float)hs);
    size_t pslot = plen > 0 ? (size_t)prefix[i] * prefix_stride : 0, rslot = (size_t)rows[i] * row_stride;
    det_attend_query(scratch + ((size_t)i * NH + h) * n_ctx, plen + own, y + (size_t)i * C + h * hs,
                     q3 + (size_t)i * 3 * C + h * hs, kprefix + pslot + h * hs, vprefix + pslot + h * hs, C, plen,
                     krow + rslot + h * hs, vrow + rslot + h * hs, C, own, hs, scale);
}
void cuda_det_decode_attention(const CudaCtx* x, float* y, const float* q3, const float* kprefix, const float* vprefix,
                               const float* krow, const float* vrow, const int* rows, const int* prefix,
                               const int* prefix_len, const int* pos, int n, int C, int NH, size_t prefix_stride,
                               size_t row_stride, int n_ctx) {
    dim3 grid(det_grid(n), (unsigned)NH);
    SAPO_LAUNCH(cuda_det_decode_attention_kernel, grid, DET_BLOCK, 0, x->stream, y, x->det_scores, q3, kprefix, vprefix,
                krow, vrow, rows, prefix, prefix_len, pos, n, C, NH, prefix_stride, row_stride, n_ctx);
}

/* ---- GELU, log-probs, gradient norm --------------------------------------------------------- */
__global__ void cuda_det_gelu_forward_kernel(float* out, float* th, const float* inp, size_t N) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) out[i] = gelu_value(inp[i], &th[i]);
}
void cuda_det_gelu_forward(const CudaCtx* x, float* out, float* th, const float* inp, size_t N) {
    SAPO_LAUNCH(cuda_det_gelu_forward_kernel, det_grid(N), DET_BLOCK, 0, x->stream, out, th, inp, N);
}

__global__ void cuda_det_logprob_forward_kernel(float* logprobs, float* probs, const float* logits, const int* targets,
                                                int N, int V, int pad, float scale) {
    int n = blockIdx.x * blockDim.x + threadIdx.x;
    if (n >= N) return;
    const float* z = logits + (size_t)n * V;
    float* p = probs + (size_t)n * V;
    for (int v = 0; v < V; v++) p[v] = z[v] * scale;
    float sum, mx = softmax_row(p, V, &sum);
    logprobs[n] = targets[n] == pad ? 0.0f : z[targets[n]] * scale - (mx + log_det(sum));
}
void cuda_det_logprob_forward(const CudaCtx* x, float* logprobs, float* probs, const float* logits, const int* targets,
                              int N, int V, int pad, float scale) {
    SAPO_LAUNCH(cuda_det_logprob_forward_kernel, det_grid(N), DET_BLOCK, 0, x->stream, logprobs, probs, logits, targets,
                N, V, pad, scale);
}

/* chunk k of DET_SUMSQ_CHUNKS into x->sumsq[k]; the host adds them in order */
__global__ void cuda_det_sumsq_kernel(double* partials, const float* data, size_t n) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < DET_SUMSQ_CHUNKS) partials[k] = det_sumsq_chunk(data, n, k);
}
void cuda_det_sumsq(const CudaCtx* x, const float* data, size_t n) {
    SAPO_LAUNCH(cuda_det_sumsq_kernel, det_grid(DET_SUMSQ_CHUNKS), DET_BLOCK, 0, x->stream, x->sumsq, data, n);
}

SAPO_CUDA_NS_END
