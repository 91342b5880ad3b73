/* The CPU reference backend: forward, backward, AdamW and KV-cache decoding for the GPT of
 * gpt.h, the layers of cpu_layers.c run by block_loop.h's loops (CPU_BLOCK_OPS). Everything is allocated once in setup for
 * max_batch sequences of n_ctx tokens; nothing is allocated per call. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "model/adamw_scalars.h"
#include "model/block_loop.h"
#include "model/cpu_backend.h"
#include "model/cpu_layers.h"
#include "model/det_attention.h"
#include "model/model.h"

typedef struct {
    /* the last forward's layout and its activations for up to cap.max_tokens tokens */
    int* inputs;       /* (N) */
    int* targets;      /* (N) */
    int* pos;          /* (N) positions */
    Segment* segs;     /* the last forward's segments */
    int n_segs, seg_cap;
    BlockActs a;       /* the blocks' activations and backward scratch (block_loop.h); a.datt:
                          (n_ctx, n_ctx), one segment and head; deterministic: one layer's
                          (cap.max_att), every score gradient kept for the key pass */
    float* lnf;        /* (N, C) */
    float* lnf_mean;   /* (N) */
    float* lnf_rstd;   /* (N) */
    float* logits;     /* (N, V) */
    float* probs;      /* (N, V) */
    /* backward scratch */
    long* seg_att;     /* deterministic: each segment's offset in att (seg_cap) */
    float* dlogits;    /* (N, V) */
    DecodeActs gen;    /* generation's KV caches and decode scratch (block_loop.h) */
    float* scores;     /* (max_rows, n_ctx) one head's weights for a run of decode rows */
    int N;             /* tokens of the last forward */
    float logit_scale; /* its PackedBatch.logit_scale (1 when 0) */
    long att_used;     /* attention weights per layer of the last forward */
} CpuState;

static void cpu_setup(Model* m) {
    CpuState* s = callocCheck(1, sizeof *s);
    const ModelShape* c = &m->cfg;
    const ModelCapacity* cap = &m->cap;
    size_t N = cap->max_tokens, T = c->n_ctx, C = c->d_model, L = c->n_layer, V = c->vocab;
    size_t R = cap->max_rows;
    s->inputs = mallocCheck(N * sizeof(int));
    s->targets = mallocCheck(N * sizeof(int));
    s->pos = mallocCheck(N * sizeof(int));
    s->seg_cap = 64;
    s->segs = mallocCheck((size_t)s->seg_cap * sizeof(Segment));
    s->a.encoded = mallocCheck(N * C * sizeof(float));
    s->a.ln1 = mallocCheck(L * N * C * sizeof(float));
    s->a.ln1_mean = mallocCheck(L * N * sizeof(float));
    s->a.ln1_rstd = mallocCheck(L * N * sizeof(float));
    s->a.qkv = mallocCheck(L * N * 3 * C * sizeof(float));
    s->a.atty = mallocCheck(L * N * C * sizeof(float));
    s->a.att = mallocCheck(L * (size_t)cap->max_att * sizeof(float));
    s->a.residual2 = mallocCheck(L * N * C * sizeof(float));
    s->a.ln2 = mallocCheck(L * N * C * sizeof(float));
    s->a.ln2_mean = mallocCheck(L * N * sizeof(float));
    s->a.ln2_rstd = mallocCheck(L * N * sizeof(float));
    s->a.fch = mallocCheck(L * N * 4 * C * sizeof(float));
    s->a.fch_gelu = mallocCheck(L * N * 4 * C * sizeof(float));
    s->a.fch_tanh = mallocCheck(L * N * 4 * C * sizeof(float));
    s->a.residual3 = mallocCheck(L * N * C * sizeof(float));
    s->lnf = mallocCheck(N * C * sizeof(float));
    s->lnf_mean = mallocCheck(N * sizeof(float));
    s->lnf_rstd = mallocCheck(N * sizeof(float));
    s->logits = mallocCheck(N * V * sizeof(float));
    s->probs = mallocCheck(N * V * sizeof(float));
    s->a.dresidual = mallocCheck(N * C * sizeof(float));
    s->a.dC = mallocCheck(N * C * sizeof(float));
    s->a.dC2 = mallocCheck(N * C * sizeof(float));
    s->a.d3C = mallocCheck(N * 3 * C * sizeof(float));
    s->a.d4C = mallocCheck(N * 4 * C * sizeof(float));
    s->a.d4C2 = mallocCheck(N * 4 * C * sizeof(float));
    size_t datt = c->deterministic && (size_t)cap->max_att > T * T ? (size_t)cap->max_att : T * T;
    s->a.datt = mallocCheck(datt * sizeof(float));
    s->seg_att = mallocCheck((size_t)s->seg_cap * sizeof(long));
    s->dlogits = mallocCheck(N * V * sizeof(float));
    s->gen.kprefix = mallocCheck(L * cap->max_prefixes * T * C * sizeof(float));
    s->gen.vprefix = mallocCheck(L * cap->max_prefixes * T * C * sizeof(float));
    s->gen.krow = mallocCheck(L * R * cap->row_ctx * C * sizeof(float));
    s->gen.vrow = mallocCheck(L * R * cap->row_ctx * C * sizeof(float));
    s->gen.x = mallocCheck(R * C * sizeof(float));
    s->gen.xn = mallocCheck(R * C * sizeof(float));
    s->gen.q3 = mallocCheck(R * 3 * C * sizeof(float));
    s->gen.y = mallocCheck(R * C * sizeof(float));
    s->gen.h4 = mallocCheck(R * 4 * C * sizeof(float));
    s->gen.h4g = mallocCheck(R * 4 * C * sizeof(float));
    s->gen.h4t = mallocCheck(R * 4 * C * sizeof(float));
    s->gen.tmp = mallocCheck(R * C * sizeof(float));
    s->gen.mean = mallocCheck(R * sizeof(float));
    s->gen.rstd = mallocCheck(R * sizeof(float));
    s->scores = mallocCheck(R * T * sizeof(float));
    m->state = s;
}

static void cpu_teardown(Model* m) {
    CpuState* s = m->state;
    if (!s) return;
    void* bufs[] = {s->inputs, s->targets, s->pos, s->segs, s->a.encoded, s->a.ln1, s->a.ln1_mean, s->a.ln1_rstd,
                    s->a.qkv, s->a.atty, s->a.att, s->a.residual2, s->a.ln2, s->a.ln2_mean, s->a.ln2_rstd, s->a.fch,
                    s->a.fch_gelu, s->a.fch_tanh, s->a.residual3, s->lnf, s->lnf_mean, s->lnf_rstd, s->logits, s->probs,
                    s->a.dresidual, s->a.dC, s->a.dC2, s->a.d3C, s->a.d4C, s->a.d4C2, s->a.datt, s->dlogits,
                    s->gen.kprefix, s->gen.vprefix, s->gen.krow, s->gen.vrow, s->gen.x, s->gen.xn, s->gen.q3,
                    s->gen.y, s->gen.h4, s->gen.h4g, s->gen.h4t, s->gen.tmp, s->gen.mean, s->gen.rstd, s->scores,
                    s->seg_att};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) free(bufs[i]);
    free(s);
    m->state = NULL;
}

/* The CPU backend computes on the host buffers themselves. */
void cpu_upload(Model* m) { (void)m; }
void cpu_download(Model* m) { (void)m; }

static void cpu_get_logits(Model* m, float* out) {
    CpuState* s = m->state;
    memcpy(out, s->logits, (size_t)s->N * m->cfg.vocab * sizeof(float));
}

/* Keeps the batch's layout (tokens, positions, segments) for the backward pass. */
static void keep_layout(CpuState* s, const PackedBatch* pb) {
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
    memcpy(s->targets, pb->targets, (size_t)s->N * sizeof(int));
    packed_positions(s->pos, s->segs, s->n_segs);
}

static int det_of(const Model* m) { return m->cfg.deterministic; }

/* The blocks' layers (block_loop.h) on the host; ctx is the Model. */
static void op_encoder_forward(void* ctx, float* out, const int* inp, const int* pos, const float* wte, const float* wpe,
                               int N, int C) {
    encoder_forward(out, inp, pos, wte, wpe, N, C);
}
static void op_layernorm_forward(void* ctx, float* out, float* mean, float* rstd, const float* inp, const float* w,
                                 const float* b, int N, int C) {
    layernorm_forward(out, mean, rstd, inp, w, b, N, C);
}
static void op_layernorm_backward(void* ctx, float* dinp, float* dw, float* db, const float* dout, const float* inp,
                                  const float* w, const float* mean, const float* rstd, int N, int C) {
    layernorm_backward(dinp, dw, db, dout, inp, w, mean, rstd, N, C);
}
static void op_matmul_forward(void* ctx, float* out, const float* inp, const float* w, const float* bias, int N, int IC,
                              int OC) {
    matmul_forward(out, inp, w, bias, N, IC, OC, det_of(ctx));
}
static void op_matmul_backward(void* ctx, float* dinp, float* dw, float* dbias, const float* dout, const float* inp,
                               const float* w, int N, int IC, int OC) {
    matmul_backward(dinp, dw, dbias, dout, inp, w, N, IC, OC, det_of(ctx));
}
static void op_attention_forward(void* ctx, float* out, float* att, const float* qkv, int N, int C, int NH) {
    const CpuState* s = ((Model*)ctx)->state;
    if (det_of(ctx))
        attention_forward_det(out, att, qkv, s->segs, s->n_segs, C, NH);
    else
        attention_forward(out, att, qkv, s->segs, s->n_segs, C, NH);
}
static void op_attention_backward(void* ctx, float* dqkv, float* datt, const float* dout, const float* qkv,
                                  const float* att, int N, int C, int NH) {
    const CpuState* s = ((Model*)ctx)->state;
    if (det_of(ctx))
        attention_backward_det(dqkv, datt, dout, qkv, att, s->segs, s->seg_att, s->n_segs, C, NH);
    else
        attention_backward(dqkv, datt, dout, qkv, att, s->segs, s->n_segs, C, NH);
}
static void op_gelu_forward(void* ctx, float* out, float* th, const float* inp, size_t n) {
    gelu_forward(out, th, inp, (int)n);
}
static void op_gelu_backward(void* ctx, float* dinp, const float* inp, const float* th, const float* dout, size_t n) {
    gelu_backward(dinp, inp, th, dout, (int)n);
}
static void op_residual_forward(void* ctx, float* out, const float* a, const float* b, size_t n) {
    residual_forward(out, a, b, (int)n);
}
static void op_zero(void* ctx, float* p, size_t n) { memset(p, 0, n * sizeof(float)); }
static void op_prefill_kv_store(void* ctx, float* kprefix, float* vprefix, const float* qkv, int N, int C,
                                size_t prefix_slot) {
    const CpuState* s = ((Model*)ctx)->state;
    for (int g = 0; g < s->n_segs; g++) {
        const Segment* sg = &s->segs[g];
        for (int t = 0; t < sg->len; t++) {
            const float* row = qkv + (size_t)(sg->start + t) * 3 * C;
            size_t at = g * prefix_slot + (size_t)t * C;
            memcpy(kprefix + at, row + C, C * sizeof(float));
            memcpy(vprefix + at, row + 2 * C, C * sizeof(float));
        }
    }
}
static void op_decode_kv_store(void* ctx, float* krow, float* vrow, const float* q3, const DecodeStep* d, int C,
                               size_t row_slot) {
    for (int i = 0; i < d->n; i++) {
        const float* q = q3 + (size_t)i * 3 * C;
        size_t at = (size_t)d->rows[i] * row_slot + (size_t)(d->pos[i] - d->prefix_len[i]) * C;
        memcpy(krow + at, q + C, C * sizeof(float));
        memcpy(vrow + at, q + 2 * C, C * sizeof(float));
    }
}

static void op_decode_attention(void* ctx, float* y, const float* q3, const float* kprefix, const float* vprefix,
                                const float* krow, const float* vrow, const DecodeStep* d, int C, int NH,
                                size_t prefix_slot, size_t row_slot, int n_ctx) {
    AttnShape sh = attn_shape_mha(C, NH);
    decode_attention_all(y, ((CpuState*)((Model*)ctx)->state)->scores, q3, kprefix, vprefix, krow, vrow, d, &sh,
                         prefix_slot, row_slot, n_ctx, det_of(ctx));
}

const BlockOps CPU_BLOCK_OPS = {
    .encoder_forward = op_encoder_forward,
    .layernorm_forward = op_layernorm_forward,
    .layernorm_backward = op_layernorm_backward,
    .matmul_forward = op_matmul_forward,
    .matmul_backward = op_matmul_backward,
    .attention_forward = op_attention_forward,
    .attention_backward = op_attention_backward,
    .gelu_forward = op_gelu_forward,
    .gelu_backward = op_gelu_backward,
    .residual_forward = op_residual_forward,
    .zero = op_zero,
    .prefill_kv_store = op_prefill_kv_store,
    .decode_kv_store = op_decode_kv_store,
    .decode_attention = op_decode_attention,
};

/* Embedding and every transformer block for the kept layout; leaves the final residual
 * stream in residual3 of the last layer (a prefill, kv_only_last: every layer's keys and
 * values only). */
static void forward_blocks(Model* m, int kv_only_last) {
    CpuState* s = m->state;
    s->att_used = packed_att_size(&m->cfg, &(PackedBatch){.n_segments = s->n_segs, .segs = s->segs});
    block_forward(&CPU_BLOCK_OPS, m, &s->a, &m->params, s->inputs, s->pos, &m->cfg, s->N, s->att_used,
                  kv_only_last);
}

static void cpu_forward(Model* m, const PackedBatch* pb, float* logprobs) {
    CpuState* s = m->state;
    const ModelShape* c = &m->cfg;
    int C = c->d_model, V = c->vocab;
    keep_layout(s, pb);
    forward_blocks(m, 0);
    int N = s->N;
    const float* last = s->a.residual3 + (size_t)(c->n_layer - 1) * N * C;
    head_forward(&CPU_BLOCK_OPS, m, s->logits, s->lnf, s->lnf_mean, s->lnf_rstd, last, &m->params, N, C, V);
    s->logit_scale = pb->logit_scale > 0.0f ? pb->logit_scale : 1.0f;
    logprob_forward(logprobs, s->probs, s->logits, s->targets, N, V, TOK_PAD, s->logit_scale, det_of(m));
}

static void cpu_backward(Model* m, const float* dlogprobs) {
    CpuState* s = m->state;
    const ModelShape* c = &m->cfg;
    const GPTParams* p = &m->params;
    GPTParams* g = &m->grads;
    int N = s->N, C = c->d_model, NH = c->n_head, V = c->vocab;
    if (det_of(m)) det_segment_offsets(s->seg_att, s->segs, s->n_segs, NH);

    logprob_backward(s->dlogits, dlogprobs, s->probs, s->targets, N, V, TOK_PAD, s->logit_scale);
    head_backward(&CPU_BLOCK_OPS, m, &s->a, p, g, s->dlogits, s->lnf, s->lnf_mean, s->lnf_rstd, c, N);
    block_backward(&CPU_BLOCK_OPS, m, &s->a, p, g, c, N, s->att_used);
    encoder_backward(g->wte, g->wpe, s->a.dresidual, s->inputs, s->pos, N, C);
}

void cpu_zero_grad(Model* m) { memset(m->grads_memory, 0, m->num_params * sizeof(float)); }

float cpu_grad_norm(Model* m) {
    double sum = 0.0;
    if (det_of(m)) { /* chunks in order (det_math.h), as the CUDA twin's threads sum them */
        for (int k = 0; k < DET_SUMSQ_CHUNKS; k++) sum += det_sumsq_chunk(m->grads_memory, m->num_params, k);
        return (float)sqrt(sum);
    }
    for (size_t i = 0; i < m->num_params; i++) sum += (double)m->grads_memory[i] * m->grads_memory[i];
    return (float)sqrt(sum);
}

void cpu_adamw(Model* m, const AdamWConfig* hp, float grad_scale) {
    m->step++;
    float step_size, decay, bc2_sqrt;
    adamw_scalars(hp, m->step, det_of(m), &step_size, &decay, &bc2_sqrt);
    for (size_t i = 0; i < m->num_params; i++)
        adamw_update(&m->params_memory[i], &m->m_memory[i], &m->v_memory[i], m->grads_memory[i], hp->beta1, hp->beta2,
                     hp->eps, grad_scale, step_size, decay, bc2_sqrt);
}

static void cpu_prefill(Model* m, const PackedBatch* pb) {
    CpuState* s = m->state;
    char err[256];
    if (prefill_check(&m->cap, pb, err, sizeof err)) sapo_die("%s", err);
    keep_layout(s, pb);
    forward_blocks(m, 1);
    block_prefill_store(&CPU_BLOCK_OPS, m, &s->a, &s->gen, &m->cfg, &m->cap, s->N);
}

static void cpu_decode(Model* m, const DecodeStep* d, float* logits) {
    CpuState* s = m->state;
    char err[256];
    if (decode_check(&m->cfg, &m->cap, d, err, sizeof err)) sapo_die("%s", err);
    block_decode(&CPU_BLOCK_OPS, m, &s->gen, &m->params, d, &m->cfg, &m->cap, logits);
}

const ModelBackend MODEL_BACKEND_CPU = {
    .name = "cpu",
    .available = NULL, /* always */
    .place = NULL,     /* the host's cores, whatever the rank */
    .device = NULL,    /* no GPU */
    .setup = cpu_setup,
    .teardown = cpu_teardown,
    .upload = cpu_upload,
    .download = cpu_download,
    .get_logits = cpu_get_logits,
    .forward = cpu_forward,
    .backward = cpu_backward,
    .zero_grad = cpu_zero_grad,
    .grad_norm = cpu_grad_norm,
    .adamw = cpu_adamw,
    .prefill = cpu_prefill,
    .decode = cpu_decode,
};
