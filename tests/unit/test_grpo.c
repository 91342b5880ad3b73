/* GRPO: hand-computed advantages and losses (ratio 1, clipped and unclipped ratios, KL,
 * truncated importance weights for received completions and a lying sender's log-probs),
 * sequence packing, the sampler's behaviour log-probs against the trainer's at the sampling
 * temperature, F-TIS's filter of received negative completions far from the policy, the lr
 * warm-up, and a trainer that learns: a few hundred GRPO steps on an
 * easy verifiable reward (share of digit bytes in the completion) raise that reward. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "model/generate.h"
#include "model/model.h"
#include "model/tokenizer.h"
#include "rl/grpo.h"
#include "rl/pack.h"
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
    GrpoTokens tk = {.lp = lp, .targets = tg, .none = TOK_PAD, .adv = adv, .n = 4};
    GrpoLossStats ls;
    float loss = grpo_loss_grad(&tk, &gc, d, NULL);
    /* ratio 1: loss = -(2 + 2 - 1) / 3 = -1; dlp = -A / 3 */
    EXPECT(NEAR(loss, -1.0, 1e-6), "loss %g, expected -1", loss);
    EXPECT(NEAR(d[0], -2.0 / 3, 1e-6) && NEAR(d[2], 1.0 / 3, 1e-6) && d[3] == 0.0f, "dlp %g %g %g", d[0], d[2], d[3]);

    /* ratios: e^0.5 = 1.6487 (A>0: clipped at 1.28), e^-0.5 = 0.6065 (A>0: unclipped),
     * e^-0.5 with A<0: clipped at 0.8 */
    float old[4] = {-1.5f, -1.5f, 0.0f, -3.0f};
    tk.old = old;
    loss = grpo_loss_grad(&tk, &gc, d, &ls);
    int clipped = ls.clipped;
    double expect = -(1.28 * 2 + exp(-0.5) * 2 + 0.8 * -1) / 3;
    EXPECT(NEAR(loss, expect, 1e-5), "clipped loss %g, expected %g", loss, expect);
    EXPECT(clipped == 2, "clipped tokens %d, expected 2", clipped);
    EXPECT(d[0] == 0.0f && d[2] == 0.0f, "clipped tokens must carry no gradient: %g %g", d[0], d[2]);
    EXPECT(NEAR(d[1], -2.0 * exp(-0.5) / 3, 1e-6), "unclipped gradient %g", d[1]);

    /* KL to a reference: k3 = e^(ref-lp) - (ref-lp) - 1, weight 0.1 */
    gc.kl = 0.1f;
    float ref[4] = {-1.0f, -1.0f, -0.5f, 0.0f};
    tk.old = NULL;
    tk.ref = ref;
    loss = grpo_loss_grad(&tk, &gc, d, &ls);
    float kl = ls.kl;
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
    ModelShape cfg = {.n_layer = 1, .n_head = 2, .d_model = 32, .n_ctx = 32, .vocab = GPT_VOCAB};
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
        grpo_train(tr, groups, G, &gc, &hp, 1.0f, step);
        for (int i = 0; i < G * L; i++) free(texts[i]);
        if (step < 10) first += mean / 10;
        if (step >= STEPS - 10) last += mean / 10;
    }
    printf("digit reward: first 10 steps %.3f, last 10 steps %.3f\n", first, last);
    EXPECT(last > first + 0.3f, "GRPO did not raise the reward: %.3f -> %.3f", first, last);
    grpo_trainer_free(tr);
    model_free(m);
}

/* A batch without a loss token (every completion empty, as a collapsed node samples): no step,
 * and no importance weight to report: NaN as for a batch without received tokens, not 0. */
static void test_empty_batch(void) {
    ModelShape cfg = {.n_layer = 1, .n_head = 2, .d_model = 32, .n_ctx = 32, .vocab = GPT_VOCAB};
    Model* m = model_create(&cfg, model_backend_find("cpu"), 4, 3);
    GrpoTrainer* tr = grpo_trainer_create(m, NULL);
    GrpoConfig gc = {.eps_low = 0.2f, .eps_high = 0.28f, .ppo_epochs = 1, .tis_cap = 2.0f};
    AdamWConfig hp = {.lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f};
    const char* empty[2] = {"", ""};
    float adv[2] = {1.0f, -1.0f};
    GrpoGroup g = {.prompt = "n:", .n = 2, .completions = empty, .weights = adv};
    GrpoStats st = grpo_train(tr, &g, 1, &gc, &hp, 1.0f, 0);
    EXPECT(st.tokens == 0 && isnan(st.is_weight) && isnan(st.is_capped) && isnan(st.ftis_dropped),
           "empty batch: tokens %d, is_weight %g, is_capped %g, ftis_dropped %g", st.tokens, st.is_weight,
           st.is_capped, st.ftis_dropped);
    grpo_trainer_free(tr);
    model_free(m);
}

/* Truncated importance weights w = min(exp(prox - mu), cap) on tokens with a behaviour
 * log-prob mu; own tokens (NaN) keep weight 1. Values by hand. */
static void test_offpolicy_weights(void) {
    GrpoConfig gc = {.eps_low = 0.2f, .eps_high = 0.28f, .ppo_epochs = 1, .tis_cap = 2.0f};
    float lp[4] = {-1.0f, -2.0f, -0.5f, -3.0f}, adv[4] = {2.0f, -1.0f, 1.0f, 5.0f}, d[4];
    float mu[4] = {-3.0f, -1.9f, NAN, -1.0f};
    int tg[4] = {65, 66, 67, TOK_PAD};
    GrpoTokens tk = {.lp = lp, .behaviour = mu, .targets = tg, .none = TOK_PAD, .adv = adv, .n = 4};
    GrpoLossStats ls;
    float loss = grpo_loss_grad(&tk, &gc, d, &ls);
    /* w0 = min(e^2, 2) = 2 (capped), w1 = e^-0.1, w2 = 1 (own token) */
    double w1 = exp(-0.1);
    EXPECT(NEAR(loss, -(2 * 2.0 + w1 * -1.0 + 1.0) / 3, 1e-6), "IS loss %g", loss);
    EXPECT(NEAR(d[0], -4.0 / 3, 1e-6) && NEAR(d[1], w1 / 3, 1e-6) && NEAR(d[2], -1.0 / 3, 1e-6) && d[3] == 0.0f,
           "IS gradient %g %g %g %g", d[0], d[1], d[2], d[3]);
    EXPECT(ls.is_tokens == 2 && ls.is_capped == 1 && NEAR(ls.is_weight_sum, 2 + w1, 1e-6), "IS stats %d %d %g",
           ls.is_tokens, ls.is_capped, ls.is_weight_sum);
    /* a later epoch: the proximal policy is old, not the current lp */
    float old[4] = {-1.5f, -2.5f, -0.5f, -3.0f};
    tk.old = old;
    grpo_loss_grad(&tk, &gc, d, &ls);
    double w0b = exp(-1.5 + 3.0) < 2 ? exp(-1.5 + 3.0) : 2.0, w1b = exp(-2.5 + 1.9);
    double r0 = exp(0.5), r1 = exp(0.5); /* ratios lp - old; both above 1 + eps_high */
    (void)r1;
    /* token 0: A>0, ratio 1.6487 > 1.28 -> clipped, no gradient; token 1: A<0, the unclipped
     * branch is lower -> gradient -w A ratio / 3 */
    EXPECT(d[0] == 0.0f && NEAR(d[1], w1b * exp(0.5) / 3, 1e-6), "second epoch gradient %g %g", d[0], d[1]);
    EXPECT(w0b == 2.0 && r0 > 1.28, "hand values");
    /* a lying sender: mu = -1e30 or -inf claims the tokens were nearly impossible; the
     * weight stays at the cap and the step stays finite */
    float lie[4] = {-1e30f, -INFINITY, -1e30f, -1e30f};
    tk.old = NULL;
    tk.behaviour = lie;
    loss = grpo_loss_grad(&tk, &gc, d, &ls);
    EXPECT(isfinite(loss) && ls.is_capped == 3 && NEAR(d[0], -2 * 2.0 / 3, 1e-6) && NEAR(d[2], -2 * 1.0 / 3, 1e-6),
           "lying log-probs: loss %g, capped %d, d %g %g", loss, ls.is_capped, d[0], d[2]);
    /* tis_cap 0: no correction at all (the paper's ratio 1) */
    gc.tis_cap = 0.0f;
    loss = grpo_loss_grad(&tk, &gc, d, &ls);
    EXPECT(NEAR(loss, -(2.0 - 1.0 + 1.0) / 3, 1e-6) && ls.is_tokens == 0, "tis_cap 0 must ignore mu: %g", loss);
}

/* The sampler's log-prob of each token it drew equals the trainer's log-prob of that token
 * at the same temperature (PackedBatch.logit_scale): what a receiver's importance weight
 * compares. And a group trained with its own behaviour log-probs (w = 1) moves the weights
 * exactly as ratio 1 does. */
static void test_behaviour_logprobs(void) {
    enum { G = 2, L = 3, NEW = 12, STRIDE = 16 };
    ModelShape cfg = {.n_layer = 1, .n_head = 2, .d_model = 32, .n_ctx = 32, .vocab = GPT_VOCAB};
    Model* m = model_create(&cfg, model_backend_find("cpu"), G * L, 9);
    for (size_t i = 0; i < m->num_params; i++) m->params_memory[i] *= 3.0f;
    const char* texts[G] = {"ab:", "q?"};
    int prompts[G * STRIDE], lens[G], out[G * L * NEW], olens[G * L];
    float olp[G * L * NEW];
    for (int g = 0; g < G; g++) lens[g] = tok_encode_prompt(texts[g], prompts + g * STRIDE, STRIDE);
    GenConfig gen = {.sampler = {.temperature = 0.7f, .top_p = 1.0f}, .max_new_tokens = NEW};
    RngStream rng = rng_stream(4, 0, 0, RNG_TEST);
    model_generate_groups_logprobs(m, prompts, STRIDE, lens, G, L, &gen, &rng, out, olens, olp);
    char* comp[G * L];
    float* beh[G * L];
    for (int r = 0; r < G * L; r++) { /* text bytes and their log-probs, special tokens dropped */
        comp[r] = malloc(NEW + 1);
        beh[r] = malloc(sizeof(float) * NEW);
        int k = 0;
        for (int i = 0; i < olens[r]; i++)
            if (out[r * NEW + i] > 0 && out[r * NEW + i] < 256) {
                comp[r][k] = (char)out[r * NEW + i];
                beh[r][k++] = olp[r * NEW + i];
            } else if (out[r * NEW + i] == 0) {
                break;
            }
        comp[r][k] = '\0';
    }
    float adv[G][L] = {{1.0f, -0.5f, -0.5f}, {0.7f, -0.7f, 0.0f}};
    TrainGroup groups[G];
    for (int g = 0; g < G; g++)
        groups[g] = (TrainGroup){.prompt = texts[g], .n = L, .completions = (const char* const*)comp + g * L,
                                 .weights = adv[g], .behaviour = (const float* const*)beh + g * L};
    Packer pk;
    packer_init(&pk, m, 0, 0);
    pk.logit_scale = 1.0f / 0.7f;
    PackCursor cur = {0};
    float lp[256];
    EXPECT(pack_next(&pk, groups, G, &cur), "nothing packed");
    model_forward_packed(m, &pk.pb, lp);
    double worst = 0;
    int n = 0;
    for (int i = 0; i < pk.pb.n_tokens; i++)
        if (!isnan(pk.behaviour[i])) {
            worst = fmax(worst, fabs(lp[i] - pk.behaviour[i]));
            n++;
        }
    printf("behaviour log-probs: %d tokens, max |sampler - trainer| %.3e at temperature 0.7\n", n, worst);
    EXPECT(n > 10 && worst < 2e-5, "sampler and trainer log-probs differ by %.3e over %d tokens", worst, n);
    packer_free(&pk);

    Model* a = model_create(&cfg, model_backend_find("cpu"), G * L, 9);
    Model* b = model_create(&cfg, model_backend_find("cpu"), G * L, 9);
    memcpy(a->params_memory, m->params_memory, sizeof(float) * m->num_params);
    memcpy(b->params_memory, m->params_memory, sizeof(float) * m->num_params);
    GrpoTrainer *ta = grpo_trainer_create(a, NULL), *tb = grpo_trainer_create(b, NULL);
    GrpoConfig with = {.eps_low = 0.2f, .eps_high = 0.28f, .ppo_epochs = 1, .tis_cap = 2.0f, .logit_scale = 1.0f / 0.7f};
    GrpoConfig without = with;
    without.tis_cap = 0.0f;
    /* eps = 1 makes Adam's first step proportional to the gradient (with a tiny eps it is
     * lr * sign(g), and a gradient summed to ~0 flips its sign on the last bit) */
    AdamWConfig hp = {.lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1.0f};
    GrpoStats sa = grpo_train(ta, groups, G, &with, &hp, 1.0f, 0);
    grpo_train(tb, groups, G, &without, &hp, 1.0f, 0);
    double d = 0;
    for (size_t i = 0; i < a->num_params; i++) d = fmax(d, fabs(a->params_memory[i] - b->params_memory[i]));
    printf("own behaviour log-probs: mean weight %.6f, params differ from ratio 1 by %.3e\n", sa.is_weight, d);
    EXPECT(fabsf(sa.is_weight - 1.0f) < 1e-4f && sa.is_capped == 0.0f, "weights of self-sampled tokens %g", sa.is_weight);
    EXPECT(d <= 2e-8, "self-sampled tokens with w ~ 1 moved the weights unlike ratio 1: %.3e", d);
    grpo_trainer_free(ta);
    grpo_trainer_free(tb);
    model_free(a);
    model_free(b);
    for (int r = 0; r < G * L; r++) {
        free(comp[r]);
        free(beh[r]);
    }
    model_free(m);
}

/* F-TIS (grpo.ftis_kl): a received completion (behaviour log-probs mu) with a negative
 * advantage is dropped when its mean k3 exceeds the threshold; positive ones, near ones and
 * self-sampled ones stay. The step then equals a tis step with that completion's weight 0,
 * bit for bit. */
static void test_ftis_filter(void) {
    enum { L = 4, T = 2 };
    ModelShape cfg = {.n_layer = 1, .n_head = 2, .d_model = 16, .n_ctx = 16, .vocab = GPT_VOCAB};
    Model* m = model_create(&cfg, model_backend_find("cpu"), L, 3);
    const char* comp[L] = {"ab", "cd", "ef", "gh"};
    float adv[L] = {1.0f, -1.0f, -0.5f, 0.5f};
    TrainGroup g = {.prompt = "x", .n = L, .completions = comp, .weights = adv, .behaviour = NULL};
    /* the policy's own log-probs of each completion token */
    Packer pk;
    packer_init(&pk, m, 0, 0);
    PackCursor cur = {0};
    float lp[64];
    EXPECT(pack_next(&pk, &g, 1, &cur), "nothing packed");
    model_forward_packed(m, &pk.pb, lp);
    float own[L][T];
    int c = 0;
    for (int sg = 0; sg < pk.pb.n_segments; sg++)
        if (pk.loss_id[pk.pb.segs[sg].start] >= 0) {
            for (int i = 0; i < T; i++) own[c][i] = lp[pk.pb.segs[sg].start + i];
            c++;
        }
    EXPECT(c == L, "%d completion segments, want %d", c, L);
    /* 0: positive, far (kept); 1: negative, far (dropped: k3 = e^-3 + 2 = 2.05); 2: negative,
     * near (k3 0, kept); 3: self-sampled (no mu: not considered) */
    float far0[T], far1[T];
    for (int i = 0; i < T; i++) {
        far0[i] = own[0][i] - 3.0f;
        far1[i] = own[1][i] + 3.0f;
    }
    const float* beh[L] = {far0, far1, own[2], NULL};
    g.behaviour = beh;
    GrpoConfig ftis = {.eps_low = 0.2f, .eps_high = 0.28f, .ppo_epochs = 2, .tis_cap = 2.0f, .ftis_kl = 1.0f};
    GrpoConfig tis = ftis;
    tis.ftis_kl = 0.0f;

    cur = (PackCursor){0};
    EXPECT(pack_next(&pk, &g, 1, &cur), "nothing packed");
    float filtered[64];
    int seen, dropped = grpo_ftis_filter(&pk, lp, &ftis, filtered, &seen);
    EXPECT(dropped == 1 && seen == 3, "filter: %d of %d dropped, want 1 of 3", dropped, seen);
    for (int sg = 0, k = 0; sg < pk.pb.n_segments; sg++) {
        const Segment* s = &pk.pb.segs[sg];
        if (pk.loss_id[s->start] < 0) continue;
        for (int i = s->start; i < s->start + s->len; i++)
            EXPECT(filtered[i] == (k == 1 ? 0.0f : adv[k]), "completion %d token %d: weight %g", k, i, filtered[i]);
        k++;
    }
    /* a threshold above the far completion's k3 keeps it */
    GrpoConfig loose = ftis;
    loose.ftis_kl = 20.0f;
    EXPECT(grpo_ftis_filter(&pk, lp, &loose, filtered, &seen) == 0, "ftis_kl 20 dropped a completion of k3 2.05");
    packer_free(&pk);

    Model* a = model_create(&cfg, model_backend_find("cpu"), L, 3);
    Model* b = model_create(&cfg, model_backend_find("cpu"), L, 3);
    memcpy(a->params_memory, m->params_memory, sizeof(float) * m->num_params);
    memcpy(b->params_memory, m->params_memory, sizeof(float) * m->num_params);
    GrpoTrainer *ta = grpo_trainer_create(a, NULL), *tb = grpo_trainer_create(b, NULL);
    AdamWConfig hp = {.lr = 1e-2f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f};
    GrpoStats sa = grpo_train(ta, &g, 1, &ftis, &hp, 1.0f, 0);
    float adv_b[L] = {adv[0], 0.0f, adv[2], adv[3]};
    TrainGroup gb = g;
    gb.weights = adv_b;
    GrpoStats sb = grpo_train(tb, &gb, 1, &tis, &hp, 1.0f, 0);
    printf("ftis: dropped %.3f of the received completions; tis: %g\n", sa.ftis_dropped, sb.ftis_dropped);
    EXPECT(NEAR(sa.ftis_dropped, 1.0 / 3.0, 1e-6) && isnan(sb.ftis_dropped), "ftis_dropped %g / %g", sa.ftis_dropped,
           sb.ftis_dropped);
    EXPECT(memcmp(a->params_memory, b->params_memory, sizeof(float) * m->num_params) == 0,
           "ftis step differs from a tis step with the dropped completion's weight 0");
    /* and the filter matters: without it the step differs */
    Model* c2 = model_create(&cfg, model_backend_find("cpu"), L, 3);
    memcpy(c2->params_memory, m->params_memory, sizeof(float) * m->num_params);
    GrpoTrainer* tc = grpo_trainer_create(c2, NULL);
    grpo_train(tc, &g, 1, &tis, &hp, 1.0f, 0);
    EXPECT(memcmp(c2->params_memory, b->params_memory, sizeof(float) * m->num_params) != 0,
           "dropping the completion changed nothing: the test cannot tell");
    grpo_trainer_free(ta);
    grpo_trainer_free(tb);
    grpo_trainer_free(tc);
    model_free(a);
    model_free(b);
    model_free(c2);
    model_free(m);
}

/* lr warm-up: the first steps move a weight by about lr * (step + 1) / warmup (Adam's
 * first update has magnitude lr per weight). */
static void test_warmup(void) {
    ModelShape cfg = {.n_layer = 1, .n_head = 2, .d_model = 16, .n_ctx = 16, .vocab = GPT_VOCAB};
    const char* comp[2] = {"ab", "c"};
    float adv[2] = {1.0f, -1.0f};
    TrainGroup g = {.prompt = "x", .n = 2, .completions = comp, .weights = adv, .behaviour = NULL};
    AdamWConfig hp = {.lr = 1e-2f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f};
    float moved[2];
    for (int k = 0; k < 2; k++) {
        Model* m = model_create(&cfg, model_backend_find("cpu"), 2, 3);
        float* before = malloc(sizeof(float) * m->num_params);
        memcpy(before, m->params_memory, sizeof(float) * m->num_params);
        GrpoTrainer* t = grpo_trainer_create(m, NULL);
        GrpoConfig gc = {.eps_low = 0.2f, .eps_high = 0.28f, .ppo_epochs = 1, .warmup_steps = k ? 10 : 0};
        grpo_train(t, &g, 1, &gc, &hp, 0.0f, 0);
        double mx = 0;
        for (size_t i = 0; i < m->num_params; i++) mx = fmax(mx, fabs(m->params_memory[i] - before[i]));
        moved[k] = (float)mx;
        grpo_trainer_free(t);
        model_free(m);
        free(before);
    }
    printf("lr warm-up: first step moves weights by %.3e without, %.3e with 10 warm-up steps\n", moved[0], moved[1]);
    EXPECT(NEAR(moved[0], 1e-2, 1e-4) && NEAR(moved[1], 1e-3, 1e-5), "warm-up: first steps moved %g and %g", moved[0],
           moved[1]);
}

int main(void) {
    test_advantages();
    test_loss();
    test_offpolicy_weights();
    test_empty_batch();
    test_behaviour_logprobs();
    test_ftis_filter();
    test_warmup();
    test_pack();
    test_learns();
    return test_finish("grpo");
}
