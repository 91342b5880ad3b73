/* The embedding (encoder): out = wte[token] + wpe[position], and its gradients into the two
 * tables, summed without atomics in the CPU's row order. Twins encoder_forward and
 * encoder_backward of src/model/cpu_layers.c (the deterministic mode uses these as they are:
 * element-wise, and the backward's sums already run in the CPU's order). */
#ifndef SAPO_KERNELS_ENCODER_CUH
#define SAPO_KERNELS_ENCODER_CUH

#include "cuda_common.cuh"

SAPO_CUDA_NS_BEGIN

__global__ void cuda_encoder_forward_kernel(float* out, const int* inp, const int* pos, const float* wte,
                                            const float* wpe, int N, int C) {
    GRID_STRIDE_LOOP(i, (size_t)N * C) {
        size_t n = i / C, c = i % C;
        out[i] = wte[(size_t)inp[n] * C + c] + wpe[(size_t)pos[n] * C + c];
    }
}
void cuda_encoder_forward(const CudaCtx* x, float* out, const int* inp, const int* pos, const float* wte,
                          const float* wpe, int N, int C) {
    SAPO_LAUNCH(cuda_encoder_forward_kernel, grid_for((size_t)N * C), BLOCK, 0, x->stream, out, inp, pos, wte, wpe, N,
                C);
}

/* One thread per (entry, channel): its rows in increasing order, as the CPU adds them. */
__global__ void cuda_encoder_backward_kernel(float* dtable, const float* dout, const int* start, const int* rows,
                                             int n_entries, int C) {
    GRID_STRIDE_LOOP(i, (size_t)n_entries * C) {
        size_t e = i / C, c = i % C;
        int a = start[e], b = start[e + 1];
        if (a == b) continue;
        float acc = dtable[i];
        for (int k = a; k < b; k++) acc += dout[(size_t)rows[k] * C + c];
        dtable[i] = acc;
    }
}
void cuda_encoder_backward(const CudaCtx* x, float* dtable, const float* dout, const int* start, const int* rows,
                           int n_entries, int C) {
    SAPO_LAUNCH(cuda_encoder_backward_kernel, grid_for((size_t)n_entries * C), BLOCK, 0, x->stream, dtable, dout, start,
                rows, n_entries, C);
}

SAPO_CUDA_NS_END

#endif
