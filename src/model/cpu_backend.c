/* The CPU reference backend: forward, backward, AdamW and KV-cache decoding for the GPT of
 * gpt.h, built from the layers in cpu_layers.c. Everything is allocated once in setup for
 * max_batch sequences of n_ctx tokens; nothing is allocated per call. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "model/cpu_layers.h"
#include "model/gpt.h"

typedef struct {
    /* forward activations, capacity max_batch x n_ctx rows; per-layer arrays are (L, ...) */
    int* inputs;       /* (B, T) */
    int* targets;      /* (B, T) */
    float* encoded;    /* (B, T, C) */
    float* ln1;        /* (L, B, T, C) */
    float* ln1_mean;   /* (L, B, T) */
    float* ln1_rstd;   /* (L, B, T) */
    float* qkv;        /* (L, B, T, 3C) */
    float* atty;       /* (L, B, T, C) */
    float* att;        /* (L, B, NH, T, T) */
    float* residual2;  /* (L, B, T, C) */
    float* ln2;        /* (L, B, T, C) */
    float* ln2_mean;   /* (L, B, T) */
    float* ln2_rstd;   /* (L, B, T) */
    float* fch;        /* (L, B, T, 4C) */
    float* fch_gelu;   /* (L, B, T, 4C) */
    float* fch_tanh;   /* (L, B, T, 4C) the GELU's tanh, for its backward */
    float* residual3;  /* (L, B, T, C) */
    float* lnf;        /* (B, T, C) */
    float* lnf_mean;   /* (B, T) */
    float* lnf_rstd;   /* (B, T) */
    float* logits;     /* (B, T, V) */
    float* probs;      /* (B, T, V) */
    /* backward scratch */
    float* dresidual;  /* (B, T, C) */
    float* dC;         /* (B, T, C) */
    float* dC2;        /* (B, T, C) */
    float* d3C;        /* (B, T, 3C) */
    float* d4C;        /* (B, T, 4C) */
    float* d4C2;       /* (B, T, 4C) */
    float* datt;       /* (T, T) */
    float* dlogits;    /* (B, T, V) */
    /* KV cache for generation: (L, slots, n_ctx, C) each */
    float* kcache;
    float* vcache;
    /* decode scratch, (slots, ...) */
    float* x;          /* (n, C) residual stream */
    float* xn;         /* (n, C) normalised */
    float* q3;         /* (n, 3C) */
    float* y;          /* (n, C) */
    float* h4;         /* (n, 4C) */
    float* h4g;        /* (n, 4C) */
    float* h4t;        /* (n, 4C) */
    float* tmp;        /* (n, C) */
    float* mean;       /* (n) */
    float* rstd;       /* (n) */
    float* scores;     /* (n_ctx) */
    int B, T;          /* shape of the last forward */
} CpuState;

static void cpu_setup(Model* m) {
    CpuState* s = callocCheck(1, sizeof *s);
    const GPTConfig* c = &m->cfg;
    size_t B = m->max_batch, T = c->n_ctx, C = c->d_model, L = c->n_layer, NH = c->n_head, V = c->vocab;
    size_t BT = B * T;
    s->inputs = mallocCheck(BT * sizeof(int));
    s->targets = mallocCheck(BT * sizeof(int));
    s->encoded = mallocCheck(BT * C * sizeof(float));
    s->ln1 = mallocCheck(L * BT * C * sizeof(float));
    s->ln1_mean = mallocCheck(L * BT * sizeof(float));
    s->ln1_rstd = mallocCheck(L * BT * sizeof(float));
    s->qkv = mallocCheck(L * BT * 3 * C * sizeof(float));
    s->atty = mallocCheck(L * BT * C * sizeof(float));
    s->att = mallocCheck(L * B * NH * T * T * sizeof(float));
    s->residual2 = mallocCheck(L * BT * C * sizeof(float));
    s->ln2 = mallocCheck(L * BT * C * sizeof(float));
    s->ln2_mean = mallocCheck(L * BT * sizeof(float));
    s->ln2_rstd = mallocCheck(L * BT * sizeof(float));
    s->fch = mallocCheck(L * BT * 4 * C * sizeof(float));
    s->fch_gelu = mallocCheck(L * BT * 4 * C * sizeof(float));
    s->fch_tanh = mallocCheck(L * BT * 4 * C * sizeof(float));
    s->residual3 = mallocCheck(L * BT * C * sizeof(float));
    s->lnf = mallocCheck(BT * C * sizeof(float));
    s->lnf_mean = mallocCheck(BT * sizeof(float));
    s->lnf_rstd = mallocCheck(BT * sizeof(float));
    s->logits = mallocCheck(BT * V * sizeof(float));
    s->probs = mallocCheck(BT * V * sizeof(float));
    s->dresidual = mallocCheck(BT * C * sizeof(float));
    s->dC = mallocCheck(BT * C * sizeof(float));
    s->dC2 = mallocCheck(BT * C * sizeof(float));
    s->d3C = mallocCheck(BT * 3 * C * sizeof(float));
    s->d4C = mallocCheck(BT * 4 * C * sizeof(float));
    s->d4C2 = mallocCheck(BT * 4 * C * sizeof(float));
    s->datt = mallocCheck(T * T * sizeof(float));
    s->dlogits = mallocCheck(BT * V * sizeof(float));
    s->kcache = mallocCheck(L * BT * C * sizeof(float));
    s->vcache = mallocCheck(L * BT * C * sizeof(float));
    s->x = mallocCheck(B * C * sizeof(float));
    s->xn = mallocCheck(B * C * sizeof(float));
    s->q3 = mallocCheck(B * 3 * C * sizeof(float));
    s->y = mallocCheck(B * C * sizeof(float));
    s->h4 = mallocCheck(B * 4 * C * sizeof(float));
    s->h4g = mallocCheck(B * 4 * C * sizeof(float));
    s->h4t = mallocCheck(B * 4 * C * sizeof(float));
    s->tmp = mallocCheck(B * C * sizeof(float));
    s->mean = mallocCheck(B * sizeof(float));
    s->rstd = mallocCheck(B * sizeof(float));
    s->scores = mallocCheck(T * sizeof(float));
    m->state = s;
}

static void cpu_teardown(Model* m) {
    CpuState* s = m->state;
    if (!s) return;
    void* bufs[] = {s->inputs, s->targets, s->encoded, s->ln1, s->ln1_mean, s->ln1_rstd, s->qkv, s->atty,
                    s->att, s->residual2, s->ln2, s->ln2_mean, s->ln2_rstd, s->fch, s->fch_gelu, s->fch_tanh,
                    s->residual3, s->lnf, s->lnf_mean, s->lnf_rstd, s->logits, s->probs, s->dresidual,
                    s->dC, s->dC2, s->d3C, s->d4C, s->d4C2, s->datt, s->dlogits, s->kcache, s->vcache,
                    s->x, s->xn, s->q3, s->y, s->h4, s->h4g, s->h4t, s->tmp, s->mean, s->rstd, s->scores};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) free(bufs[i]);
    free(s);
    m->state = NULL;
}

/* The CPU backend computes on the host buffers themselves. */
static void cpu_upload(Model* m) { (void)m; }
static void cpu_download(Model* m) { (void)m; }

static void cpu_get_logits(Model* m, float* out) {
    CpuState* s = m->state;
    memcpy(out, s->logits, (size_t)s->B * s->T * m->cfg.vocab * sizeof(float));
}

/* Embedding and every transformer block for inputs (B, T); leaves the final residual
 * stream in residual3 of the last layer. */
static void forward_blocks(Model* m, const int* inputs, int B, int T) {
    CpuState* s = m->state;
    const GPTConfig* c = &m->cfg;
    const GPTParams* p = &m->params;
    int C = c->d_model, NH = c->n_head, N = B * T;
    size_t NC = (size_t)N * C;
    memcpy(s->inputs, inputs, (size_t)N * sizeof(int));
    encoder_forward(s->encoded, inputs, p->wte, p->wpe, B, T, C);
    for (int l = 0; l < c->n_layer; l++) {
        const float* residual = l == 0 ? s->encoded : s->residual3 + (l - 1) * NC;
        float* ln1 = s->ln1 + l * NC;
        float* qkv = s->qkv + l * NC * 3;
        float* atty = s->atty + l * NC;
        float* att = s->att + (size_t)l * B * NH * T * T;
        float* res2 = s->residual2 + l * NC;
        float* ln2 = s->ln2 + l * NC;
        float* fch = s->fch + l * NC * 4;
        float* fchg = s->fch_gelu + l * NC * 4;
        float* res3 = s->residual3 + l * NC;
        layernorm_forward(ln1, s->ln1_mean + l * N, s->ln1_rstd + l * N, residual, p->ln1w + l * C, p->ln1b + l * C, N, C);
        matmul_forward(qkv, ln1, p->qkvw + (size_t)l * 3 * C * C, p->qkvb + l * 3 * C, N, C, 3 * C);
        attention_forward(atty, att, qkv, B, T, C, NH);
        matmul_forward(res2, atty, p->attprojw + (size_t)l * C * C, p->attprojb + l * C, N, C, C);
        residual_forward(res2, res2, residual, (int)NC);
        layernorm_forward(ln2, s->ln2_mean + l * N, s->ln2_rstd + l * N, res2, p->ln2w + l * C, p->ln2b + l * C, N, C);
        matmul_forward(fch, ln2, p->fcw + (size_t)l * 4 * C * C, p->fcb + l * 4 * C, N, C, 4 * C);
        gelu_forward(fchg, s->fch_tanh + l * NC * 4, fch, N * 4 * C);
        matmul_forward(res3, fchg, p->fcprojw + (size_t)l * 4 * C * C, p->fcprojb + l * C, N, 4 * C, C);
        residual_forward(res3, res3, res2, (int)NC);
    }
}

static void cpu_forward(Model* m, const int* inputs, const int* targets, int B, int T, float* logprobs) {
    CpuState* s = m->state;
    const GPTConfig* c = &m->cfg;
    int C = c->d_model, V = c->vocab, N = B * T;
    forward_blocks(m, inputs, B, T);
    memcpy(s->targets, targets, (size_t)N * sizeof(int));
    const float* last = s->residual3 + (size_t)(c->n_layer - 1) * N * C;
    layernorm_forward(s->lnf, s->lnf_mean, s->lnf_rstd, last, m->params.lnfw, m->params.lnfb, N, C);
    matmul_forward(s->logits, s->lnf, m->params.wte, NULL, N, C, V);
    logprob_forward(logprobs, s->probs, s->logits, targets, N, V, TOK_PAD);
    s->B = B;
    s->T = T;
}

static void cpu_backward(Model* m, const float* dlogprobs) {
    CpuState* s = m->state;
    const GPTConfig* c = &m->cfg;
    const GPTParams* p = &m->params;
    GPTParams* g = &m->grads;
    int B = s->B, T = s->T, C = c->d_model, NH = c->n_head, V = c->vocab, L = c->n_layer, N = B * T;
    size_t NC = (size_t)N * C;

    logprob_backward(s->dlogits, dlogprobs, s->probs, s->targets, N, V, TOK_PAD);
    memset(s->dC, 0, NC * sizeof(float));
    matmul_backward(s->dC, g->wte, NULL, s->dlogits, s->lnf, p->wte, N, C, V);
    memset(s->dresidual, 0, NC * sizeof(float));
    layernorm_backward(s->dresidual, g->lnfw, g->lnfb, s->dC, s->residual3 + (L - 1) * NC, p->lnfw,
                       s->lnf_mean, s->lnf_rstd, N, C);

    for (int l = L - 1; l >= 0; l--) {
        const float* residual = l == 0 ? s->encoded : s->residual3 + (l - 1) * NC;
        /* dresidual holds d(residual3); the skip path carries it to residual2 unchanged. */
        memset(s->d4C, 0, NC * 4 * sizeof(float));
        matmul_backward(s->d4C, g->fcprojw + (size_t)l * 4 * C * C, g->fcprojb + l * C, s->dresidual,
                        s->fch_gelu + l * NC * 4, p->fcprojw + (size_t)l * 4 * C * C, N, 4 * C, C);
        memset(s->d4C2, 0, NC * 4 * sizeof(float));
        gelu_backward(s->d4C2, s->fch + l * NC * 4, s->fch_tanh + l * NC * 4, s->d4C, N * 4 * C);
        memset(s->dC, 0, NC * sizeof(float));
        matmul_backward(s->dC, g->fcw + (size_t)l * 4 * C * C, g->fcb + l * 4 * C, s->d4C2, s->ln2 + l * NC,
                        p->fcw + (size_t)l * 4 * C * C, N, C, 4 * C);
        layernorm_backward(s->dresidual, g->ln2w + l * C, g->ln2b + l * C, s->dC, s->residual2 + l * NC,
                           p->ln2w + l * C, s->ln2_mean + l * N, s->ln2_rstd + l * N, N, C);
        /* dresidual now holds d(residual2) */
        memset(s->dC2, 0, NC * sizeof(float));
        matmul_backward(s->dC2, g->attprojw + (size_t)l * C * C, g->attprojb + l * C, s->dresidual, s->atty + l * NC,
                        p->attprojw + (size_t)l * C * C, N, C, C);
        memset(s->d3C, 0, NC * 3 * sizeof(float));
        attention_backward(s->d3C, s->datt, s->dC2, s->qkv + l * NC * 3, s->att + (size_t)l * B * NH * T * T, B, T,
                           C, NH);
        memset(s->dC, 0, NC * sizeof(float));
        matmul_backward(s->dC, g->qkvw + (size_t)l * 3 * C * C, g->qkvb + l * 3 * C, s->d3C, s->ln1 + l * NC,
                        p->qkvw + (size_t)l * 3 * C * C, N, C, 3 * C);
        layernorm_backward(s->dresidual, g->ln1w + l * C, g->ln1b + l * C, s->dC, residual, p->ln1w + l * C,
                           s->ln1_mean + l * N, s->ln1_rstd + l * N, N, C);
    }
    encoder_backward(g->wte, g->wpe, s->dresidual, s->inputs, B, T, C);
}

static void cpu_zero_grad(Model* m) { memset(m->grads_memory, 0, m->num_params * sizeof(float)); }

static float cpu_grad_norm(Model* m) {
    double sum = 0.0;
    for (size_t i = 0; i < m->num_params; i++) sum += (double)m->grads_memory[i] * m->grads_memory[i];
    return (float)sqrt(sum);
}

static void cpu_adamw(Model* m, const AdamWConfig* hp, float grad_scale) {
    m->step++;
    float bc1 = 1.0f - powf(hp->beta1, (float)m->step);
    float bc2 = 1.0f - powf(hp->beta2, (float)m->step);
    float bc2_sqrt = sqrtf(bc2);
    float step_size = hp->lr / bc1;
    float decay = 1.0f - hp->lr * hp->weight_decay;
    for (size_t i = 0; i < m->num_params; i++) {
        float gr = m->grads_memory[i] * grad_scale;
        float mo = m->m_memory[i] = hp->beta1 * m->m_memory[i] + (1.0f - hp->beta1) * gr;
        float ve = m->v_memory[i] = hp->beta2 * m->v_memory[i] + (1.0f - hp->beta2) * gr * gr;
        float p = m->params_memory[i] * decay;
        m->params_memory[i] = p - step_size * mo / (sqrtf(ve) / bc2_sqrt + hp->eps);
    }
}

static void cpu_prefill(Model* m, const int* tokens, const int* lens, int B, int T, float* logits) {
    CpuState* s = m->state;
    const GPTConfig* c = &m->cfg;
    int C = c->d_model, V = c->vocab, N = B * T;
    size_t NC = (size_t)N * C, slot_stride = (size_t)c->n_ctx * C, layer_stride = (size_t)m->max_batch * slot_stride;
    forward_blocks(m, tokens, B, T);
    for (int l = 0; l < c->n_layer; l++) {
        for (int b = 0; b < B; b++) {
            for (int t = 0; t < T; t++) {
                const float* row = s->qkv + l * NC * 3 + ((size_t)b * T + t) * 3 * C;
                size_t at = l * layer_stride + b * slot_stride + (size_t)t * C;
                memcpy(s->kcache + at, row + C, C * sizeof(float));
                memcpy(s->vcache + at, row + 2 * C, C * sizeof(float));
            }
        }
    }
    const float* last = s->residual3 + (size_t)(c->n_layer - 1) * NC;
    for (int b = 0; b < B; b++) {
        memcpy(s->tmp + (size_t)b * C, last + ((size_t)b * T + lens[b] - 1) * C, C * sizeof(float));
    }
    layernorm_forward(s->xn, s->mean, s->rstd, s->tmp, m->params.lnfw, m->params.lnfb, B, C);
    matmul_forward(logits, s->xn, m->params.wte, NULL, B, C, V);
}

static void cpu_decode(Model* m, const int* slots, const int* tokens, const int* pos, int n, float* logits) {
    CpuState* s = m->state;
    const GPTConfig* c = &m->cfg;
    const GPTParams* p = &m->params;
    int C = c->d_model, NH = c->n_head, hs = C / NH, V = c->vocab;
    size_t slot_stride = (size_t)c->n_ctx * C, layer_stride = (size_t)m->max_batch * slot_stride;
    float scale = 1.0f / sqrtf((float)hs);
    for (int i = 0; i < n; i++) {
        const float* we = p->wte + (size_t)tokens[i] * C;
        const float* pe = p->wpe + (size_t)pos[i] * C;
        for (int j = 0; j < C; j++) s->x[(size_t)i * C + j] = we[j] + pe[j];
    }
    for (int l = 0; l < c->n_layer; l++) {
        layernorm_forward(s->xn, s->mean, s->rstd, s->x, p->ln1w + l * C, p->ln1b + l * C, n, C);
        matmul_forward(s->q3, s->xn, p->qkvw + (size_t)l * 3 * C * C, p->qkvb + l * 3 * C, n, C, 3 * C);
        for (int i = 0; i < n; i++) {
            const float* q = s->q3 + (size_t)i * 3 * C;
            float* kc = s->kcache + l * layer_stride + slots[i] * slot_stride;
            float* vc = s->vcache + l * layer_stride + slots[i] * slot_stride;
            memcpy(kc + (size_t)pos[i] * C, q + C, C * sizeof(float));
            memcpy(vc + (size_t)pos[i] * C, q + 2 * C, C * sizeof(float));
            float* y = s->y + (size_t)i * C;
            int n_keys = pos[i] + 1;
            for (int h = 0; h < NH; h++) {
                /* scores = K[0..pos] q_h * scale, softmax, y_h = V[0..pos]^T att */
                cblas_sgemv(CblasRowMajor, CblasNoTrans, n_keys, hs, scale, kc + h * hs, C, q + h * hs, 1, 0.0f,
                            s->scores, 1);
                float mx = s->scores[0];
                for (int t = 1; t < n_keys; t++) mx = s->scores[t] > mx ? s->scores[t] : mx;
                float sum = 0.0f;
                for (int t = 0; t < n_keys; t++) {
                    s->scores[t] = expf(s->scores[t] - mx);
                    sum += s->scores[t];
                }
                cblas_sgemv(CblasRowMajor, CblasTrans, n_keys, hs, 1.0f / sum, vc + h * hs, C, s->scores, 1, 0.0f,
                            y + h * hs, 1);
            }
        }
        matmul_forward(s->tmp, s->y, p->attprojw + (size_t)l * C * C, p->attprojb + l * C, n, C, C);
        residual_forward(s->x, s->x, s->tmp, n * C);
        layernorm_forward(s->xn, s->mean, s->rstd, s->x, p->ln2w + l * C, p->ln2b + l * C, n, C);
        matmul_forward(s->h4, s->xn, p->fcw + (size_t)l * 4 * C * C, p->fcb + l * 4 * C, n, C, 4 * C);
        gelu_forward(s->h4g, s->h4t, s->h4, n * 4 * C);
        matmul_forward(s->tmp, s->h4g, p->fcprojw + (size_t)l * 4 * C * C, p->fcprojb + l * C, n, 4 * C, C);
        residual_forward(s->x, s->x, s->tmp, n * C);
    }
    layernorm_forward(s->xn, s->mean, s->rstd, s->x, p->lnfw, p->lnfb, n, C);
    matmul_forward(logits, s->xn, p->wte, NULL, n, C, V);
}

const ModelBackend MODEL_BACKEND_CPU = {
    .name = "cpu",
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
