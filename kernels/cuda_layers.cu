/* The CUDA kernels of the policy model and their launchers, declared in cuda_layers.cuh: one
 * header per layer family, each the twin of its CPU function(s) in src/model/cpu_layers.c
 * (or cpu_backend.c) and holding its deterministic-mode kernels (model.deterministic,
 * CudaCtx.det) next to the default ones. Each keeps the CPU's float expression, so with FMA
 * contraction off (--fmad=false, like the C code's -ffp-contract=off) element-wise results
 * match the CPU bit for bit and reductions differ only by summation order; the deterministic
 * kernels call the CPU's own det_math.h / det_attention.h functions and match it bit for bit.
 * This file is the one translation unit that compiles them (the CPU emulation includes it). */
#include "cuda_common.cuh" /* launch shapes, warp reductions, cuda_fill */
#include "encoder.cuh"     /* embedding: encoder_forward, encoder_backward */
#include "layernorm.cuh"   /* layernorm_forward, layernorm_backward */
#include "matmul.cuh"      /* matmul_forward, matmul_backward: cuBLAS, or det_gemm */
#include "attention.cuh"   /* attention_forward, attention_backward over packed segments */
#include "gelu.cuh"        /* gelu_forward, gelu_backward */
#include "residual.cuh"    /* residual_forward */
#include "logprob.cuh"     /* logprob_forward, logprob_backward: the loss side */
#include "adamw.cuh"       /* one AdamW step */
#include "grad_norm.cuh"   /* the gradient norm's sum of squares */
#include "decode.cuh"      /* generation: KV-cache stores and decode attention */
/* the Llama/Qwen2 family's (kernels/llama_cuda_backend.cu) */
#include "rmsnorm.cuh"       /* rmsnorm_forward, rmsnorm_backward */
#include "rope.cuh"          /* rope_forward, rope_backward: rotate-half RoPE in place */
#include "swiglu.cuh"        /* swiglu_forward, swiglu_backward */
#include "rows.cuh"          /* gather_rows, scatter_add_rows: embedding, the head's rows */
#include "gqa_attention.cuh" /* grouped-query attention, its KV-cache stores and decode */
