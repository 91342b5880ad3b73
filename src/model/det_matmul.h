/* The deterministic matrix product (model.deterministic): one definition of every output
 * element's arithmetic, independent of the CPU, the thread count, the BLAS library, the
 * blocking and the GPU, so that a product has the same bits on every machine.
 *
 *     C[i][j] = (beta ? C[i][j] + r : r),   r = alpha * acc,
 *     acc = 0;  for k = 0 .. K-1:  acc = fmaf(op(A)[i][k], op(B)[k][j], acc)
 *
 * row-major, op(X) = X or X^T (ta, tb), beta 0 or 1 (anything else dies). The CPU code
 * (det_matmul.c) vectorizes across j (SIMD FMA lanes round as scalar fmaf does) and blocks
 * rows and columns; the CUDA twin (kernels/matmul.cuh, cuda_det_gemm) gives one thread
 * to one output element with the same loop. Without FMA hardware (-march=x86-64-v2) fmaf is
 * libm's correctly rounded software fmaf: the same bits, slower. */
#ifndef SAPO_MODEL_DET_MATMUL_H
#define SAPO_MODEL_DET_MATMUL_H

#ifdef __cplusplus
extern "C" {
#endif

void det_gemm(int ta, int tb, int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
              float beta, float* C, int ldc);

/* dst[j] += sum over the M rows of X (M, N, row stride ldx) of X[i][j], i in order; the sum
 * starts at 0 and is added once (det_gemm of a row of ones by X, beta 1): bias gradients. */
void det_colsum_add(float* dst, const float* X, int M, int N, int ldx);

#ifdef __cplusplus
}
#endif

#endif
