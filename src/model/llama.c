/* The Llama/Qwen2 family's table (family.h): tensor names and sizes, the shape check, a
 * random initialisation (for tests and tools; real runs load Hugging Face weights through
 * model/hf_dir.h), the memory and FLOP estimates, its backends (registered in
 * model/backends.c), and the RoPE table. */
#include "model/llama.h"

#include <math.h>
#include <string.h>

#include "core/check.h"
#include "core/rng.h"
#include "model/backends.h" /* LLAMA_BACKENDS */
#include "model/family.h"
#include "model/llama_loop.h"

const char* const LLAMA_TENSOR_NAMES[LLAMA_NUM_TENSORS] = {"embed", "qkvw",    "qkvb",  "ow",    "ob",    "ln1w",
                                                           "ln2w",  "gateupw", "downw", "normw", "lmhead"};

static int llama_check(const ModelShape* c, char* err, size_t errlen) {
    if (c->n_layer < 1 || c->n_layer > 256) return set_error(err, errlen, "n_layer = %d: expected 1..256", c->n_layer);
    if (c->n_head < 1 || c->n_kv_head < 1 || c->n_head % c->n_kv_head)
        return set_error(err, errlen, "n_head = %d, n_kv_head = %d: expected n_head a positive multiple of n_kv_head",
                         c->n_head, c->n_kv_head);
    if (c->head_dim < 2 || c->head_dim % 2)
        return set_error(err, errlen, "head_dim = %d: expected an even number >= 2 (RoPE rotates pairs)", c->head_dim);
    if (c->d_model < 1 || c->d_ff < 1) return set_error(err, errlen, "d_model = %d, d_ff = %d: expected >= 1", c->d_model, c->d_ff);
    if (c->n_ctx < 2 || c->n_ctx > (1 << 20)) return set_error(err, errlen, "n_ctx = %d: expected 2..%d", c->n_ctx, 1 << 20);
    if (c->vocab < 2) return set_error(err, errlen, "vocab = %d: expected >= 2", c->vocab);
    if (!(c->rope_theta > 0.0f) || !(c->norm_eps > 0.0f))
        return set_error(err, errlen, "rope_theta = %g, norm_eps = %g: expected > 0", c->rope_theta, c->norm_eps);
    return 0;
}

static void llama_tensor_sizes(const ModelShape* c, size_t* s) {
    size_t V = c->vocab, C = c->d_model, L = c->n_layer, F = c->d_ff, QKV = llama_qkvdim(c), QD = llama_qdim(c);
    s[LT_EMBED] = V * C;
    s[LT_QKVW] = L * QKV * C;
    s[LT_QKVB] = c->qkv_bias ? L * QKV : 0;
    s[LT_OW] = L * C * QD;
    s[LT_OB] = c->o_bias ? L * C : 0;
    s[LT_LN1W] = L * C;
    s[LT_LN2W] = L * C;
    s[LT_GATEUPW] = L * 2 * F * C;
    s[LT_DOWNW] = L * C * F;
    s[LT_NORMW] = C;
    s[LT_LMHEAD] = c->tied ? 0 : V * C;
}

void llama_point_params(LlamaParams* p, float* memory, const size_t* s) {
    float** ptrs[LLAMA_NUM_TENSORS] = {&p->embed, &p->qkvw,    &p->qkvb,  &p->ow,    &p->ob,    &p->ln1w,
                                       &p->ln2w,  &p->gateupw, &p->downw, &p->normw, &p->lmhead};
    for (int i = 0; i < LLAMA_NUM_TENSORS; i++) {
        *ptrs[i] = memory;
        memory += s[i];
    }
}

/* Norm weights 1, biases 0, matrices normal(0, 0.02) (Hugging Face's initializer_range), from
 * the (seed, RNG_INIT) stream. */
static void llama_init_weights(Model* m, uint64_t seed) {
    RngStream rng = rng_stream(seed, 0, 0, RNG_INIT);
    float* p = m->params_memory;
    for (int t = 0; t < LLAMA_NUM_TENSORS; t++) {
        size_t n = m->tensor_sizes[t];
        int ones = t == LT_LN1W || t == LT_LN2W || t == LT_NORMW, zeros = t == LT_QKVB || t == LT_OB;
        for (size_t i = 0; i < n; i++)
            p[i] = ones ? 1.0f : zeros ? 0.0f : 0.02f * (m->cfg.deterministic ? normal_det(&rng) : rng_normal(&rng));
        p += n;
    }
}

static double llama_memory_bytes(const ModelShape* c, const ModelCapacity* cap) {
    size_t sizes[LLAMA_NUM_TENSORS];
    llama_tensor_sizes(c, sizes);
    double P = 0, N = cap->max_tokens, C = c->d_model, L = c->n_layer, V = c->vocab, T = c->n_ctx, F = c->d_ff;
    double QKV = llama_qkvdim(c), QD = llama_qdim(c), KD = llama_kvdim(c), R = cap->max_rows;
    double H = llama_head_chunk(c, cap->max_tokens);
    for (int i = 0; i < LLAMA_NUM_TENSORS; i++) P += (double)sizes[i];
    double per_token = L * (4 * C + QKV + QD + 3 * F + 2) + /* ln1, res2, ln2, res3, qkv, atty, gu, h, rstds */
                       2 * C + 1 +                          /* x0, lnf, rstdf */
                       3 * C + QD + QKV + 3 * F +           /* backward scratch */
                       6;                                   /* inputs, positions, the head's rows and values */
    double head = H * (2 * C + 3 * V + 3);
    double decode = R * (3 * C + QKV + QD + 3 * F + 1 + T);
    double caches = 2 * L * (double)cap->max_prefixes * T * KD + 2 * L * R * cap->row_ctx * KD;
    double floats = 4 * P + N * per_token + L * (double)cap->max_att + T * T + head + decode + caches + T * c->head_dim;
    return 4.0 * floats;
}

static double llama_forward_flops(const ModelShape* c, int B, int T) {
    double N = (double)B * T, C = c->d_model, L = c->n_layer, V = c->vocab, F = c->d_ff;
    double QKV = llama_qkvdim(c), QD = llama_qdim(c);
    double per_layer = 2.0 * N * C * (QKV + QD + 3 * F) + 2.0 * 2.0 * B * (double)T * T * QD;
    return L * per_layer + 2.0 * N * C * V;
}

void llama_rope_table(const ModelShape* c, float* cos_out, float* sin_out) {
    int half = c->head_dim / 2;
    for (int i = 0; i < half; i++) {
        /* as Hugging Face: inv_freq in fp32, the angle a fp32 product; only cos/sin in double */
        float inv_freq = (float)(1.0 / pow((double)c->rope_theta, (double)(2 * i) / (double)c->head_dim));
        for (int p = 0; p < c->n_ctx; p++) {
            float angle = (float)p * inv_freq;
            cos_out[(size_t)p * half + i] = (float)cos((double)angle);
            sin_out[(size_t)p * half + i] = (float)sin((double)angle);
        }
    }
}

ModelShape llama_config(int n_layer, int d_model, int n_head, int n_kv_head, int d_ff, int vocab, int qkv_bias,
                       float rope_theta, float norm_eps) {
    ModelShape c = {.n_layer = n_layer, .n_head = n_head, .d_model = d_model, .vocab = vocab,
                   .family = MODEL_FAMILY_LLAMA, .n_kv_head = n_kv_head, .head_dim = n_head > 0 ? d_model / n_head : 0,
                   .d_ff = d_ff, .rope_theta = rope_theta, .norm_eps = norm_eps, .qkv_bias = qkv_bias, .tied = 1};
    return c;
}

const ModelFamily MODEL_FAMILY_LLAMA_TABLE = {
    .name = "llama",
    .n_tensors = LLAMA_NUM_TENSORS,
    .tensor_names = LLAMA_TENSOR_NAMES,
    .roles = {.start = -1, .end = -1, .none = -1},
    .from_hf_dir = 1,
    .check = llama_check,
    .tensor_sizes = llama_tensor_sizes,
    .init_weights = llama_init_weights,
    .point = NULL,
    .memory_bytes = llama_memory_bytes,
    .forward_flops = llama_forward_flops,
    .backends = LLAMA_BACKENDS,
};
