/* The CUDA layer launchers of cuda_layers.cuh as a C table, for the per-layer tests
 * (tests/gpu/test_gpu_layers.c) that call each one on small inputs and compare it with its
 * CPU twin. Each entry is the launcher of the same name with the CudaCtx replaced by a
 * CudaLayers (a stream, a cuBLAS handle and CudaCtx's scratch, sized at create); pointers are
 * device memory from alloc. CUDA_LAYER_TABLE is the real one (with SAPO_HAVE_CUDA), the CPU
 * emulation's is CUDA_LAYER_TABLE_EMU (kernels/emu). The backend does not use it. */
#ifndef SAPO_KERNELS_CUDA_LAYER_TABLE_H
#define SAPO_KERNELS_CUDA_LAYER_TABLE_H

#include <stddef.h>

#include "cuda_segments.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct CudaLayers CudaLayers;

typedef struct {
    /* det: the deterministic kernels (CudaCtx.det). Scratch for layers of up to max_rows rows
     * of max_channels (layernorm weight gradients, bias gradients) and decode attention of up
     * to max_rows rows, n_head heads, n_ctx positions. */
    CudaLayers* (*create)(int det, int max_rows, int max_channels, int n_head, int n_ctx);
    void (*destroy)(CudaLayers* l); /* frees every alloc too */
    void* (*alloc)(CudaLayers* l, size_t bytes);
    void (*to_device)(CudaLayers* l, void* dst, const void* src, size_t bytes);
    void (*to_host)(CudaLayers* l, void* dst, const void* src, size_t bytes); /* waits for the stream */

    void (*encoder_forward)(CudaLayers* l, float* out, const int* inp, const int* pos, const float* wte,
                            const float* wpe, int N, int C);
    void (*encoder_backward)(CudaLayers* l, float* dtable, const float* dout, const int* start, const int* rows,
                             int n_entries, int C);
    void (*layernorm_forward)(CudaLayers* l, float* out, float* mean, float* rstd, const float* inp, const float* w,
                              const float* b, int N, int C);
    void (*layernorm_backward)(CudaLayers* l, float* dinp, float* dw, float* db, const float* dout, const float* inp,
                               const float* w, const float* mean, const float* rstd, int N, int C);
    void (*matmul_forward)(CudaLayers* l, float* out, const float* inp, const float* w, const float* bias, int N,
                           int IC, int OC);
    void (*matmul_backward)(CudaLayers* l, float* dinp, float* dw, float* dbias, const float* dout, const float* inp,
                            const float* w, int N, int IC, int OC);
    void (*attention_forward)(CudaLayers* l, float* out, float* att, const float* qkv, const CudaSeg* segs,
                              const int* seg_of, int N, int C, int NH);
    void (*attention_backward)(CudaLayers* l, float* dqkv, float* datt, const float* dout, const float* qkv,
                               const float* att, const CudaSeg* segs, const int* children, const int* seg_of, int N,
                               int C, int NH);
    void (*gelu_forward)(CudaLayers* l, float* out, float* th, const float* inp, size_t N);
    void (*gelu_backward)(CudaLayers* l, float* dinp, const float* inp, const float* th, const float* dout, size_t N);
    void (*residual_forward)(CudaLayers* l, float* out, const float* a, const float* b, size_t N);
    void (*logprob_forward)(CudaLayers* l, float* logprobs, float* probs, const float* logits, const int* targets,
                            int N, int V, int pad, float scale);
    void (*logprob_backward)(CudaLayers* l, float* dlogits, const float* dlogprobs, const float* probs,
                             const int* targets, int N, int V, int pad, float scale);
    void (*adamw)(CudaLayers* l, float* params, const float* grads, float* m, float* v, size_t n, float beta1,
                  float beta2, float eps, float grad_scale, float step_size, float decay, float bc2_sqrt);
    /* cuda_sumsq, its total returned; cuda_det_sumsq, its DET_SUMSQ_CHUNKS chunks into chunks */
    double (*sumsq)(CudaLayers* l, const float* data, size_t n);
    void (*det_sumsq)(CudaLayers* l, double* chunks, const float* data, size_t n);
    void (*kv_store_prefill)(CudaLayers* l, float* kprefix, float* vprefix, const float* qkv, const CudaSeg* segs,
                             const int* seg_of, int N, int C, size_t prefix_stride);
    void (*kv_store_decode)(CudaLayers* l, float* krow, float* vrow, const float* q3, const int* rows,
                            const int* prefix_len, const int* pos, int n, int C, size_t row_stride);
    void (*decode_attention)(CudaLayers* l, float* y, const float* q3, const float* kprefix, const float* vprefix,
                             const float* krow, const float* vrow, const int* rows, const int* prefix,
                             const int* prefix_len, const int* pos, int n, int C, int NH, size_t prefix_stride,
                             size_t row_stride, int n_ctx);
} CudaLayerTable;

extern const CudaLayerTable CUDA_LAYER_TABLE;

#ifdef __cplusplus
}
#endif

#endif
