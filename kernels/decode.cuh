/* Generation with KV caches: the prompts' keys and values stored at prefill, each decode
 * row's own stored as it goes, and one decode step's attention (a row reads its prompt's
 * cache, then its own). Twins cpu_prefill's copies, op_decode_kv_store and
 * decode_attention_run of src/model/cpu_backend.c; the deterministic decode attention calls
 * det_attention.h's det_attend_query, the training forward's own function. */
#ifndef SAPO_KERNELS_DECODE_CUH
#define SAPO_KERNELS_DECODE_CUH

#include "cuda_common.cuh"
#include "launch_limits.h"
#include "model/det_attention.h"

SAPO_CUDA_NS_BEGIN

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
    float sum = warp_exp_sum(scores, n_keys, mx, lane);
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
    /* n_ctx scores in dynamic shared memory: above 48 KiB (n_ctx 12,288) the kernel must be
     * allowed more, up to the device's opt-in maximum (launch_limits.h). */
    static size_t allowed = SAPO_SMEM_DEFAULT_MAX; /* what this process has allowed the kernel */
    size_t smem;
    char why[320];
    int optin = (int)SAPO_SMEM_DEFAULT_MAX;
    if ((size_t)n_ctx * sizeof(float) > SAPO_SMEM_DEFAULT_MAX) { /* the device's opt-in maximum */
        int device = 0;
        cudaCheck(cudaGetDevice(&device));
        cudaCheck(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    }
    int need = launch_decode_smem_check(n_ctx, (size_t)optin, &smem, why, sizeof why);
    if (need < 0) cuda_die(why);
    if (need > 0 && smem > allowed) {
        cudaCheck(cudaFuncSetAttribute(cuda_decode_attention_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        allowed = smem;
    }
    dim3 grid((unsigned)n, (unsigned)NH);
    SAPO_LAUNCH(cuda_decode_attention_kernel, grid, 32, smem, x->stream, y, q3, kprefix,
                vprefix, krow, vrow, rows, prefix, prefix_len, pos, C, NH, prefix_stride, row_stride);
}

/* ---- deterministic: row i, head h; scores in scratch (n, NH, n_ctx) -------------------------- */
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

SAPO_CUDA_NS_END

#endif
