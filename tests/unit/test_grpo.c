/* GRPO: hand-computed advantages and losses (ratio 1, clipped and unclipped ratios, KL),
 * sequence packing, and a trainer that learns: a few hundred GRPO steps on an easy
 * verifiable reward (share of digit bytes in the completion) raise that reward. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "model/generate.h"
#include "model/gpt.h"
#include "model/tokenizer.h"
#include "rl/grpo.h"
#include "rl/sft.h"
#include "../test_assert.h"

#define NEAR(a, b, tol) (fabs((double)(a) - (double)(b)) <= (tol))

static void test_advantages(void) {
    float r[4] = {1, 0, 0, 1}, adv[4];
    EXPECT(grpo_advantages(r, 4, adv) == 0, "mixed rewards reported as all equal");
    /* mean 0.5, unbiased std sqrt(1/3) = 0.57735 */
    EXPECT(NEAR(adv[0], 0.8660254, 1e-6) && NEAR(adv[1], -0.8660254, 1e-6), "advantages %g %g", adv[0], adv[1]);
    float r2[3] = {0.25f, 0.25f, 0.25f};
    EXPECT(grpo_advantages(r2, 3, adv) == 1 && adv[0] == 0 && adv[2] == 0, "all-equal group");
    float r3[3] = {1.0f, 0.5f, 0.0f}; /* mean .5, std 0.5 */
    grpo_advantages(r3, 3, adv);
    EXPECT(NEAR(adv[0], 1.0, 1e-6) && NEAR(adv[1], 0.0, 1e-6) && NEAR(adv[2], -1.0, 1e-6), "advantages %g %g %g", adv[0], adv[1], adv[2]);
}

static void test_loss(void) {
    GrpoConfig gc = {.eps_low = 0.2f, .eps_high = 0.28f, .kl = 0.0f, .ppo_epochs = 1};
    /* 4 positions, one padded: N = 3 */
    float lp[4] = {-1.0f, -2.0f, -0.5f, -3.0f}, adv[4] = {2.0f, 2.0f, -1.0f, 5.0f}, d[4];
    int tg[4] = {65, 66, 67, TOK_PAD};
    float loss = grpo_loss_grad(lp, NULL, NULL, tg, adv, 4, 0, &gc, d, NULL, NULL);
    /* ratio 1: loss = -(2 + 2 - 1) / 3 = -1; dlp = -A / 3 */
    EXPECT(NEAR(loss, -1.0, 1e-6), "loss %g, expected -1", loss);
    EXPECT(NEAR(d[0], -2.0 / 3, 1e-6) && NEAR(d[2], 1.0 / 3, 1e-6) && d[3] == 0.0f, "dlp %g %g %g", d[0], d[2], d[3]);

    /* ratios: e^0.5 = 1.6487 (A>0: clipped at 1.28), e^-0.5 = 0.6065 (A>0: unclipped),
     * e^-0.5 with A<0: clipped at 0.8 */
    float old[4] = {-1.5f, -1.5f, 0.0f, -3.0f};
    int clipped = 0;
    loss = grpo_loss_grad(lp, old, NULL, tg, adv, 4, 0, &gc, d, NULL, &clipped);
    double expect = -(1.28 * 2 + exp(-0.5) * 2 + 0.8 * -1) / 3;
    EXPECT(NEAR(loss, expect, 1e-5), "clipped loss %g, expected %g", loss, expect);
    EXPECT(clipped == 2, "clipped tokens %d, expected 2", clipped);
    EXPECT(d[0] == 0.0f && d[2] == 0.0f, "clipped tokens must carry no gradient: %g %g", d[0], d[2]);
    EXPECT(NEAR(d[1], -2.0 * exp(-0.5) / 3, 1e-6), "unclipped gradient %g", d[1]);

    /* KL to a reference: k3 = e^(ref-lp) - (ref-lp) - 1, weight 0.1 */
    gc.kl = 0.1f;
    float ref[4] = {-1.0f, -1.0f, -0.5f, 0.0f}, kl = 0.0f;
    loss = grpo_loss_grad(lp, NULL, ref, tg, adv, 4, 0, &gc, d, &kl, NULL);
    double k3 = exp(1.0) - 1.0 - 1.0; /* only position 1 differs: ref - lp = 1 */
    EXPECT(NEAR(kl, k3 / 3, 1e-6), "mean KL %g, expected %g", kl, k3 / 3);
    EXPECT(NEAR(loss, -1.0 + 0.1 * k3 / 3, 1e-6), "loss with KL %g", loss);
    EXPECT(NEAR(d[1], -2.0 / 3 + 0.1 * (1 - exp(1.0)) / 3, 1e-6), "KL gradient %g", d[1]);
}

static void test_pack(void) {
    int in[8], tg[8];
    int n = seq_pack("ab", "cd", 0, 8, in, tg);
    int want_in[8] = {TOK_BOS, 'a', 'b', 'c', TOK_PAD, TOK_PAD, TOK_PAD, TOK_PAD};
    int want_tg[8] = {TOK_PAD, TOK_PAD, 'c', 'd', TOK_PAD, TOK_PAD, TOK_PAD, TOK_PAD};
    EXPECT(n == 2 && !memcmp(in, want_in, sizeof in) && !memcmp(tg, want_tg, sizeof tg), "seq_pack without EOS");
    n = seq_pack("abcdef", "xyz", 1, 6, in, tg); /* prompt loses its beginning: [BOS] e f x y z EOS */
    int want_in2[6] = {TOK_BOS, 'e', 'f', 'x', 'y', 'z'};
    int want_tg2[6] = {TOK_PAD, TOK_PAD, 'x', 'y', 'z', TOK_EOS};
    EXPECT(n == 4 && !memcmp(in, want_in2, sizeof want_in2) && !memcmp(tg, want_tg2, sizeof want_tg2), "seq_pack truncation");
}

static float digit_share(const char* s) {
    size_t n = strlen(s), d = 0;
    for (size_t i = 0; i < n; i++) d += s[i] >= '0' && s[i] <= '9';
    return n ? (float)d / n : 0.0f;
}

static void test_learns(void) {
    enum { G = 8, L = 8, NEW = 8, STEPS = 150 };
    GPTConfig cfg = {.n_layer = 1, .n_head = 2, .d_model = 32, .n_ctx = 32, .vocab = GPT_VOCAB};
    Model* m = model_create(&cfg, model_backend_find("cpu"), G * L, 3);
    GrpoTrainer* tr = grpo_trainer_create(m, NULL);
    GrpoConfig gc = {.eps_low = 0.2f, .eps_high = 0.28f, .kl = 0.0f, .ppo_epochs = 1};
    AdamWConfig hp = {.lr = 3e-3f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.0f};
    GenConfig gen = {.sampler = {.temperature = 1.0f, .top_p = 1.0f}, .max_new_tokens = NEW, .stop = NULL};
    int prompts[G * L * 4], lens[G * L], out[G * L * NEW], olens[G * L];
    const char* prompt_text = "n:";
    for (int i = 0; i < G * L; i++) lens[i] = tok_encode_prompt(prompt_text, prompts + i * 4, 4);
    char* texts[G * L];
    GrpoGroup groups[G];
    float advs[G][L];
    float first = 0, last = 0;
    for (int step = 0; step < STEPS; step++) {
        RngStream rng = rng_stream(5, 0, (uint32_t)step, RNG_GENERATE);
        model_generate(m, prompts, 4, lens, G * L, &gen, &rng, out, olens);
        float mean = 0;
        for (int g = 0; g < G; g++) {
            float r[L];
            for (int i = 0; i < L; i++) {
                int row = g * L + i;
                texts[row] = tok_decode(out + row * NEW, olens[row]);
                r[i] = digit_share(texts[row]);
                mean += r[i] / (G * L);
            }
            grpo_advantages(r, L, advs[g]);
            groups[g] = (GrpoGroup){.prompt = prompt_text, .n = L, .completions = (const char* const*)texts + g * L,
                                    .weights = advs[g]};
        }
        grpo_train(tr, groups, G, &gc, &hp, 1.0f);
        for (int i = 0; i < G * L; i++) free(texts[i]);
        if (step < 10) first += mean / 10;
        if (step >= STEPS - 10) last += mean / 10;
    }
    printf("digit reward: first 10 steps %.3f, last 10 steps %.3f\n", first, last);
    EXPECT(last > first + 0.3f, "GRPO did not raise the reward: %.3f -> %.3f", first, last);
    grpo_trainer_free(tr);
    model_free(m);
}

int main(void) {
    test_advantages();
    test_loss();
    test_pack();
    test_learns();
    return test_finish("grpo");
}
