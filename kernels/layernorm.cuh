/* LayerNorm over the channels (eps 1e-5), saving each row's mean and 1/std; its backward:
 * the input gradient a warp per row, the weight and bias gradients as column sums in row
 * chunks then the chunks in order (no atomics). Twins layernorm_forward and
 * layernorm_backward of src/model/cpu_layers.c; the deterministic twins call the CPU's own
 * det_math.h row functions, a thread per row (per channel for the weights). */
#ifndef SAPO_KERNELS_LAYERNORM_CUH
#define SAPO_KERNELS_LAYERNORM_CUH

#include "cuda_common.cuh"
#include "model/det_math.h"

SAPO_CUDA_NS_BEGIN

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

/* ---- deterministic: a thread per row (forward, input gradient), a thread per channel (weights) */
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

SAPO_CUDA_NS_END

#endif
