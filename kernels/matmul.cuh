/* The linear layers: out = inp @ w^T + bias and its three gradient products, through cuBLAS
 * sgemm/sgemv on column-major views of the row-major arrays, or in the deterministic mode
 * through cuda_det_gemm, a thread per output element with det_matmul.h's fmaf chain. Twins
 * matmul_forward and matmul_backward of src/model/cpu_layers.c (det_gemm and det_colsum_add of
 * src/model/det_matmul.c). */
#ifndef SAPO_KERNELS_MATMUL_CUH
#define SAPO_KERNELS_MATMUL_CUH

#include "cuda_common.cuh"
#include "launch_limits.h"

SAPO_CUDA_NS_BEGIN

__global__ void cuda_bias_broadcast_kernel(float* out, const float* bias, int N, int OC) {
    GRID_STRIDE_LOOP(i, (size_t)N * OC) out[i] = bias[i % OC];
}
void cuda_bias_broadcast(const CudaCtx* x, float* out, const float* bias, int N, int OC) {
    SAPO_LAUNCH(cuda_bias_broadcast_kernel, grid_for((size_t)N * OC), BLOCK, 0, x->stream, out, bias, N, OC);
}

void cuda_matmul_forward(const CudaCtx* x, float* out, const float* inp, const float* w, const float* bias, int N, int IC,
                         int OC) {
    const float one = 1.0f, zero = 0.0f;
    /* like the CPU: out = bias, then out = inp @ w^T + out */
    if (bias) cuda_bias_broadcast(x, out, bias, N, OC);
    if (x->det) {
        cuda_det_gemm(x, 0, 1, N, OC, IC, 1.0f, inp, IC, w, IC, bias ? 1.0f : 0.0f, out, OC);
        return;
    }
    /* column-major: out^T (OC x N) = w (OC x IC, stored as IC x OC) ^T . inp^T (IC x N) */
    cublasCheck(cublasSgemm(x->blas, CUBLAS_OP_T, CUBLAS_OP_N, OC, N, IC, &one, w, IC, inp, IC, bias ? &one : &zero, out,
                            OC));
}

void cuda_matmul_backward(const CudaCtx* x, float* dinp, float* dw, float* dbias, const float* dout, const float* inp,
                          const float* w, int N, int IC, int OC) {
    const float one = 1.0f;
    if (x->det) { /* cpu_layers.c matmul_backward with det: the same three products */
        cuda_det_gemm(x, 0, 0, N, IC, OC, 1.0f, dout, OC, w, IC, 1.0f, dinp, IC);
        cuda_det_gemm(x, 1, 0, OC, IC, N, 1.0f, dout, OC, inp, IC, 1.0f, dw, IC);
        if (dbias) cuda_det_gemm(x, 0, 0, 1, OC, N, 1.0f, x->ones, N, dout, OC, 1.0f, dbias, OC); /* det_colsum_add */
        return;
    }
    /* dinp (N, IC) += dout (N, OC) @ w (OC, IC):  dinp^T = w^T . dout^T */
    cublasCheck(cublasSgemm(x->blas, CUBLAS_OP_N, CUBLAS_OP_N, IC, N, OC, &one, w, IC, dout, OC, &one, dinp, IC));
    /* dw (OC, IC) += dout^T @ inp:  dw^T (IC x OC) = inp^T (IC x N) . dout (N x OC) */
    cublasCheck(cublasSgemm(x->blas, CUBLAS_OP_N, CUBLAS_OP_T, IC, OC, N, &one, inp, IC, dout, OC, &one, dw, IC));
    /* dbias (OC) += column sums of dout: dout^T (OC x N) . ones (N) */
    if (dbias) cublasCheck(cublasSgemv(x->blas, CUBLAS_OP_N, OC, N, &one, dout, OC, x->ones, 1, &one, dbias, 1));
}

/* ---- deterministic: the product of det_matmul.h, thread (i, j) owns C[i][j] ------------------ */
__global__ void cuda_det_gemm_kernel(int ta, int tb, int M, int N, int K, float alpha, const float* A, int lda,
                                     const float* B, int ldb, float beta, float* C, int ldc) {
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= M || j >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; k++) {
        float a = ta ? A[(size_t)k * lda + i] : A[(size_t)i * lda + k];
        float b = tb ? B[(size_t)j * ldb + k] : B[(size_t)k * ldb + j];
        acc = fmaf(a, b, acc);
    }
    float r = alpha * acc;
    size_t at = (size_t)i * ldc + j;
    C[at] = beta != 0.0f ? C[at] + r : r;
}
void cuda_det_gemm(const CudaCtx* x, int ta, int tb, int M, int N, int K, float alpha, const float* A, int lda,
                   const float* B, int ldb, float beta, float* C, int ldc) {
    if (M <= 0 || N <= 0) return;
    char why[320];
    if (launch_det_gemm_check(M, N, K, why, sizeof why)) cuda_die(why); /* grid.y: M <= 262,140 */
    dim3 block(SAPO_DET_GEMM_COLS, SAPO_DET_GEMM_ROWS),
        grid((unsigned)((N + SAPO_DET_GEMM_COLS - 1) / SAPO_DET_GEMM_COLS),
             (unsigned)((M + SAPO_DET_GEMM_ROWS - 1) / SAPO_DET_GEMM_ROWS));
    SAPO_LAUNCH(cuda_det_gemm_kernel, grid, block, 0, x->stream, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

SAPO_CUDA_NS_END

#endif
