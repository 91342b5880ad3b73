/* The Llama/Qwen2 family's layer loops, written once for every backend over a table of layer
 * operations (LlamaOps), as block_loop.h does for the byte-level GPT: the blocks' forward and
 * backward over a packed batch, the head (final RMSNorm, output layer, log-probs) in chunks of
 * rows so no (tokens x vocab) buffer exists, generation's prefill store and one decode step.
 * The operations the two families share (matrix products, residual adds, zeroing) come from
 * the backend's BlockOps. Header-only: a CUDA library can use it without linking libsapo. */
#ifndef SAPO_MODEL_LLAMA_LOOP_H
#define SAPO_MODEL_LLAMA_LOOP_H

#include <stddef.h>

#include "model/block_loop.h"
#include "model/llama.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The blocks' activations for up to cap.max_tokens tokens, per-layer arrays (L, N, ...)
 * packed by the batch's own N. QKV = llama_qkvdim, QD = llama_qdim, F = d_ff. */
typedef struct {
    float* x0;    /* (N, C) the embeddings */
    float* ln1;   /* (L, N, C) */
    float* rstd1; /* (L, N) */
    float* qkv;   /* (L, N, QKV) queries and keys after RoPE, values */
    float* atty;  /* (L, N, QD) */
    float* att;   /* (L, att) */
    float* res2;  /* (L, N, C) */
    float* ln2;   /* (L, N, C) */
    float* rstd2; /* (L, N) */
    float* gu;    /* (L, N, 2F) gate | up */
    float* h;     /* (L, N, F) */
    float* res3;  /* (L, N, C) */
    float* lnf;   /* (N, C) final RMSNorm */
    float* rstdf; /* (N) */
    /* backward scratch */
    float* dres;  /* (N, C) */
    float* dC;    /* (N, C) */
    float* dQD;   /* (N, QD) */
    float* dqkv;  /* (N, QKV) */
    float* dgu;   /* (N, 2F) */
    float* dF;    /* (N, F) */
    float* datt;  /* attention backward's scratch (the backend sizes it) */
    /* the head, a chunk of rows at a time */
    float* hx;      /* (chunk, C) the chunk's final-norm rows */
    float* hdx;     /* (chunk, C) their gradient */
    float* hlogits; /* (chunk, V) */
    float* hprobs;  /* (chunk, V) */
    float* hdlogits; /* (chunk, V) */
    float* hlp;     /* (chunk) log-probs */
    float* hdlp;    /* (chunk) their gradient */
    int* htargets;  /* (chunk) */
} LlamaActs;

/* Generation's buffers for up to cap.max_rows rows: one step's activations and the KV
 * caches (keys after RoPE), a position every KD = n_kv_head * head_dim floats. */
typedef struct {
    float *x, *xn, *qkv, *y, *gu, *h, *tmp, *rstd; /* (n, C), (n, C), (n, QKV), (n, QD), (n, 2F), (n, F), (n, C), (n) */
    float *kprefix, *vprefix; /* (L, max_prefixes, n_ctx, KD) the prompts' (prefill) */
    float *krow, *vrow;       /* (L, max_rows, row_ctx, KD) each row's own, a position a step */
} LlamaDecodeActs;

/* One backend's family-specific layers; ctx is the backend's own (it holds the batch's
 * segments, positions and the RoPE table). */
typedef struct {
    const BlockOps* common; /* matmul_forward/backward, residual_forward, zero */
    void (*embed_forward)(void* ctx, float* out, const int* inp, const float* embed, int N, int C);
    void (*embed_backward)(void* ctx, float* dembed, const float* dout, const int* inp, int N, int C);
    void (*rmsnorm_forward)(void* ctx, float* out, float* rstd, const float* inp, const float* w, int N, int C,
                            float eps);
    void (*rmsnorm_backward)(void* ctx, float* dinp, float* dw, const float* dout, const float* inp, const float* w,
                             const float* rstd, int N, int C);
    /* In place on the fused rows, at positions pos (N entries, the backend's memory). */
    void (*rope_forward)(void* ctx, float* qkv, const int* pos, int N, const ModelShape* c);
    void (*rope_backward)(void* ctx, float* dqkv, const int* pos, int N, const ModelShape* c);
    void (*attention_forward)(void* ctx, float* out, float* att, const float* qkv, int N, const AttnShape* sh);
    void (*attention_backward)(void* ctx, float* dqkv, float* datt, const float* dout, const float* qkv,
                               const float* att, int N, const AttnShape* sh);
    void (*swiglu_forward)(void* ctx, float* h, const float* gu, int N, int F);
    void (*swiglu_backward)(void* ctx, float* dgu, const float* dh, const float* gu, int N, int F);
    /* dst row i = src row idx[i] (C floats), and back: dst row idx[i] += src row i. */
    void (*gather_rows)(void* ctx, float* dst, const float* src, const int* idx, int n, int C);
    void (*scatter_add_rows)(void* ctx, float* dst, const float* src, const int* idx, int n, int C);
    /* Log-probs of n rows of logits at scale (probs keeps the softmax), and d(logits). */
    void (*logprob_forward)(void* ctx, float* lp, float* probs, const float* logits, const int* targets, int n, int V,
                            float scale);
    void (*logprob_backward)(void* ctx, float* dlogits, const float* dlp, const float* probs, const int* targets, int n,
                             int V, float scale);
    /* Prefill: token n's key and value go to position n - start of its segment's slot. */
    void (*prefill_kv_store)(void* ctx, float* kprefix, float* vprefix, const float* qkv, int N, const ModelShape* c,
                             size_t prefix_slot);
    void (*decode_kv_store)(void* ctx, float* krow, float* vrow, const float* qkv, const DecodeStep* d,
                            const ModelShape* c, size_t row_slot);
    /* A decode step's products of a few rows (matmul_forward's meaning; the CPU streams each
     * weight row once instead of repacking the matrix, model/small_gemm.h). */
    void (*decode_matmul)(void* ctx, float* out, const float* inp, const float* w, const float* bias, int N, int IC,
                          int OC);
    void (*decode_attention)(void* ctx, float* y, const float* qkv, const float* kprefix, const float* vprefix,
                             const float* krow, const float* vrow, const DecodeStep* d, const AttnShape* sh,
                             size_t prefix_slot, size_t row_slot, int n_ctx);
} LlamaOps;

static inline AttnShape llama_attn_shape(const ModelShape* c) {
    AttnShape sh = {.n_head = c->n_head, .n_kv_head = c->n_kv_head, .head_dim = c->head_dim};
    return sh;
}

/* Rows of the head computed together (bounds the (chunk, V) buffers). */
static inline int llama_head_chunk(const ModelShape* c, int max_tokens) {
    long chunk = (16L << 20) / ((long)c->vocab * 4); /* about 16 MB a buffer */
    if (chunk < 8) chunk = 8;
    if (chunk > 256) chunk = 256;
    return (int)(chunk < max_tokens ? chunk : max_tokens);
}

/* Embedding and every block for N tokens at positions pos with att_used attention weights a
 * layer; leaves the last block's output in res3 of the last layer. With kv_only_last (a
 * prefill) the last layer stops once its keys and values are rotated (block_forward). */
static inline void llama_block_forward(const LlamaOps* op, void* ctx, const LlamaActs* a, const LlamaParams* p,
                                       const int* inputs, const int* pos, const ModelShape* c, int N, long att_used,
                                       int kv_only_last) {
    const BlockOps* k = op->common;
    int C = c->d_model, QKV = llama_qkvdim(c), QD = llama_qdim(c), F = c->d_ff;
    size_t NC = (size_t)N * C;
    AttnShape sh = llama_attn_shape(c);
    op->embed_forward(ctx, a->x0, inputs, p->embed, N, C);
    for (int l = 0; l < c->n_layer; l++) {
        const float* resin = l == 0 ? a->x0 : a->res3 + (l - 1) * NC;
        float* ln1 = a->ln1 + l * NC;
        float* qkv = a->qkv + l * (size_t)N * QKV;
        float* atty = a->atty + l * (size_t)N * QD;
        float* res2 = a->res2 + l * NC;
        float* ln2 = a->ln2 + l * NC;
        float* gu = a->gu + l * (size_t)N * 2 * F;
        float* h = a->h + l * (size_t)N * F;
        float* res3 = a->res3 + l * NC;
        op->rmsnorm_forward(ctx, ln1, a->rstd1 + l * N, resin, p->ln1w + l * C, N, C, c->norm_eps);
        k->matmul_forward(ctx, qkv, ln1, p->qkvw + (size_t)l * QKV * C, c->qkv_bias ? p->qkvb + (size_t)l * QKV : NULL,
                          N, C, QKV);
        op->rope_forward(ctx, qkv, pos, N, c);
        if (kv_only_last && l == c->n_layer - 1) break;
        op->attention_forward(ctx, atty, a->att + (size_t)l * att_used, qkv, N, &sh);
        k->matmul_forward(ctx, res2, atty, p->ow + (size_t)l * C * QD, c->o_bias ? p->ob + (size_t)l * C : NULL, N, QD,
                          C);
        k->residual_forward(ctx, res2, res2, resin, NC);
        op->rmsnorm_forward(ctx, ln2, a->rstd2 + l * N, res2, p->ln2w + l * C, N, C, c->norm_eps);
        k->matmul_forward(ctx, gu, ln2, p->gateupw + (size_t)l * 2 * F * C, NULL, N, C, 2 * F);
        op->swiglu_forward(ctx, h, gu, N, F);
        k->matmul_forward(ctx, res3, h, p->downw + (size_t)l * C * F, NULL, N, F, C);
        k->residual_forward(ctx, res3, res3, res2, NC);
    }
}

/* The final RMSNorm of all N rows (into lnf, rstdf). */
static inline void llama_final_norm(const LlamaOps* op, void* ctx, const LlamaActs* a, const LlamaParams* p,
                                    const ModelShape* c, int N) {
    op->rmsnorm_forward(ctx, a->lnf, a->rstdf, a->res3 + (size_t)(c->n_layer - 1) * N * c->d_model, p->normw, N,
                        c->d_model, c->norm_eps);
}

/* The head over the n rows rows[0..n) (rows with a target; their targets in targets[0..n)),
 * chunk rows at a time: logits through the output layer, then log-probs at scale into
 * lp_out[i] (the backend's memory, n entries). */
static inline void llama_head_forward(const LlamaOps* op, void* ctx, const LlamaActs* a, const LlamaParams* p,
                                      const ModelShape* c, const int* rows, const int* targets, int n, int chunk,
                                      float scale, float* lp_out) {
    int C = c->d_model, V = c->vocab;
    const float* W = llama_out_weight(c, p);
    for (int i0 = 0; i0 < n; i0 += chunk) {
        int m = n - i0 < chunk ? n - i0 : chunk;
        op->gather_rows(ctx, a->hx, a->lnf, rows + i0, m, C);
        op->common->matmul_forward(ctx, a->hlogits, a->hx, W, NULL, m, C, V);
        op->logprob_forward(ctx, lp_out + i0, a->hprobs, a->hlogits, targets + i0, m, V, scale);
    }
}

/* The head's backward from d(log-probs) of the same rows: recomputes each chunk's softmax,
 * accumulates the output layer's gradient into gW, and leaves d(lnf) in dC (zeroed here). */
static inline void llama_head_backward(const LlamaOps* op, void* ctx, const LlamaActs* a, const LlamaParams* p,
                                       const LlamaParams* g, const ModelShape* c, const int* rows, const int* targets,
                                       const float* dlp, int n, int N, int chunk, float scale) {
    int C = c->d_model, V = c->vocab;
    const float* W = llama_out_weight(c, p);
    float* gW = (float*)llama_out_weight(c, g);
    op->common->zero(ctx, a->dC, (size_t)N * C);
    for (int i0 = 0; i0 < n; i0 += chunk) {
        int m = n - i0 < chunk ? n - i0 : chunk;
        op->gather_rows(ctx, a->hx, a->lnf, rows + i0, m, C);
        op->common->matmul_forward(ctx, a->hlogits, a->hx, W, NULL, m, C, V);
        op->logprob_forward(ctx, a->hlp, a->hprobs, a->hlogits, targets + i0, m, V, scale);
        op->logprob_backward(ctx, a->hdlogits, dlp + i0, a->hprobs, targets + i0, m, V, scale);
        op->common->zero(ctx, a->hdx, (size_t)m * C);
        op->common->matmul_backward(ctx, a->hdx, gW, NULL, a->hdlogits, a->hx, W, m, C, V);
        op->scatter_add_rows(ctx, a->dC, a->hdx, rows + i0, m, C);
    }
}

/* Everything below the head, backward: from d(lnf) in dC into the gradients g, ending with
 * the embedding's. */
static inline void llama_block_backward(const LlamaOps* op, void* ctx, const LlamaActs* a, const LlamaParams* p,
                                        const LlamaParams* g, const int* inputs, const int* pos, const ModelShape* c,
                                        int N, long att_used) {
    const BlockOps* k = op->common;
    int C = c->d_model, QKV = llama_qkvdim(c), QD = llama_qdim(c), F = c->d_ff, L = c->n_layer;
    size_t NC = (size_t)N * C;
    AttnShape sh = llama_attn_shape(c);
    k->zero(ctx, a->dres, NC);
    op->rmsnorm_backward(ctx, a->dres, g->normw, a->dC, a->res3 + (size_t)(L - 1) * NC, p->normw, a->rstdf, N, C);
    for (int l = L - 1; l >= 0; l--) {
        const float* resin = l == 0 ? a->x0 : a->res3 + (l - 1) * NC;
        /* dres holds d(res3); the skip path carries it to res2 unchanged */
        k->zero(ctx, a->dF, (size_t)N * F);
        k->matmul_backward(ctx, a->dF, g->downw + (size_t)l * C * F, NULL, a->dres, a->h + l * (size_t)N * F,
                           p->downw + (size_t)l * C * F, N, F, C);
        op->swiglu_backward(ctx, a->dgu, a->dF, a->gu + l * (size_t)N * 2 * F, N, F);
        k->zero(ctx, a->dC, NC);
        k->matmul_backward(ctx, a->dC, g->gateupw + (size_t)l * 2 * F * C, NULL, a->dgu, a->ln2 + l * NC,
                           p->gateupw + (size_t)l * 2 * F * C, N, C, 2 * F);
        op->rmsnorm_backward(ctx, a->dres, g->ln2w + l * C, a->dC, a->res2 + l * NC, p->ln2w + l * C,
                             a->rstd2 + l * N, N, C);
        /* dres holds d(res2) */
        k->zero(ctx, a->dQD, (size_t)N * QD);
        k->matmul_backward(ctx, a->dQD, g->ow + (size_t)l * C * QD, c->o_bias ? g->ob + (size_t)l * C : NULL, a->dres,
                           a->atty + l * (size_t)N * QD, p->ow + (size_t)l * C * QD, N, QD, C);
        k->zero(ctx, a->dqkv, (size_t)N * QKV);
        op->attention_backward(ctx, a->dqkv, a->datt, a->dQD, a->qkv + l * (size_t)N * QKV,
                               a->att + (size_t)l * att_used, N, &sh);
        op->rope_backward(ctx, a->dqkv, pos, N, c);
        k->zero(ctx, a->dC, NC);
        k->matmul_backward(ctx, a->dC, g->qkvw + (size_t)l * QKV * C, c->qkv_bias ? g->qkvb + (size_t)l * QKV : NULL,
                           a->dqkv, a->ln1 + l * NC, p->qkvw + (size_t)l * QKV * C, N, C, QKV);
        op->rmsnorm_backward(ctx, a->dres, g->ln1w + l * C, a->dC, resin, p->ln1w + l * C, a->rstd1 + l * N, N, C);
    }
    op->embed_backward(ctx, g->embed, a->dres, inputs, N, C);
}

/* After llama_block_forward of a prefill batch of N tokens: every layer's keys and values of
 * segment s go to prompt cache slot s. */
static inline void llama_prefill_store(const LlamaOps* op, void* ctx, const LlamaActs* a, const LlamaDecodeActs* g,
                                       const ModelShape* c, const ModelCapacity* cap, int N) {
    size_t KD = llama_kvdim(c), pslot = (size_t)c->n_ctx * KD, play = (size_t)cap->max_prefixes * pslot;
    for (int l = 0; l < c->n_layer; l++)
        op->prefill_kv_store(ctx, g->kprefix + l * play, g->vprefix + l * play, a->qkv + l * (size_t)N * llama_qkvdim(c),
                             N, c, pslot);
}

/* One decode step of d->n rows (checked by the caller with decode_check; d's arrays in the
 * backend's memory): writes logits (n, V). */
static inline void llama_decode(const LlamaOps* op, void* ctx, const LlamaDecodeActs* a, const LlamaParams* p,
                                const DecodeStep* d, const ModelShape* c, const ModelCapacity* cap, float* logits) {
    const BlockOps* k = op->common;
    int C = c->d_model, QKV = llama_qkvdim(c), QD = llama_qdim(c), F = c->d_ff, n = d->n;
    size_t nC = (size_t)n * C, KD = llama_kvdim(c);
    size_t pslot = (size_t)c->n_ctx * KD, play = (size_t)cap->max_prefixes * pslot;
    size_t rslot = (size_t)cap->row_ctx * KD, rlay = (size_t)cap->max_rows * rslot;
    AttnShape sh = llama_attn_shape(c);
    op->embed_forward(ctx, a->x, d->tokens, p->embed, n, C);
    for (int l = 0; l < c->n_layer; l++) {
        float* kr = a->krow + l * rlay;
        float* vr = a->vrow + l * rlay;
        op->rmsnorm_forward(ctx, a->xn, a->rstd, a->x, p->ln1w + l * C, n, C, c->norm_eps);
        op->decode_matmul(ctx, a->qkv, a->xn, p->qkvw + (size_t)l * QKV * C,
                          c->qkv_bias ? p->qkvb + (size_t)l * QKV : NULL, n, C, QKV);
        op->rope_forward(ctx, a->qkv, d->pos, n, c);
        op->decode_kv_store(ctx, kr, vr, a->qkv, d, c, rslot);
        op->decode_attention(ctx, a->y, a->qkv, a->kprefix + l * play, a->vprefix + l * play, kr, vr, d, &sh, pslot,
                             rslot, c->n_ctx);
        op->decode_matmul(ctx, a->tmp, a->y, p->ow + (size_t)l * C * QD, c->o_bias ? p->ob + (size_t)l * C : NULL, n,
                          QD, C);
        k->residual_forward(ctx, a->x, a->x, a->tmp, nC);
        op->rmsnorm_forward(ctx, a->xn, a->rstd, a->x, p->ln2w + l * C, n, C, c->norm_eps);
        op->decode_matmul(ctx, a->gu, a->xn, p->gateupw + (size_t)l * 2 * F * C, NULL, n, C, 2 * F);
        op->swiglu_forward(ctx, a->h, a->gu, n, F);
        op->decode_matmul(ctx, a->tmp, a->h, p->downw + (size_t)l * C * F, NULL, n, F, C);
        k->residual_forward(ctx, a->x, a->x, a->tmp, nC);
    }
    op->rmsnorm_forward(ctx, a->xn, a->rstd, a->x, p->normw, n, C, c->norm_eps);
    op->decode_matmul(ctx, logits, a->xn, llama_out_weight(c, p), NULL, n, C, c->vocab);
}

#ifdef __cplusplus
}
#endif

#endif
