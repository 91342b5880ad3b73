/* The residual connection: out = a + b element-wise. Twins residual_forward of
 * src/model/cpu_layers.c (bit for bit: one addition). */
#ifndef SAPO_KERNELS_RESIDUAL_CUH
#define SAPO_KERNELS_RESIDUAL_CUH

#include "cuda_common.cuh"

SAPO_CUDA_NS_BEGIN

__global__ void cuda_residual_forward_kernel(float* out, const float* a, const float* b, size_t N) {
    GRID_STRIDE_LOOP(i, N) out[i] = a[i] + b[i];
}
void cuda_residual_forward(const CudaCtx* x, float* out, const float* a, const float* b, size_t N) {
    SAPO_LAUNCH(cuda_residual_forward_kernel, grid_for(N), BLOCK, 0, x->stream, out, a, b, N);
}

SAPO_CUDA_NS_END

#endif
