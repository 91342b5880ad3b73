/* Shared prompts and packing change nothing but the cost: a group's completions trained on
 * one prompt segment (rl/pack.h) give the same log-probs and gradients as unshared padded
 * rows, one per completion (the layout before packing); micro-batches of any size give the
 * step of one batch; grouped generation gives the tokens of per-row generation; supervised
 * packing equals the padded supervised batch; and malformed packed batches are refused. */
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

static const ModelShape CFG = {.n_layer = 2, .n_head = 4, .d_model = 32, .n_ctx = 64, .vocab = GPT_VOCAB};

/* Three groups: an ordinary prompt, an empty prompt (no prompt segment at all), and a long
 * prompt whose longest completion pushes it against n_ctx (its beginning is cut). */
static const char* PROMPTS[3] = {"What is 12+30?\n", "",
                                 "A long question that nearly fills the whole context window...\n"};
static const char* C0[3] = {"<answer>42</answer>", "4", "<answer>4"};
static const char* C1[2] = {"x", "<answer>no</answer>"};
static const char* C2[4] = {"a", "bcdefgh", "<answer>1</answer>", "ijklmnopqrstu"};
static const float W0[3] = {1.2f, -0.3f, -0.9f}, W1[2] = {0.7f, -0.7f}, W2[4] = {0.5f, -1.5f, 2.0f, -1.0f};

static void make_groups(TrainGroup g[3]) {
    g[0] = (TrainGroup){.prompt = PROMPTS[0], .n = 3, .completions = C0, .weights = W0, .behaviour = NULL};
    g[1] = (TrainGroup){.prompt = PROMPTS[1], .n = 2, .completions = C1, .weights = W1, .behaviour = NULL};
    g[2] = (TrainGroup){.prompt = PROMPTS[2], .n = 4, .completions = C2, .weights = W2, .behaviour = NULL};
}

static Model* model_with(int tokens, uint64_t seed) {
    ModelCapacity cap = model_capacity_dense(&CFG, 16);
    if (tokens > 0) {
        cap.max_tokens = tokens;
        cap.max_att = (long)CFG.n_head * CFG.n_ctx * CFG.n_ctx;
    }
    return model_create_cap(&CFG, model_backend_find("cpu"), &cap, seed);
}

static double max_abs(const float* a, const float* b, size_t n, double* scale) {
    double d = 0, s = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)a[i] - b[i]);
        if (e > d) d = e;
        if (fabs(a[i]) > s) s = fabs(a[i]);
    }
    if (scale) *scale = s;
    return d;
}

/* Gradients of the ratio-1 GRPO loss through the packer (micro-batches of at most
 * micro_tokens); writes each loss token's log-prob in packing order. Returns the loss. */
static float packed_grads(Model* m, const TrainGroup* g, int ng, int micro_tokens, int eos, float* lp_out) {
    Packer pk;
    packer_init(&pk, m, micro_tokens, eos);
    long total = pack_count_loss_tokens(g, ng, m->cfg.n_ctx, eos);
    float *lp = malloc(sizeof(float) * pk.cap_tokens), *dlp = malloc(sizeof(float) * pk.cap_tokens);
    GrpoConfig gc = {.eps_low = 0.2f, .eps_high = 0.28f, .ppo_epochs = 1};
    PackCursor cur = {0};
    float loss = 0;
    int batches = 0;
    model_zero_grad(m);
    while (pack_next(&pk, g, ng, &cur)) {
        model_forward_packed(m, &pk.pb, lp);
        for (int i = 0; i < pk.pb.n_tokens; i++)
            if (pk.loss_id[i] >= 0) lp_out[pk.loss_id[i]] = lp[i];
        GrpoTokens tk = {.lp = lp, .targets = pk.pb.targets, .none = TOK_PAD, .adv = pk.weight, .n = pk.pb.n_tokens,
                         .norm = total};
        loss += grpo_loss_grad(&tk, &gc, dlp, NULL);
        model_backward(m, dlp);
        batches++;
    }
    EXPECT(cur.loss_tokens == total, "packed %ld loss tokens, counted %ld", cur.loss_tokens, total);
    printf("  micro-batch budget %5d tokens: %d micro-batches\n", pk.cap_tokens, batches);
    packer_free(&pk);
    free(lp);
    free(dlp);
    return loss;
}

/* The same loss over unshared rows: one padded row of n_ctx per completion (seq_pack). */
static float dense_grads(Model* m, const TrainGroup* g, int ng, float* lp_out) {
    int T = m->cfg.n_ctx, rows = 0;
    for (int k = 0; k < ng; k++) rows += g[k].n;
    int *in = malloc(sizeof(int) * rows * T), *tg = malloc(sizeof(int) * rows * T);
    float *adv = malloc(sizeof(float) * rows * T), *lp = malloc(sizeof(float) * rows * T),
          *dlp = malloc(sizeof(float) * rows * T);
    /* seq_pack cuts each row's prompt for its own completion; packing cuts a group's prompt
     * for its longest completion: the test prompts are cut so that both agree */
    int r = 0;
    for (int k = 0; k < ng; k++)
        for (int c = 0; c < g[k].n; c++, r++) {
            seq_pack(g[k].prompt, g[k].completions[c], 0, T, in + r * T, tg + r * T);
            for (int t = 0; t < T; t++) adv[r * T + t] = g[k].weights[c];
        }
    GrpoConfig gc = {.eps_low = 0.2f, .eps_high = 0.28f, .ppo_epochs = 1};
    model_zero_grad(m);
    model_forward(m, in, tg, rows, T, lp);
    GrpoTokens tk = {.lp = lp, .targets = tg, .none = TOK_PAD, .adv = adv, .n = rows * T};
    float loss = grpo_loss_grad(&tk, &gc, dlp, NULL);
    model_backward(m, dlp);
    int n = 0;
    for (int i = 0; i < rows * T; i++)
        if (tg[i] != TOK_PAD) lp_out[n++] = lp[i];
    free(in);
    free(tg);
    free(adv);
    free(lp);
    free(dlp);
    return loss;
}

static void compare_grads(const char* what, const Model* a, const Model* b, double rel) {
    const float* ga = a->grads_memory;
    const float* gb = b->grads_memory;
    for (int t = 0; t < GPT_NUM_TENSORS; t++) {
        double scale, d = max_abs(ga, gb, a->tensor_sizes[t], &scale);
        EXPECT(d <= 1e-7 + rel * scale, "%s: gradient %s differs by %.3e (max |g| %.3e)", what, GPT_TENSOR_NAMES[t], d,
               scale);
        ga += a->tensor_sizes[t];
        gb += a->tensor_sizes[t];
    }
}

static void test_shared_equals_unshared(void) {
    TrainGroup g[3];
    make_groups(g);
    /* the third prompt must lose its beginning: 62 bytes + 18 of completion > n_ctx */
    Model* shared = model_with(0, 7);
    Model* dense = model_with(0, 7);
    long total = pack_count_loss_tokens(g, 3, CFG.n_ctx, 0);
    float *lp_s = malloc(sizeof(float) * total), *lp_d = malloc(sizeof(float) * total);
    /* the dense rows must cut the long prompt like the group does: give every row of group 2
     * the cut of its longest completion by padding the shorter ones' prompts identically */
    TrainGroup g2[3];
    memcpy(g2, g, sizeof g2);
    int longest = 0;
    for (int c = 0; c < g[2].n; c++)
        if ((int)strlen(g[2].completions[c]) > longest) longest = (int)strlen(g[2].completions[c]);
    int keep = CFG.n_ctx - longest;
    g2[2].prompt = PROMPTS[2] + strlen(PROMPTS[2]) - keep; /* what packing keeps */
    float ls = packed_grads(shared, g, 3, 0, 0, lp_s);
    float ld = dense_grads(dense, g2, 3, lp_d);
    double d = max_abs(lp_s, lp_d, total, NULL);
    printf("shared prompt vs unshared rows: %ld loss tokens, log-prob max diff %.3e, loss %.7f vs %.7f\n", total, d, ls,
           ld);
    EXPECT(d <= 2e-6, "log-probs differ by %.3e", d);
    EXPECT(fabsf(ls - ld) <= 1e-6f, "loss %.8f vs %.8f", ls, ld);
    compare_grads("shared vs unshared", shared, dense, 1e-4);

    /* micro-batches: budgets that split groups (the prompt packed again) and that hold one
     * sequence only give the gradients of the one-batch step */
    int budgets[3] = {80, 70, 64};
    for (int b = 0; b < 3; b++) {
        Model* micro = model_with(0, 7);
        float lp_m[256];
        float lm = packed_grads(micro, g, 3, budgets[b], 0, lp_m);
        EXPECT(fabsf(lm - ls) <= 1e-6f, "micro-batch %d: loss %.8f vs %.8f", budgets[b], lm, ls);
        EXPECT(max_abs(lp_m, lp_s, total, NULL) <= 1e-6, "micro-batch %d: log-probs differ", budgets[b]);
        compare_grads("micro-batched vs one batch", micro, shared, 1e-5);
        model_free(micro);
    }
    free(lp_s);
    free(lp_d);
    model_free(shared);
    model_free(dense);
}

/* The whole GRPO step (ppo_epochs 2, so the old log-probs cross micro-batches) on a model
 * whose capacity forces micro-batches equals the step on a model that takes one batch. */
static void test_trainer_micro_batches(void) {
    TrainGroup g[3];
    make_groups(g);
    Model* big = model_with(0, 11);
    Model* small = model_with(CFG.n_ctx, 11); /* one sequence per micro-batch at most */
    GrpoTrainer* tb = grpo_trainer_create(big, NULL);
    GrpoTrainer* ts = grpo_trainer_create(small, NULL);
    GrpoConfig gc = {.eps_low = 0.2f, .eps_high = 0.28f, .kl = 0.0f, .ppo_epochs = 2};
    AdamWConfig hp = {.lr = 1e-2f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.0f};
    GrpoStats sb = grpo_train(tb, g, 3, &gc, &hp, 1.0f, 0);
    GrpoStats ss = grpo_train(ts, g, 3, &gc, &hp, 1.0f, 0);
    double scale, d = max_abs(big->params_memory, small->params_memory, big->num_params, &scale);
    printf("GRPO step, 2 epochs: one batch vs micro-batches of %d tokens: params max diff %.3e; loss %.7f / %.7f, "
           "clip %.4f / %.4f\n",
           small->cap.max_tokens, d, sb.loss, ss.loss, sb.clip_fraction, ss.clip_fraction);
    /* Adam divides by sqrt(v): where a gradient is near eps, its last-bit differences move a
     * weight by a small fraction of lr; a real error moves many by about lr */
    EXPECT(d <= 5e-3 * hp.lr, "parameters after the step differ by %.3e (lr %g)", d, hp.lr);
    EXPECT(fabsf(sb.loss - ss.loss) <= 1e-6f && sb.tokens == ss.tokens, "stats differ");
    EXPECT(fabsf(sb.clip_fraction - ss.clip_fraction) <= 1e-6f && fabsf(sb.grad_norm - ss.grad_norm) <= 1e-5f,
           "clip fraction %.6f vs %.6f, grad norm %.6f vs %.6f", sb.clip_fraction, ss.clip_fraction, sb.grad_norm,
           ss.grad_norm);
    grpo_trainer_free(tb);
    grpo_trainer_free(ts);
    model_free(big);
    model_free(small);
}

/* Supervised packing (EOS trained) equals the padded supervised batch of sft_pack, and the
 * same demonstrations given as token ids (sft_accumulate_ids) give the same bits. */
static void test_sft_packed(void) {
    SftExample ex[4] = {{"12+30=", "42"}, {"", "empty prompt"}, {"abc", ""}, {"hello\n", "<answer>world</answer>"}};
    Model* a = model_with(0, 5);
    Model* b = model_with(0, 5);
    Packer pk;
    packer_init(&pk, a, 40, 1); /* small micro-batches */
    float lp[512], dlp[512];
    float la = sft_accumulate(a, &pk, ex, 4, lp, dlp);
    int T = 32, in[4 * 32], tg[4 * 32];
    float lpd[4 * 32], dlpd[4 * 32];
    sft_pack(ex, 4, T, in, tg);
    model_zero_grad(b);
    model_forward(b, in, tg, 4, T, lpd);
    float lb = sft_loss_grad(lpd, tg, 4 * T, dlpd);
    model_backward(b, dlpd);
    printf("supervised: packed loss %.7f, padded %.7f\n", la, lb);
    EXPECT(fabsf(la - lb) <= 1e-6f, "supervised loss %.8f vs %.8f", la, lb);
    compare_grads("supervised packed vs padded", a, b, 1e-5);
    /* the same demonstrations as token ids (a byte model's ids are the bytes): the same bits */
    Model* c = model_with(0, 5);
    int ids[4][64];
    SftTokens tk[4];
    for (int i = 0; i < 4; i++) {
        int np = tok_encode(ex[i].prompt, ids[i], 32), nc = tok_encode(ex[i].completion, ids[i] + 32, 32);
        tk[i] = (SftTokens){.prompt = ids[i], .prompt_len = np, .completion = ids[i] + 32, .completion_len = nc};
    }
    float lc = sft_accumulate_ids(c, &pk, tk, 4, lp, dlp);
    EXPECT(la == lc, "supervised loss from ids %.8f vs text %.8f", lc, la);
    EXPECT(!memcmp(a->grads_memory, c->grads_memory, sizeof(float) * a->num_params),
           "supervised gradients from ids differ from those of the same text");
    packer_free(&pk);
    model_free(a);
    model_free(b);
    model_free(c);
}

/* Grouped generation (one prompt cache read by L rows) gives the tokens of one prompt per
 * row, greedy and sampled; chunks of groups (a small capacity) give the greedy tokens too. */
static void test_grouped_generation(void) {
    enum { G = 3, L = 4, NEW = 20, STRIDE = 64 };
    Model* m = model_with(0, 21);
    for (size_t i = 0; i < m->num_params; i++) m->params_memory[i] *= 4.0f; /* separate the logits */
    const char* texts[G] = {"Q: 7*6?\n", "", "The question is longer than the others here.\n"};
    int prompts[G * STRIDE], lens[G], rep[G * L * STRIDE], rep_lens[G * L];
    for (int g = 0; g < G; g++) lens[g] = tok_encode_prompt(texts[g], prompts + g * STRIDE, CFG.n_ctx - NEW);
    for (int r = 0; r < G * L; r++) {
        memcpy(rep + r * STRIDE, prompts + (r / L) * STRIDE, sizeof(int) * STRIDE);
        rep_lens[r] = lens[r / L];
    }
    int out_a[G * L * NEW], la[G * L], out_b[G * L * NEW], lb[G * L];
    GenConfig greedy = {.sampler = {.temperature = 0.0f, .top_p = 1.0f}, .max_new_tokens = NEW};
    RngStream r1 = rng_stream(1, 0, 0, RNG_TEST), r2 = rng_stream(1, 0, 0, RNG_TEST);
    model_generate_groups(m, prompts, STRIDE, lens, G, L, &greedy, &r1, out_a, la);
    model_generate(m, rep, STRIDE, rep_lens, G * L, &greedy, &r2, out_b, lb);
    EXPECT(!memcmp(la, lb, sizeof la) && !memcmp(out_a, out_b, sizeof(int) * G * L * NEW),
           "greedy: grouped generation differs from one prompt per row");
    GenConfig sample = {.sampler = {.temperature = 1.0f, .top_p = 0.95f}, .max_new_tokens = NEW};
    r1 = rng_stream(2, 0, 0, RNG_TEST);
    r2 = rng_stream(2, 0, 0, RNG_TEST);
    model_generate_groups(m, prompts, STRIDE, lens, G, L, &sample, &r1, out_a, la);
    model_generate(m, rep, STRIDE, rep_lens, G * L, &sample, &r2, out_b, lb);
    int same = !memcmp(la, lb, sizeof la);
    for (int r = 0; same && r < G * L; r++) same = !memcmp(out_a + r * NEW, out_b + r * NEW, sizeof(int) * la[r]);
    EXPECT(same, "sampled: grouped generation differs from one prompt per row (same seed)");
    int distinct = 0; /* the rows of a group are different samples, not copies */
    for (int r = 1; r < L; r++) distinct += la[r] != la[0] || memcmp(out_a, out_a + r * NEW, sizeof(int) * la[0]);
    EXPECT(distinct > 0, "the sampled rows of group 0 are all identical");

    ModelCapacity cap = model_capacity_dense(&CFG, 16);
    cap.max_prefixes = 1; /* one group per chunk */
    cap.max_rows = L;
    Model* chunked = model_create_cap(&CFG, model_backend_find("cpu"), &cap, 21);
    memcpy(chunked->params_memory, m->params_memory, sizeof(float) * m->num_params);
    r1 = rng_stream(1, 0, 0, RNG_TEST);
    model_generate_groups(chunked, prompts, STRIDE, lens, G, L, &greedy, &r1, out_b, lb);
    r2 = rng_stream(1, 0, 0, RNG_TEST);
    model_generate_groups(m, prompts, STRIDE, lens, G, L, &greedy, &r2, out_a, la);
    EXPECT(!memcmp(la, lb, sizeof la) && !memcmp(out_a, out_b, sizeof(int) * G * L * NEW),
           "greedy: generation in chunks of one group differs");
    model_free(chunked);
    model_free(m);
}

static void test_packed_check(void) {
    Model* m = model_with(0, 1);
    int tok[8] = {TOK_BOS, 65, 66, 67, 68, 69, 70, 71};
    char err[256];
    struct {
        Segment s[3];
        int n_seg, n_tok;
        const char* want;
    } bad[] = {
        {{{0, 3, -1}, {3, 2, 2}}, 2, 5, "prefix 2"},            /* a prefix after the segment */
        {{{0, 3, -1}, {3, 2, 0}, {5, 3, 1}}, 3, 8, "prefix 1"}, /* a prefix that has a prefix */
        {{{0, 3, -1}, {4, 2, 0}}, 2, 6, "tile"},                 /* a gap */
        {{{0, 3, -1}, {3, 2, 0}}, 2, 8, "cover 5 of 8"},
        {{{0, 0, -1}, {0, 5, -1}}, 2, 5, "tile"}, /* an empty segment */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        PackedBatch pb = {.n_tokens = bad[i].n_tok, .inputs = tok, .targets = tok, .n_segments = bad[i].n_seg,
                          .segs = bad[i].s};
        EXPECT(packed_check(m, &pb, err, sizeof err) == -1, "bad batch %zu accepted", i);
        if (packed_check(m, &pb, err, sizeof err)) EXPECT_MSG(err, bad[i].want);
    }
    /* positions past n_ctx: a 40-token prompt and a 30-token completion of n_ctx 64 */
    int many[70];
    for (int i = 0; i < 70; i++) many[i] = 65;
    Segment long_segs[2] = {{0, 40, -1}, {40, 30, 0}};
    PackedBatch pb = {.n_tokens = 70, .inputs = many, .targets = many, .n_segments = 2, .segs = long_segs};
    EXPECT(packed_check(m, &pb, err, sizeof err) == -1, "a segment past n_ctx was accepted");
    EXPECT_MSG(err, "n_ctx");
    many[3] = 400;
    Segment one[1] = {{0, 5, -1}};
    pb = (PackedBatch){.n_tokens = 5, .inputs = many, .targets = many, .n_segments = 1, .segs = one};
    EXPECT(packed_check(m, &pb, err, sizeof err) == -1, "a token outside the vocabulary was accepted");
    model_free(m);
}

/* pack_size says what pack_next lays out: a capacity of exactly its tokens and attention
 * weights holds the groups in one micro-batch of that many tokens (prompts cut, an empty
 * prompt, with and without EOS), and one token or one attention weight less does not. */
static void test_pack_size(void) {
    TrainGroup g[3];
    make_groups(g);
    for (int eos = 0; eos <= 1; eos++) {
        Model* probe = model_with(0, 1);
        long tokens, att;
        pack_size(g, 3, &probe->roles, CFG.n_head, CFG.n_ctx, eos, &tokens, &att);
        model_free(probe);
        for (int less = 0; less <= 2; less++) { /* 0: exact; 1: a token less; 2: an attention weight less */
            ModelCapacity cap = model_capacity_dense(&CFG, 16);
            cap.max_tokens = (int)tokens - (less == 1);
            cap.max_att = att - (less == 2);
            Model* m = model_create_cap(&CFG, model_backend_find("cpu"), &cap, 1);
            Packer pk;
            packer_init(&pk, m, 0, eos);
            PackCursor cur = {0};
            int batches = 0, first = 0;
            while (pack_next(&pk, g, 3, &cur)) {
                if (!batches) first = pk.pb.n_tokens;
                batches++;
            }
            if (less == 0)
                EXPECT(batches == 1 && first == tokens, "eos %d: a capacity of pack_size's %ld tokens, %ld att took %d "
                       "micro-batches, the first of %d tokens", eos, tokens, att, batches, first);
            else
                EXPECT(batches > 1, "eos %d: %s less than pack_size's still packed everything in one micro-batch", eos,
                       less == 1 ? "a token" : "an attention weight");
            packer_free(&pk);
            model_free(m);
        }
        printf("  pack_size, eos %d: %ld tokens, %ld attention weights per layer\n", eos, tokens, att);
    }
}

int main(void) {
    test_shared_equals_unshared();
    test_trainer_micro_batches();
    test_sft_packed();
    test_grouped_generation();
    test_packed_check();
    test_pack_size();
    return test_finish("model_packed");
}
