/* What every kernel family (the headers of kernels/) shares: the launch shapes (element-wise
 * grid-stride loops, a warp per row, the deterministic mode's thread per output), the warp
 * reductions and cuda_fill. The families are headers with definitions, llm.c's llmc/ style:
 * cuda_layers.cu includes each once; their launchers are declared in cuda_layers.cuh.
 * Conventions: element-wise kernels use grid-stride loops over size_t indices; row kernels
 * give one warp (32 lanes) to one row and reduce with xor butterflies, which leave the same
 * bits in every lane; no atomics anywhere, so results do not depend on scheduling. */
#ifndef SAPO_KERNELS_CUDA_COMMON_CUH
#define SAPO_KERNELS_CUDA_COMMON_CUH

#include <math.h>

#include "cuda_layers.cuh"

SAPO_CUDA_NS_BEGIN

static const int BLOCK = 256;    /* threads of element-wise kernels */
static const int MAX_GRID = 1024; /* blocks of a grid-stride loop: enough to fill an H200 */
static const int ROW_BLOCK = 128; /* 4 warps, one row each */

static unsigned grid_for(size_t n) {
    size_t g = (n + BLOCK - 1) / BLOCK;
    return (unsigned)(g < 1 ? 1 : g > (size_t)MAX_GRID ? MAX_GRID : g);
}
static unsigned rows_grid(int rows) { return (unsigned)((rows + ROW_BLOCK / 32 - 1) / (ROW_BLOCK / 32)); }

#define GRID_STRIDE_LOOP(i, n) \
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (size_t)gridDim.x * blockDim.x)

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
/* A softmax's numerators over one warp's row of n scores, lane holding row[lane], row[lane +
 * 32], ... and mx their maximum: row[j] = exp(row[j] - the row's maximum); returns their sum
 * (the same in every lane). */
__device__ __forceinline__ float warp_exp_sum(float* row, int n, float mx, int lane) {
    mx = warp_max(mx);
    float sum = 0.0f;
    for (int j = lane; j < n; j += 32) {
        row[j] = expf(row[j] - mx);
        sum += row[j];
    }
    return warp_sum(sum);
}

/* The deterministic mode (cuda_det_* launchers): one thread per output element. */
static const int DET_BLOCK = 128;
static unsigned det_grid(size_t n) { return (unsigned)((n + DET_BLOCK - 1) / DET_BLOCK); }

/* ---- fill -------------------------------------------------------------------------------- */
__global__ void cuda_fill_kernel(float* out, float value, size_t n) {
    GRID_STRIDE_LOOP(i, n) out[i] = value;
}
void cuda_fill(const CudaCtx* x, float* out, float value, size_t n) {
    if (!n) return;
    SAPO_LAUNCH(cuda_fill_kernel, grid_for(n), BLOCK, 0, x->stream, out, value, n);
}

SAPO_CUDA_NS_END

#endif
