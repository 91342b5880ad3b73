/* CUDA kernels of the policy model and their launchers (see cuda_layers.cuh). Each kernel is
 * the twin of a loop in src/model/cpu_layers.c and keeps its float expression, so with FMA
 * contraction off (--fmad=false, like the C code's -ffp-contract=off) element-wise results
 * match the CPU bit for bit and reductions differ only by summation order.
 * Conventions: element-wise kernels use grid-stride loops over size_t indices; row kernels
 * give one warp (32 lanes) to one row and reduce with xor butterflies, which leave the same
 * bits in every lane; no atomics anywhere, so results do not depend on scheduling. */
#include <math.h>

#include "cuda_layers.cuh"

SAPO_CUDA_NS_BEGIN

static const int BLOCK = 256;    /* threads of element-wise kernels */
static const int MAX_GRID = 1024; /* blocks of a grid-stride loop: enough to fill an H200 */
static const int ROW_BLOCK = 128; /* 4 warps, one row each */
#define GELU_SCALE 0.7978845608028654f /* sqrt(2 / pi) */

static unsigned grid_for(size_t n) {
    size_t g = (n + BLOCK - 1) / BLOCK;
    return (unsigned)(g < 1 ? 1 : g > (size_t)MAX_GRID ? MAX_GRID : g);
}
static unsigned rows_grid(int rows) { return (unsigned)((rows + ROW_BLOCK / 32 - 1) / (ROW_BLOCK / 32)); }

#define GRID_STRIDE_LOOP(i, n) \
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (size_t)gridDim.x * blockDim.x)

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

/* ---- fill -------------------------------------------------------------------------------- */
__global__ void cuda_fill_kernel(float* out, float value, size_t n) {
    GRID_STRIDE_LOOP(i, n) out[i] = value;
}
void cuda_fill(const CudaCtx* x, float* out, float value, size_t n) {
    if (!n) return;
    SAPO_LAUNCH(cuda_fill_kernel, grid_for(n), BLOCK, 0, x->stream, out, value, n);
}

/* ---- encoder ----------------------------------------------------------------------------- */
__global__ void cuda_encoder_forward_kernel(float* out, const int* inp, const int* pos, const float* wte,
                                            const float* wpe, int N, int C) {
    GRID_STRIDE_LOOP(i, (size_t)N * C) {
        size_t n = i / C, c = i % C;
        out[i] = wte[(size_t)inp[n] * C + c] + wpe[(size_t)pos[n] * C + c];
    }
}
void cuda_encoder_forward(const CudaCtx* x, float* out, const int* inp, const int* pos, const float* wte,
                          const float* wpe, int N, int C) {
    SAPO_LAUNCH(cuda_encoder_forward_kernel, grid_for((size_t)N * C), BLOCK, 0, x->stream, out, inp, pos, wte, wpe, N,
                C);
}

/* One thread per (entry, channel): its rows in increasing order, as the CPU adds them. */
__global__ void cuda_encoder_backward_kernel(float* dtable, const float* dout, const int* start, const int* rows,
                                             int n_entries, int C) {
    GRID_STRIDE_LOOP(i, (size_t)n_entries * C) {
        size_t e = i / C, c = i % C;
        int a = start[e], b = start[e + 1];
        if (a == b) continue;
        float acc = dtable[i];
        for (int k = a; k < b; k++) acc += dout[(size_t)rows[k] * C + c];
        dtable[i] = acc;
    }
}
void cuda_encoder_backward(const CudaCtx* x, float* dtable, const float* dout, const int* start, const int* rows,
                           int n_entries, int C) {
    SAPO_LAUNCH(cuda_encoder_backward_kernel, grid_for((size_t)n_entries * C), BLOCK, 0, x->stream, dtable, dout, start,
                rows, n_entries, C);
}

/* ---- layernorm --------------------------------------------------------------------------- */
__global__ void cuda_layernorm_forward_kernel(float* out, float* mean, float* rstd, const float* inp, const float* w,
                                              const float* b, int N, int C) {
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= N) return; /* the whole warp leaves together */
    const float* xr = inp + (size_t)row * C;
    float s = 0.0f;
    for (int i = lane; i < C; i += 32) s += xr[i];
    float m = warp_sum(s) / C;
    float v = 0.0f;
    for (int i = lane; i < C; i += 32) v += (xr[i] - m) * (xr[i] - m);
    v = warp_sum(v) / C;
    float r = 1.0f / sqrtf(v + 1e-5f);
    float* o = out + (size_t)row * C;
    for (int i = lane; i < C; i += 32) o[i] = (xr[i] - m) * r * w[i] + b[i];
    if (lane == 0) {
        mean[row] = m;
        rstd[row] = r;
    }
}
void cuda_layernorm_forward(const CudaCtx* x, float* out, float* mean, float* rstd, const float* inp, const float* w,
                            const float* b, int N, int C) {
    if (x->det) {
        cuda_det_layernorm_forward(x, out, mean, rstd, inp, w, b, N, C);
        return;
    }
    SAPO_LAUNCH(cuda_layernorm_forward_kernel, rows_grid(N), ROW_BLOCK, 0, x->stream, out, mean, rstd, inp, w, b, N, C);
}

__global__ void cuda_layernorm_backward_dinp_kernel(float* dinp, const float* dout, const float* inp, const float* w,
                                                    const float* mean, const float* rstd, int N, int C) {
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= N) return;
    const float* d = dout + (size_t)row * C;
    const float* xr = inp + (size_t)row * C;
    float* dx = dinp + (size_t)row * C;
    float m = mean[row], s = rstd[row];
    float dnorm_mean = 0.0f, dnorm_norm_mean = 0.0f;
    for (int i = lane; i < C; i += 32) {
        float norm = (xr[i] - m) * s;
        float dnorm = w[i] * d[i];
        dnorm_mean += dnorm;
        dnorm_norm_mean += dnorm * norm;
    }
    dnorm_mean = warp_sum(dnorm_mean) / C;
    dnorm_norm_mean = warp_sum(dnorm_norm_mean) / C;
    for (int i = lane; i < C; i += 32) {
        float norm = (xr[i] - m) * s;
        float dnorm = w[i] * d[i];
        dx[i] += (dnorm - dnorm_mean - norm * dnorm_norm_mean) * s;
    }
}
void cuda_layernorm_backward_dinp(const CudaCtx* x, float* dinp, const float* dout, const float* inp, const float* w,
                                  const float* mean, const float* rstd, int N, int C) {
    SAPO_LAUNCH(cuda_layernorm_backward_dinp_kernel, rows_grid(N), ROW_BLOCK, 0, x->stream, dinp, dout, inp, w, mean,
                rstd, N, C);
}

/* Block (32, 8): 32 channels, 8 row lanes; grid (channel tiles, row chunks). */
__global__ void cuda_layernorm_backward_params_kernel(float* partials, const float* dout, const float* inp,
                                                      const float* mean, const float* rstd, int N, int C,
                                                      int n_chunks) {
    __shared__ float sdw[8][32];
    __shared__ float sdb[8][32];
    int c = blockIdx.x * 32 + threadIdx.x, chunk = blockIdx.y;
    int per = (N + n_chunks - 1) / n_chunks, r0 = chunk * per, r1 = r0 + per < N ? r0 + per : N;
    float dw = 0.0f, db = 0.0f;
    if (c < C) {
        for (int r = r0 + (int)threadIdx.y; r < r1; r += 8) {
            float d = dout[(size_t)r * C + c];
            float norm = (inp[(size_t)r * C + c] - mean[r]) * rstd[r];
            dw += norm * d;
            db += d;
        }
    }
    sdw[threadIdx.y][threadIdx.x] = dw;
    sdb[threadIdx.y][threadIdx.x] = db;
    __syncthreads();
    if (threadIdx.y == 0 && c < C) {
        float a = 0.0f, b = 0.0f;
        for (int k = 0; k < 8; k++) {
            a += sdw[k][threadIdx.x];
            b += sdb[k][threadIdx.x];
        }
        partials[(size_t)chunk * 2 * C + c] = a;
        partials[(size_t)chunk * 2 * C + C + c] = b;
    }
}
void cuda_layernorm_backward_params(const CudaCtx* x, float* partials, const float* dout, const float* inp,
                                    const float* mean, const float* rstd, int N, int C, int n_chunks) {
    dim3 grid((unsigned)((C + 31) / 32), (unsigned)n_chunks), block(32, 8);
    SAPO_LAUNCH(cuda_layernorm_backward_params_kernel, grid, block, 0, x->stream, partials, dout, inp, mean, rstd, N, C,
                n_chunks);
}

__global__ void cuda_colsum_finish_kernel(float* dst, const float* partials, int n_chunks, int stride, int n_cols) {
    GRID_STRIDE_LOOP(c, (size_t)n_cols) {
        float acc = dst[c];
        for (int k = 0; k < n_chunks; k++) acc += partials[(size_t)k * stride + c];
        dst[c] = acc;
    }
}
void cuda_colsum_finish(const CudaCtx* x, float* dst, const float* partials, int n_chunks, int stride, int n_cols) {
    SAPO_LAUNCH(cuda_colsum_finish_kernel, grid_for((size_t)n_cols), BLOCK, 0, x->stream, dst, partials, n_chunks, stride,
                n_cols);
}

void cuda_layernorm_backward(const CudaCtx* x, float* dinp, float* dw, float* db, const float* dout, const float* inp,
                             const float* w, const float* mean, const float* rstd, int N, int C) {
    if (x->det) {
        cuda_det_layernorm_backward(x, dinp, dw, db, dout, inp, w, mean, rstd, N, C);
        return;
    }
    cuda_layernorm_backward_dinp(x, dinp, dout, inp, w, mean, rstd, N, C);
    int n_chunks = (N + 63) / 64; /* at least 64 rows a chunk, at most CUDA_COLSUM_MAX_CHUNKS chunks */
    if (n_chunks > CUDA_COLSUM_MAX_CHUNKS) n_chunks = CUDA_COLSUM_MAX_CHUNKS;
    if (n_chunks < 1) n_chunks = 1;
    cuda_layernorm_backward_params(x, x->partials, dout, inp, mean, rstd, N, C, n_chunks);
    cuda_colsum_finish(x, dw, x->partials, n_chunks, 2 * C, C);
    cuda_colsum_finish(x, db, x->partials + C, n_chunks, 2 * C, C);
}

/* ---- matmul (cuBLAS, column-major views of the row-major arrays) ------------------------- */
__global__ void cuda_bias_broadcast_kernel(float* out, const float* bias, int N, int OC) {
    GRID_STRIDE_LOOP(i, (size_t)N * OC) out[i] = bias[i % OC];
}
void cuda_bias_broadcast(const CudaCtx* x, float* out, const float* bias, int N, int OC) {
    SAPO_LAUNCH(cuda_bias_broadcast_kernel, grid_for((size_t)N * OC), BLOCK, 0, x->stream, out, bias, N, OC);
}

void cuda_matmul_forward(const CudaCtx* x, float* out, const float* inp, const float* w, const float* bias, int N, int IC,
                         int OC) {
    const float one = 1.0f, zero = 0.0f;
    /* like the CPU: out = bias, then out = inp @ w^T + out */
    if (bias) cuda_bias_broadcast(x, out, bias, N, OC);
    if (x->det) {
        cuda_det_gemm(x, 0, 1, N, OC, IC, 1.0f, inp, IC, w, IC, bias ? 1.0f : 0.0f, out, OC);
        return;
    }
    /* column-major: out^T (OC x N) = w (OC x IC, stored as IC x OC) ^T . inp^T (IC x N) */
    cublasCheck(cublasSgemm(x->blas, CUBLAS_OP_T, CUBLAS_OP_N, OC, N, IC, &one, w, IC, inp, IC, bias ? &one : &zero, out,
                            OC));
}

void cuda_matmul_backward(const CudaCtx* x, float* dinp, float* dw, float* dbias, const float* dout, const float* inp,
                          const float* w, int N, int IC, int OC) {
    const float one = 1.0f;
    if (x->det) { /* cpu_layers.c matmul_backward with det: the same three products */
        cuda_det_gemm(x, 0, 0, N, IC, OC, 1.0f, dout, OC, w, IC, 1.0f, dinp, IC);
        cuda_det_gemm(x, 1, 0, OC, IC, N, 1.0f, dout, OC, inp, IC, 1.0f, dw, IC);
        if (dbias) cuda_det_gemm(x, 0, 0, 1, OC, N, 1.0f, x->ones, N, dout, OC, 1.0f, dbias, OC); /* det_colsum_add */
        return;
    }
    /* dinp (N, IC) += dout (N, OC) @ w (OC, IC):  dinp^T = w^T . dout^T */
    cublasCheck(cublasSgemm(x->blas, CUBLAS_OP_N, CUBLAS_OP_N, IC, N, OC, &one, w, IC, dout, OC, &one, dinp, IC));
    /* dw (OC, IC) += dout^T @ inp:  dw^T (IC x OC) = inp^T (IC x N) . dout (N x OC) */
    cublasCheck(cublasSgemm(x->blas, CUBLAS_OP_N, CUBLAS_OP_T, IC, OC, N, &one, inp, IC, dout, OC, &one, dw, IC));
    /* dbias (OC) += column sums of dout: dout^T (OC x N) . ones (N) */
    if (dbias) cublasCheck(cublasSgemv(x->blas, CUBLAS_OP_N, OC, N, &one, dout, OC, x->ones, 1, &one, dbias, 1));
}

/* ---- attention --------------------------------------------------------------------------- */
/* Custom kernels rather than cuBLAS: the segments differ in length and a completion reads
 * its prompt's keys from elsewhere in the batch, which no strided batch describes. Each warp
 * owns one (token, head); lanes split the keys for scores and the head's channels for
 * products, and every sum runs in a fixed order. Key j of a segment's row is prefix token
 * pstart + j for j < plen, else its own token start + j - plen. */
__device__ __forceinline__ int seg_key(const CudaSeg& sg, int j) {
    return j < sg.plen ? sg.pstart + j : sg.start + j - sg.plen;
}

__global__ void cuda_attention_forward_kernel(float* out, float* att, const float* qkv, const CudaSeg* segs,
                                              const int* seg_of, int N, int C, int NH) {
    int i = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32, h = blockIdx.y;
    if (i >= N) return; /* the whole warp leaves together */
    const CudaSeg sg = segs[seg_of[i]];
    int hs = C / NH, C3 = 3 * C, t = i - sg.start, ctx = sg.plen + sg.len, last = sg.plen + t;
    float scale = 1.0f / sqrtf((float)hs);
    const float* q = qkv + (size_t)i * C3 + h * hs;
    float* row = att + sg.att + ((size_t)h * sg.len + t) * ctx;
    float mx = -INFINITY;
    for (int j = lane; j <= last; j += 32) {
        const float* k = qkv + (size_t)seg_key(sg, j) * C3 + C + h * hs;
        float dot = 0.0f;
        for (int d = 0; d < hs; d++) dot += q[d] * k[d];
        row[j] = scale * dot;
        mx = fmaxf(mx, row[j]);
    }
    mx = warp_max(mx);
    float sum = 0.0f;
    for (int j = lane; j <= last; j += 32) {
        row[j] = expf(row[j] - mx);
        sum += row[j];
    }
    float inv = 1.0f / warp_sum(sum);
    for (int j = lane; j <= last; j += 32) row[j] *= inv; /* each lane rescales what it wrote */
    for (int j = last + 1 + lane; j < ctx; j += 32) row[j] = 0.0f;
    __syncwarp(); /* every lane reads every weight below */
    for (int d = lane; d < hs; d += 32) {
        float acc = 0.0f;
        for (int j = 0; j <= last; j++) acc += row[j] * qkv[(size_t)seg_key(sg, j) * C3 + 2 * C + h * hs + d];
        out[(size_t)i * C + h * hs + d] = acc;
    }
}
void cuda_attention_forward(const CudaCtx* x, float* out, float* att, const float* qkv, const CudaSeg* segs,
                            const int* seg_of, int N, int C, int NH) {
    if (x->det) {
        cuda_det_attention_forward(x, out, att, qkv, segs, seg_of, N, C, NH);
        return;
    }
    dim3 grid(rows_grid(N), (unsigned)NH);
    SAPO_LAUNCH(cuda_attention_forward_kernel, grid, ROW_BLOCK, 0, x->stream, out, att, qkv, segs, seg_of, N, C, NH);
}

/* Pass 1, per (query, head): datt = dy . v of each key read, the softmax backward in place
 * (dscore = att * (datt - sum(att * datt))), then dq += scale * dscore . k. */
__global__ void cuda_attention_backward_query_kernel(float* dqkv, float* datt, const float* dout, const float* qkv,
                                                     const float* att, const CudaSeg* segs, const int* seg_of, int N,
                                                     int C, int NH) {
    int i = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32, h = blockIdx.y;
    if (i >= N) return;
    const CudaSeg sg = segs[seg_of[i]];
    int hs = C / NH, C3 = 3 * C, t = i - sg.start, ctx = sg.plen + sg.len, last = sg.plen + t;
    float scale = 1.0f / sqrtf((float)hs);
    const float* dy = dout + (size_t)i * C + h * hs;
    size_t off = sg.att + ((size_t)h * sg.len + t) * ctx;
    const float* arow = att + off;
    float* drow = datt + off;
    float dot = 0.0f;
    for (int j = lane; j <= last; j += 32) {
        const float* v = qkv + (size_t)seg_key(sg, j) * C3 + 2 * C + h * hs;
        float g = 0.0f;
        for (int d = 0; d < hs; d++) g += dy[d] * v[d];
        drow[j] = g;
        dot += arow[j] * g;
    }
    dot = warp_sum(dot);
    for (int j = lane; j <= last; j += 32) drow[j] = arow[j] * (drow[j] - dot);
    __syncwarp(); /* every lane reads every dscore below */
    for (int d = lane; d < hs; d += 32) {
        float acc = 0.0f;
        for (int j = 0; j <= last; j++) acc += drow[j] * qkv[(size_t)seg_key(sg, j) * C3 + C + h * hs + d];
        dqkv[(size_t)i * C3 + h * hs + d] += scale * acc;
    }
}

/* Segment sg's queries that read column col of their rows, t = t0 .. len-1: the sums of
 * dscore * q (for dk) and att * dy (for dv) at channel h * hs + d. */
__device__ __forceinline__ void key_grads_from(const CudaSeg& sg, int col, int t0, const float* datt, const float* att,
                                               const float* qkv, const float* dout, int C, int h, int hs, int d,
                                               float* dk, float* dv) {
    int ctx = sg.plen + sg.len;
    size_t at = sg.att + ((size_t)h * sg.len + t0) * ctx + col;
    float ak = 0.0f, av = 0.0f;
    for (int t = t0; t < sg.len; t++, at += ctx) {
        size_t qi = (size_t)sg.start + t;
        ak += datt[at] * qkv[qi * 3 * C + h * hs + d];
        av += att[at] * dout[qi * C + h * hs + d];
    }
    *dk = ak;
    *dv = av;
}

/* Pass 2, per (key, head): the key's own segment's queries from its own position on, then
 * every segment continuing it (a prompt's completions) reads it whole. Each segment's sum
 * is added on its own, in segment order, as the CPU's per-segment products add them. */
__global__ void cuda_attention_backward_key_kernel(float* dqkv, const float* datt, const float* dout, const float* qkv,
                                                   const float* att, const CudaSeg* segs, const int* children,
                                                   const int* seg_of, int N, int C, int NH) {
    int j = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32, h = blockIdx.y;
    if (j >= N) return;
    const CudaSeg sg = segs[seg_of[j]];
    int hs = C / NH, C3 = 3 * C, u = j - sg.start;
    float scale = 1.0f / sqrtf((float)hs);
    for (int d = lane; d < hs; d += 32) {
        float* dk = dqkv + (size_t)j * C3 + C + h * hs + d;
        float* dv = dk + C;
        float gk, gv;
        key_grads_from(sg, sg.plen + u, u, datt, att, qkv, dout, C, h, hs, d, &gk, &gv);
        float acck = *dk + scale * gk, accv = *dv + gv;
        for (int c = 0; c < sg.n_children; c++) {
            const CudaSeg ch = segs[children[sg.child0 + c]];
            key_grads_from(ch, u, 0, datt, att, qkv, dout, C, h, hs, d, &gk, &gv);
            acck += scale * gk;
            accv += gv;
        }
        *dk = acck;
        *dv = accv;
    }
}

void cuda_attention_backward(const CudaCtx* x, float* dqkv, float* datt, const float* dout, const float* qkv,
                             const float* att, const CudaSeg* segs, const int* children, const int* seg_of, int N,
                             int C, int NH) {
    if (x->det) {
        cuda_det_attention_backward(x, dqkv, datt, dout, qkv, att, segs, children, seg_of, N, C, NH);
        return;
    }
    dim3 grid(rows_grid(N), (unsigned)NH);
    SAPO_LAUNCH(cuda_attention_backward_query_kernel, grid, ROW_BLOCK, 0, x->stream, dqkv, datt, dout, qkv, att, segs,
                seg_of, N, C, NH);
    SAPO_LAUNCH(cuda_attention_backward_key_kernel, grid, ROW_BLOCK, 0, x->stream, dqkv, datt, dout, qkv, att, segs,
                children, seg_of, N, C, NH);
}

/* ---- GELU, residual ---------------------------------------------------------------------- */
/* The CPU's tanh through one expf (cpu_layers.c tanh_fast), so both sides round alike. */
__device__ __forceinline__ float tanh_fast(float u) {
    if (u > 9.0f) return 1.0f;
    if (u < -9.0f) return -1.0f;
    return 1.0f - 2.0f / (expf(2.0f * u) + 1.0f);
}

__global__ void cuda_gelu_forward_kernel(float* out, float* th, const float* inp, size_t N) {
    GRID_STRIDE_LOOP(i, N) {
        float xv = inp[i];
        float t = tanh_fast(GELU_SCALE * (xv + 0.044715f * xv * xv * xv));
        th[i] = t;
        out[i] = 0.5f * xv * (1.0f + t);
    }
}
void cuda_gelu_forward(const CudaCtx* x, float* out, float* th, const float* inp, size_t N) {
    if (x->det) {
        cuda_det_gelu_forward(x, out, th, inp, N);
        return;
    }
    SAPO_LAUNCH(cuda_gelu_forward_kernel, grid_for(N), BLOCK, 0, x->stream, out, th, inp, N);
}

__global__ void cuda_gelu_backward_kernel(float* dinp, const float* inp, const float* th, const float* dout, size_t N) {
    GRID_STRIDE_LOOP(i, N) {
        float xv = inp[i], t = th[i];
        float local =
            0.5f * (1.0f + t) + 0.5f * xv * (1.0f - t * t) * GELU_SCALE * (1.0f + 3.0f * 0.044715f * xv * xv);
        dinp[i] += local * dout[i];
    }
}
void cuda_gelu_backward(const CudaCtx* x, float* dinp, const float* inp, const float* th, const float* dout, size_t N) {
    SAPO_LAUNCH(cuda_gelu_backward_kernel, grid_for(N), BLOCK, 0, x->stream, dinp, inp, th, dout, N);
}

__global__ void cuda_residual_forward_kernel(float* out, const float* a, const float* b, size_t N) {
    GRID_STRIDE_LOOP(i, N) out[i] = a[i] + b[i];
}
void cuda_residual_forward(const CudaCtx* x, float* out, const float* a, const float* b, size_t N) {
    SAPO_LAUNCH(cuda_residual_forward_kernel, grid_for(N), BLOCK, 0, x->stream, out, a, b, N);
}

/* ---- log-probabilities of the targets ---------------------------------------------------- */
__global__ void cuda_logprob_forward_kernel(float* logprobs, float* probs, const float* logits, const int* targets,
                                            int N, int V, int pad, float scale) {
    int n = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (n >= N) return;
    const float* z = logits + (size_t)n * V;
    float* p = probs + (size_t)n * V;
    float mx = -INFINITY;
    for (int v = lane; v < V; v += 32) mx = fmaxf(mx, z[v] * scale);
    mx = warp_max(mx);
    float sum = 0.0f;
    for (int v = lane; v < V; v += 32) {
        p[v] = expf(z[v] * scale - mx);
        sum += p[v];
    }
    sum = warp_sum(sum);
    float inv = 1.0f / sum;
    for (int v = lane; v < V; v += 32) p[v] *= inv;
    if (lane == 0) logprobs[n] = targets[n] == pad ? 0.0f : z[targets[n]] * scale - (mx + logf(sum));
}
void cuda_logprob_forward(const CudaCtx* x, float* logprobs, float* probs, const float* logits, const int* targets, int N,
                          int V, int pad, float scale) {
    if (x->det) {
        cuda_det_logprob_forward(x, logprobs, probs, logits, targets, N, V, pad, scale);
        return;
    }
    SAPO_LAUNCH(cuda_logprob_forward_kernel, rows_grid(N), ROW_BLOCK, 0, x->stream, logprobs, probs, logits, targets, N,
                V, pad, scale);
}

__global__ void cuda_logprob_backward_kernel(float* dlogits, const float* dlogprobs, const float* probs,
                                             const int* targets, int N, int V, int pad, float scale) {
    GRID_STRIDE_LOOP(i, (size_t)N * V) {
        size_t n = i / V;
        int v = (int)(i % V);
        float g = targets[n] == pad ? 0.0f : dlogprobs[n] * scale;
        /* CPU: d = -g p, then d[target] += g */
        dlogits[i] = g == 0.0f ? 0.0f : v == targets[n] ? -g * probs[i] + g : -g * probs[i];
    }
}
void cuda_logprob_backward(const CudaCtx* x, float* dlogits, const float* dlogprobs, const float* probs,
                           const int* targets, int N, int V, int pad, float scale) {
    SAPO_LAUNCH(cuda_logprob_backward_kernel, grid_for((size_t)N * V), BLOCK, 0, x->stream, dlogits, dlogprobs, probs,
                targets, N, V, pad, scale);
}

/* ---- optimizer --------------------------------------------------------------------------- */
__global__ void cuda_adamw_kernel(float* params, const float* grads, float* m, float* v, size_t n, float beta1,
                                  float beta2, float eps, float grad_scale, float step_size, float decay,
                                  float bc2_sqrt) {
    GRID_STRIDE_LOOP(i, n) {
        float gr = grads[i] * grad_scale;
        float mo = m[i] = beta1 * m[i] + (1.0f - beta1) * gr;
        float ve = v[i] = beta2 * v[i] + (1.0f - beta2) * gr * gr;
        float p = params[i] * decay;
        params[i] = p - step_size * mo / (sqrtf(ve) / bc2_sqrt + eps);
    }
}
void cuda_adamw(const CudaCtx* x, float* params, const float* grads, float* m, float* v, size_t n, float beta1,
                float beta2, float eps, float grad_scale, float step_size, float decay, float bc2_sqrt) {
    SAPO_LAUNCH(cuda_adamw_kernel, grid_for(n), BLOCK, 0, x->stream, params, grads, m, v, n, beta1, beta2, eps,
                grad_scale, step_size, decay, bc2_sqrt);
}

/* Fixed grid, fixed tree: the same bits every run. */
__global__ void cuda_sumsq_partial_kernel(double* partials, const float* data, size_t n) {
    __shared__ double sh[BLOCK];
    double acc = 0.0;
    GRID_STRIDE_LOOP(i, n) acc += (double)data[i] * data[i];
    sh[threadIdx.x] = acc;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) partials[blockIdx.x] = sh[0];
}
void cuda_sumsq_partial(const CudaCtx* x, const float* data, size_t n) {
    SAPO_LAUNCH(cuda_sumsq_partial_kernel, CUDA_SUMSQ_BLOCKS, BLOCK, 0, x->stream, x->sumsq, data, n);
}

__global__ void cuda_sumsq_final_kernel(double* partials) {
    __shared__ double sh[CUDA_SUMSQ_BLOCKS];
    sh[threadIdx.x] = partials[threadIdx.x];
    __syncthreads();
    for (int s = CUDA_SUMSQ_BLOCKS / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) partials[CUDA_SUMSQ_BLOCKS] = sh[0];
}
void cuda_sumsq_final(const CudaCtx* x) {
    SAPO_LAUNCH(cuda_sumsq_final_kernel, 1, CUDA_SUMSQ_BLOCKS, 0, x->stream, x->sumsq);
}

void cuda_sumsq(const CudaCtx* x, const float* data, size_t n) {
    cuda_sumsq_partial(x, data, n);
    cuda_sumsq_final(x);
}

/* ---- generation -------------------------------------------------------------------------- */
__global__ void cuda_kv_store_prefill_kernel(float* kprefix, float* vprefix, const float* qkv, const CudaSeg* segs,
                                             const int* seg_of, int N, int C, size_t prefix_stride) {
    GRID_STRIDE_LOOP(i, (size_t)N * C) {
        size_t n = i / C, c = i % C;
        int s = seg_of[n];
        const float* row = qkv + n * 3 * C;
        size_t at = (size_t)s * prefix_stride + (n - segs[s].start) * C + c;
        kprefix[at] = row[C + c];
        vprefix[at] = row[2 * C + c];
    }
}
void cuda_kv_store_prefill(const CudaCtx* x, float* kprefix, float* vprefix, const float* qkv, const CudaSeg* segs,
                           const int* seg_of, int N, int C, size_t prefix_stride) {
    SAPO_LAUNCH(cuda_kv_store_prefill_kernel, grid_for((size_t)N * C), BLOCK, 0, x->stream, kprefix, vprefix, qkv, segs,
                seg_of, N, C, prefix_stride);
}

__global__ void cuda_kv_store_decode_kernel(float* krow, float* vrow, const float* q3, const int* rows,
                                            const int* prefix_len, const int* pos, int n, int C, size_t row_stride) {
    GRID_STRIDE_LOOP(i, (size_t)n * C) {
        size_t r = i / C, c = i % C;
        size_t at = (size_t)rows[r] * row_stride + (size_t)(pos[r] - prefix_len[r]) * C + c;
        krow[at] = q3[r * 3 * C + C + c];
        vrow[at] = q3[r * 3 * C + 2 * C + c];
    }
}
void cuda_kv_store_decode(const CudaCtx* x, float* krow, float* vrow, const float* q3, const int* rows,
                          const int* prefix_len, const int* pos, int n, int C, size_t row_stride) {
    SAPO_LAUNCH(cuda_kv_store_decode_kernel, grid_for((size_t)n * C), BLOCK, 0, x->stream, krow, vrow, q3, rows,
                prefix_len, pos, n, C, row_stride);
}

/* One warp per (row, head); the scores of the prompt's positions then the row's own live in
 * shared memory (n_ctx floats at most). */
__global__ void cuda_decode_attention_kernel(float* y, const float* q3, const float* kprefix, const float* vprefix,
                                             const float* krow, const float* vrow, const int* rows, const int* prefix,
                                             const int* prefix_len, const int* pos, int C, int NH,
                                             size_t prefix_stride, size_t row_stride) {
    SAPO_DYNAMIC_SHARED(float, scores);
    int i = blockIdx.x, h = blockIdx.y, lane = threadIdx.x;
    int hs = C / NH, plen = prefix_len[i], n_keys = pos[i] + 1;
    float scale = 1.0f / sqrtf((float)hs);
    const float* q = q3 + (size_t)i * 3 * C + h * hs;
    size_t pslot = plen > 0 ? (size_t)prefix[i] * prefix_stride : 0, rslot = (size_t)rows[i] * row_stride;
    const float* kp = kprefix + pslot + h * hs;
    const float* vp = vprefix + pslot + h * hs;
    const float* kr = krow + rslot + h * hs;
    const float* vr = vrow + rslot + h * hs;
    float mx = -INFINITY;
    for (int t = lane; t < n_keys; t += 32) {
        const float* k = t < plen ? kp + (size_t)t * C : kr + (size_t)(t - plen) * C;
        float dot = 0.0f;
        for (int d = 0; d < hs; d++) dot += k[d] * q[d];
        scores[t] = scale * dot;
        mx = fmaxf(mx, scores[t]);
    }
    mx = warp_max(mx);
    float sum = 0.0f;
    for (int t = lane; t < n_keys; t += 32) {
        scores[t] = expf(scores[t] - mx);
        sum += scores[t];
    }
    sum = warp_sum(sum);
    __syncwarp(); /* every lane reads every score below */
    float inv = 1.0f / sum;
    for (int d = lane; d < hs; d += 32) {
        float acc = 0.0f;
        for (int t = 0; t < plen; t++) acc += vp[(size_t)t * C + d] * scores[t];
        for (int t = plen; t < n_keys; t++) acc += vr[(size_t)(t - plen) * C + d] * scores[t];
        y[(size_t)i * C + h * hs + d] = inv * acc;
    }
}
void cuda_decode_attention(const CudaCtx* x, float* y, const float* q3, const float* kprefix, const float* vprefix,
                           const float* krow, const float* vrow, const int* rows, const int* prefix,
                           const int* prefix_len, const int* pos, int n, int C, int NH, size_t prefix_stride,
                           size_t row_stride, int n_ctx) {
    if (x->det) {
        cuda_det_decode_attention(x, y, q3, kprefix, vprefix, krow, vrow, rows, prefix, prefix_len, pos, n, C, NH, prefix_stride, row_stride, n_ctx);
        return;
    }
    dim3 grid((unsigned)n, (unsigned)NH);
    SAPO_LAUNCH(cuda_decode_attention_kernel, grid, 32, (size_t)n_ctx * sizeof(float), x->stream, y, q3, kprefix,
                vprefix, krow, vrow, rows, prefix, prefix_len, pos, C, NH, prefix_stride, row_stride);
}

SAPO_CUDA_NS_END
