/* Dumps everything the PyTorch reference check compares: the initial weights, a batch,
 * logits, per-token log-probs, the masked loss, every gradient tensor, and the losses and
 * weights over 5 AdamW steps with gradient clipping; then a packed batch of groups sharing
 * their prompts (rl/pack.h) with its segments, log-probs and the gradients of a weighted
 * token-level loss, which the test recomputes as unshared rows. Output: a simple tagged binary file
 * (name, dtype, shape, data) that test_model_vs_torch.py reads with numpy.
 * usage: tool_model_dump OUT.bin */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/check.h"
#include "core/rng.h"
#include "model/model.h"
#include "rl/grpo.h"
#include "rl/pack.h"
#include "rl/sft.h"
#include "dump_writer.h"

static void put_params(FILE* f, const char* prefix, Model* m, const float* memory) {
    const float* p = memory;
    for (int t = 0; t < GPT_NUM_TENSORS; t++) {
        char name[64];
        snprintf(name, sizeof name, "%s%s", prefix, GPT_TENSOR_NAMES[t]);
        int n = (int)m->tensor_sizes[t];
        put_array(f, name, 0, p, 1, &n);
        p += n;
    }
}

int main(int argc, char** argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: tool_model_dump OUT.bin\n");
        return 2;
    }
    enum { B = 3, T = 12, STEPS = 5 };
    ModelShape cfg = {.n_layer = 2, .n_head = 4, .d_model = 32, .n_ctx = 16, .vocab = GPT_VOCAB};
    Model* m = model_create(&cfg, model_backend_find("cpu"), B, 1234);
    RngStream rng = rng_stream(99, 0, 0, RNG_TEST);
    int in[B * T], tg[B * T];
    for (int i = 0; i < B * T; i++) {
        in[i] = (int)rng_below(&rng, 258);
        tg[i] = (int)rng_below(&rng, 258);
    }
    for (int t = 0; t < 5; t++) tg[0 * T + t] = TOK_PAD; /* a prompt: no loss */
    for (int t = 8; t < T; t++) tg[2 * T + t] = TOK_PAD; /* right padding */

    FILE* f = fopenCheck(argv[1], "wb");
    int cfg_vals[5] = {cfg.n_layer, cfg.n_head, cfg.d_model, cfg.n_ctx, cfg.vocab}, five = 5;
    put_array(f, "config", 1, cfg_vals, 1, &five);
    put_params(f, "init.", m, m->params_memory);
    int bt[2] = {B, T};
    put_array(f, "inputs", 1, in, 2, bt);
    put_array(f, "targets", 1, tg, 2, bt);

    float lp[B * T], dlp[B * T];
    static float logits[B * T * GPT_VOCAB];
    model_zero_grad(m);
    model_forward(m, in, tg, B, T, lp);
    float loss = sft_loss_grad(lp, tg, B * T, dlp);
    m->backend->get_logits(m, logits);
    int btv[3] = {B, T, GPT_VOCAB}, one = 1;
    put_array(f, "logits", 0, logits, 3, btv);
    put_array(f, "logprobs", 0, lp, 2, bt);
    put_array(f, "loss", 0, &loss, 1, &one);
    model_backward(m, dlp);
    put_params(f, "grad.", m, m->grads_memory);

    /* 5 AdamW steps on the same batch, clipping the gradient norm to 1. */
    AdamWConfig hp = {.lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.1f};
    float hpv[6] = {hp.lr, hp.beta1, hp.beta2, hp.eps, hp.weight_decay, 1.0f}, losses[STEPS], norms[STEPS];
    int six = 6, steps = STEPS;
    put_array(f, "adamw", 0, hpv, 1, &six);
    for (int s = 0; s < STEPS; s++) {
        if (s > 0) {
            model_zero_grad(m);
            model_forward(m, in, tg, B, T, lp);
            sft_loss_grad(lp, tg, B * T, dlp);
            model_backward(m, dlp);
        }
        losses[s] = sft_loss_grad(lp, tg, B * T, dlp);
        norms[s] = model_step(m, &hp, 1.0f);
    }
    put_array(f, "step_losses", 0, losses, 1, &steps);
    put_array(f, "step_grad_norms", 0, norms, 1, &steps);
    put_params(f, "final.", m, m->params_memory);
    model_free(m);

    /* Shared prompts: two groups (3 and 2 completions) and a group with an empty prompt,
     * from the initial weights again. */
    Model* pm = model_create(&cfg, model_backend_find("cpu"), B, 1234);
    static const char* c0[3] = {"ab", "cdefg", "h"};
    static const char* c1[2] = {"xyz1", "uv"};
    static const char* c2[1] = {"q"};
    static const float w0[3] = {1.0f, -0.5f, -0.5f}, w1[2] = {0.7f, -0.7f}, w2[1] = {2.0f};
    TrainGroup groups[3] = {{.prompt = "12+3=", .n = 3, .completions = c0, .weights = w0},
                            {.prompt = "hello", .n = 2, .completions = c1, .weights = w1},
                            {.prompt = "", .n = 1, .completions = c2, .weights = w2}};
    Packer pk;
    packer_init(&pk, pm, 0, 0);
    PackCursor cur = {0};
    if (!pack_next(&pk, groups, 3, &cur) || cur.group < 3) sapo_die("the packed test batch must fit one micro-batch");
    const PackedBatch* pb = &pk.pb;
    int N = pb->n_tokens, nseg = pb->n_segments;
    float plp[64], pdlp[64];
    GrpoConfig gc = {.eps_low = 0.2f, .eps_high = 0.28f, .ppo_epochs = 1};
    model_zero_grad(pm);
    model_forward_packed(pm, pb, plp);
    GrpoTokens tk = {.lp = plp, .targets = pb->targets, .none = TOK_PAD, .adv = pk.weight, .n = N};
    grpo_loss_grad(&tk, &gc, pdlp, NULL);
    model_backward(pm, pdlp);
    int segs[64 * 3], sd[2] = {nseg, 3};
    for (int i = 0; i < nseg; i++) {
        segs[3 * i] = pb->segs[i].start;
        segs[3 * i + 1] = pb->segs[i].len;
        segs[3 * i + 2] = pb->segs[i].prefix;
    }
    put_array(f, "packed.inputs", 1, pb->inputs, 1, &N);
    put_array(f, "packed.targets", 1, pb->targets, 1, &N);
    put_array(f, "packed.weights", 0, pk.weight, 1, &N);
    put_array(f, "packed.segments", 1, segs, 2, sd);
    put_array(f, "packed.logprobs", 0, plp, 1, &N);
    put_params(f, "packed.grad.", pm, pm->grads_memory);
    packer_free(&pk);
    model_free(pm);
    fcloseCheck(f);
    return 0;
}
