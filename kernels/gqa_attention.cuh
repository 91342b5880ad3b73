/* Grouped-query attention (the Llama/Qwen2 family) over a packed batch's segments, forward and
 * backward, and generation's KV-cache stores and decode attention: attention.cuh's and
 * decode.cuh's kernels for AttnShape's layout, where a token's fused row holds n_head query
 * heads, then n_kv_head key heads, then as many value heads (head_dim channels each, not
 * d_model / n_head), query head h reads key/value head h / (n_head / n_kv_head), and the KV
 * caches keep n_kv_head * head_dim floats a position. Twins attention_forward_gqa,
 * attention_backward_gqa and decode_attention_rows of src/model/cpu_layers.c (and the prefill
 * and decode stores of llama_cpu_backend.c); the deterministic twins call det_attention.h's
 * per-query and per-key functions as attention_forward_det_gqa, attention_backward_det_gqa
 * and the deterministic decode_attention_rows do, a thread per (query or key, head), in the
 * CPU's order. The byte-level GPT keeps attention.cuh and decode.cuh as they are. */
#ifndef SAPO_KERNELS_GQA_ATTENTION_CUH
#define SAPO_KERNELS_GQA_ATTENTION_CUH

#include "attention.cuh" /* seg_key */
#include "cuda_common.cuh"
#include "model/det_attention.h"

SAPO_CUDA_NS_BEGIN

/* Where query head h, its key/value head's key and value and its output start in a token's
 * rows (cpu_layers.c's AttnLayout): q | k | v in the fused row (row floats), the output heads
 * in order (qd floats). */
typedef struct {
    int hs, qd, kd, row, group;
} GqaLayout;

__device__ __forceinline__ GqaLayout gqa_layout(AttnShape sh) {
    GqaLayout l;
    l.hs = sh.head_dim;
    l.qd = sh.n_head * sh.head_dim;
    l.kd = sh.n_kv_head * sh.head_dim;
    l.row = l.qd + 2 * l.kd;
    l.group = sh.n_head / sh.n_kv_head;
    return l;
}
/* the offset of key/value head g's key in a fused row (its value is kd further) */
__device__ __forceinline__ size_t gqa_key(const GqaLayout& l, int g) { return (size_t)l.qd + (size_t)g * l.hs; }

/* One warp per (token, query head), as cuda_attention_forward_kernel: lanes split the keys for
 * the scores and the head's channels for the output; every sum in a fixed order. */
__global__ void cuda_attention_forward_gqa_kernel(float* out, float* att, const float* qkv, const CudaSeg* segs,
                                                  const int* seg_of, int N, AttnShape sh) {
    int i = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32, h = blockIdx.y;
    if (i >= N) return; /* the whole warp leaves together */
    const GqaLayout l = gqa_layout(sh);
    const CudaSeg sg = segs[seg_of[i]];
    int hs = l.hs, t = i - sg.start, ctx = sg.plen + sg.len, last = sg.plen + t;
    size_t ko = gqa_key(l, h / l.group), vo = ko + l.kd;
    float scale = 1.0f / sqrtf((float)hs);
    const float* q = qkv + (size_t)i * l.row + h * hs;
    float* row = att + sg.att + ((size_t)h * sg.len + t) * ctx;
    float mx = -INFINITY;
    for (int j = lane; j <= last; j += 32) {
        const float* k = qkv + (size_t)seg_key(sg, j) * l.row + ko;
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
        for (int j = 0; j <= last; j++) acc += row[j] * qkv[(size_t)seg_key(sg, j) * l.row + vo + d];
        out[(size_t)i * l.qd + h * hs + d] = acc;
    }
}
void cuda_attention_forward_gqa(const CudaCtx* x, float* out, float* att, const float* qkv, const CudaSeg* segs,
                                const int* seg_of, int N, AttnShape sh) {
    if (x->det) {
        cuda_det_attention_forward_gqa(x, out, att, qkv, segs, seg_of, N, sh);
        return;
    }
    dim3 grid(rows_grid(N), (unsigned)sh.n_head);
    SAPO_LAUNCH(cuda_attention_forward_gqa_kernel, grid, ROW_BLOCK, 0, x->stream, out, att, qkv, segs, seg_of, N, sh);
}

/* Pass 1, per (query, query head): datt = dy . v of each key read, the softmax backward in
 * place (dscore = att * (datt - sum(att * datt))), then dq += scale * dscore . k. */
__global__ void cuda_attention_backward_gqa_query_kernel(float* dqkv, float* datt, const float* dout, const float* qkv,
                                                         const float* att, const CudaSeg* segs, const int* seg_of,
                                                         int N, AttnShape sh) {
    int i = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32, h = blockIdx.y;
    if (i >= N) return;
    const GqaLayout l = gqa_layout(sh);
    const CudaSeg sg = segs[seg_of[i]];
    int hs = l.hs, t = i - sg.start, ctx = sg.plen + sg.len, last = sg.plen + t;
    size_t ko = gqa_key(l, h / l.group), vo = ko + l.kd;
    float scale = 1.0f / sqrtf((float)hs);
    const float* dy = dout + (size_t)i * l.qd + h * hs;
    size_t off = sg.att + ((size_t)h * sg.len + t) * ctx;
    const float* arow = att + off;
    float* drow = datt + off;
    float dot = 0.0f;
    for (int j = lane; j <= last; j += 32) {
        const float* v = qkv + (size_t)seg_key(sg, j) * l.row + vo;
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
        for (int j = 0; j <= last; j++) acc += drow[j] * qkv[(size_t)seg_key(sg, j) * l.row + ko + d];
        dqkv[(size_t)i * l.row + h * hs + d] += scale * acc;
    }
}

/* Segment sg's queries t = t0 .. len-1 of query head h, reading column col of their rows: the
 * sums of dscore * q (for dk) and att * dy (for dv) at channel d of the head. */
__device__ __forceinline__ void gqa_key_grads_from(const CudaSeg& sg, int col, int t0, const float* datt,
                                                   const float* att, const float* qkv, const float* dout,
                                                   const GqaLayout& l, int h, int d, float* dk, float* dv) {
    int ctx = sg.plen + sg.len;
    size_t at = sg.att + ((size_t)h * sg.len + t0) * ctx + col;
    float ak = 0.0f, av = 0.0f;
    for (int t = t0; t < sg.len; t++, at += ctx) {
        size_t qi = (size_t)sg.start + t;
        ak += datt[at] * qkv[qi * l.row + h * l.hs + d];
        av += att[at] * dout[qi * l.qd + h * l.hs + d];
    }
    *dk = ak;
    *dv = av;
}

/* Pass 2, per (key, key/value head g): the group's query heads in order, in the key's own
 * segment from its position on, then in every segment continuing it (a prompt's completions),
 * each sum added on its own. */
__global__ void cuda_attention_backward_gqa_key_kernel(float* dqkv, const float* datt, const float* dout,
                                                       const float* qkv, const float* att, const CudaSeg* segs,
                                                       const int* children, const int* seg_of, int N, AttnShape sh) {
    int j = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32, g = blockIdx.y;
    if (j >= N) return;
    const GqaLayout l = gqa_layout(sh);
    const CudaSeg sg = segs[seg_of[j]];
    int u = j - sg.start, h0 = g * l.group;
    float scale = 1.0f / sqrtf((float)l.hs);
    for (int d = lane; d < l.hs; d += 32) {
        float* dk = dqkv + (size_t)j * l.row + gqa_key(l, g) + d;
        float* dv = dk + l.kd;
        float acck = *dk, accv = *dv, gk, gv;
        for (int h = h0; h < h0 + l.group; h++) {
            gqa_key_grads_from(sg, sg.plen + u, u, datt, att, qkv, dout, l, h, d, &gk, &gv);
            acck += scale * gk;
            accv += gv;
        }
        for (int c = 0; c < sg.n_children; c++) {
            const CudaSeg ch = segs[children[sg.child0 + c]];
            for (int h = h0; h < h0 + l.group; h++) {
                gqa_key_grads_from(ch, u, 0, datt, att, qkv, dout, l, h, d, &gk, &gv);
                acck += scale * gk;
                accv += gv;
            }
        }
        *dk = acck;
        *dv = accv;
    }
}

void cuda_attention_backward_gqa(const CudaCtx* x, float* dqkv, float* datt, const float* dout, const float* qkv,
                                 const float* att, const CudaSeg* segs, const int* children, const int* seg_of, int N,
                                 AttnShape sh) {
    if (x->det) {
        cuda_det_attention_backward_gqa(x, dqkv, datt, dout, qkv, att, segs, children, seg_of, N, sh);
        return;
    }
    dim3 queries(rows_grid(N), (unsigned)sh.n_head), keys(rows_grid(N), (unsigned)sh.n_kv_head);
    SAPO_LAUNCH(cuda_attention_backward_gqa_query_kernel, queries, ROW_BLOCK, 0, x->stream, dqkv, datt, dout, qkv, att,
                segs, seg_of, N, sh);
    SAPO_LAUNCH(cuda_attention_backward_gqa_key_kernel, keys, ROW_BLOCK, 0, x->stream, dqkv, datt, dout, qkv, att,
                segs, children, seg_of, N, sh);
}

/* ---- deterministic: a thread per (query, query head), then per (key, key/value head) -------- */
__global__ void cuda_det_attention_forward_gqa_kernel(float* out, float* att, const float* qkv, const CudaSeg* segs,
                                                      const int* seg_of, int N, AttnShape sh) {
    int i = blockIdx.x * blockDim.x + threadIdx.x, h = blockIdx.y;
    if (i >= N) return;
    const GqaLayout l = gqa_layout(sh);
    const CudaSeg sg = segs[seg_of[i]];
    int hs = l.hs, R = l.row, t = i - sg.start, ctx = sg.plen + sg.len;
    float scale = 1.0f / sqrtf((float)hs);
    const float* k = qkv + (size_t)sg.start * R + gqa_key(l, h / l.group);
    const float* kp = sg.plen ? qkv + (size_t)sg.pstart * R + gqa_key(l, h / l.group) : k;
    det_attend_query(att + sg.att + ((size_t)h * sg.len + t) * ctx, ctx, out + (size_t)i * l.qd + h * hs,
                     qkv + (size_t)i * R + h * hs, kp, kp + l.kd, R, sg.plen, k, k + l.kd, R, t + 1, hs, scale);
}
void cuda_det_attention_forward_gqa(const CudaCtx* x, float* out, float* att, const float* qkv, const CudaSeg* segs,
                                    const int* seg_of, int N, AttnShape sh) {
    dim3 grid(det_grid(N), (unsigned)sh.n_head);
    SAPO_LAUNCH(cuda_det_attention_forward_gqa_kernel, grid, DET_BLOCK, 0, x->stream, out, att, qkv, segs, seg_of, N,
                sh);
}

__global__ void cuda_det_attention_gqa_query_kernel(float* dqkv, float* datt, const float* dout, const float* qkv,
                                                    const float* att, const CudaSeg* segs, const int* seg_of, int N,
                                                    AttnShape sh) {
    int i = blockIdx.x * blockDim.x + threadIdx.x, h = blockIdx.y;
    if (i >= N) return;
    const GqaLayout l = gqa_layout(sh);
    const CudaSeg sg = segs[seg_of[i]];
    int hs = l.hs, R = l.row, t = i - sg.start, ctx = sg.plen + sg.len;
    float scale = 1.0f / sqrtf((float)hs);
    size_t row = sg.att + ((size_t)h * sg.len + t) * ctx;
    const float* k = qkv + (size_t)sg.start * R + gqa_key(l, h / l.group);
    const float* kp = sg.plen ? qkv + (size_t)sg.pstart * R + gqa_key(l, h / l.group) : k;
    det_attend_query_backward(datt + row, ctx, dqkv + (size_t)i * R + h * hs, att + row,
                              dout + (size_t)i * l.qd + h * hs, kp, kp + l.kd, R, sg.plen, k, k + l.kd, R, t + 1, hs,
                              scale);
}
/* key j of key/value head g: the readers in attention_backward_det_gqa's order, its own
 * segment's queries first, then each completion reading it (children, in order), and within
 * each reader the group's query heads in order */
__global__ void cuda_det_attention_gqa_key_kernel(float* dqkv, const float* datt, const float* dout, const float* qkv,
                                                  const float* att, const CudaSeg* segs, const int* children,
                                                  const int* seg_of, int N, AttnShape sh) {
    int j = blockIdx.x * blockDim.x + threadIdx.x, g = blockIdx.y;
    if (j >= N) return;
    const GqaLayout l = gqa_layout(sh);
    const CudaSeg sg = segs[seg_of[j]];
    int hs = l.hs, R = l.row, p = j - sg.start, h0 = g * l.group;
    float* dk = dqkv + (size_t)j * R + gqa_key(l, g);
    for (int c = -1; c < sg.n_children; c++) {
        const CudaSeg r = c < 0 ? sg : segs[children[sg.child0 + c]];
        int rctx = r.plen + r.len, col = c < 0 ? sg.plen + p : p, t0 = c < 0 ? p : 0;
        for (int h = h0; h < h0 + l.group; h++) {
            size_t blk = r.att + (size_t)h * r.len * rctx;
            det_attend_key_backward(dk, dk + l.kd, datt + blk, att + blk, rctx, col, t0, r.len,
                                    qkv + (size_t)r.start * R + h * hs, R, dout + (size_t)r.start * l.qd + h * hs,
                                    l.qd, hs);
        }
    }
}
void cuda_det_attention_backward_gqa(const CudaCtx* x, float* dqkv, float* datt, const float* dout, const float* qkv,
                                     const float* att, const CudaSeg* segs, const int* children, const int* seg_of,
                                     int N, AttnShape sh) {
    dim3 queries(det_grid(N), (unsigned)sh.n_head), keys(det_grid(N), (unsigned)sh.n_kv_head);
    SAPO_LAUNCH(cuda_det_attention_gqa_query_kernel, queries, DET_BLOCK, 0, x->stream, dqkv, datt, dout, qkv, att, segs,
                seg_of, N, sh);
    SAPO_LAUNCH(cuda_det_attention_gqa_key_kernel, keys, DET_BLOCK, 0, x->stream, dqkv, datt, dout, qkv, att, segs,
                children, seg_of, N, sh);
}

/* ---- generation: the KV caches and one decode step ------------------------------------------ */
/* Prefill: token n of segment s stores its key and value heads at slot s, index n - start. */
__global__ void cuda_kv_store_prefill_gqa_kernel(float* kprefix, float* vprefix, const float* qkv, const CudaSeg* segs,
                                                 const int* seg_of, int N, int qd, int kd, size_t prefix_stride) {
    GRID_STRIDE_LOOP(i, (size_t)N * kd) {
        size_t n = i / kd, c = i % kd;
        int s = seg_of[n];
        const float* row = qkv + n * (qd + 2 * kd);
        size_t at = (size_t)s * prefix_stride + (n - segs[s].start) * kd + c;
        kprefix[at] = row[qd + c];
        vprefix[at] = row[qd + kd + c];
    }
}
void cuda_kv_store_prefill_gqa(const CudaCtx* x, float* kprefix, float* vprefix, const float* qkv,
                               const CudaSeg* segs, const int* seg_of, int N, AttnShape sh, size_t prefix_stride) {
    int qd = sh.n_head * sh.head_dim, kd = sh.n_kv_head * sh.head_dim;
    SAPO_LAUNCH(cuda_kv_store_prefill_gqa_kernel, grid_for((size_t)N * kd), BLOCK, 0, x->stream, kprefix, vprefix, qkv,
                segs, seg_of, N, qd, kd, prefix_stride);
}

/* Row r stores its key and value heads in cache row rows[r] at index pos[r] - prefix_len[r]. */
__global__ void cuda_kv_store_decode_gqa_kernel(float* krow, float* vrow, const float* qkv, const int* rows,
                                                const int* prefix_len, const int* pos, int n, int qd, int kd,
                                                size_t row_stride) {
    GRID_STRIDE_LOOP(i, (size_t)n * kd) {
        size_t r = i / kd, c = i % kd;
        const float* q = qkv + r * (qd + 2 * kd);
        size_t at = (size_t)rows[r] * row_stride + (size_t)(pos[r] - prefix_len[r]) * kd + c;
        krow[at] = q[qd + c];
        vrow[at] = q[qd + kd + c];
    }
}
void cuda_kv_store_decode_gqa(const CudaCtx* x, float* krow, float* vrow, const float* qkv, const int* rows,
                              const int* prefix_len, const int* pos, int n, AttnShape sh, size_t row_stride) {
    int qd = sh.n_head * sh.head_dim, kd = sh.n_kv_head * sh.head_dim;
    SAPO_LAUNCH(cuda_kv_store_decode_gqa_kernel, grid_for((size_t)n * kd), BLOCK, 0, x->stream, krow, vrow, qkv, rows,
                prefix_len, pos, n, qd, kd, row_stride);
}

/* One warp per (row, query head): the scores of its prompt's positions, then its own, in its
 * (n_ctx) row of scores; keys and values a position every kd floats. */
__global__ void cuda_decode_attention_gqa_kernel(float* y, float* scores, const float* qkv, const float* kprefix,
                                                 const float* vprefix, const float* krow, const float* vrow,
                                                 const int* rows, const int* prefix, const int* prefix_len,
                                                 const int* pos, AttnShape sh, size_t prefix_stride,
                                                 size_t row_stride, int n_ctx) {
    int i = blockIdx.x, h = blockIdx.y, lane = threadIdx.x;
    const GqaLayout l = gqa_layout(sh);
    int hs = l.hs, kd = l.kd, plen = prefix_len[i], n_keys = pos[i] + 1;
    float scale = 1.0f / sqrtf((float)hs);
    const float* q = qkv + (size_t)i * l.row + h * hs;
    size_t kvh = (size_t)(h / l.group) * hs;
    size_t pslot = plen > 0 ? (size_t)prefix[i] * prefix_stride : 0, rslot = (size_t)rows[i] * row_stride;
    const float* kp = kprefix + pslot + kvh;
    const float* vp = vprefix + pslot + kvh;
    const float* kr = krow + rslot + kvh;
    const float* vr = vrow + rslot + kvh;
    float* sc = scores + ((size_t)i * sh.n_head + h) * n_ctx;
    float mx = -INFINITY;
    for (int t = lane; t < n_keys; t += 32) {
        const float* k = t < plen ? kp + (size_t)t * kd : kr + (size_t)(t - plen) * kd;
        float dot = 0.0f;
        for (int d = 0; d < hs; d++) dot += k[d] * q[d];
        sc[t] = scale * dot;
        mx = fmaxf(mx, sc[t]);
    }
    float sum = warp_exp_sum(sc, n_keys, mx, lane);
    __syncwarp(); /* every lane reads every score below */
    float inv = 1.0f / sum;
    for (int d = lane; d < hs; d += 32) {
        float acc = 0.0f;
        for (int t = 0; t < plen; t++) acc += vp[(size_t)t * kd + d] * sc[t];
        for (int t = plen; t < n_keys; t++) acc += vr[(size_t)(t - plen) * kd + d] * sc[t];
        y[(size_t)i * l.qd + h * hs + d] = inv * acc;
    }
}
void cuda_decode_attention_gqa(const CudaCtx* x, float* y, float* scores, const float* qkv, const float* kprefix,
                               const float* vprefix, const float* krow, const float* vrow, const int* rows,
                               const int* prefix, const int* prefix_len, const int* pos, int n, AttnShape sh,
                               size_t prefix_stride, size_t row_stride, int n_ctx) {
    if (x->det) {
        cuda_det_decode_attention_gqa(x, y, scores, qkv, kprefix, vprefix, krow, vrow, rows, prefix, prefix_len, pos, n,
                                      sh, prefix_stride, row_stride, n_ctx);
        return;
    }
    dim3 grid((unsigned)n, (unsigned)sh.n_head);
    SAPO_LAUNCH(cuda_decode_attention_gqa_kernel, grid, 32, 0, x->stream, y, scores, qkv, kprefix, vprefix, krow, vrow,
                rows, prefix, prefix_len, pos, sh, prefix_stride, row_stride, n_ctx);
}

/* deterministic: row i, query head h, as decode_attention_rows: the training forward's
 * det_attend_query over the prompt's cache, then the row's own */
__global__ void cuda_det_decode_attention_gqa_kernel(float* y, float* scores, const float* qkv, const float* kprefix,
                                                     const float* vprefix, const float* krow, const float* vrow,
                                                     const int* rows, const int* prefix, const int* prefix_len,
                                                     const int* pos, int n, AttnShape sh, size_t prefix_stride,
                                                     size_t row_stride, int n_ctx) {
    int i = blockIdx.x * blockDim.x + threadIdx.x, h = blockIdx.y;
    if (i >= n) return;
    const GqaLayout l = gqa_layout(sh);
    int hs = l.hs, kd = l.kd, plen = prefix_len[i], own = pos[i] - plen + 1;
    float scale = 1.0f / sqrtf((float)hs);
    size_t kvh = (size_t)(h / l.group) * hs;
    size_t pslot = plen > 0 ? (size_t)prefix[i] * prefix_stride : 0, rslot = (size_t)rows[i] * row_stride;
    det_attend_query(scores + ((size_t)i * sh.n_head + h) * n_ctx, plen + own, y + (size_t)i * l.qd + h * hs,
                     qkv + (size_t)i * l.row + h * hs, kprefix + pslot + kvh, vprefix + pslot + kvh, kd, plen,
                     krow + rslot + kvh, vrow + rslot + kvh, kd, own, hs, scale);
}
void cuda_det_decode_attention_gqa(const CudaCtx* x, float* y, float* scores, const float* qkv, const float* kprefix,
                                   const float* vprefix, const float* krow, const float* vrow, const int* rows,
                                   const int* prefix, const int* prefix_len, const int* pos, int n, AttnShape sh,
                                   size_t prefix_stride, size_t row_stride, int n_ctx) {
    dim3 grid(det_grid(n), (unsigned)sh.n_head);
    SAPO_LAUNCH(cuda_det_decode_attention_gqa_kernel, grid, DET_BLOCK, 0, x->stream, y, scores, qkv, kprefix, vprefix,
                krow, vrow, rows, prefix, prefix_len, pos, n, sh, prefix_stride, row_stride, n_ctx);
}

SAPO_CUDA_NS_END

#endif
