/* Generation: KV-cache decoding equals full recomputation (greedy, token for token), seeded
 * sampling repeats exactly, stop strings and max_new_tokens end a row, top-p keeps the
 * nucleus, and the sampler's frequencies follow the softmax. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "model/generate.h"
#include "model/model.h"
#include "model/sampler.h"
#include "../test_assert.h"

enum { B = 4, NEW = 64, STRIDE = 80 };

static int argmax(const float* x, int n) {
    int best = 0;
    for (int i = 1; i < n; i++) if (x[i] > x[best]) best = i;
    return best;
}

/* Greedy continuation of one row by re-running the full forward pass every step. */
static void greedy_recompute(Model* m, const int* prompt, int len, int n_new, int* out) {
    int V = m->cfg.vocab;
    int* seq = malloc(sizeof(int) * m->cfg.n_ctx);
    float* lp = malloc(sizeof(float) * m->cfg.n_ctx);
    float* logits = malloc(sizeof(float) * m->cfg.n_ctx * V);
    memcpy(seq, prompt, sizeof(int) * len);
    for (int i = 0; i < n_new; i++) {
        int T = len + i;
        model_forward(m, seq, seq, 1, T, lp); /* targets unused here */
        m->backend->get_logits(m, logits);
        out[i] = argmax(logits + (size_t)(T - 1) * V, V);
        seq[T] = out[i];
    }
    free(seq);
    free(lp);
    free(logits);
}

static void test_sampler_frequencies(void) {
    float logits[4] = {logf(0.4f), logf(0.3f), logf(0.2f), logf(0.1f)}, scratch[12];
    RngStream rng = rng_stream(3, 0, 0, RNG_TEST);
    int counts[4] = {0}, n = 100000;
    SamplerConfig full = {.temperature = 1.0f, .top_p = 1.0f};
    for (int i = 0; i < n; i++) counts[sampler_pick(logits, 4, &full, &rng, scratch)]++;
    const double want[4] = {0.4, 0.3, 0.2, 0.1};
    for (int k = 0; k < 4; k++) EXPECT(fabs(counts[k] / (double)n - want[k]) < 0.01, "token %d drawn %.4f, want %.2f", k, counts[k] / (double)n, want[k]);
    int nucleus[4] = {0};
    SamplerConfig top = {.temperature = 1.0f, .top_p = 0.5f};
    for (int i = 0; i < n; i++) nucleus[sampler_pick(logits, 4, &top, &rng, scratch)]++;
    EXPECT(nucleus[2] == 0 && nucleus[3] == 0, "top-p 0.5 drew outside the nucleus {0,1}: %d %d", nucleus[2], nucleus[3]);
    EXPECT(fabs(nucleus[0] / (double)n - 4.0 / 7.0) < 0.01, "top-p renormalised share of token 0: %.4f", nucleus[0] / (double)n);
    SamplerConfig greedy = {.temperature = 0.0f, .top_p = 1.0f};
    EXPECT(sampler_pick(logits, 4, &greedy, &rng, scratch) == 0, "greedy must take the maximum");
}

int main(void) {
    ModelShape cfg = {.n_layer = 2, .n_head = 4, .d_model = 32, .n_ctx = 128, .vocab = GPT_VOCAB};
    Model* m = model_create(&cfg, model_backend_find("cpu"), B, 21);
    RngStream wr = rng_stream(5, 0, 0, RNG_TEST);
    /* Larger weights separate the logits, so float rounding cannot flip a greedy choice. */
    for (size_t i = 0; i < m->num_params; i++) m->params_memory[i] += 0.2f * rng_normal(&wr);
    /* A zero EOS embedding keeps its logit at 0, below the best of the others: rows run long. */
    memset(m->params.wte + (size_t)TOK_EOS * cfg.d_model, 0, sizeof(float) * cfg.d_model);

    int prompts[B * STRIDE], lens[B] = {3, 10, 17, 70}; /* the last row runs into n_ctx */
    for (int b = 0; b < B; b++) {
        prompts[b * STRIDE] = TOK_BOS;
        for (int t = 1; t < STRIDE; t++) prompts[b * STRIDE + t] = 'a' + (int)rng_below(&wr, 26);
    }
    int out[B * NEW], out_lens[B];
    GenConfig greedy = {.sampler = {.temperature = 0.0f, .top_p = 1.0f}, .max_new_tokens = NEW, .stop = NULL};
    RngStream unused = rng_stream(1, 0, 0, RNG_GENERATE);
    model_generate(m, prompts, STRIDE, lens, B, &greedy, &unused, out, out_lens);

    /* Greedy with the KV cache equals recomputation from scratch. */
    for (int b = 0; b < B; b++) {
        int n_new = out_lens[b];
        int expect_len = NEW;
        for (int i = 0; i < out_lens[b]; i++) if (out[b * NEW + i] == TOK_EOS) { expect_len = i + 1; break; }
        if (lens[b] + expect_len - 1 >= cfg.n_ctx) expect_len = cfg.n_ctx - lens[b] + 1;
        EXPECT(n_new == expect_len, "row %d generated %d tokens, expected %d", b, n_new, expect_len);
        int ref[NEW];
        int n_check = n_new;
        if (lens[b] + n_check > cfg.n_ctx) n_check = cfg.n_ctx - lens[b];
        greedy_recompute(m, prompts + b * STRIDE, lens[b], n_check, ref);
        int first_diff = -1;
        for (int i = 0; i < n_check; i++) if (ref[i] != out[b * NEW + i]) { first_diff = i; break; }
        EXPECT(first_diff < 0, "row %d: KV-cache token %d differs from recomputation", b, first_diff);
        printf("row %d: prompt %2d tokens, %2d greedy tokens equal to full recomputation\n", b, lens[b], n_check);
    }

    /* Seeded sampling repeats exactly; another stream gives another sample. */
    GenConfig sample = {.sampler = {.temperature = 1.0f, .top_p = 0.95f}, .max_new_tokens = NEW, .stop = NULL};
    int s1[B * NEW], l1[B], s2[B * NEW], l2[B], s3[B * NEW], l3[B];
    RngStream r1 = rng_stream(77, 2, 9, RNG_GENERATE), r2 = rng_stream(77, 2, 9, RNG_GENERATE),
              r3 = rng_stream(77, 2, 10, RNG_GENERATE);
    model_generate(m, prompts, STRIDE, lens, B, &sample, &r1, s1, l1);
    model_generate(m, prompts, STRIDE, lens, B, &sample, &r2, s2, l2);
    model_generate(m, prompts, STRIDE, lens, B, &sample, &r3, s3, l3);
    EXPECT(!memcmp(l1, l2, sizeof l1), "same seed, different lengths");
    int same = 1, same_other = 1;
    for (int b = 0; b < B; b++) {
        for (int i = 0; i < l1[b]; i++) same &= s1[b * NEW + i] == s2[b * NEW + i];
        for (int i = 0; i < l1[b] && i < l3[b]; i++) same_other &= s1[b * NEW + i] == s3[b * NEW + i];
    }
    EXPECT(same, "the same seeded stream gave different samples");
    EXPECT(!same_other, "a different stream gave the very same samples");

    /* A stop string ends the row right after its first occurrence, kept in the output. */
    int b0 = 1;
    char stop[3] = {0};
    int at = -1;
    for (int i = 4; i + 1 < out_lens[b0]; i++) {
        int x = out[b0 * NEW + i], y = out[b0 * NEW + i + 1];
        if (x > 0 && x < 256 && y > 0 && y < 256) { stop[0] = (char)x; stop[1] = (char)y; at = i + 2; break; }
    }
    EXPECT(at > 0, "no two byte tokens in a row to use as a stop string");
    if (at > 0) {
        for (int i = 0; i + 1 < at; i++) /* the first occurrence may come earlier */
            if (out[b0 * NEW + i] == (unsigned char)stop[0] && out[b0 * NEW + i + 1] == (unsigned char)stop[1]) { at = i + 2; break; }
        GenConfig stopping = greedy;
        stopping.stop = stop;
        int so[B * NEW], sl[B];
        model_generate(m, prompts, STRIDE, lens, B, &stopping, &unused, so, sl);
        EXPECT(sl[b0] == at, "stop string: row ended after %d tokens, expected %d", sl[b0], at);
        EXPECT(!memcmp(so + b0 * NEW, out + b0 * NEW, sizeof(int) * at), "stop string changed the tokens before it");
    }

    /* max_new_tokens bounds every row. */
    GenConfig short_gen = greedy;
    short_gen.max_new_tokens = 5;
    int sh[B * 5], shl[B];
    model_generate(m, prompts, STRIDE, lens, B, &short_gen, &unused, sh, shl);
    for (int b = 0; b < B; b++) EXPECT(shl[b] <= 5, "row %d: %d tokens with max_new_tokens 5", b, shl[b]);

    test_sampler_frequencies();
    model_free(m);
    return test_finish("model generate");
}
