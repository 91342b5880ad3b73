/* The Llama/Qwen2 family's CPU backend on tiny random shapes (grouped-query heads, a head_dim
 * that is not d_model / n_head, q/k/v and output biases or none, tied or untied output),
 * against itself: finite differences of L = sum_t w_t logp_t for sampled entries of every
 * tensor; a packed batch (a prompt shared by two completions, positions continuing after the
 * prompt) equal to each [prompt | completion] run alone; prefill + decode equal to the
 * forward's logits; the deterministic mode repeatable bit for bit and close to the default.
 * Its agreement with transformers is tests/reference/test_llama_vs_transformers.py. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "model/family.h"
#include "model/model.h"
#include "model/llama.h"
#include "../test_assert.h"

enum { V = 61, P = 5, C1 = 3, C2 = 4, N = P + C1 + C2, SAMPLES = 10 };

static ModelShape shape(int bias, int tied, int det) {
    ModelShape c = {.family = MODEL_FAMILY_LLAMA, .n_layer = 2, .n_head = 4, .n_kv_head = 2, .head_dim = 6,
                   .d_model = 20, .d_ff = 28, .n_ctx = 24, .vocab = V, .rope_theta = 10000.0f, .norm_eps = 1e-5f,
                   .qkv_bias = bias, .o_bias = bias, .tied = tied, .deterministic = det};
    return c;
}

static Model* perturbed(const ModelShape* c, uint64_t seed) {
    ModelCapacity cap = model_capacity_dense(c, 4);
    Model* m = model_create_cap(c, model_backend_find("cpu"), &cap, seed);
    RngStream rng = rng_stream(seed, 1, 0, RNG_TEST);
    /* every norm weight and bias off its HF default of 1 / 0, matrices larger than the init */
    for (size_t i = 0; i < m->num_params; i++) m->params_memory[i] += 0.25f * rng_normal(&rng);
    m->backend->upload(m);
    return m;
}

/* The packed batch: segment 0 the prompt, 1 and 2 completions continuing it. */
static const Segment SEGS[3] = {{0, P, -1}, {P, C1, 0}, {P + C1, C2, 0}};
static int IN[N], TG[N];
static float W[N];

static double loss_of(Model* m, float* lp) {
    PackedBatch pb = {.n_tokens = N, .inputs = IN, .targets = TG, .n_segments = 3, .segs = SEGS};
    model_forward_packed(m, &pb, lp);
    double L = 0;
    for (int i = 0; i < N; i++) L += (double)W[i] * lp[i];
    return L;
}

static void make_batch(uint64_t seed) {
    RngStream rng = rng_stream(seed, 2, 0, RNG_TEST);
    for (int i = 0; i < N; i++) {
        IN[i] = (int)rng_below(&rng, V);
        TG[i] = (int)rng_below(&rng, V);
        W[i] = rng_normal(&rng);
    }
    TG[1] = -1; /* no target: contributes nothing */
}

static void gradcheck(int bias, int tied) {
    ModelShape c = shape(bias, tied, 0);
    Model* m = perturbed(&c, 3 + bias + 2 * tied);
    float lp[N];
    model_zero_grad(m);
    loss_of(m, lp);
    EXPECT(lp[1] == 0.0f, "a row without a target has log-prob %g, expected 0", lp[1]);
    model_backward(m, W);
    RngStream rng = rng_stream(9, 0, 0, RNG_TEST);
    const float h = 2e-3f;
    size_t off = 0;
    for (int t = 0; t < m->n_tensors; t++) {
        size_t n = m->tensor_sizes[t];
        double dot = 0, na = 0, nf = 0;
        for (int s = 0; s < SAMPLES && n; s++) {
            size_t i = off + (size_t)rng_below(&rng, n);
            float keep = m->params_memory[i];
            m->params_memory[i] = keep + h;
            double up = loss_of(m, lp);
            m->params_memory[i] = keep - h;
            double down = loss_of(m, lp);
            m->params_memory[i] = keep;
            double fd = (up - down) / (2.0 * h), an = m->grads_memory[i];
            double err = fabs(fd - an) / (3e-3 + 3e-2 * fmax(fabs(fd), fabs(an)));
            EXPECT(err <= 1.0, "bias %d tied %d: %s[%zu]: finite difference %.6g vs backward %.6g", bias, tied,
                   LLAMA_TENSOR_NAMES[t], i - off, fd, an);
            dot += fd * an;
            na += an * an;
            nf += fd * fd;
        }
        if (n) {
            double cosine = dot / (sqrt(na * nf) + 1e-30);
            printf("bias %d tied %d %-8s cosine %.6f\n", bias, tied, LLAMA_TENSOR_NAMES[t], cosine);
            EXPECT(cosine > 0.999, "%s: cosine %.6f", LLAMA_TENSOR_NAMES[t], cosine);
        }
        off += n;
    }
    model_free(m);
}

/* Completion k of the packed batch run alone as one segment [prompt | completion]. */
static void packed_equals_alone(int det) {
    ModelShape c = shape(1, 0, det);
    Model* m = perturbed(&c, 17);
    float lp[N], alone[P + C2];
    loss_of(m, lp);
    double worst = 0;
    for (int k = 0; k < 2; k++) {
        int len = k ? C2 : C1, start = k ? P + C1 : P, in[P + C2], tg[P + C2];
        memcpy(in, IN, P * sizeof(int));
        memcpy(tg, TG, P * sizeof(int));
        memcpy(in + P, IN + start, len * sizeof(int));
        memcpy(tg + P, TG + start, len * sizeof(int));
        model_forward(m, in, tg, 1, P + len, alone);
        for (int i = 0; i < P + len; i++) {
            double d = fabs(alone[i] - lp[i < P ? i : start + i - P]);
            worst = fmax(worst, d);
        }
    }
    printf("packed vs alone (%s): max |diff| %.3g\n", det ? "det" : "default", worst);
    EXPECT(worst < 2e-5, "packed log-probs differ from the unshared run by %.3g", worst);
    model_free(m);
}

/* Prefill the prompt but its last token, then decode [last prompt token, completion...]:
 * the logits of every decode step equal the forward's logits of the same positions. */
static void decode_equals_forward(int det) {
    ModelShape c = shape(1, 1, det);
    ModelCapacity cap = model_capacity_dense(&c, 4);
    Model* m = model_create_cap(&c, model_backend_find("cpu"), &cap, 5);
    RngStream rng = rng_stream(5, 1, 0, RNG_TEST);
    for (size_t i = 0; i < m->num_params; i++) m->params_memory[i] += 0.25f * rng_normal(&rng);
    int seq[P + C2], tg[P + C2];
    memcpy(seq, IN, P * sizeof(int));
    memcpy(seq + P, IN + P + C1, C2 * sizeof(int));
    for (int i = 0; i < P + C2; i++) tg[i] = 0;
    float lp[P + C2], *full = malloc(sizeof(float) * (P + C2) * V), logits[V];
    model_forward(m, seq, tg, 1, P + C2, lp);
    m->backend->get_logits(m, full);
    Segment pre = {0, P - 1, -1};
    PackedBatch pb = {.n_tokens = P - 1, .inputs = seq, .targets = seq, .n_segments = 1, .segs = &pre};
    m->backend->prefill(m, &pb);
    double worst = 0;
    for (int t = P - 1; t < P + C2; t++) {
        int row = 0, slot = 0, plen = P - 1;
        DecodeStep d = {.n = 1, .rows = &row, .prefix = &slot, .prefix_len = &plen, .tokens = &seq[t], .pos = &t};
        m->backend->decode(m, &d, logits);
        for (int v = 0; v < V; v++) worst = fmax(worst, fabs(logits[v] - full[(size_t)t * V + v]));
    }
    printf("decode vs forward (%s): max |diff| %.3g\n", det ? "det" : "default", worst);
    EXPECT(det ? worst == 0.0 : worst < 1e-4, "decode logits differ from the forward's by %.3g", worst);
    free(full);
    model_free(m);
}

static void deterministic_repeats(void) {
    ModelShape c = shape(1, 0, 1), f = shape(1, 0, 0);
    Model *a = perturbed(&c, 31), *b = perturbed(&c, 31), *fast = perturbed(&f, 31);
    /* the two modes initialise differently (normal_det): give the default model a's weights */
    memcpy(fast->params_memory, a->params_memory, a->num_params * sizeof(float));
    fast->backend->upload(fast);
    float la[N], lb[N], lf[N];
    loss_of(a, la);
    loss_of(b, lb);
    loss_of(fast, lf);
    model_zero_grad(a);
    model_zero_grad(b);
    model_backward(a, W);
    model_backward(b, W);
    EXPECT(!memcmp(la, lb, sizeof la), "deterministic log-probs differ between two equal models");
    EXPECT(!memcmp(a->grads_memory, b->grads_memory, a->num_params * sizeof(float)),
           "deterministic gradients differ between two equal models");
    double worst = 0;
    for (int i = 0; i < N; i++) worst = fmax(worst, fabs(la[i] - lf[i]));
    printf("det vs default: max |diff| %.3g\n", worst);
    EXPECT(worst < 1e-4, "deterministic log-probs differ from the default's by %.3g", worst);
    model_free(a);
    model_free(b);
    model_free(fast);
}

static void shape_checks(void) {
    char err[256];
    ModelShape c = shape(0, 0, 0);
    c.n_kv_head = 3;
    EXPECT(gpt_config_check(&c, err, sizeof err) != 0, "n_head 4 with 3 kv heads accepted");
    EXPECT_MSG(err, "multiple of n_kv_head");
    c = shape(0, 0, 0);
    c.head_dim = 5;
    EXPECT(gpt_config_check(&c, err, sizeof err) != 0, "odd head_dim accepted");
    c = shape(0, 1, 0);
    size_t sizes[MODEL_MAX_TENSORS];
    gpt_tensor_sizes(&c, sizes);
    EXPECT(sizes[LT_LMHEAD] == 0 && sizes[LT_QKVB] == 0 && sizes[LT_OB] == 0, "a tied, bias-free shape has lm_head or biases");
}

int main(void) {
    make_batch(1);
    shape_checks();
    gradcheck(1, 0);
    gradcheck(0, 1);
    packed_equals_alone(0);
    packed_equals_alone(1);
    decode_equals_forward(0);
    decode_equals_forward(1);
    deterministic_repeats();
    return test_finish("llama model");
}
