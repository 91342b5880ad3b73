/* The loss side: log softmax(scale * logits) at the targets (TOK_PAD targets give 0),
 * keeping the softmax, a warp per row; its backward, dlogits = scale * dlogprob *
 * (onehot(target) - probs). Twins logprob_forward and logprob_backward of
 * src/model/cpu_layers.c; the deterministic forward calls det_math.h's softmax_row and
 * log_det, a thread per row. */
#ifndef SAPO_KERNELS_LOGPROB_CUH
#define SAPO_KERNELS_LOGPROB_CUH

#include "cuda_common.cuh"
#include "model/det_math.h"

SAPO_CUDA_NS_BEGIN

__global__ void cuda_logprob_forward_kernel(float* logprobs, float* probs, const float* logits, const int* targets,
                                            int N, int V, int pad, float scale) {
    int n = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (n >= N) return;
    const float* z = logits + (size_t)n * V;
    float* p = probs + (size_t)n * V;
    float mx = -INFINITY;
    for (int v = lane; v < V; v += 32) mx = fmaxf(mx, z[v] * scale);
    mx = warp_max(mx);
    float sum = 0.0f;
    for (int v = lane; v < V; v += 32) {
        p[v] = expf(z[v] * scale - mx);
        sum += p[v];
    }
    sum = warp_sum(sum);
    float inv = 1.0f / sum;
    for (int v = lane; v < V; v += 32) p[v] *= inv;
    if (lane == 0) logprobs[n] = targets[n] == pad ? 0.0f : z[targets[n]] * scale - (mx + logf(sum));
}
void cuda_logprob_forward(const CudaCtx* x, float* logprobs, float* probs, const float* logits, const int* targets, int N,
                          int V, int pad, float scale) {
    if (x->det) {
        cuda_det_logprob_forward(x, logprobs, probs, logits, targets, N, V, pad, scale);
        return;
    }
    SAPO_LAUNCH(cuda_logprob_forward_kernel, rows_grid(N), ROW_BLOCK, 0, x->stream, logprobs, probs, logits, targets, N,
                V, pad, scale);
}

__global__ void cuda_logprob_backward_kernel(float* dlogits, const float* dlogprobs, const float* probs,
                                             const int* targets, int N, int V, int pad, float scale) {
    GRID_STRIDE_LOOP(i, (size_t)N * V) {
        size_t n = i / V;
        int v = (int)(i % V);
        float g = targets[n] == pad ? 0.0f : dlogprobs[n] * scale;
        /* CPU: d = -g p, then d[target] += g */
        dlogits[i] = g == 0.0f ? 0.0f : v == targets[n] ? -g * probs[i] + g : -g * probs[i];
    }
}
void cuda_logprob_backward(const CudaCtx* x, float* dlogits, const float* dlogprobs, const float* probs,
                           const int* targets, int N, int V, int pad, float scale) {
    SAPO_LAUNCH(cuda_logprob_backward_kernel, grid_for((size_t)N * V), BLOCK, 0, x->stream, dlogits, dlogprobs, probs,
                targets, N, V, pad, scale);
}

/* ---- deterministic --------------------------------------------------------------------------- */
__global__ void cuda_det_logprob_forward_kernel(float* logprobs, float* probs, const float* logits, const int* targets,
                                                int N, int V, int pad, float scale) {
    int n = blockIdx.x * blockDim.x + threadIdx.x;
    if (n >= N) return;
    const float* z = logits + (size_t)n * V;
    float* p = probs + (size_t)n * V;
    for (int v = 0; v < V; v++) p[v] = z[v] * scale;
    float sum, mx = softmax_row(p, V, &sum);
    logprobs[n] = targets[n] == pad ? 0.0f : z[targets[n]] * scale - (mx + log_det(sum));
}
void cuda_det_logprob_forward(const CudaCtx* x, float* logprobs, float* probs, const float* logits, const int* targets,
                              int N, int V, int pad, float scale) {
    SAPO_LAUNCH(cuda_det_logprob_forward_kernel, det_grid(N), DET_BLOCK, 0, x->stream, logprobs, probs, logits, targets,
                N, V, pad, scale);
}

SAPO_CUDA_NS_END

#endif
