/* CUDA_LAYER_TABLE (cuda_layer_table.h): the launchers behind a C table for the per-layer
 * tests. Each entry forwards to the launcher of the same name with the CudaLayers' CudaCtx. */
#include <stdio.h>
#include <stdlib.h>

#include "cuda_layer_table.h"
#include "cuda_layers.cuh"
#include "model/det_math.h"

SAPO_CUDA_NS_BEGIN

enum { LAYER_MAX_ALLOCS = 128 };

struct LayerBench { /* what a CudaLayers is */
    CudaCtx ctx;
    void* allocs[LAYER_MAX_ALLOCS];
    int n_allocs;
};

static LayerBench* bench_of(CudaLayers* l) { return reinterpret_cast<LayerBench*>(l); }

static void* layer_alloc(CudaLayers* l, size_t bytes) {
    LayerBench* b = bench_of(l);
    if (b->n_allocs == LAYER_MAX_ALLOCS) {
        fprintf(stderr, "cuda layer table: more than %d allocations\n", LAYER_MAX_ALLOCS);
        exit(EXIT_FAILURE);
    }
    void* p = NULL;
    cudaCheck(cudaMalloc(&p, bytes ? bytes : 1));
    return b->allocs[b->n_allocs++] = p;
}

static CudaLayers* layer_create(int det, int max_rows, int max_channels, int n_head, int n_ctx) {
    LayerBench* b = (LayerBench*)calloc(1, sizeof *b);
    if (!b) exit(EXIT_FAILURE);
    CudaLayers* l = reinterpret_cast<CudaLayers*>(b);
    cudaCheck(cudaStreamCreate(&b->ctx.stream));
    cublasCheck(cublasCreate(&b->ctx.blas));
    cublasCheck(cublasSetStream(b->ctx.blas, b->ctx.stream));
    cublasCheck(cublasSetMathMode(b->ctx.blas, CUBLAS_DEFAULT_MATH)); /* as the backend without SAPO_CUDA_TF32 */
    b->ctx.det = det;
    float* ones = (float*)layer_alloc(l, (size_t)max_rows * sizeof(float));
    cuda_fill(&b->ctx, ones, 1.0f, (size_t)max_rows);
    b->ctx.ones = ones;
    b->ctx.partials = (float*)layer_alloc(l, (size_t)CUDA_COLSUM_MAX_CHUNKS * 2 * max_channels * sizeof(float));
    b->ctx.sumsq = (double*)layer_alloc(l, (CUDA_SUMSQ_BLOCKS + 1) * sizeof(double));
    b->ctx.det_scores = (float*)layer_alloc(l, (size_t)max_rows * n_head * n_ctx * sizeof(float));
    return l;
}

static void layer_destroy(CudaLayers* l) {
    LayerBench* b = bench_of(l);
    cudaCheck(cudaStreamSynchronize(b->ctx.stream));
    for (int i = 0; i < b->n_allocs; i++) cudaCheck(cudaFree(b->allocs[i]));
    cublasCheck(cublasDestroy(b->ctx.blas));
    cudaCheck(cudaStreamDestroy(b->ctx.stream));
    free(b);
}

static void layer_to_device(CudaLayers* l, void* dst, const void* src, size_t bytes) {
    cudaCheck(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, bench_of(l)->ctx.stream));
}
static void layer_to_host(CudaLayers* l, void* dst, const void* src, size_t bytes) {
    cudaCheck(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, bench_of(l)->ctx.stream));
    cudaCheck(cudaStreamSynchronize(bench_of(l)->ctx.stream));
}
static double layer_sumsq(CudaLayers* l, const float* data, size_t n) {
    double total;
    cuda_sumsq(&bench_of(l)->ctx, data, n);
    layer_to_host(l, &total, bench_of(l)->ctx.sumsq + CUDA_SUMSQ_BLOCKS, sizeof total);
    return total;
}
static void layer_det_sumsq(CudaLayers* l, double* chunks, const float* data, size_t n) {
    cuda_det_sumsq(&bench_of(l)->ctx, data, n);
    layer_to_host(l, chunks, bench_of(l)->ctx.sumsq, DET_SUMSQ_CHUNKS * sizeof(double));
}

/* Op<cuda_X>::call is cuda_X with a CudaLayers* for its const CudaCtx*: the compiler checks
 * that the table's entry and the launcher take the same arguments. */
template <auto F>
struct Op;
template <class... A, void (*F)(const CudaCtx*, A...)>
struct Op<F> {
    static void call(CudaLayers* l, A... a) { F(&bench_of(l)->ctx, a...); }
};

SAPO_CUDA_NS_END

/* In the order of CudaLayerTable's fields. */
extern "C" const CudaLayerTable CUDA_LAYER_TABLE = {
    layer_create,
    layer_destroy,
    layer_alloc,
    layer_to_device,
    layer_to_host,
    Op<cuda_encoder_forward>::call,
    Op<cuda_encoder_backward>::call,
    Op<cuda_layernorm_forward>::call,
    Op<cuda_layernorm_backward>::call,
    Op<cuda_matmul_forward>::call,
    Op<cuda_matmul_backward>::call,
    Op<cuda_attention_forward>::call,
    Op<cuda_attention_backward>::call,
    Op<cuda_gelu_forward>::call,
    Op<cuda_gelu_backward>::call,
    Op<cuda_residual_forward>::call,
    Op<cuda_logprob_forward>::call,
    Op<cuda_logprob_backward>::call,
    Op<cuda_adamw>::call,
    layer_sumsq,
    layer_det_sumsq,
    Op<cuda_kv_store_prefill>::call,
    Op<cuda_kv_store_decode>::call,
    Op<cuda_decode_attention>::call,
};
