/* One AdamW step over every parameter: adamw_update of src/model/adamw_scalars.h, the CPU's
 * own loop body, element for element; the step's scalars come from the host (adamw_scalars).
 * Twins cpu_adamw of src/model/cpu_backend.c, bit for bit. */
#ifndef SAPO_KERNELS_ADAMW_CUH
#define SAPO_KERNELS_ADAMW_CUH

#include "cuda_common.cuh"
#include "model/adamw_scalars.h"

SAPO_CUDA_NS_BEGIN

__global__ void cuda_adamw_kernel(float* params, const float* grads, float* m, float* v, size_t n, float beta1,
                                  float beta2, float eps, float grad_scale, float step_size, float decay,
                                  float bc2_sqrt) {
    GRID_STRIDE_LOOP(i, n)
        adamw_update(&params[i], &m[i], &v[i], grads[i], beta1, beta2, eps, grad_scale, step_size, decay, bc2_sqrt);
}
void cuda_adamw(const CudaCtx* x, float* params, const float* grads, float* m, float* v, size_t n, float beta1,
                float beta2, float eps, float grad_scale, float step_size, float decay, float bc2_sqrt) {
    SAPO_LAUNCH(cuda_adamw_kernel, grid_for(n), BLOCK, 0, x->stream, params, grads, m, v, n, beta1, beta2, eps,
                grad_scale, step_size, decay, bc2_sqrt);
}

SAPO_CUDA_NS_END

#endif
