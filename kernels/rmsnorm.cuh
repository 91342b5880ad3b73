/* RMSNorm over the channels (Hugging Face's, in fp32), saving each row's 1/rms; its backward:
 * the input gradient a warp per row, the weight gradient as column sums in row chunks then the
 * chunks in order (no atomics). Twins rmsnorm_forward and rmsnorm_backward of
 * src/model/llama_layers.c; the deterministic forward calls llama_math.h's rmsnorm_row, a
 * thread per row, and the deterministic backward repeats rmsnorm_row_backward's float
 * expressions, a thread per row for the input and per channel for the weight. */
#ifndef SAPO_KERNELS_RMSNORM_CUH
#define SAPO_KERNELS_RMSNORM_CUH

#include "cuda_common.cuh"
#include "model/llama_math.h"

SAPO_CUDA_NS_BEGIN

__global__ void cuda_rmsnorm_forward_kernel(float* out, float* rstd, const float* inp, const float* w, int N, int C,
                                            float eps) {
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= N) return; /* the whole warp leaves together */
    const float* xr = inp + (size_t)row * C;
    float ss = 0.0f;
    for (int i = lane; i < C; i += 32) ss += xr[i] * xr[i];
    float r = 1.0f / sqrtf(warp_sum(ss) / (float)C + eps);
    float* o = out + (size_t)row * C;
    for (int i = lane; i < C; i += 32) o[i] = w[i] * (xr[i] * r);
    if (lane == 0) rstd[row] = r;
}
void cuda_rmsnorm_forward(const CudaCtx* x, float* out, float* rstd, const float* inp, const float* w, int N, int C,
                          float eps) {
    if (x->det) {
        cuda_det_rmsnorm_forward(x, out, rstd, inp, w, N, C, eps);
        return;
    }
    SAPO_LAUNCH(cuda_rmsnorm_forward_kernel, rows_grid(N), ROW_BLOCK, 0, x->stream, out, rstd, inp, w, N, C, eps);
}

/* dx += r (w d) - x r^3 mean((w d) x), as rmsnorm_row_backward; the dot product across the warp. */
__global__ void cuda_rmsnorm_backward_dinp_kernel(float* dinp, const float* dout, const float* inp, const float* w,
                                                  const float* rstd, int N, int C) {
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= N) return;
    const float* d = dout + (size_t)row * C;
    const float* xr = inp + (size_t)row * C;
    float* dx = dinp + (size_t)row * C;
    float r = rstd[row], dot = 0.0f;
    for (int i = lane; i < C; i += 32) dot += w[i] * d[i] * xr[i];
    float k = warp_sum(dot) * r * r * r / (float)C;
    for (int i = lane; i < C; i += 32) dx[i] += r * (w[i] * d[i]) - xr[i] * k;
}

/* Block (32, 8): 32 channels, 8 row lanes; grid (channel tiles, row chunks). partials[chunk][c]
 * = the chunk's sum of d x r at channel c. */
__global__ void cuda_rmsnorm_backward_weight_kernel(float* partials, const float* dout, const float* inp,
                                                    const float* rstd, int N, int C, int n_chunks) {
    __shared__ float sdw[8][32];
    int c = blockIdx.x * 32 + threadIdx.x, chunk = blockIdx.y;
    int per = (N + n_chunks - 1) / n_chunks, r0 = chunk * per, r1 = r0 + per < N ? r0 + per : N;
    float dw = 0.0f;
    if (c < C)
        for (int r = r0 + (int)threadIdx.y; r < r1; r += 8)
            dw += dout[(size_t)r * C + c] * (inp[(size_t)r * C + c] * rstd[r]);
    sdw[threadIdx.y][threadIdx.x] = dw;
    __syncthreads();
    if (threadIdx.y == 0 && c < C) {
        float a = 0.0f;
        for (int k = 0; k < 8; k++) a += sdw[k][threadIdx.x];
        partials[(size_t)chunk * C + c] = a;
    }
}

void cuda_rmsnorm_backward(const CudaCtx* x, float* dinp, float* dw, const float* dout, const float* inp,
                           const float* w, const float* rstd, int N, int C) {
    if (x->det) {
        cuda_det_rmsnorm_backward(x, dinp, dw, dout, inp, w, rstd, N, C);
        return;
    }
    SAPO_LAUNCH(cuda_rmsnorm_backward_dinp_kernel, rows_grid(N), ROW_BLOCK, 0, x->stream, dinp, dout, inp, w, rstd, N,
                C);
    /* the layernorm's chunking (64 rows a chunk at least), in the first C floats of each chunk's
     * 2C of x->partials */
    int n_chunks = (N + 63) / 64;
    if (n_chunks > CUDA_COLSUM_MAX_CHUNKS) n_chunks = CUDA_COLSUM_MAX_CHUNKS;
    if (n_chunks < 1) n_chunks = 1;
    dim3 grid((unsigned)((C + 31) / 32), (unsigned)n_chunks), block(32, 8);
    SAPO_LAUNCH(cuda_rmsnorm_backward_weight_kernel, grid, block, 0, x->stream, x->partials, dout, inp, rstd, N, C,
                n_chunks);
    cuda_colsum_finish(x, dw, x->partials, n_chunks, C, C);
}

/* ---- deterministic: a thread per row (forward, input gradient), a thread per channel (weight) */
__global__ void cuda_det_rmsnorm_forward_kernel(float* out, float* rstd, const float* inp, const float* w, int N, int C,
                                                float eps) {
    int n = blockIdx.x * blockDim.x + threadIdx.x;
    if (n < N) rmsnorm_row(out + (size_t)n * C, &rstd[n], inp + (size_t)n * C, w, C, eps);
}
void cuda_det_rmsnorm_forward(const CudaCtx* x, float* out, float* rstd, const float* inp, const float* w, int N,
                              int C, float eps) {
    SAPO_LAUNCH(cuda_det_rmsnorm_forward_kernel, det_grid(N), DET_BLOCK, 0, x->stream, out, rstd, inp, w, N, C, eps);
}

/* rmsnorm_row_backward writes the row's dx and its share of dw together, and a thread per row
 * cannot add to dw: its dx half here and its dw half below, the same float expressions in the
 * same order, so the bits are the CPU's. */
__global__ void cuda_det_rmsnorm_dinp_kernel(float* dinp, const float* dout, const float* inp, const float* w,
                                             const float* rstd, int N, int C) {
    int n = blockIdx.x * blockDim.x + threadIdx.x;
    if (n >= N) return;
    const float* d = dout + (size_t)n * C;
    const float* xr = inp + (size_t)n * C;
    float* dx = dinp + (size_t)n * C;
    float r = rstd[n], dot = 0.0f;
    for (int i = 0; i < C; i++) dot += w[i] * d[i] * xr[i];
    float k = dot * r * r * r / (float)C;
    for (int i = 0; i < C; i++) dx[i] += r * (w[i] * d[i]) - xr[i] * k;
}
/* channel i: every row in order, as the CPU's row loop adds them */
__global__ void cuda_det_rmsnorm_weight_kernel(float* dw, const float* dout, const float* inp, const float* rstd, int N,
                                               int C) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= C) return;
    float acc = dw[i];
    for (int n = 0; n < N; n++) acc += dout[(size_t)n * C + i] * (inp[(size_t)n * C + i] * rstd[n]);
    dw[i] = acc;
}
void cuda_det_rmsnorm_backward(const CudaCtx* x, float* dinp, float* dw, const float* dout, const float* inp,
                               const float* w, const float* rstd, int N, int C) {
    SAPO_LAUNCH(cuda_det_rmsnorm_dinp_kernel, det_grid(N), DET_BLOCK, 0, x->stream, dinp, dout, inp, w, rstd, N, C);
    SAPO_LAUNCH(cuda_det_rmsnorm_weight_kernel, det_grid(C), DET_BLOCK, 0, x->stream, dw, dout, inp, rstd, N, C);
}

SAPO_CUDA_NS_END

#endif
