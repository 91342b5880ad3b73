/* Model construction: shapes, the parameter buffer layout, GPT-2 style initialisation,
 * and the thin wrappers over the backend table (model/backends.c registers the backends). */
#include "model/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "core/fnv1a.h"
#include "core/rng.h"
#include "model/det_math.h"
#include "model/family.h"
#include "model/product_profile.h"

const char* const GPT_TENSOR_NAMES[GPT_NUM_TENSORS] = {
    "wte", "wpe", "ln1w", "ln1b", "qkvw", "qkvb", "attprojw", "attprojb",
    "ln2w", "ln2b", "fcw", "fcb", "fcprojw", "fcprojb", "lnfw", "lnfb"};

int gpt_config_check(const ModelShape* c, char* err, size_t errlen) {
    const ModelFamily* f = model_family(c->family);
    if (!f) return set_error(err, errlen, "model family %d: expected one of model.family's choices", (int)c->family);
    return f->check(c, err, errlen);
}

/* The byte-level GPT's shape check (its family table's check). */
static int byte_gpt_check(const ModelShape* c, char* err, size_t errlen) {
    if (c->n_layer < 1 || c->n_layer > 64) return set_error(err, errlen, "n_layer = %d: expected 1..64", c->n_layer);
    if (c->n_head < 1) return set_error(err, errlen, "n_head = %d: expected >= 1", c->n_head);
    if (c->d_model < 1 || c->d_model % c->n_head)
        return set_error(err, errlen, "d_model = %d: expected a positive multiple of n_head = %d", c->d_model, c->n_head);
    if (c->n_ctx < 2 || c->n_ctx > 65536) return set_error(err, errlen, "n_ctx = %d: expected 2..65536", c->n_ctx);
    if (c->vocab != GPT_VOCAB) return set_error(err, errlen, "vocab = %d: expected %d", c->vocab, GPT_VOCAB);
    return 0;
}

void gpt_tensor_sizes(const ModelShape* cfg, size_t* s) {
    model_family(cfg->family)->tensor_sizes(cfg, s);
}

static void byte_gpt_tensor_sizes(const ModelShape* cfg, size_t* s) {
    size_t V = cfg->vocab, C = cfg->d_model, T = cfg->n_ctx, L = cfg->n_layer;
    s[0] = V * C;          /* wte */
    s[1] = T * C;          /* wpe */
    s[2] = L * C;          /* ln1w */
    s[3] = L * C;          /* ln1b */
    s[4] = L * 3 * C * C;  /* qkvw */
    s[5] = L * 3 * C;      /* qkvb */
    s[6] = L * C * C;      /* attprojw */
    s[7] = L * C;          /* attprojb */
    s[8] = L * C;          /* ln2w */
    s[9] = L * C;          /* ln2b */
    s[10] = L * 4 * C * C; /* fcw */
    s[11] = L * 4 * C;     /* fcb */
    s[12] = L * C * 4 * C; /* fcprojw */
    s[13] = L * C;         /* fcprojb */
    s[14] = C;             /* lnfw */
    s[15] = C;             /* lnfb */
}

void gpt_point_params(GPTParams* p, float* memory, const size_t s[GPT_NUM_TENSORS]) {
    float** ptrs[GPT_NUM_TENSORS] = {&p->wte, &p->wpe, &p->ln1w, &p->ln1b, &p->qkvw, &p->qkvb,
                                     &p->attprojw, &p->attprojb, &p->ln2w, &p->ln2b, &p->fcw,
                                     &p->fcb, &p->fcprojw, &p->fcprojb, &p->lnfw, &p->lnfb};
    for (int i = 0; i < GPT_NUM_TENSORS; i++) {
        *ptrs[i] = memory;
        memory += s[i];
    }
}

/* A standard normal without libm's log and cos (whose glibc variants differ by CPU): the
 * polar method in float with log_det. The deterministic mode's initialisation. */
float normal_det(RngStream* rng) {
    for (;;) {
        float u = 2.0f * rng_float(rng) - 1.0f, v = 2.0f * rng_float(rng) - 1.0f;
        float s = u * u + v * v;
        if (s > 0.0f && s < 1.0f) return u * sqrtf(-2.0f * log_det(s) / s);
    }
}

void model_init_weights(Model* m, uint64_t seed) { m->family->init_weights(m, seed); }

static void byte_gpt_init_weights(Model* m, uint64_t seed) {
    RngStream rng = rng_stream(seed, 0, 0, RNG_INIT);
    const ModelShape* c = &m->cfg;
    float resid_std = 0.02f / sqrtf(2.0f * c->n_layer); /* residual projections, GPT-2 */
    float* p = m->params_memory;
    for (int t = 0; t < GPT_NUM_TENSORS; t++) {
        const char* name = GPT_TENSOR_NAMES[t];
        size_t n = m->tensor_sizes[t];
        int is_ln_weight = !strcmp(name, "ln1w") || !strcmp(name, "ln2w") || !strcmp(name, "lnfw");
        int is_bias = name[strlen(name) - 1] == 'b' && strcmp(name, "wte") != 0;
        float std = (!strcmp(name, "attprojw") || !strcmp(name, "fcprojw")) ? resid_std : 0.02f;
        for (size_t i = 0; i < n; i++) {
            p[i] = is_ln_weight ? 1.0f : is_bias ? 0.0f : std * (c->deterministic ? normal_det(&rng) : rng_normal(&rng));
        }
        p += n;
    }
}

ModelCapacity model_capacity_dense(const ModelShape* cfg, int max_batch) {
    ModelCapacity c = {.max_tokens = max_batch * cfg->n_ctx,
                       .max_att = (long)cfg->n_head * max_batch * cfg->n_ctx * cfg->n_ctx,
                       .max_prefixes = max_batch,
                       .max_rows = max_batch,
                       .row_ctx = cfg->n_ctx};
    return c;
}

Model* model_create_empty(const ModelShape* cfg, const ModelBackend* backend, const ModelCapacity* cap) {
    char err[256];
    if (gpt_config_check(cfg, err, sizeof err)) sapo_die("model config: %s", err);
    const ModelFamily* family = model_family(cfg->family);
    const ModelBackend* own = model_family_backend(family, backend);
    if (!own) sapo_die("model.family = %s has no %s backend in this build", family->name, backend->name);
    backend = own;
    if (cap->max_tokens < 1 || cap->max_att < 1 || cap->max_prefixes < 1 || cap->max_rows < 1 || cap->row_ctx < 1)
        sapo_die("model capacity: every field must be >= 1 (tokens %d, att %ld, prefixes %d, rows %d, row_ctx %d)",
                 cap->max_tokens, cap->max_att, cap->max_prefixes, cap->max_rows, cap->row_ctx);
    Model* m = callocCheck(1, sizeof *m);
    m->cfg = *cfg;
    m->family = family;
    m->n_tensors = family->n_tensors;
    m->roles = family->roles;
    family->tensor_sizes(cfg, m->tensor_sizes);
    for (int i = 0; i < m->n_tensors; i++) m->num_params += m->tensor_sizes[i];
    m->params_memory = callocCheck(m->num_params, sizeof(float));
    m->grads_memory = callocCheck(m->num_params, sizeof(float));
    m->m_memory = callocCheck(m->num_params, sizeof(float));
    m->v_memory = callocCheck(m->num_params, sizeof(float));
    if (family->point) family->point(m);
    m->cap = *cap;
    m->backend = backend;
    backend->setup(m);
    backend->upload(m);
    return m;
}

Model* model_create_cap(const ModelShape* cfg, const ModelBackend* backend, const ModelCapacity* cap, uint64_t seed) {
    Model* m = model_create_empty(cfg, backend, cap);
    model_init_weights(m, seed);
    m->backend->upload(m);
    return m;
}

Model* model_create(const ModelShape* cfg, const ModelBackend* backend, int max_batch, uint64_t seed) {
    ModelCapacity cap = model_capacity_dense(cfg, max_batch);
    return model_create_cap(cfg, backend, &cap, seed);
}

ModelCapacity model_capacity_for(const ModelShape* cfg, int micro_tokens, int train_groups, int completions,
                                 int max_new, int gen_prompts, int gen_rows) {
    long n_ctx = cfg->n_ctx, prompt = n_ctx - max_new > 1 ? n_ctx - max_new : 1;
    long seg = max_new + 1 < n_ctx ? max_new + 1 : n_ctx;
    long whole = (long)train_groups * (prompt + (long)completions * seg); /* the largest batch */
    /* prompts beyond max_tokens are prefilled in chunks (model_generate_groups) */
    long tokens = whole < micro_tokens ? whole : micro_tokens;
    if (tokens < n_ctx) tokens = n_ctx; /* one whole sequence always fits */
    long per_token = tokens * n_ctx / 2 > n_ctx * n_ctx ? tokens * n_ctx / 2 : n_ctx * n_ctx;
    ModelCapacity c = {.max_tokens = (int)tokens,
                       .max_att = per_token * cfg->n_head,
                       .max_prefixes = gen_prompts,
                       .max_rows = gen_rows,
                       .row_ctx = max_new < cfg->n_ctx ? max_new : cfg->n_ctx};
    return c;
}

double model_memory_bytes(const ModelShape* cfg, const ModelCapacity* cap) {
    return model_family(cfg->family)->memory_bytes(cfg, cap);
}

static double byte_gpt_memory_bytes(const ModelShape* cfg, const ModelCapacity* cap) {
    size_t sizes[GPT_NUM_TENSORS];
    gpt_tensor_sizes(cfg, sizes);
    double P = 0, N = cap->max_tokens, C = cfg->d_model, L = cfg->n_layer, V = cfg->vocab, T = cfg->n_ctx;
    double R = cap->max_rows;
    for (int i = 0; i < GPT_NUM_TENSORS; i++) P += (double)sizes[i];
    double per_token = L * (20 * C + 4) + /* ln1, qkv, atty, res2, ln2, fch x3, res3, LN stats */
                       2 * C + 2 + 3 * V + /* encoded, lnf, logits, probs, dlogits */
                       14 * C + 3;         /* backward scratch; inputs, targets, positions */
    double floats = 4 * P + N * per_token + L * (double)cap->max_att + T * T +
                    2 * L * (double)cap->max_prefixes * T * C + 2 * L * R * cap->row_ctx * C + R * (14 * C + 2 + T);
    return 4.0 * floats;
}

long packed_att_size(const ModelShape* cfg, const PackedBatch* pb) {
    long total = 0;
    for (int s = 0; s < pb->n_segments; s++) {
        const Segment* g = &pb->segs[s];
        long plen = g->prefix >= 0 ? pb->segs[g->prefix].len : 0;
        total += (long)g->len * (plen + g->len);
    }
    return total * cfg->n_head;
}

int packed_check(const Model* m, const PackedBatch* pb, char* err, size_t errlen) {
    const ModelShape* c = &m->cfg;
    int none = m->roles.none;
    if (pb->n_tokens < 1 || pb->n_tokens > m->cap.max_tokens)
        return set_error(err, errlen, "%d tokens: expected 1..%d (the model's capacity)", pb->n_tokens, m->cap.max_tokens);
    int covered = 0;
    for (int s = 0; s < pb->n_segments; s++) {
        const Segment* g = &pb->segs[s];
        if (g->len < 1 || g->start != covered)
            return set_error(err, errlen, "segment %d starts at %d with %d tokens: segments must tile the batch in order",
                             s, g->start, g->len);
        covered += g->len;
        int plen = 0;
        if (g->prefix >= 0) {
            if (g->prefix >= s || pb->segs[g->prefix].prefix >= 0)
                return set_error(err, errlen, "segment %d: prefix %d must be an earlier segment without a prefix", s,
                                 g->prefix);
            plen = pb->segs[g->prefix].len;
        } else if (g->prefix != -1) {
            return set_error(err, errlen, "segment %d: prefix %d", s, g->prefix);
        }
        if (plen + g->len > c->n_ctx)
            return set_error(err, errlen, "segment %d reaches position %d: n_ctx is %d", s, plen + g->len, c->n_ctx);
    }
    if (covered != pb->n_tokens)
        return set_error(err, errlen, "segments cover %d of %d tokens", covered, pb->n_tokens);
    for (int i = 0; i < pb->n_tokens; i++) {
        if (pb->inputs[i] < 0 || pb->inputs[i] >= c->vocab ||
            (pb->targets[i] != none && (pb->targets[i] < 0 || pb->targets[i] >= c->vocab)))
            return set_error(err, errlen, "token %d: input %d / target %d outside 0..%d", i, pb->inputs[i],
                             pb->targets[i], c->vocab - 1);
    }
    long att = packed_att_size(c, pb);
    if (att > m->cap.max_att)
        return set_error(err, errlen, "%ld attention weights per layer: the model's capacity is %ld", att, m->cap.max_att);
    return 0;
}

uint64_t model_weights_digest(Model* m) {
    m->backend->download(m);
    uint64_t h = FNV1A_OFFSET;
    size_t words = m->num_params / 2;
    const unsigned char* p = (const unsigned char*)m->params_memory;
    for (size_t i = 0; i < words; i++) {
        uint64_t w;
        memcpy(&w, p + 8 * i, 8);
        h = (h ^ w) * FNV1A_PRIME;
    }
    if (m->num_params % 2) h = fnv1a_update(h, p + 8 * words, 4);
    return h;
}

void model_free(Model* m) {
    if (!m) return;
    m->backend->teardown(m);
    free(m->params_memory);
    free(m->grads_memory);
    free(m->m_memory);
    free(m->v_memory);
    free(m);
}

void model_forward_packed(Model* m, const PackedBatch* pb, float* logprobs) {
    char err[256];
    if (packed_check(m, pb, err, sizeof err)) sapo_die("forward: %s", err);
    ProductPhase was = product_profile_enter(PRODUCT_PASSES);
    m->backend->forward(m, pb, logprobs);
    product_profile_leave(was);
}

void model_forward(Model* m, const int* inputs, const int* targets, int B, int T, float* logprobs) {
    if (B < 1 || T < 1 || T > m->cfg.n_ctx || (long)B * T > m->cap.max_tokens)
        sapo_die("forward of (%d, %d) exceeds the model's capacity (%d tokens, n_ctx %d)", B, T, m->cap.max_tokens,
                 m->cfg.n_ctx);
    Segment* segs = mallocCheck((size_t)B * sizeof *segs);
    for (int b = 0; b < B; b++) segs[b] = (Segment){.start = b * T, .len = T, .prefix = -1};
    PackedBatch pb = {.n_tokens = B * T, .inputs = inputs, .targets = targets, .n_segments = B, .segs = segs};
    model_forward_packed(m, &pb, logprobs);
    free(segs);
}

void model_backward(Model* m, const float* dlogprobs) {
    ProductPhase was = product_profile_enter(PRODUCT_PASSES);
    m->backend->backward(m, dlogprobs);
    product_profile_leave(was);
}

void model_zero_grad(Model* m) { m->backend->zero_grad(m); }

float model_step(Model* m, const AdamWConfig* hp, float max_norm) {
    float norm = m->backend->grad_norm(m);
    float scale = 1.0f;
    if (max_norm > 0.0f) {
        float coef = max_norm / (norm + 1e-6f);
        if (coef < 1.0f) scale = coef;
    }
    m->backend->adamw(m, hp, scale);
    return norm;
}

double gpt_forward_flops(const ModelShape* c, int B, int T) {
    return model_family(c->family)->forward_flops(c, B, T);
}

static double byte_gpt_forward_flops(const ModelShape* c, int B, int T) {
    double N = (double)B * T, C = c->d_model, L = c->n_layer, V = c->vocab;
    double per_layer = 2.0 * N * C * (3 * C + C + 4 * C + 4 * C) /* qkv, proj, fc, fcproj */
                       + 2.0 * 2.0 * B * (double)T * T * C;       /* QK^T and att@V, full square */
    return L * per_layer + 2.0 * N * C * V;
}

static void byte_gpt_point(Model* m) {
    gpt_point_params(&m->params, m->params_memory, m->tensor_sizes);
    gpt_point_params(&m->grads, m->grads_memory, m->tensor_sizes);
}

const ModelFamily MODEL_FAMILY_BYTE_GPT_TABLE = {
    .name = "byte_gpt",
    .n_tensors = GPT_NUM_TENSORS,
    .tensor_names = GPT_TENSOR_NAMES,
    .roles = {.start = TOK_BOS, .end = TOK_EOS, .none = TOK_PAD},
    .from_hf_dir = 0,
    .check = byte_gpt_check,
    .tensor_sizes = byte_gpt_tensor_sizes,
    .init_weights = byte_gpt_init_weights,
    .point = byte_gpt_point,
    .memory_bytes = byte_gpt_memory_bytes,
    .forward_flops = byte_gpt_forward_flops,
    .backends = MODEL_BACKENDS,
};
