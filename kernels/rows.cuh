/* Rows by index: gather (dst row i = src row idx[i]) and its transpose, scatter-add (dst row
 * idx[i] += src row i). The Llama/Qwen2 family's embedding is a gather of token rows, and its
 * head gathers the rows with a target a chunk at a time and scatters their gradients back.
 * Twins op_gather_rows and op_scatter_add_rows of src/model/llama_cpu_backend.c, bit for bit
 * (a copy, one addition an element). */
#ifndef SAPO_KERNELS_ROWS_CUH
#define SAPO_KERNELS_ROWS_CUH

#include "cuda_common.cuh"

SAPO_CUDA_NS_BEGIN

__global__ void cuda_gather_rows_kernel(float* dst, const float* src, const int* idx, int n, int C) {
    GRID_STRIDE_LOOP(i, (size_t)n * C) {
        size_t r = i / C, c = i % C;
        dst[i] = src[(size_t)idx[r] * C + c];
    }
}
void cuda_gather_rows(const CudaCtx* x, float* dst, const float* src, const int* idx, int n, int C) {
    if (n < 1) return;
    SAPO_LAUNCH(cuda_gather_rows_kernel, grid_for((size_t)n * C), BLOCK, 0, x->stream, dst, src, idx, n, C);
}

/* A thread per element of src: with distinct rows, no two threads write the same element. */
__global__ void cuda_scatter_add_rows_kernel(float* dst, const float* src, const int* idx, int n, int C) {
    GRID_STRIDE_LOOP(i, (size_t)n * C) {
        size_t r = i / C, c = i % C;
        dst[(size_t)idx[r] * C + c] += src[i];
    }
}
void cuda_scatter_add_rows(const CudaCtx* x, float* dst, const float* src, const int* idx, int n, int C) {
    if (n < 1) return;
    SAPO_LAUNCH(cuda_scatter_add_rows_kernel, grid_for((size_t)n * C), BLOCK, 0, x->stream, dst, src, idx, n, C);
}

SAPO_CUDA_NS_END

#endif
