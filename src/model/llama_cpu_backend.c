/* The Llama/Qwen2 family's CPU backend: llama_loop.h's loops over the host layers of
 * llama_layers.c and cpu_layers.c (grouped-query attention), with the parameter updates
 * shared with the byte-level GPT's CPU backend (cpu_backend.h). Everything is allocated once
 * in setup from the model's capacity; the head works a chunk of rows at a time, so no
 * (tokens x vocab) buffer exists. */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "model/cpu_backend.h"
#include "model/cpu_layers.h"
#include "model/family.h"
#include "model/llama_layers.h"
#include "model/llama_loop.h"
#include "model/product_profile.h"
#include "model/small_gemm.h"

typedef struct {
    LlamaParams p, g;     /* named views of the model's host buffers */
    int* inputs;          /* (N) the last forward's tokens */
    int* pos;             /* (N) their positions */
    Segment* segs;        /* the last forward's segments */
    int n_segs, seg_cap;
    long* seg_att;        /* deterministic: each segment's offset in att (seg_cap) */
    LlamaActs a;
    LlamaDecodeActs gen;
    float* scores;        /* (max_rows, n_ctx) one head's weights for a run of decode rows */
    float *rope_cos, *rope_sin; /* (n_ctx, head_dim / 2) */
    int* head_rows;       /* (N) the rows with a target */
    int* head_targets;    /* (N) their targets */
    float* head_lp;       /* (N) their log-probs */
    float* head_dlp;      /* (N) their gradients */
    int n_head_rows, chunk, N;
    float logit_scale;
    long att_used;
} LlamaCpuState;

static void* falloc(size_t n) { return mallocCheck((n ? n : 1) * sizeof(float)); }

static void lcpu_setup(Model* m) {
    LlamaCpuState* s = callocCheck(1, sizeof *s);
    const ModelShape* c = &m->cfg;
    const ModelCapacity* cap = &m->cap;
    size_t N = cap->max_tokens, T = c->n_ctx, C = c->d_model, L = c->n_layer, V = c->vocab, F = c->d_ff;
    size_t QKV = llama_qkvdim(c), QD = llama_qdim(c), KD = llama_kvdim(c), R = cap->max_rows;
    llama_point_params(&s->p, m->params_memory, m->tensor_sizes);
    llama_point_params(&s->g, m->grads_memory, m->tensor_sizes);
    s->chunk = llama_head_chunk(c, cap->max_tokens);
    size_t H = s->chunk;
    s->inputs = mallocCheck(N * sizeof(int));
    s->pos = mallocCheck(N * sizeof(int));
    s->seg_cap = 64;
    s->segs = mallocCheck((size_t)s->seg_cap * sizeof(Segment));
    s->seg_att = mallocCheck((size_t)s->seg_cap * sizeof(long));
    LlamaActs* a = &s->a;
    a->x0 = falloc(N * C);
    a->ln1 = falloc(L * N * C);
    a->rstd1 = falloc(L * N);
    a->qkv = falloc(L * N * QKV);
    a->atty = falloc(L * N * QD);
    a->att = falloc(L * (size_t)cap->max_att);
    a->res2 = falloc(L * N * C);
    a->ln2 = falloc(L * N * C);
    a->rstd2 = falloc(L * N);
    a->gu = falloc(L * N * 2 * F);
    a->h = falloc(L * N * F);
    a->res3 = falloc(L * N * C);
    a->lnf = falloc(N * C);
    a->rstdf = falloc(N);
    a->dres = falloc(N * C);
    a->dC = falloc(N * C);
    a->dQD = falloc(N * QD);
    a->dqkv = falloc(N * QKV);
    a->dgu = falloc(N * 2 * F);
    a->dF = falloc(N * F);
    a->datt = falloc(c->deterministic && (size_t)cap->max_att > T * T ? (size_t)cap->max_att : T * T);
    a->hx = falloc(H * C);
    a->hdx = falloc(H * C);
    a->hlogits = falloc(H * V);
    a->hprobs = falloc(H * V);
    a->hdlogits = falloc(H * V);
    a->hlp = falloc(H);
    a->hdlp = falloc(H);
    a->htargets = mallocCheck(H * sizeof(int));
    LlamaDecodeActs* g = &s->gen;
    g->x = falloc(R * C);
    g->xn = falloc(R * C);
    g->qkv = falloc(R * QKV);
    g->y = falloc(R * QD);
    g->gu = falloc(R * 2 * F);
    g->h = falloc(R * F);
    g->tmp = falloc(R * C);
    g->rstd = falloc(R);
    g->kprefix = falloc(L * cap->max_prefixes * T * KD);
    g->vprefix = falloc(L * cap->max_prefixes * T * KD);
    g->krow = falloc(L * R * cap->row_ctx * KD);
    g->vrow = falloc(L * R * cap->row_ctx * KD);
    s->scores = falloc(R * T);
    s->rope_cos = falloc(T * c->head_dim / 2);
    s->rope_sin = falloc(T * c->head_dim / 2);
    llama_rope_table(c, s->rope_cos, s->rope_sin);
    s->head_rows = mallocCheck(N * sizeof(int));
    s->head_targets = mallocCheck(N * sizeof(int));
    s->head_lp = falloc(N);
    s->head_dlp = falloc(N);
    m->state = s;
}

static void lcpu_teardown(Model* m) {
    LlamaCpuState* s = m->state;
    if (!s) return;
    LlamaActs* a = &s->a;
    LlamaDecodeActs* g = &s->gen;
    void* bufs[] = {s->inputs, s->pos, s->segs, s->seg_att, a->x0, a->ln1, a->rstd1, a->qkv, a->atty, a->att, a->res2,
                    a->ln2, a->rstd2, a->gu, a->h, a->res3, a->lnf, a->rstdf, a->dres, a->dC, a->dQD, a->dqkv, a->dgu,
                    a->dF, a->datt, a->hx, a->hdx, a->hlogits, a->hprobs, a->hdlogits, a->hlp, a->hdlp, a->htargets,
                    g->x, g->xn, g->qkv, g->y, g->gu, g->h, g->tmp, g->rstd, g->kprefix, g->vprefix, g->krow, g->vrow,
                    s->scores, s->rope_cos, s->rope_sin, s->head_rows, s->head_targets, s->head_lp, s->head_dlp};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) free(bufs[i]);
    free(s);
    m->state = NULL;
}

static int det_of(const void* ctx) { return ((const Model*)ctx)->cfg.deterministic; }
static LlamaCpuState* state_of(void* ctx) { return ((Model*)ctx)->state; }

/* The family's layers on the host; ctx is the Model. */
static void op_embed_forward(void* ctx, float* out, const int* inp, const float* embed, int N, int C) {
    (void)ctx;
    embedding_forward(out, inp, embed, N, C);
}
static void op_embed_backward(void* ctx, float* dembed, const float* dout, const int* inp, int N, int C) {
    (void)ctx;
    embedding_backward(dembed, dout, inp, N, C);
}
static void op_rmsnorm_forward(void* ctx, float* out, float* rstd, const float* inp, const float* w, int N, int C,
                               float eps) {
    (void)ctx;
    rmsnorm_forward(out, rstd, inp, w, N, C, eps);
}
static void op_rmsnorm_backward(void* ctx, float* dinp, float* dw, const float* dout, const float* inp, const float* w,
                                const float* rstd, int N, int C) {
    (void)ctx;
    rmsnorm_backward(dinp, dw, dout, inp, w, rstd, N, C);
}
static void op_rope_forward(void* ctx, float* qkv, const int* pos, int N, const ModelShape* c) {
    LlamaCpuState* s = state_of(ctx);
    rope_forward(qkv, pos, s->rope_cos, s->rope_sin, N, llama_qkvdim(c), c->n_head, c->n_kv_head, c->head_dim);
}
static void op_rope_backward(void* ctx, float* dqkv, const int* pos, int N, const ModelShape* c) {
    LlamaCpuState* s = state_of(ctx);
    rope_backward(dqkv, pos, s->rope_cos, s->rope_sin, N, llama_qkvdim(c), c->n_head, c->n_kv_head, c->head_dim);
}
static void op_attention_forward(void* ctx, float* out, float* att, const float* qkv, int N, const AttnShape* sh) {
    (void)N;
    LlamaCpuState* s = state_of(ctx);
    if (det_of(ctx)) attention_forward_det_gqa(out, att, qkv, s->segs, s->n_segs, sh);
    else attention_forward_gqa(out, att, qkv, s->segs, s->n_segs, sh);
}
static void op_attention_backward(void* ctx, float* dqkv, float* datt, const float* dout, const float* qkv,
                                  const float* att, int N, const AttnShape* sh) {
    (void)N;
    LlamaCpuState* s = state_of(ctx);
    if (det_of(ctx)) attention_backward_det_gqa(dqkv, datt, dout, qkv, att, s->segs, s->seg_att, s->n_segs, sh);
    else attention_backward_gqa(dqkv, datt, dout, qkv, att, s->segs, s->n_segs, sh);
}
static void op_swiglu_forward(void* ctx, float* h, const float* gu, int N, int F) {
    swiglu_forward(h, gu, N, F, det_of(ctx));
}
static void op_swiglu_backward(void* ctx, float* dgu, const float* dh, const float* gu, int N, int F) {
    swiglu_backward(dgu, dh, gu, N, F, det_of(ctx));
}
static void op_gather_rows(void* ctx, float* dst, const float* src, const int* idx, int n, int C) {
    (void)ctx;
    for (int i = 0; i < n; i++) memcpy(dst + (size_t)i * C, src + (size_t)idx[i] * C, (size_t)C * sizeof(float));
}
static void op_scatter_add_rows(void* ctx, float* dst, const float* src, const int* idx, int n, int C) {
    (void)ctx;
    for (int i = 0; i < n; i++) {
        float* d = dst + (size_t)idx[i] * C;
        const float* x = src + (size_t)i * C;
        for (int k = 0; k < C; k++) d[k] += x[k];
    }
}
static void op_logprob_forward(void* ctx, float* lp, float* probs, const float* logits, const int* targets, int n, int V,
                               float scale) {
    logprob_forward(lp, probs, logits, targets, n, V, ((Model*)ctx)->roles.none, scale, det_of(ctx));
}
static void op_logprob_backward(void* ctx, float* dlogits, const float* dlp, const float* probs, const int* targets,
                                int n, int V, float scale) {
    logprob_backward(dlogits, dlp, probs, targets, n, V, ((Model*)ctx)->roles.none, scale);
}
static void op_prefill_kv_store(void* ctx, float* kprefix, float* vprefix, const float* qkv, int N,
                                const ModelShape* c, size_t prefix_slot) {
    (void)N;
    LlamaCpuState* s = state_of(ctx);
    size_t QKV = llama_qkvdim(c), QD = llama_qdim(c), KD = llama_kvdim(c);
    for (int g = 0; g < s->n_segs; g++) {
        const Segment* sg = &s->segs[g];
        for (int t = 0; t < sg->len; t++) {
            const float* row = qkv + (size_t)(sg->start + t) * QKV;
            size_t at = g * prefix_slot + (size_t)t * KD;
            memcpy(kprefix + at, row + QD, KD * sizeof(float));
            memcpy(vprefix + at, row + QD + KD, KD * sizeof(float));
        }
    }
}
static void op_decode_kv_store(void* ctx, float* krow, float* vrow, const float* qkv, const DecodeStep* d,
                               const ModelShape* c, size_t row_slot) {
    (void)ctx;
    size_t QKV = llama_qkvdim(c), QD = llama_qdim(c), KD = llama_kvdim(c);
    for (int i = 0; i < d->n; i++) {
        const float* q = qkv + (size_t)i * QKV;
        size_t at = (size_t)d->rows[i] * row_slot + (size_t)(d->pos[i] - d->prefix_len[i]) * KD;
        memcpy(krow + at, q + QD, KD * sizeof(float));
        memcpy(vrow + at, q + QD + KD, KD * sizeof(float));
    }
}
static void op_decode_attention(void* ctx, float* y, const float* qkv, const float* kprefix, const float* vprefix,
                                const float* krow, const float* vrow, const DecodeStep* d, const AttnShape* sh,
                                size_t prefix_slot, size_t row_slot, int n_ctx) {
    decode_attention_all(y, state_of(ctx)->scores, qkv, kprefix, vprefix, krow, vrow, d, sh, prefix_slot, row_slot,
                         n_ctx, det_of(ctx));
}

static void op_decode_matmul(void* ctx, float* out, const float* inp, const float* w, const float* bias, int N, int IC,
                             int OC) {
    if (det_of(ctx) || N > SMALL_GEMM_MAX_ROWS) CPU_BLOCK_OPS.matmul_forward(ctx, out, inp, w, bias, N, IC, OC);
    else {
        double t0 = product_profile_start();
        small_gemm(out, inp, w, bias, N, IC, OC);
        product_profile_add(PRODUCT_LINEAR, t0, 2.0 * N * IC * OC);
    }
}

static const LlamaOps LLAMA_CPU_OPS = {
    .common = &CPU_BLOCK_OPS,
    .embed_forward = op_embed_forward,
    .embed_backward = op_embed_backward,
    .rmsnorm_forward = op_rmsnorm_forward,
    .rmsnorm_backward = op_rmsnorm_backward,
    .rope_forward = op_rope_forward,
    .rope_backward = op_rope_backward,
    .attention_forward = op_attention_forward,
    .attention_backward = op_attention_backward,
    .swiglu_forward = op_swiglu_forward,
    .swiglu_backward = op_swiglu_backward,
    .gather_rows = op_gather_rows,
    .scatter_add_rows = op_scatter_add_rows,
    .logprob_forward = op_logprob_forward,
    .logprob_backward = op_logprob_backward,
    .prefill_kv_store = op_prefill_kv_store,
    .decode_kv_store = op_decode_kv_store,
    .decode_matmul = op_decode_matmul,
    .decode_attention = op_decode_attention,
};

/* Keeps the batch's layout (tokens, positions, segments) for the backward pass. */
static void keep_layout(LlamaCpuState* s, const PackedBatch* pb) {
    if (pb->n_segments > s->seg_cap) {
        s->seg_cap = pb->n_segments;
        free(s->segs);
        free(s->seg_att);
        s->segs = mallocCheck((size_t)s->seg_cap * sizeof(Segment));
        s->seg_att = mallocCheck((size_t)s->seg_cap * sizeof(long));
    }
    memcpy(s->segs, pb->segs, (size_t)pb->n_segments * sizeof(Segment));
    s->n_segs = pb->n_segments;
    s->N = pb->n_tokens;
    memcpy(s->inputs, pb->inputs, (size_t)s->N * sizeof(int));
    packed_positions(s->pos, s->segs, s->n_segs);
}

/* The blocks for the kept layout (a prefill, kv_only_last: every layer's keys and values
 * only). */
static void forward_blocks(Model* m, int kv_only_last) {
    LlamaCpuState* s = m->state;
    s->att_used = packed_att_size(&m->cfg, &(PackedBatch){.n_segments = s->n_segs, .segs = s->segs});
    llama_block_forward(&LLAMA_CPU_OPS, m, &s->a, &s->p, s->inputs, s->pos, &m->cfg, s->N, s->att_used,
                        kv_only_last);
}

static void lcpu_forward(Model* m, const PackedBatch* pb, float* logprobs) {
    LlamaCpuState* s = m->state;
    keep_layout(s, pb);
    forward_blocks(m, 0);
    llama_final_norm(&LLAMA_CPU_OPS, m, &s->a, &s->p, &m->cfg, s->N);
    s->n_head_rows = 0;
    for (int i = 0; i < s->N; i++) {
        if (pb->targets[i] == m->roles.none) continue;
        s->head_rows[s->n_head_rows] = i;
        s->head_targets[s->n_head_rows++] = pb->targets[i];
    }
    s->logit_scale = pb->logit_scale > 0.0f ? pb->logit_scale : 1.0f;
    llama_head_forward(&LLAMA_CPU_OPS, m, &s->a, &s->p, &m->cfg, s->head_rows, s->head_targets, s->n_head_rows,
                       s->chunk, s->logit_scale, s->head_lp);
    memset(logprobs, 0, (size_t)s->N * sizeof(float));
    for (int i = 0; i < s->n_head_rows; i++) logprobs[s->head_rows[i]] = s->head_lp[i];
}

static void lcpu_backward(Model* m, const float* dlogprobs) {
    LlamaCpuState* s = m->state;
    if (det_of(m)) det_segment_offsets(s->seg_att, s->segs, s->n_segs, m->cfg.n_head);
    for (int i = 0; i < s->n_head_rows; i++) s->head_dlp[i] = dlogprobs[s->head_rows[i]];
    llama_head_backward(&LLAMA_CPU_OPS, m, &s->a, &s->p, &s->g, &m->cfg, s->head_rows, s->head_targets, s->head_dlp,
                        s->n_head_rows, s->N, s->chunk, s->logit_scale);
    llama_block_backward(&LLAMA_CPU_OPS, m, &s->a, &s->p, &s->g, s->inputs, s->pos, &m->cfg, s->N, s->att_used);
}

/* Every row's logits of the last forward, recomputed a chunk at a time (tests and tools). */
static void lcpu_get_logits(Model* m, float* out) {
    LlamaCpuState* s = m->state;
    const ModelShape* c = &m->cfg;
    for (int i0 = 0; i0 < s->N; i0 += s->chunk) {
        int n = s->N - i0 < s->chunk ? s->N - i0 : s->chunk;
        CPU_BLOCK_OPS.matmul_forward(m, out + (size_t)i0 * c->vocab, s->a.lnf + (size_t)i0 * c->d_model,
                                     llama_out_weight(c, &s->p), NULL, n, c->d_model, c->vocab);
    }
}

static void lcpu_prefill(Model* m, const PackedBatch* pb) {
    LlamaCpuState* s = m->state;
    char err[256];
    if (prefill_check(&m->cap, pb, err, sizeof err)) sapo_die("%s", err);
    keep_layout(s, pb);
    forward_blocks(m, 1);
    llama_prefill_store(&LLAMA_CPU_OPS, m, &s->a, &s->gen, &m->cfg, &m->cap, s->N);
}

static void lcpu_decode(Model* m, const DecodeStep* d, float* logits) {
    LlamaCpuState* s = m->state;
    char err[256];
    if (decode_check(&m->cfg, &m->cap, d, err, sizeof err)) sapo_die("%s", err);
    llama_decode(&LLAMA_CPU_OPS, m, &s->gen, &s->p, d, &m->cfg, &m->cap, logits);
}

const ModelBackend MODEL_BACKEND_LLAMA_CPU = {
    .name = "cpu",
    .family = MODEL_FAMILY_LLAMA,
    .available = NULL,
    .place = NULL,
    .device = NULL,
    .setup = lcpu_setup,
    .teardown = lcpu_teardown,
    .upload = cpu_upload,
    .download = cpu_download,
    .get_logits = lcpu_get_logits,
    .forward = lcpu_forward,
    .backward = lcpu_backward,
    .zero_grad = cpu_zero_grad,
    .grad_norm = cpu_grad_norm,
    .adamw = cpu_adamw,
    .prefill = lcpu_prefill,
    .decode = lcpu_decode,
};
