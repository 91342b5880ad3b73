/* The matrix-product profile (model/product_profile.h) counts what the model computes: over a
 * packed forward and backward the linear products' FLOPs are 3x the forward's 2 N C (12 C) per
 * layer plus the head's 2 N C V, in 3 x (4 L + 1) calls, and attention's are 3x 4 n ctx C per
 * segment and layer, all in the "passes" phase; generation's products land in "generation";
 * nothing in "other"; disabled, nothing is counted; and counting changes no result. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "model/generate.h"
#include "model/model.h"
#include "model/product_profile.h"
#include "model/tokenizer.h"
#include "../test_assert.h"

static const ModelShape CFG = {.n_layer = 2, .n_head = 4, .d_model = 32, .n_ctx = 64, .vocab = GPT_VOCAB};

/* a prompt of 5 tokens, two completions continuing it (3 and 4 tokens), a lone row of 6 */
static const Segment SEGS[4] = {{0, 5, -1}, {5, 3, 0}, {8, 4, 0}, {12, 6, -1}};
#define N_TOKENS 18

static void pass(Model* m, const PackedBatch* pb, float* lp, float* dlp) {
    model_zero_grad(m);
    model_forward_packed(m, pb, lp);
    model_backward(m, dlp);
}

int main(void) {
    int inputs[N_TOKENS], targets[N_TOKENS];
    RngStream rng = rng_stream(3, 0, 0, RNG_TEST);
    for (int i = 0; i < N_TOKENS; i++) {
        inputs[i] = 1 + (int)rng_below(&rng, 200);
        targets[i] = 1 + (int)rng_below(&rng, 200);
    }
    PackedBatch pb = {.n_tokens = N_TOKENS, .inputs = inputs, .targets = targets, .n_segments = 4, .segs = SEGS};
    ModelCapacity cap = model_capacity_dense(&CFG, 4);
    Model* m = model_create_cap(&CFG, model_backend_find("cpu"), &cap, 7);
    float lp[N_TOKENS], lp_counted[N_TOKENS], dlp[N_TOKENS];
    for (int i = 0; i < N_TOKENS; i++) dlp[i] = -1.0f / N_TOKENS;

    product_profile_reset(0);
    pass(m, &pb, lp, dlp);
    EXPECT(product_profile.seconds == 0 && product_profile.flops == 0, "disabled, the profile counted %.0f FLOPs",
           product_profile.flops);
    float* grads = malloc(sizeof(float) * m->num_params);
    memcpy(grads, m->grads_memory, sizeof(float) * m->num_params);

    product_profile_reset(1);
    pass(m, &pb, lp_counted, dlp);
    EXPECT(memcmp(lp, lp_counted, sizeof lp) == 0, "counting changed the log-probs");
    EXPECT(memcmp(grads, m->grads_memory, sizeof(float) * m->num_params) == 0, "counting changed the gradients");

    double N = N_TOKENS, C = CFG.d_model, L = CFG.n_layer, V = CFG.vocab, att = 0;
    for (int s = 0; s < 4; s++) {
        int plen = SEGS[s].prefix >= 0 ? SEGS[SEGS[s].prefix].len : 0;
        att += 4.0 * SEGS[s].len * (plen + SEGS[s].len) * C;
    }
    double want_linear = 3.0 * (L * 2.0 * N * C * 12.0 * C + 2.0 * N * C * V), want_att = 3.0 * L * att;
    const ProductProfile* p = &product_profile;
    EXPECT(p->phase_flops[PRODUCT_PASSES][PRODUCT_LINEAR] == want_linear, "passes, linear: %.0f FLOPs, want %.0f",
           p->phase_flops[PRODUCT_PASSES][PRODUCT_LINEAR], want_linear);
    EXPECT(p->calls[PRODUCT_PASSES][PRODUCT_LINEAR] == 3 * (4 * CFG.n_layer + 1), "passes, linear: %ld calls, want %d",
           p->calls[PRODUCT_PASSES][PRODUCT_LINEAR], 3 * (4 * CFG.n_layer + 1));
    EXPECT(p->phase_flops[PRODUCT_PASSES][PRODUCT_ATTENTION] == want_att, "passes, attention: %.0f FLOPs, want %.0f",
           p->phase_flops[PRODUCT_PASSES][PRODUCT_ATTENTION], want_att);
    EXPECT(p->flops == want_linear + want_att, "total %.0f FLOPs, want %.0f", p->flops, want_linear + want_att);
    EXPECT(p->phase_seconds[PRODUCT_PASSES][PRODUCT_LINEAR] > 0 && p->seconds >= p->phase_seconds[PRODUCT_PASSES][PRODUCT_LINEAR],
           "passes, linear: %.3g s of %.3g s in all", p->phase_seconds[PRODUCT_PASSES][PRODUCT_LINEAR], p->seconds);
    for (int k = 0; k < PRODUCT_KINDS; k++)
        EXPECT(p->calls[PRODUCT_GENERATION][k] == 0 && p->calls[PRODUCT_OTHER][k] == 0,
               "a forward and backward counted %s products outside 'passes'", product_kind_name((ProductKind)k));

    /* generation: prefill and decode steps count as generation, and leave the phase as it was */
    double passes_before = p->phase_flops[PRODUCT_PASSES][PRODUCT_LINEAR];
    int prompts[2 * 8], plens[2] = {6, 3}, out[2 * 5], out_lens[2];
    for (int i = 0; i < 16; i++) prompts[i] = 1 + (int)rng_below(&rng, 200);
    GenConfig gc = {.sampler = {.temperature = 1.0f, .top_p = 1.0f}, .max_new_tokens = 5};
    model_generate(m, prompts, 8, plens, 2, &gc, &rng, out, out_lens);
    EXPECT(p->calls[PRODUCT_GENERATION][PRODUCT_LINEAR] > 0 && p->calls[PRODUCT_GENERATION][PRODUCT_ATTENTION] > 0,
           "generation counted %ld linear and %ld attention products", p->calls[PRODUCT_GENERATION][PRODUCT_LINEAR],
           p->calls[PRODUCT_GENERATION][PRODUCT_ATTENTION]);
    EXPECT(p->phase_flops[PRODUCT_PASSES][PRODUCT_LINEAR] == passes_before, "generation counted products as passes");
    EXPECT(p->phase == PRODUCT_OTHER, "generation left the phase at %s", product_phase_name(p->phase));
    for (int k = 0; k < PRODUCT_KINDS; k++)
        EXPECT(p->calls[PRODUCT_OTHER][k] == 0, "generation counted %s products in 'other'", product_kind_name((ProductKind)k));

    product_profile_reset(0);
    EXPECT(!product_profile.enabled && product_profile.flops == 0, "reset(0) left the profile on or counted");
    free(grads);
    model_free(m);
    return test_finish("product profile");
}
