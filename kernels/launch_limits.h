/* Two launch limits the CUDA backend meets at large shapes, as pure functions (plain C, no
 * CUDA: tests/unit/test_launch_limits.c checks them on any machine):
 *  - the deterministic matmul (cuda_det_gemm, matmul.cuh) gives a block of 4 rows to
 *    grid.y, which CUDA caps at 65535: M at most 262,140 rows;
 *  - GPT decode attention (cuda_decode_attention, decode.cuh) keeps n_ctx float scores in
 *    dynamic shared memory: above 48 KiB (n_ctx 12,288) the kernel must be allowed more with
 *    cudaFuncSetAttribute(MaxDynamicSharedMemorySize), and a device gives at most its opt-in
 *    maximum (cudaDevAttrMaxSharedMemoryPerBlockOptin: 227 KiB on an H100/H200).
 * Each writes a one-line reason naming the shape when it refuses. */
#ifndef SAPO_KERNELS_LAUNCH_LIMITS_H
#define SAPO_KERNELS_LAUNCH_LIMITS_H

#include <stddef.h>
#include <stdio.h>

#define SAPO_GRID_YZ_MAX 65535u              /* gridDim.y and gridDim.z */
#define SAPO_GRID_X_MAX 2147483647u          /* gridDim.x */
#define SAPO_DET_GEMM_ROWS 4                 /* rows of C per block of cuda_det_gemm (block 32 x 4) */
#define SAPO_DET_GEMM_COLS 32                /* columns of C per block */
#define SAPO_SMEM_DEFAULT_MAX (48u * 1024u)  /* dynamic shared memory without the opt-in */

/* cuda_det_gemm's grid for C (M x N): 0 when it fits; -1 (and why) when grid.y or grid.x
 * would pass CUDA's limit. */
static inline int launch_det_gemm_check(int M, int N, int K, char* why, size_t whylen) {
    unsigned long long gy = ((unsigned long long)(M > 0 ? M : 0) + SAPO_DET_GEMM_ROWS - 1) / SAPO_DET_GEMM_ROWS;
    unsigned long long gx = ((unsigned long long)(N > 0 ? N : 0) + SAPO_DET_GEMM_COLS - 1) / SAPO_DET_GEMM_COLS;
    if (gy > SAPO_GRID_YZ_MAX) {
        snprintf(why, whylen,
                 "deterministic matmul (cuda_det_gemm) of shape M=%d N=%d K=%d: M needs grid.y = %llu blocks, above "
                 "CUDA's %u (M at most %u rows; fewer tokens per step, or model.deterministic = 0)",
                 M, N, K, gy, SAPO_GRID_YZ_MAX, SAPO_GRID_YZ_MAX * SAPO_DET_GEMM_ROWS);
        return -1;
    }
    if (gx > SAPO_GRID_X_MAX) {
        snprintf(why, whylen, "deterministic matmul (cuda_det_gemm) of shape M=%d N=%d K=%d: N needs grid.x = %llu blocks, above CUDA's %u",
                 M, N, K, gx, SAPO_GRID_X_MAX);
        return -1;
    }
    return 0;
}

/* GPT decode attention's dynamic shared memory for n_ctx positions (n_ctx floats), on a
 * device whose opt-in maximum is optin_max bytes: *bytes gets the size; returns 0 when it
 * fits the default 48 KiB, 1 when the kernel must first be allowed *bytes with
 * cudaFuncSetAttribute, -1 (and why) when the device cannot give that much. */
static inline int launch_decode_smem_check(int n_ctx, size_t optin_max, size_t* bytes, char* why, size_t whylen) {
    *bytes = (size_t)(n_ctx > 0 ? n_ctx : 0) * sizeof(float);
    if (*bytes <= SAPO_SMEM_DEFAULT_MAX) return 0;
    if (*bytes <= optin_max) return 1;
    snprintf(why, whylen,
             "GPT decode attention (cuda_decode_attention) with n_ctx=%d needs %zu bytes of dynamic shared memory, "
             "above this device's opt-in maximum of %zu bytes (n_ctx at most %zu; a smaller n_ctx, or model.deterministic = 1)",
             n_ctx, *bytes, optin_max, optin_max / sizeof(float));
    return -1;
}

#endif
