/* GELU, GPT-2's tanh approximation, keeping the tanh for the backward pass, and its
 * backward. Twins gelu_forward and gelu_backward of src/model/cpu_layers.c; the deterministic
 * forward calls det_math.h's gelu_value, the CPU's own function. */
#ifndef SAPO_KERNELS_GELU_CUH
#define SAPO_KERNELS_GELU_CUH

#include "cuda_common.cuh"
#include "model/det_math.h"

SAPO_CUDA_NS_BEGIN

/* tanh through one expf. The CPU's tanh_poly (det_math.h) goes through exp_poly and clamps
 * its argument instead, so the default forward differs from the CPU by rounding; the
 * deterministic forward below is the CPU's own function. */
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

/* ---- deterministic --------------------------------------------------------------------------- */
__global__ void cuda_det_gelu_forward_kernel(float* out, float* th, const float* inp, size_t N) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) out[i] = gelu_value(inp[i], &th[i]);
}
void cuda_det_gelu_forward(const CudaCtx* x, float* out, float* th, const float* inp, size_t N) {
    SAPO_LAUNCH(cuda_det_gelu_forward_kernel, det_grid(N), DET_BLOCK, 0, x->stream, out, th, inp, N);
}

SAPO_CUDA_NS_END

#endif
