/* The SwiGLU MLP's activation: h = silu(gate) * up from the fused gate | up product (N, 2F), and
 * the gradients of gate and up from dh (overwritten: the fused product is its only reader).
 * Twins swiglu_forward and swiglu_backward of src/model/llama_layers.c: a thread per channel
 * calls llama_math.h's swiglu_value / swiglu_grad, whose sigmoid is the device's expf (so the
 * default mode differs from the CPU by expf's rounding) or, deterministic, exp_poly (the CPU's
 * bits). */
#ifndef SAPO_KERNELS_SWIGLU_CUH
#define SAPO_KERNELS_SWIGLU_CUH

#include "cuda_common.cuh"
#include "model/llama_math.h"

SAPO_CUDA_NS_BEGIN

__global__ void cuda_swiglu_forward_kernel(float* h, const float* gu, int N, int F, int det) {
    GRID_STRIDE_LOOP(e, (size_t)N * F) {
        size_t n = e / F, i = e % F;
        const float* g = gu + n * 2 * F;
        h[e] = swiglu_value(g[i], g[F + i], det);
    }
}
void cuda_swiglu_forward(const CudaCtx* x, float* h, const float* gu, int N, int F) {
    if ((size_t)N * F == 0) return;
    SAPO_LAUNCH(cuda_swiglu_forward_kernel, grid_for((size_t)N * F), BLOCK, 0, x->stream, h, gu, N, F, x->det);
}

__global__ void cuda_swiglu_backward_kernel(float* dgu, const float* dh, const float* gu, int N, int F, int det) {
    GRID_STRIDE_LOOP(e, (size_t)N * F) {
        size_t n = e / F, i = e % F;
        const float* g = gu + n * 2 * F;
        float* dg = dgu + n * 2 * F;
        swiglu_grad(&dg[i], &dg[F + i], dh[e], g[i], g[F + i], det);
    }
}
void cuda_swiglu_backward(const CudaCtx* x, float* dgu, const float* dh, const float* gu, int N, int F) {
    if ((size_t)N * F == 0) return;
    SAPO_LAUNCH(cuda_swiglu_backward_kernel, grid_for((size_t)N * F), BLOCK, 0, x->stream, dgu, dh, gu, N, F, x->det);
}

SAPO_CUDA_NS_END

#endif
