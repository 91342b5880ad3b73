/* Causal multi-head attention over a packed batch's segments (a completion reads its prompt's
 * keys first, then its own), forward and backward, in kernels of its own rather than cuBLAS.
 * Twins attention_forward and attention_backward of src/model/cpu_layers.c; the
 * deterministic twins (attention_forward_det, attention_backward_det) call det_attention.h's
 * per-query and per-key functions, a thread per (query or key, head). */
#ifndef SAPO_KERNELS_ATTENTION_CUH
#define SAPO_KERNELS_ATTENTION_CUH

#include "cuda_common.cuh"
#include "model/det_attention.h"

SAPO_CUDA_NS_BEGIN

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
    float inv = 1.0f / warp_exp_sum(row, last + 1, mx, lane);
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

/* ---- deterministic: a thread per (query, head), then per (key, head) ------------------------ */
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

SAPO_CUDA_NS_END

#endif
