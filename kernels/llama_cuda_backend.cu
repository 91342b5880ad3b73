/* The CUDA backend of the Llama/Qwen2 family (MODEL_BACKEND_LLAMA_CUDA, model/llama.h): the
 * twin of src/model/llama_cpu_backend.c, running llama_loop.h's loops over LLAMA_CUDA_OPS, the
 * family's launchers (rmsnorm.cuh, rope.cuh, swiglu.cuh, gqa_attention.cuh, rows.cuh), with the
 * matrix products, residual adds and zeroing of the byte-level backend's CUDA_BLOCK_OPS. What
 * does not depend on the family comes from cuda_backend.cu through the CudaCore this state
 * starts with: the device, stream and cuBLAS handle, the parameter buffers and their upload and
 * download, zeroing the gradients, their norm, the AdamW step, the batch checks and the layout
 * buffer. setup makes one device allocation, sized by m->cap, and uploads llama_rope_table's
 * cos/sin once (the device never computes an angle). Each forward sends its layout in one
 * copy: tokens, positions, the segment table, the embedding rows of each token (the gradient's
 * order of addition, without atomics) and the rows with a target, whose log-probs the head
 * computes a chunk of rows at a time (no tokens x vocab buffer) and returns to the host. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <type_traits>

#include "cuda_backend.h"
#include "cuda_layers.cuh"

extern "C" {
#include "model/llama.h" /* llama_point_params, llama_rope_table: libsapo's, as the CPU twin's */
}
#include "model/llama_loop.h"

namespace {

/* The target of a row without one in the family's PackedBatch (gpt.h: llama's is -1). */
const int LLAMA_NO_TARGET = -1;

typedef struct {
    CudaCore core;    /* first: the shared entries (cuda_core_*) and CUDA_BLOCK_OPS reach it from ctx */
    LlamaParams p, g; /* named views of the device parameters and gradients */
    /* The last forward's layout (lcuda_send_layout), the pointers below into it. */
    CudaLayout lay;
    int *inputs, *pos, *seg_of;    /* (N) each */
    CudaSeg* segs;                 /* (n_segs) */
    int* children;                 /* (n_segs) segments grouped by their prefix */
    int *tok_start, *tok_rows;     /* (V + 1), (N): the rows of each token, for the embedding's gradient */
    int *head_rows, *head_targets; /* (n_head_rows) the rows with a target, and their targets */
    int* ints;                     /* decode: rows | prefix | prefix_len | tokens | pos */
    LlamaActs a;
    LlamaDecodeActs gen;
    float* scores;              /* decode attention's weights (max_rows, n_head, n_ctx) */
    float *rope_cos, *rope_sin; /* (n_ctx, head_dim / 2), llama_rope_table's */
    float *head_lp, *head_dlp;  /* (N) the head rows' log-probs and their gradients */
    float* gen_logits;          /* (max_rows, V) */
    /* host scratch */
    int* h_cursor;    /* (V) counting sort */
    CudaSeg* h_segs;  /* the segment table, grown when needed */
    int seg_cap;
    int* h_ints;      /* (5 max_rows) */
    int* h_head_rows; /* (N) head_rows on the host */
    float* h_head;    /* (N) the head rows' log-probs back, then their gradients out */
    int N, vocab, n_head_rows, chunk;
    float logit_scale; /* the last forward's PackedBatch.logit_scale (1 when 0) */
    long att_used;     /* attention weights per layer of the last forward */
} LlamaCudaState;
static_assert(std::is_standard_layout<LlamaCudaState>::value, "m->state must be interconvertible with its CudaCore");

LlamaCudaState* lcuda_state(void* ctx) { return (LlamaCudaState*)ctx; }
const CudaCtx* lcuda_ctx(void* ctx) { return &lcuda_state(ctx)->core.ctx; }

/* The bytes of one forward's layout at most (lcuda_send_layout's arrays, each 256-aligned): a
 * batch has at most one segment per token. */
size_t lcuda_layout_bytes(size_t N, size_t V) {
    return align256(N * sizeof(CudaSeg)) + 7 * align256(N * sizeof(int)) + align256((V + 1) * sizeof(int));
}

void lcuda_setup(Model* m) {
    LlamaCudaState* s = (LlamaCudaState*)calloc(1, sizeof *s);
    if (!s) cuda_die("out of host memory");
    const ModelShape* c = &m->cfg;
    const ModelCapacity* cap = &m->cap;
    size_t N = cap->max_tokens, T = c->n_ctx, C = c->d_model, L = c->n_layer, V = c->vocab, F = c->d_ff;
    size_t QKV = llama_qkvdim(c), QD = llama_qdim(c), KD = llama_kvdim(c), R = cap->max_rows, A = cap->max_att;
    size_t P = m->num_params, half = c->head_dim / 2;
    cuda_core_open(&s->core, c->deterministic); /* deterministic: no cuBLAS call (the cuda_det_* kernels) */
    CudaCtx* x = &s->core.ctx;
    s->chunk = llama_head_chunk(c, cap->max_tokens);
    s->vocab = c->vocab;
    size_t H = s->chunk;

    s->lay.bytes = lcuda_layout_bytes(N, V);
    Carver cv;
    cv.n = 0;
    CARVE(&cv, s->core.params, P);
    CARVE(&cv, s->core.grads, P);
    CARVE(&cv, s->core.mom1, P);
    CARVE(&cv, s->core.mom2, P);
    CARVE(&cv, s->lay.dev, s->lay.bytes);
    CARVE(&cv, s->ints, 5 * R);
    LlamaActs* a = &s->a;
    CARVE(&cv, a->x0, N * C);
    CARVE(&cv, a->ln1, L * N * C);
    CARVE(&cv, a->rstd1, L * N);
    CARVE(&cv, a->qkv, L * N * QKV);
    CARVE(&cv, a->atty, L * N * QD);
    CARVE(&cv, a->att, L * A);
    CARVE(&cv, a->res2, L * N * C);
    CARVE(&cv, a->ln2, L * N * C);
    CARVE(&cv, a->rstd2, L * N);
    CARVE(&cv, a->gu, L * N * 2 * F);
    CARVE(&cv, a->h, L * N * F);
    CARVE(&cv, a->res3, L * N * C);
    CARVE(&cv, a->lnf, N * C);
    CARVE(&cv, a->rstdf, N);
    CARVE(&cv, a->dres, N * C);
    CARVE(&cv, a->dC, N * C);
    CARVE(&cv, a->dQD, N * QD);
    CARVE(&cv, a->dqkv, N * QKV);
    CARVE(&cv, a->dgu, N * 2 * F);
    CARVE(&cv, a->dF, N * F);
    CARVE(&cv, a->datt, A); /* one layer's score gradients, att's layout (both passes read them) */
    CARVE(&cv, a->hx, H * C);
    CARVE(&cv, a->hdx, H * C);
    CARVE(&cv, a->hlogits, H * V);
    CARVE(&cv, a->hprobs, H * V);
    CARVE(&cv, a->hdlogits, H * V);
    CARVE(&cv, a->hlp, H);
    CARVE(&cv, a->hdlp, H);
    CARVE(&cv, a->htargets, H);
    LlamaDecodeActs* g = &s->gen;
    CARVE(&cv, g->x, R * C);
    CARVE(&cv, g->xn, R * C);
    CARVE(&cv, g->qkv, R * QKV);
    CARVE(&cv, g->y, R * QD);
    CARVE(&cv, g->gu, R * 2 * F);
    CARVE(&cv, g->h, R * F);
    CARVE(&cv, g->tmp, R * C);
    CARVE(&cv, g->rstd, R);
    CARVE(&cv, g->kprefix, L * cap->max_prefixes * T * KD);
    CARVE(&cv, g->vprefix, L * cap->max_prefixes * T * KD);
    CARVE(&cv, g->krow, L * R * cap->row_ctx * KD);
    CARVE(&cv, g->vrow, L * R * cap->row_ctx * KD);
    CARVE(&cv, s->scores, R * c->n_head * T);
    CARVE(&cv, s->rope_cos, T * half);
    CARVE(&cv, s->rope_sin, T * half);
    CARVE(&cv, s->head_lp, N);
    CARVE(&cv, s->head_dlp, N);
    CARVE(&cv, s->gen_logits, R * V);
    float* ones = NULL;
    CARVE(&cv, ones, N); /* bias gradients sum over at most N rows */
    CARVE(&cv, x->partials, (size_t)CUDA_COLSUM_MAX_CHUNKS * 2 * C);
    CARVE(&cv, x->sumsq, CUDA_SUMSQ_BLOCKS + 1);
    cudaError_t err = carve_place(&cv, &s->core);
    if (err != cudaSuccess) {
        fprintf(stderr,
                "cuda backend: cannot allocate %.1f MiB on device %d for the llama model (%d tokens, %ld attention "
                "weights, %d prompt caches, %d rows of %d): %s\n",
                s->core.block_bytes / 1048576.0, s->core.device, cap->max_tokens, cap->max_att, cap->max_prefixes,
                cap->max_rows, cap->row_ctx, cudaGetErrorString(err));
        exit(EXIT_FAILURE);
    }
    x->ones = ones;
    cuda_fill(x, ones, 1.0f, N);
    llama_point_params(&s->p, s->core.params, m->tensor_sizes);
    llama_point_params(&s->g, s->core.grads, m->tensor_sizes);
    /* the angles once, on the host, as the CPU backend computes them */
    float* table = (float*)cuda_host_alloc(2 * T * half * sizeof(float));
    llama_rope_table(c, table, table + T * half);
    cuda_to_device(&s->core, s->rope_cos, table, T * half * sizeof(float));
    cuda_to_device(&s->core, s->rope_sin, table + T * half, T * half * sizeof(float));
    cuda_stream_sync(&s->core);
    free(table);
    s->lay.host = (char*)cuda_host_alloc(s->lay.bytes);
    s->h_cursor = (int*)cuda_host_alloc(V * sizeof(int));
    s->seg_cap = 64;
    s->h_segs = (CudaSeg*)cuda_host_alloc((size_t)s->seg_cap * sizeof(CudaSeg));
    s->h_ints = (int*)cuda_host_alloc(5 * R * sizeof(int));
    s->h_head_rows = (int*)cuda_host_alloc(N * sizeof(int));
    s->h_head = (float*)cuda_host_alloc(N * sizeof(float));
    m->state = s;
}

void lcuda_teardown(Model* m) {
    LlamaCudaState* s = (LlamaCudaState*)m->state;
    if (!s) return;
    cuda_core_close(&s->core);
    void* host[] = {s->lay.host, s->h_cursor, s->h_segs, s->h_ints, s->h_head_rows, s->h_head};
    for (size_t i = 0; i < sizeof host / sizeof host[0]; i++) free(host[i]);
    free(s);
    m->state = NULL;
}

/* ---- the family's layers on the device (LlamaOps); ctx is the LlamaCudaState -------------- */
void lcuda_op_embed_forward(void* ctx, float* out, const int* inp, const float* embed, int N, int C) {
    cuda_gather_rows(lcuda_ctx(ctx), out, embed, inp, N, C); /* the token rows of the embedding */
}
void lcuda_op_embed_backward(void* ctx, float* dembed, const float* dout, const int* inp, int N, int C) {
    (void)inp; /* the layout's rows of each token instead: the CPU's order of addition, no atomics */
    (void)N;
    LlamaCudaState* s = lcuda_state(ctx);
    cuda_encoder_backward(lcuda_ctx(ctx), dembed, dout, s->tok_start, s->tok_rows, s->vocab, C);
}
void lcuda_op_rope_forward(void* ctx, float* qkv, const int* pos, int N, const ModelShape* c) {
    LlamaCudaState* s = lcuda_state(ctx);
    cuda_rope_forward(lcuda_ctx(ctx), qkv, pos, s->rope_cos, s->rope_sin, N, llama_qkvdim(c), c->n_head,
                      c->n_kv_head, c->head_dim);
}
void lcuda_op_rope_backward(void* ctx, float* dqkv, const int* pos, int N, const ModelShape* c) {
    LlamaCudaState* s = lcuda_state(ctx);
    cuda_rope_backward(lcuda_ctx(ctx), dqkv, pos, s->rope_cos, s->rope_sin, N, llama_qkvdim(c), c->n_head,
                       c->n_kv_head, c->head_dim);
}
void lcuda_op_attention_forward(void* ctx, float* out, float* att, const float* qkv, int N, const AttnShape* sh) {
    LlamaCudaState* s = lcuda_state(ctx);
    cuda_attention_forward_gqa(lcuda_ctx(ctx), out, att, qkv, s->segs, s->seg_of, N, *sh);
}
void lcuda_op_attention_backward(void* ctx, float* dqkv, float* datt, const float* dout, const float* qkv,
                                 const float* att, int N, const AttnShape* sh) {
    LlamaCudaState* s = lcuda_state(ctx);
    cuda_attention_backward_gqa(lcuda_ctx(ctx), dqkv, datt, dout, qkv, att, s->segs, s->children, s->seg_of, N, *sh);
}
/* The head's rows all have a target: no row is skipped (pad -1 matches none). */
void lcuda_op_logprob_forward(void* ctx, float* lp, float* probs, const float* logits, const int* targets, int n,
                              int V, float scale) {
    cuda_logprob_forward(lcuda_ctx(ctx), lp, probs, logits, targets, n, V, LLAMA_NO_TARGET, scale);
}
void lcuda_op_logprob_backward(void* ctx, float* dlogits, const float* dlp, const float* probs, const int* targets,
                               int n, int V, float scale) {
    cuda_logprob_backward(lcuda_ctx(ctx), dlogits, dlp, probs, targets, n, V, LLAMA_NO_TARGET, scale);
}
void lcuda_op_prefill_kv_store(void* ctx, float* kprefix, float* vprefix, const float* qkv, int N,
                               const ModelShape* c, size_t prefix_slot) {
    LlamaCudaState* s = lcuda_state(ctx);
    cuda_kv_store_prefill_gqa(lcuda_ctx(ctx), kprefix, vprefix, qkv, s->segs, s->seg_of, N, llama_attn_shape(c),
                              prefix_slot);
}
void lcuda_op_decode_kv_store(void* ctx, float* krow, float* vrow, const float* qkv, const DecodeStep* d,
                              const ModelShape* c, size_t row_slot) {
    cuda_kv_store_decode_gqa(lcuda_ctx(ctx), krow, vrow, qkv, d->rows, d->prefix_len, d->pos, d->n,
                             llama_attn_shape(c), row_slot);
}
void lcuda_op_decode_attention(void* ctx, float* y, const float* qkv, const float* kprefix, const float* vprefix,
                               const float* krow, const float* vrow, const DecodeStep* d, const AttnShape* sh,
                               size_t prefix_slot, size_t row_slot, int n_ctx) {
    cuda_decode_attention_gqa(lcuda_ctx(ctx), y, lcuda_state(ctx)->scores, qkv, kprefix, vprefix, krow, vrow, d->rows,
                              d->prefix, d->prefix_len, d->pos, d->n, *sh, prefix_slot, row_slot, n_ctx);
}

/* A decode step's products: cuBLAS as every other product (the CPU's few-row kernel is a
 * host-side answer to sgemm's repacking). */
static void lcuda_op_decode_matmul(void* ctx, float* out, const float* inp, const float* w, const float* bias, int N,
                                   int IC, int OC) {
    CUDA_BLOCK_OPS.matmul_forward(ctx, out, inp, w, bias, N, IC, OC);
}

/* In the order of LlamaOps' fields. */
const LlamaOps LLAMA_CUDA_OPS = {
    &CUDA_BLOCK_OPS,
    lcuda_op_embed_forward,
    lcuda_op_embed_backward,
    OnState<cuda_rmsnorm_forward>::call,
    OnState<cuda_rmsnorm_backward>::call,
    lcuda_op_rope_forward,
    lcuda_op_rope_backward,
    lcuda_op_attention_forward,
    lcuda_op_attention_backward,
    OnState<cuda_swiglu_forward>::call,
    OnState<cuda_swiglu_backward>::call,
    OnState<cuda_gather_rows>::call,
    OnState<cuda_scatter_add_rows>::call,
    lcuda_op_logprob_forward,
    lcuda_op_logprob_backward,
    lcuda_op_prefill_kv_store,
    lcuda_op_decode_kv_store,
    lcuda_op_decode_matmul,
    lcuda_op_decode_attention,
};

/* Checks the batch and sends its layout: tokens, positions (prefix length + index), the
 * segment of each token, the segment table with each segment's attention offset, the children
 * of every prompt, the rows of each token, and the rows with a target with their targets. */
void lcuda_send_layout(Model* m, const PackedBatch* pb) {
    LlamaCudaState* s = (LlamaCudaState*)m->state;
    const ModelShape* c = &m->cfg;
    int N = pb->n_tokens, NS = pb->n_segments, V = c->vocab;
    cuda_check_batch(m, pb, m->roles.none);
    if (NS > s->seg_cap) {
        s->seg_cap = NS;
        free(s->h_segs);
        s->h_segs = (CudaSeg*)cuda_host_alloc((size_t)s->seg_cap * sizeof(CudaSeg));
    }
    CudaSeg* hs = s->h_segs;
    size_t used = 0;
    void* h;
    s->inputs = (int*)cuda_lay_put(&s->lay, &used, pb->inputs, (size_t)N * sizeof(int));
    s->pos = (int*)cuda_lay_take(&s->lay, &used, (size_t)N * sizeof(int), &h);
    int* pos = (int*)h;
    s->seg_of = (int*)cuda_lay_take(&s->lay, &used, (size_t)N * sizeof(int), &h);
    int* seg_of = (int*)h;
    s->children = (int*)cuda_lay_take(&s->lay, &used, (size_t)NS * sizeof(int), &h);
    int* children = (int*)h;
    s->att_used = (long)cuda_segment_table(hs, children, pos, seg_of, pb->segs, NS, c->n_head);
    s->segs = (CudaSeg*)cuda_lay_put(&s->lay, &used, hs, (size_t)NS * sizeof(CudaSeg));
    s->tok_start = (int*)cuda_lay_take(&s->lay, &used, (size_t)(V + 1) * sizeof(int), &h);
    int* tok_start = (int*)h;
    s->tok_rows = (int*)cuda_lay_take(&s->lay, &used, (size_t)N * sizeof(int), &h);
    cuda_rows_by_key(tok_start, (int*)h, s->h_cursor, pb->inputs, N, V);
    s->head_rows = (int*)cuda_lay_take(&s->lay, &used, (size_t)N * sizeof(int), &h);
    int* rows = (int*)h;
    s->head_targets = (int*)cuda_lay_take(&s->lay, &used, (size_t)N * sizeof(int), &h);
    int* targets = (int*)h;
    s->n_head_rows = 0;
    for (int i = 0; i < N; i++) {
        if (pb->targets[i] == m->roles.none) continue;
        rows[s->n_head_rows] = i;
        targets[s->n_head_rows++] = pb->targets[i];
    }
    memcpy(s->h_head_rows, rows, (size_t)s->n_head_rows * sizeof(int));
    cuda_lay_send(&s->core, &s->lay, used);
    s->N = N;
}

/* The embedding and every block for the layout already on the device. */
void lcuda_forward_blocks(Model* m, int kv_only_last) {
    LlamaCudaState* s = (LlamaCudaState*)m->state;
    llama_block_forward(&LLAMA_CUDA_OPS, s, &s->a, &s->p, s->inputs, s->pos, &m->cfg, s->N, s->att_used,
                        kv_only_last);
}

void lcuda_forward(Model* m, const PackedBatch* pb, float* logprobs) {
    LlamaCudaState* s = (LlamaCudaState*)m->state;
    lcuda_send_layout(m, pb);
    lcuda_forward_blocks(m, 0);
    llama_final_norm(&LLAMA_CUDA_OPS, s, &s->a, &s->p, &m->cfg, s->N);
    s->logit_scale = pb->logit_scale > 0.0f ? pb->logit_scale : 1.0f;
    llama_head_forward(&LLAMA_CUDA_OPS, s, &s->a, &s->p, &m->cfg, s->head_rows, s->head_targets, s->n_head_rows,
                       s->chunk, s->logit_scale, s->head_lp);
    cuda_to_host(&s->core, s->h_head, s->head_lp, (size_t)s->n_head_rows * sizeof(float));
    cuda_stream_sync(&s->core);
    memset(logprobs, 0, (size_t)s->N * sizeof(float));
    for (int i = 0; i < s->n_head_rows; i++) logprobs[s->h_head_rows[i]] = s->h_head[i];
}

void lcuda_backward(Model* m, const float* dlogprobs) {
    LlamaCudaState* s = (LlamaCudaState*)m->state;
    for (int i = 0; i < s->n_head_rows; i++) s->h_head[i] = dlogprobs[s->h_head_rows[i]];
    cuda_to_device(&s->core, s->head_dlp, s->h_head, (size_t)s->n_head_rows * sizeof(float));
    llama_head_backward(&LLAMA_CUDA_OPS, s, &s->a, &s->p, &s->g, &m->cfg, s->head_rows, s->head_targets, s->head_dlp,
                        s->n_head_rows, s->N, s->chunk, s->logit_scale);
    llama_block_backward(&LLAMA_CUDA_OPS, s, &s->a, &s->p, &s->g, s->inputs, s->pos, &m->cfg, s->N, s->att_used);
    /* no sync: the next forward, grad_norm or download waits on the stream */
}

/* Every row's logits of the last forward, recomputed a chunk of rows at a time (tests, tools). */
void lcuda_get_logits(Model* m, float* out) {
    LlamaCudaState* s = (LlamaCudaState*)m->state;
    const ModelShape* c = &m->cfg;
    for (int i0 = 0; i0 < s->N; i0 += s->chunk) {
        int n = s->N - i0 < s->chunk ? s->N - i0 : s->chunk;
        CUDA_BLOCK_OPS.matmul_forward(s, s->a.hlogits, s->a.lnf + (size_t)i0 * c->d_model, llama_out_weight(c, &s->p),
                                      NULL, n, c->d_model, c->vocab);
        cuda_to_host(&s->core, out + (size_t)i0 * c->vocab, s->a.hlogits, (size_t)n * c->vocab * sizeof(float));
    }
    cuda_stream_sync(&s->core);
}

/* The prompts' keys and values of every layer go to prompt cache slot = segment index. */
void lcuda_prefill(Model* m, const PackedBatch* pb) {
    LlamaCudaState* s = (LlamaCudaState*)m->state;
    char err[256];
    if (prefill_check(&m->cap, pb, err, sizeof err)) cuda_die(err);
    lcuda_send_layout(m, pb);
    lcuda_forward_blocks(m, 1);
    llama_prefill_store(&LLAMA_CUDA_OPS, s, &s->a, &s->gen, &m->cfg, &m->cap, s->N);
    /* no sync: decode's copies wait on the stream */
}

/* Checks the step on the host, sends its rows in one copy and returns the logits. */
void lcuda_decode(Model* m, const DecodeStep* d, float* logits) {
    LlamaCudaState* s = (LlamaCudaState*)m->state;
    int n = d->n;
    char err[256];
    if (decode_check(&m->cfg, &m->cap, d, err, sizeof err)) cuda_die(err);
    /* rows | prefix | prefix_len | tokens | pos */
    const int* parts[5] = {d->rows, d->prefix, d->prefix_len, d->tokens, d->pos};
    for (int k = 0; k < 5; k++) memcpy(s->h_ints + (size_t)k * n, parts[k], (size_t)n * sizeof(int));
    cuda_to_device(&s->core, s->ints, s->h_ints, 5 * (size_t)n * sizeof(int));
    DecodeStep dev = {n, s->ints, s->ints + n, s->ints + 2 * n, s->ints + 3 * n, s->ints + 4 * n};
    llama_decode(&LLAMA_CUDA_OPS, s, &s->gen, &s->p, &dev, &m->cfg, &m->cap, s->gen_logits);
    cuda_to_host(&s->core, logits, s->gen_logits, (size_t)n * m->cfg.vocab * sizeof(float));
    cuda_stream_sync(&s->core);
}

} // namespace

/* In the order of ModelBackend's fields (gpt.h). */
extern "C" const ModelBackend MODEL_BACKEND_LLAMA_CUDA = {
    "cuda",              MODEL_FAMILY_LLAMA,  cuda_backend_available, cuda_set_local_rank, cuda_device_for_this_rank,
    lcuda_setup,
    lcuda_teardown,      cuda_core_upload,    cuda_core_download,     lcuda_get_logits,    lcuda_forward,
    lcuda_backward,      cuda_core_zero_grad, cuda_core_grad_norm,    cuda_core_adamw,     lcuda_prefill,
    lcuda_decode,
};
