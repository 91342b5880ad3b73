/* The squared gradient norm in double: fixed-grid partial sums then one fixed tree, or in the
 * deterministic mode det_math.h's DET_SUMSQ_CHUNKS chunks, a thread each, that the host adds
 * in order. Twins cpu_grad_norm of src/model/cpu_backend.c (bit for bit when deterministic). */
#ifndef SAPO_KERNELS_GRAD_NORM_CUH
#define SAPO_KERNELS_GRAD_NORM_CUH

#include "cuda_common.cuh"
#include "model/det_math.h"

SAPO_CUDA_NS_BEGIN

static_assert(DET_SUMSQ_CHUNKS <= CUDA_SUMSQ_BLOCKS, "the gradient-norm chunks fit CudaCtx.sumsq");

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

/* ---- deterministic --------------------------------------------------------------------------- */
/* chunk k of DET_SUMSQ_CHUNKS into x->sumsq[k]; the host adds them in order */
__global__ void cuda_det_sumsq_kernel(double* partials, const float* data, size_t n) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < DET_SUMSQ_CHUNKS) partials[k] = det_sumsq_chunk(data, n, k);
}
void cuda_det_sumsq(const CudaCtx* x, const float* data, size_t n) {
    SAPO_LAUNCH(cuda_det_sumsq_kernel, det_grid(DET_SUMSQ_CHUNKS), DET_BLOCK, 0, x->stream, x->sumsq, data, n);
}

SAPO_CUDA_NS_END

#endif
