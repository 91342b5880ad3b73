/* The model's layer loops, written once for both backends (cpu_backend.c and
 * kernels/cuda_backend.cu) over a table of layer operations, BlockOps, each taking the
 * backend's context: the transformer blocks' forward and backward, the head (final LayerNorm
 * and logits) forward and backward, and generation's prefill store and decode step with
 * their checks. The
 * CPU's entries wrap cpu_layers.c / det_* (the deterministic choice and the segment layout
 * come from the context), the CUDA ones the launchers of kernels/cuda_layers.cuh on the
 * backend's stream. The activations the loops read and write are laid out in BlockActs and
 * DecodeActs, which each backend's state holds (host or device memory). Header-only, like
 * adamw_scalars.h: the CUDA library links no libsapo code. */
#ifndef SAPO_MODEL_BLOCK_LOOP_H
#define SAPO_MODEL_BLOCK_LOOP_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" { /* gpt.h has no guard of its own: kernels/cuda_backend.cu includes it so too */
#endif
#include "model/model.h"

/* The blocks' activations for up to cap.max_tokens tokens; per-layer arrays are (L, N, ...)
 * packed by the batch's own N, so a small batch touches only the front of each. */
typedef struct {
    float* encoded;   /* (N, C) */
    float* ln1;       /* (L, N, C) */
    float* ln1_mean;  /* (L, N) */
    float* ln1_rstd;  /* (L, N) */
    float* qkv;       /* (L, N, 3C) */
    float* atty;      /* (L, N, C) */
    float* att;       /* (L, att): per segment and head, (len, prefix len + len) */
    float* residual2; /* (L, N, C) */
    float* ln2;       /* (L, N, C) */
    float* ln2_mean;  /* (L, N) */
    float* ln2_rstd;  /* (L, N) */
    float* fch;       /* (L, N, 4C) */
    float* fch_gelu;  /* (L, N, 4C) */
    float* fch_tanh;  /* (L, N, 4C) the GELU's tanh, for its backward */
    float* residual3; /* (L, N, C) */
    /* backward scratch */
    float* dresidual; /* (N, C) */
    float* dC;        /* (N, C) */
    float* dC2;       /* (N, C) */
    float* d3C;       /* (N, 3C) */
    float* d4C;       /* (N, 4C) */
    float* d4C2;      /* (N, 4C) */
    float* datt;      /* attention backward's scratch (the backend sizes it) */
} BlockActs;

/* Generation's buffers for up to cap.max_rows rows decoded together: one step's activations,
 * (n, ...) packed by the step's own n, and the KV caches. */
typedef struct {
    float* x;       /* (n, C) residual stream */
    float* xn;      /* (n, C) normalised */
    float* q3;      /* (n, 3C) */
    float* y;       /* (n, C) attention output */
    float* h4;      /* (n, 4C) */
    float* h4g;     /* (n, 4C) */
    float* h4t;     /* (n, 4C) */
    float* tmp;     /* (n, C) */
    float* mean;    /* (n) */
    float* rstd;    /* (n) */
    float *kprefix, *vprefix; /* (L, max_prefixes, n_ctx, C) the prompts' keys and values (prefill) */
    float *krow, *vrow;       /* (L, max_rows, row_ctx, C) each row's own, a position a step */
} DecodeActs;

/* One backend's layers; ctx is the backend's own. Attention reads the batch's segment layout
 * from ctx. zero sets n floats to 0. */
typedef struct {
    void (*encoder_forward)(void* ctx, float* out, const int* inp, const int* pos, const float* wte, const float* wpe,
                            int N, int C);
    void (*layernorm_forward)(void* ctx, float* out, float* mean, float* rstd, const float* inp, const float* w,
                              const float* b, int N, int C);
    void (*layernorm_backward)(void* ctx, float* dinp, float* dw, float* db, const float* dout, const float* inp,
                               const float* w, const float* mean, const float* rstd, int N, int C);
    void (*matmul_forward)(void* ctx, float* out, const float* inp, const float* w, const float* bias, int N, int IC,
                           int OC);
    void (*matmul_backward)(void* ctx, float* dinp, float* dw, float* dbias, const float* dout, const float* inp,
                            const float* w, int N, int IC, int OC);
    void (*attention_forward)(void* ctx, float* out, float* att, const float* qkv, int N, int C, int NH);
    void (*attention_backward)(void* ctx, float* dqkv, float* datt, const float* dout, const float* qkv,
                               const float* att, int N, int C, int NH);
    void (*gelu_forward)(void* ctx, float* out, float* th, const float* inp, size_t n);
    void (*gelu_backward)(void* ctx, float* dinp, const float* inp, const float* th, const float* dout, size_t n);
    void (*residual_forward)(void* ctx, float* out, const float* a, const float* b, size_t n);
    void (*zero)(void* ctx, float* p, size_t n);
    /* Generation. Prefill: token n's key and value (in qkv) go to position n - start of its
     * segment's prompt cache slot (prefix_slot floats a slot); the layout comes from ctx. */
    void (*prefill_kv_store)(void* ctx, float* kprefix, float* vprefix, const float* qkv, int N, int C,
                             size_t prefix_slot);
    /* Decode; d's arrays are in the backend's memory. Row i's key and value (in q3) go to
     * its cache row rows[i] at index pos[i] - prefix_len[i] (row_slot floats a cache row). */
    void (*decode_kv_store)(void* ctx, float* krow, float* vrow, const float* q3, const DecodeStep* d, int C,
                            size_t row_slot);
    /* y = row i's attention over the first prefix_len[i] positions of prompt slot prefix[i]
     * (prefix_slot floats a slot of n_ctx positions) and then its own cached positions. */
    void (*decode_attention)(void* ctx, float* y, const float* q3, const float* kprefix, const float* vprefix,
                             const float* krow, const float* vrow, const DecodeStep* d, int C, int NH,
                             size_t prefix_slot, size_t row_slot, int n_ctx);
} BlockOps;

/* Embedding and every transformer block for N tokens (inputs, positions pos) with att_used
 * attention weights per layer; leaves the final residual stream in residual3 of the last
 * layer. With kv_only_last (a prefill, which keeps only every layer's keys and values) the
 * last layer stops after its qkv product: its attention, projection and MLP would feed
 * nothing, and the layers before it are computed exactly as without. */
static inline void block_forward(const BlockOps* op, void* ctx, const BlockActs* a, const GPTParams* p,
                                 const int* inputs, const int* pos, const ModelShape* c, int N, long att_used,
                                 int kv_only_last) {
    int C = c->d_model, NH = c->n_head;
    size_t NC = (size_t)N * C;
    op->encoder_forward(ctx, a->encoded, inputs, pos, p->wte, p->wpe, N, C);
    for (int l = 0; l < c->n_layer; l++) {
        const float* residual = l == 0 ? a->encoded : a->residual3 + (l - 1) * NC;
        float* ln1 = a->ln1 + l * NC;
        float* qkv = a->qkv + l * NC * 3;
        float* atty = a->atty + l * NC;
        float* att = a->att + (size_t)l * att_used;
        float* res2 = a->residual2 + l * NC;
        float* ln2 = a->ln2 + l * NC;
        float* fch = a->fch + l * NC * 4;
        float* fchg = a->fch_gelu + l * NC * 4;
        float* res3 = a->residual3 + l * NC;
        op->layernorm_forward(ctx, ln1, a->ln1_mean + l * N, a->ln1_rstd + l * N, residual, p->ln1w + l * C,
                              p->ln1b + l * C, N, C);
        op->matmul_forward(ctx, qkv, ln1, p->qkvw + (size_t)l * 3 * C * C, p->qkvb + l * 3 * C, N, C, 3 * C);
        if (kv_only_last && l == c->n_layer - 1) break;
        op->attention_forward(ctx, atty, att, qkv, N, C, NH);
        op->matmul_forward(ctx, res2, atty, p->attprojw + (size_t)l * C * C, p->attprojb + l * C, N, C, C);
        op->residual_forward(ctx, res2, res2, residual, NC);
        op->layernorm_forward(ctx, ln2, a->ln2_mean + l * N, a->ln2_rstd + l * N, res2, p->ln2w + l * C,
                              p->ln2b + l * C, N, C);
        op->matmul_forward(ctx, fch, ln2, p->fcw + (size_t)l * 4 * C * C, p->fcb + l * 4 * C, N, C, 4 * C);
        op->gelu_forward(ctx, fchg, a->fch_tanh + l * NC * 4, fch, NC * 4);
        op->matmul_forward(ctx, res3, fchg, p->fcprojw + (size_t)l * 4 * C * C, p->fcprojb + l * C, N, 4 * C, C);
        op->residual_forward(ctx, res3, res3, res2, NC);
    }
}

/* The head of N tokens: the final LayerNorm of the residual stream (into lnf, mean, rstd),
 * then the logits (N, V) through the tied embedding. */
static inline void head_forward(const BlockOps* op, void* ctx, float* logits, float* lnf, float* mean, float* rstd,
                                const float* residual, const GPTParams* p, int N, int C, int V) {
    op->layernorm_forward(ctx, lnf, mean, rstd, residual, p->lnfw, p->lnfb, N, C);
    op->matmul_forward(ctx, logits, lnf, p->wte, NULL, N, C, V);
}

/* The head's backward from d(logits) (N, V) into the gradients g: leaves d(residual3 of the
 * last layer) in dresidual, where block_backward starts. */
static inline void head_backward(const BlockOps* op, void* ctx, const BlockActs* a, const GPTParams* p,
                                 const GPTParams* g, const float* dlogits, const float* lnf, const float* lnf_mean,
                                 const float* lnf_rstd, const ModelShape* c, int N) {
    int C = c->d_model;
    size_t NC = (size_t)N * C;
    op->zero(ctx, a->dC, NC);
    op->matmul_backward(ctx, a->dC, g->wte, NULL, dlogits, lnf, p->wte, N, C, c->vocab);
    op->zero(ctx, a->dresidual, NC);
    op->layernorm_backward(ctx, a->dresidual, g->lnfw, g->lnfb, a->dC, a->residual3 + (size_t)(c->n_layer - 1) * NC,
                           p->lnfw, lnf_mean, lnf_rstd, N, C);
}

/* Every block's backward, last layer first, into the gradients g: dresidual holds
 * d(residual3 of the last layer) on entry and d(encoded) on return. */
static inline void block_backward(const BlockOps* op, void* ctx, const BlockActs* a, const GPTParams* p,
                                  const GPTParams* g, const ModelShape* c, int N, long att_used) {
    int C = c->d_model, NH = c->n_head, L = c->n_layer;
    size_t NC = (size_t)N * C;
    for (int l = L - 1; l >= 0; l--) {
        const float* residual = l == 0 ? a->encoded : a->residual3 + (l - 1) * NC;
        /* dresidual holds d(residual3); the skip path carries it to residual2 unchanged. */
        op->zero(ctx, a->d4C, NC * 4);
        op->matmul_backward(ctx, a->d4C, g->fcprojw + (size_t)l * 4 * C * C, g->fcprojb + l * C, a->dresidual,
                            a->fch_gelu + l * NC * 4, p->fcprojw + (size_t)l * 4 * C * C, N, 4 * C, C);
        op->zero(ctx, a->d4C2, NC * 4);
        op->gelu_backward(ctx, a->d4C2, a->fch + l * NC * 4, a->fch_tanh + l * NC * 4, a->d4C, NC * 4);
        op->zero(ctx, a->dC, NC);
        op->matmul_backward(ctx, a->dC, g->fcw + (size_t)l * 4 * C * C, g->fcb + l * 4 * C, a->d4C2, a->ln2 + l * NC,
                            p->fcw + (size_t)l * 4 * C * C, N, C, 4 * C);
        op->layernorm_backward(ctx, a->dresidual, g->ln2w + l * C, g->ln2b + l * C, a->dC, a->residual2 + l * NC,
                               p->ln2w + l * C, a->ln2_mean + l * N, a->ln2_rstd + l * N, N, C);
        /* dresidual now holds d(residual2) */
        op->zero(ctx, a->dC2, NC);
        op->matmul_backward(ctx, a->dC2, g->attprojw + (size_t)l * C * C, g->attprojb + l * C, a->dresidual,
                            a->atty + l * NC, p->attprojw + (size_t)l * C * C, N, C, C);
        op->zero(ctx, a->d3C, NC * 3);
        op->attention_backward(ctx, a->d3C, a->datt, a->dC2, a->qkv + l * NC * 3, a->att + (size_t)l * att_used, N, C,
                               NH);
        op->zero(ctx, a->dC, NC);
        op->matmul_backward(ctx, a->dC, g->qkvw + (size_t)l * 3 * C * C, g->qkvb + l * 3 * C, a->d3C, a->ln1 + l * NC,
                            p->qkvw + (size_t)l * 3 * C * C, N, C, 3 * C);
        op->layernorm_backward(ctx, a->dresidual, g->ln1w + l * C, g->ln1b + l * C, a->dC, residual, p->ln1w + l * C,
                               a->ln1_mean + l * N, a->ln1_rstd + l * N, N, C);
    }
}

/* Checks a prefill batch against the prompt caches: at most cap.max_prefixes segments, none
 * with a prefix. Returns 0, or -1 with the reason in err. */
static inline int prefill_check(const ModelCapacity* cap, const PackedBatch* pb, char* err, size_t errlen) {
    if (pb->n_segments > cap->max_prefixes) {
        snprintf(err, errlen, "prefill of %d prompts exceeds the model's %d prompt caches", pb->n_segments,
                 cap->max_prefixes);
        return -1;
    }
    for (int k = 0; k < pb->n_segments; k++) {
        if (pb->segs[k].prefix >= 0) {
            snprintf(err, errlen, "prefill: segment %d has a prefix", k);
            return -1;
        }
    }
    return 0;
}

/* After block_forward of a prefill batch of N tokens: every layer's keys and values of
 * segment s go to prompt cache slot s. */
static inline void block_prefill_store(const BlockOps* op, void* ctx, const BlockActs* a, const DecodeActs* g,
                                       const ModelShape* c, const ModelCapacity* cap, int N) {
    int C = c->d_model;
    size_t NC = (size_t)N * C, pslot = (size_t)c->n_ctx * C, play = (size_t)cap->max_prefixes * pslot;
    for (int l = 0; l < c->n_layer; l++)
        op->prefill_kv_store(ctx, g->kprefix + l * play, g->vprefix + l * play, a->qkv + l * NC * 3, N, C, pslot);
}

/* Checks a decode step (host arrays) against the model before any cache is touched: 1 to
 * cap.max_rows rows, and for each its cache row, prompt slot, position (< n_ctx, within the
 * row's cache) and token (< vocab), and no cache row twice (two rows of one step writing one
 * cache slot race on a GPU, where the CPU writes them in order). Returns 0, or -1 with the
 * first bad row in err. */
static inline int decode_check(const ModelShape* c, const ModelCapacity* cap, const DecodeStep* d, char* err,
                               size_t errlen) {
    if (d->n < 1 || d->n > cap->max_rows) {
        snprintf(err, errlen, "decode of %d rows: expected 1..%d (the model's capacity)", d->n, cap->max_rows);
        return -1;
    }
    for (int i = 0; i < d->n; i++) {
        int at = d->pos[i] - d->prefix_len[i];
        if (d->rows[i] < 0 || d->rows[i] >= cap->max_rows || d->prefix_len[i] < 0 || at < 0 || at >= cap->row_ctx ||
            d->pos[i] >= c->n_ctx || d->tokens[i] < 0 || d->tokens[i] >= c->vocab ||
            (d->prefix_len[i] > 0 && (d->prefix[i] < 0 || d->prefix[i] >= cap->max_prefixes))) {
            snprintf(err, errlen,
                     "decode row %d: cache row %d, prompt %d of %d positions, position %d, token %d outside the "
                     "model's capacity",
                     i, d->rows[i], d->prefix[i], d->prefix_len[i], d->pos[i], d->tokens[i]);
            return -1;
        }
    }
    for (int i = 1; i < d->n; i++) { /* n^2 / 2 compares of ints: nothing next to a decode step */
        for (int j = 0; j < i; j++) {
            if (d->rows[j] == d->rows[i]) {
                snprintf(err, errlen, "decode row %d: cache row %d is also row %d's (each row needs its own)", i,
                         d->rows[i], j);
                return -1;
            }
        }
    }
    return 0;
}

/* One decode step of d->n rows (d's arrays in the backend's memory; the caller has checked
 * it, see decode_check): embeds each row's token at its position, runs every block with the
 * row's key and value stored in its cache row and attention over its prompt's cache and its
 * own, then the head; writes logits (n, V) in the backend's memory. */
static inline void block_decode(const BlockOps* op, void* ctx, const DecodeActs* a, const GPTParams* p,
                                const DecodeStep* d, const ModelShape* c, const ModelCapacity* cap, float* logits) {
    int C = c->d_model, NH = c->n_head, n = d->n;
    size_t nC = (size_t)n * C;
    size_t pslot = (size_t)c->n_ctx * C, play = (size_t)cap->max_prefixes * pslot;
    size_t rslot = (size_t)cap->row_ctx * C, rlay = (size_t)cap->max_rows * rslot;
    op->encoder_forward(ctx, a->x, d->tokens, d->pos, p->wte, p->wpe, n, C);
    for (int l = 0; l < c->n_layer; l++) {
        float* kr = a->krow + l * rlay;
        float* vr = a->vrow + l * rlay;
        op->layernorm_forward(ctx, a->xn, a->mean, a->rstd, a->x, p->ln1w + l * C, p->ln1b + l * C, n, C);
        op->matmul_forward(ctx, a->q3, a->xn, p->qkvw + (size_t)l * 3 * C * C, p->qkvb + l * 3 * C, n, C, 3 * C);
        op->decode_kv_store(ctx, kr, vr, a->q3, d, C, rslot);
        op->decode_attention(ctx, a->y, a->q3, a->kprefix + l * play, a->vprefix + l * play, kr, vr, d, C, NH, pslot,
                             rslot, c->n_ctx);
        op->matmul_forward(ctx, a->tmp, a->y, p->attprojw + (size_t)l * C * C, p->attprojb + l * C, n, C, C);
        op->residual_forward(ctx, a->x, a->x, a->tmp, nC);
        op->layernorm_forward(ctx, a->xn, a->mean, a->rstd, a->x, p->ln2w + l * C, p->ln2b + l * C, n, C);
        op->matmul_forward(ctx, a->h4, a->xn, p->fcw + (size_t)l * 4 * C * C, p->fcb + l * 4 * C, n, C, 4 * C);
        op->gelu_forward(ctx, a->h4g, a->h4t, a->h4, nC * 4);
        op->matmul_forward(ctx, a->tmp, a->h4g, p->fcprojw + (size_t)l * 4 * C * C, p->fcprojb + l * C, n, 4 * C, C);
        op->residual_forward(ctx, a->x, a->x, a->tmp, nC);
    }
    head_forward(op, ctx, logits, a->xn, a->mean, a->rstd, a->x, p, n, C, c->vocab);
}

#ifdef __cplusplus
}
#endif

#endif
