/* Parity of the CUDA backend with the CPU reference (the llm.c habit: every GPU function has
 * a CPU twin and a test compares them). Same weights, same batch on both:
 *   - forward: logits and log-probs of the targets (TOK_PAD targets give exactly 0);
 *   - backward: every one of the 16 gradient tensors and the gradient norm;
 *   - 10 AdamW steps (clipping, weight decay): parameters and log-probs afterwards;
 *   - greedy KV-cache generation: token for token, >= 64 tokens per row, with a row that
 *     stops early so the later decode steps use non-contiguous cache slots;
 *   - the GPU repeats itself bit for bit (fixed-order reductions, no atomics);
 *   - a packed batch with shared prompts (PackedBatch): two prompts of 5 and 7 tokens with
 *     three completions of different lengths each, interleaved, plus a segment of its own:
 *     log-probs, logits, every gradient tensor and the norm against the CPU, the completion
 *     tokens' log-probs against the same text run unshared, and the bits of a repeat;
 *   - grouped greedy generation (model_generate_groups: a prompt prefilled once, read by
 *     three rows each), with a prompt of one token (no prompt cache), one that runs into
 *     n_ctx, and more groups than the capacity holds at once (two chunks): token for token.
 * Tolerances (fp32 everywhere, no TF32; the two sides differ only in summation order and in
 * the device's expf/logf): logits and log-probs 1e-4 absolute; each gradient tensor
 * max|gpu - cpu| <= 1e-3 x max|cpu| + 1e-7; gradient norm 1e-4 relative; after 10 AdamW
 * steps at lr 1e-3 the mean parameter difference <= 1e-6 and the largest <= 2e-4 (a fifth of
 * one step) over elements whose gradient is >= 1e-6 (exactly-zero gradients, the key biases,
 * are rounding noise that Adam amplifies differently on each side: see the comment there),
 * log-probs 1e-3. Every max difference is printed.
 * The deterministic mode (model.deterministic; the cuda_det_* kernels in kernels/ against
 * det_gemm and det_attention.h on the CPU) is held to no tolerance at all: on the packed
 * batch, the logits, log-probs, every gradient tensor (accumulated over two passes) and the gradient norm, then
 * the parameters and both Adam moments after 5 AdamW steps, then sampled grouped generation
 * (temperature 0.9, top-p 0.95: tokens and the sampler's log-probs) are compared bit for bit.
 * Built twice: as gpu/test_gpu_parity against the real backend (exit 77, skipped, without a
 * GPU), and as unit/test_gpu_parity_emu against the CPU emulation of the same CUDA sources
 * (kernels/emu), which runs everywhere. SAPO_CUDA_TF32=1 relaxes nothing: expect failures. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "model/generate.h"
#include "model/model.h"
#include "../test_assert.h"

#include "gpu_backend.h"

static double max_abs_diff(const float* a, const float* b, size_t n, double* mean) {
    double mx = 0.0, sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]);
        if (!(d <= mx)) mx = d; /* NaN wins */
        sum += d;
    }
    if (mean) *mean = n ? sum / n : 0.0;
    return mx;
}


static double max_abs(const float* a, size_t n) {
    double mx = 0.0;
    for (size_t i = 0; i < n; i++)
        if (fabs(a[i]) > mx) mx = fabs(a[i]);
    return mx;
}

/* Every gradient tensor of the last backward, GPU against CPU (1e-3 of the tensor's scale),
 * each reached by the test, and the gradient norms; what names the batch in messages. */
static void compare_gradients(Model* cpu, Model* gpu, const char* what) {
    float norm_c = cpu->backend->grad_norm(cpu), norm_g = gpu->backend->grad_norm(gpu);
    gpu->backend->download(gpu);
    size_t off = 0;
    for (int t = 0; t < GPT_NUM_TENSORS; t++) {
        size_t n = cpu->tensor_sizes[t];
        double scale = max_abs(cpu->grads_memory + off, n);
        double d = max_abs_diff(cpu->grads_memory + off, gpu->grads_memory + off, n, NULL);
        double tol = 1e-3 * scale + 1e-7;
        printf("%sgrad %-9s max |diff| %.3g  max |grad| %.3g  (%.2g of tolerance)\n", what, GPT_TENSOR_NAMES[t], d,
               scale, d / tol);
        EXPECT(d <= tol, "%sgradient %s differs by %.3g (tolerance %.3g)", what, GPT_TENSOR_NAMES[t], d, tol);
        EXPECT(scale > 0.0, "%sgradient %s is all zero on the CPU: the test does not reach it", what,
               GPT_TENSOR_NAMES[t]);
        off += n;
    }
    printf("%sgrad norm: cpu %.7g gpu %.7g\n", what, norm_c, norm_g);
    EXPECT(fabs(norm_c - norm_g) <= 1e-4 * norm_c, "%sgradient norms %.7g vs %.7g", what, norm_c, norm_g);
}


/* Same parameters on both: the shared init plus noise (biases and LayerNorm too, so a bias
 * or gain bug cannot hide behind zeros and ones). */
static void same_weights(Model* cpu, Model* gpu, float noise, uint64_t seed) {
    RngStream r = rng_stream(seed, 0, 0, RNG_TEST);
    for (size_t i = 0; i < cpu->num_params; i++) cpu->params_memory[i] += noise * rng_normal(&r);
    memcpy(gpu->params_memory, cpu->params_memory, cpu->num_params * sizeof(float));
    gpu->backend->upload(gpu);
}

static void test_training(const ModelBackend* be) {
    enum { MAXB = 5, B = 4, T = 48 }; /* below capacity on both axes: strides use capacity */
    ModelShape cfg = {.n_layer = 2, .n_head = 4, .d_model = 64, .n_ctx = 64, .vocab = GPT_VOCAB};
    Model* cpu = model_create(&cfg, model_backend_find("cpu"), MAXB, 7);
    Model* gpu = model_create(&cfg, be, MAXB, 7);
    same_weights(cpu, gpu, 0.05f, 11);
    int N = B * T, V = cfg.vocab;
    int* inputs = malloc(sizeof(int) * N);
    int* targets = malloc(sizeof(int) * N);
    float *lp_c = malloc(sizeof(float) * N), *lp_g = malloc(sizeof(float) * N), *dlp = malloc(sizeof(float) * N);
    float *lg_c = malloc(sizeof(float) * N * V), *lg_g = malloc(sizeof(float) * N * V);
    RngStream r = rng_stream(12, 0, 0, RNG_TEST);
    int n_real = 0;
    for (int b = 0; b < B; b++) {
        int len = T - 5 * b; /* padded tails of different lengths */
        for (int t = 0; t < T; t++) {
            int i = b * T + t;
            inputs[i] = t == 0 ? TOK_BOS : t < len ? (int)rng_below(&r, 256) : TOK_PAD;
        }
        for (int t = 0; t < T; t++) {
            int i = b * T + t;
            targets[i] = t + 1 < len ? inputs[i + 1] : t + 1 == len ? TOK_EOS : TOK_PAD;
            n_real += targets[i] != TOK_PAD;
        }
    }
    for (int i = 0; i < N; i++) dlp[i] = (float)(rng_double(&r) * 2.0 - 1.0) / n_real;

    /* forward */
    model_forward(cpu, inputs, targets, B, T, lp_c);
    model_forward(gpu, inputs, targets, B, T, lp_g);
    cpu->backend->get_logits(cpu, lg_c);
    gpu->backend->get_logits(gpu, lg_g);
    double d_logits = max_abs_diff(lg_c, lg_g, (size_t)N * V, NULL);
    double d_lp = max_abs_diff(lp_c, lp_g, N, NULL);
    printf("forward: max |logits diff| %.3g (of max %.3g), max |logprob diff| %.3g\n", d_logits,
           max_abs(lg_c, (size_t)N * V), d_lp);
    EXPECT(d_logits <= 1e-4, "logits differ by %.3g (tolerance 1e-4)", d_logits);
    EXPECT(d_lp <= 1e-4, "log-probs differ by %.3g (tolerance 1e-4)", d_lp);
    int pad_ok = 1;
    for (int i = 0; i < N; i++) pad_ok &= targets[i] != TOK_PAD || lp_g[i] == 0.0f;
    EXPECT(pad_ok, "a TOK_PAD target got a non-zero log-prob on the GPU");

    /* backward: every gradient tensor */
    model_zero_grad(cpu);
    model_zero_grad(gpu);
    model_forward(cpu, inputs, targets, B, T, lp_c);
    model_forward(gpu, inputs, targets, B, T, lp_g);
    model_backward(cpu, dlp);
    model_backward(gpu, dlp);
    compare_gradients(cpu, gpu, "");

    /* the GPU repeats itself bit for bit */
    float* grads_first = malloc(sizeof(float) * gpu->num_params);
    memcpy(grads_first, gpu->grads_memory, sizeof(float) * gpu->num_params);
    float* lp_first = malloc(sizeof(float) * N);
    memcpy(lp_first, lp_g, sizeof(float) * N);
    model_zero_grad(gpu);
    model_forward(gpu, inputs, targets, B, T, lp_g);
    model_backward(gpu, dlp);
    gpu->backend->download(gpu);
    EXPECT(!memcmp(lp_first, lp_g, sizeof(float) * N), "a second forward gave other log-prob bits");
    EXPECT(!memcmp(grads_first, gpu->grads_memory, sizeof(float) * gpu->num_params),
           "a second backward gave other gradient bits");
    free(grads_first);
    free(lp_first);

    /* 10 AdamW steps on the mean NLL, with weight decay and clipping */
    float* start = malloc(sizeof(float) * cpu->num_params);
    memcpy(start, cpu->params_memory, sizeof(float) * cpu->num_params);
    AdamWConfig hp = {.lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.01f};
    for (int i = 0; i < N; i++) dlp[i] = targets[i] == TOK_PAD ? 0.0f : -1.0f / n_real;
    float first_loss = 0, last_loss = 0;
    for (int step = 0; step < 10; step++) {
        Model* ms[2] = {cpu, gpu};
        float* lps[2] = {lp_c, lp_g};
        float norms[2];
        for (int k = 0; k < 2; k++) {
            model_zero_grad(ms[k]);
            model_forward(ms[k], inputs, targets, B, T, lps[k]);
            model_backward(ms[k], dlp);
            norms[k] = model_step(ms[k], &hp, 0.5f);
        }
        double loss = 0;
        for (int i = 0; i < N; i++) loss -= lp_c[i] / n_real;
        if (step == 0) first_loss = (float)loss;
        last_loss = (float)loss;
        EXPECT(fabs(norms[0] - norms[1]) <= 1e-3 * norms[0], "step %d: grad norms %.7g vs %.7g", step, norms[0],
               norms[1]);
    }
    gpu->backend->download(gpu);
    /* Elements whose gradient is zero in exact arithmetic (the key biases: softmax ignores a
     * constant added to a row of scores) get rounding noise of ~1e-10 as gradient, which
     * Adam scales up to a step of up to lr * noise / (noise + eps) on each side, differently
     * on each side: they are held only to the mean and to the bound of two AdamW runs, and
     * the largest difference is taken over elements with |gradient| >= 1e-6. */
    double mean_d, d_params = 0.0, d_noise = 0.0;
    long n_noise = 0;
    max_abs_diff(cpu->params_memory, gpu->params_memory, cpu->num_params, &mean_d);
    for (size_t i = 0; i < cpu->num_params; i++) {
        double e = fabs((double)cpu->params_memory[i] - gpu->params_memory[i]);
        if (fabs(cpu->grads_memory[i]) >= 1e-6) {
            if (e > d_params) d_params = e;
        } else {
            n_noise++;
            if (e > d_noise) d_noise = e;
        }
    }
    double moved = max_abs_diff(start, cpu->params_memory, cpu->num_params, NULL);
    printf("10 AdamW steps: loss %.4f -> %.4f, params moved up to %.3g; max |param diff| %.3g where |grad| >= 1e-6, "
           "mean %.3g over all; %ld elements with |grad| < 1e-6 differ by up to %.3g\n", first_loss, last_loss, moved,
           d_params, mean_d, n_noise, d_noise);
    EXPECT(d_noise <= 2.0 * 10 * hp.lr, "near-zero-gradient elements differ by %.3g, more than two AdamW runs can",
           d_noise);
    size_t off = 0;
    for (int t = 0; t < GPT_NUM_TENSORS; t++) { /* where the largest differences sit */
        size_t n = cpu->tensor_sizes[t], worst = 0;
        double d = 0.0;
        for (size_t i = 0; i < n; i++) {
            double e = fabs((double)cpu->params_memory[off + i] - gpu->params_memory[off + i]);
            if (e > d) { d = e; worst = i; }
        }
        printf("  param %-9s max |diff| %.3g at %zu (cpu grad there %.3g)\n", GPT_TENSOR_NAMES[t], d, worst,
               cpu->grads_memory[off + worst]);
        off += n;
    }
    EXPECT(moved > 5e-3, "AdamW barely moved the parameters (%.3g)", moved);
    EXPECT(d_params <= 2e-4, "parameters after 10 AdamW steps differ by up to %.3g (tolerance 2e-4)", d_params);
    EXPECT(mean_d <= 1e-6, "parameters after 10 AdamW steps differ by %.3g on average (tolerance 1e-6)", mean_d);
    EXPECT(gpu->step == 10 && cpu->step == 10, "step counters %ld, %ld", cpu->step, gpu->step);
    double d_m = max_abs_diff(cpu->m_memory, gpu->m_memory, cpu->num_params, NULL);
    printf("Adam first moment: max |diff| %.3g (of max %.3g)\n", d_m, max_abs(cpu->m_memory, cpu->num_params));
    model_forward(cpu, inputs, targets, B, T, lp_c);
    model_forward(gpu, inputs, targets, B, T, lp_g);
    d_lp = max_abs_diff(lp_c, lp_g, N, NULL);
    printf("after the steps: max |logprob diff| %.3g\n", d_lp);
    EXPECT(d_lp <= 1e-3, "log-probs after 10 steps differ by %.3g (tolerance 1e-3)", d_lp);

    free(start);
    free(inputs);
    free(targets);
    free(lp_c);
    free(lp_g);
    free(dlp);
    free(lg_c);
    free(lg_g);
    model_free(cpu);
    model_free(gpu);
}

/* The segments of the packed test, in batch order: prompt A (5 tokens), prompt B (7), then
 * their completions interleaved with a segment of its own (no prefix), so each prompt's
 * readers are not adjacent and the own segment sits between them. */
enum { PK_SEGS = 9 };
static const int PK_LEN[PK_SEGS] = {5, 7, 4, 6, 9, 13, 1, 2, 11};
static const int PK_PREFIX[PK_SEGS] = {-1, -1, 0, 1, 0, -1, 1, 0, 1};

/* The packed batch's segments laid end to end; returns its tokens. */
static int pk_segments(Segment segs[PK_SEGS]) {
    int N = 0;
    for (int k = 0; k < PK_SEGS; k++) {
        segs[k] = (Segment){.start = N, .len = PK_LEN[k], .prefix = PK_PREFIX[k]};
        N += PK_LEN[k];
    }
    return N;
}

static void test_packed(const ModelBackend* be) {
    ModelShape cfg = {.n_layer = 2, .n_head = 4, .d_model = 64, .n_ctx = 64, .vocab = GPT_VOCAB};
    /* capacity above the batch on every axis: the strides must use the batch, not the cap */
    ModelCapacity cap = {.max_tokens = 100, .max_att = 4L * 64 * 64, .max_prefixes = 3, .max_rows = 5, .row_ctx = 40};
    Model* cpu = model_create_cap(&cfg, model_backend_find("cpu"), &cap, 7);
    Model* gpu = model_create_cap(&cfg, be, &cap, 7);
    same_weights(cpu, gpu, 0.05f, 31);
    Segment segs[PK_SEGS];
    int N = pk_segments(segs);
    int V = cfg.vocab;
    int* inputs = malloc(sizeof(int) * N);
    int* targets = malloc(sizeof(int) * N);
    float *lp_c = malloc(sizeof(float) * N), *lp_g = malloc(sizeof(float) * N), *dlp = malloc(sizeof(float) * N);
    float *lg_c = malloc(sizeof(float) * N * V), *lg_g = malloc(sizeof(float) * N * V);
    RngStream r = rng_stream(13, 0, 0, RNG_TEST);
    /* prompts: BOS and bytes, each token predicting the next (the last predicts nothing);
     * completions: bytes, each predicting the next, the last TOK_EOS */
    for (int k = 0; k < PK_SEGS; k++) {
        const Segment* g = &segs[k];
        for (int t = 0; t < g->len; t++) {
            int i = g->start + t;
            inputs[i] = t == 0 && g->prefix < 0 ? TOK_BOS : (int)rng_below(&r, 256);
        }
        for (int t = 0; t < g->len; t++) {
            int i = g->start + t, is_prompt = k < 2;
            targets[i] = t + 1 < g->len ? inputs[i + 1] : is_prompt ? TOK_PAD : TOK_EOS;
        }
    }
    for (int i = 0; i < N; i++) dlp[i] = (float)(rng_double(&r) * 2.0 - 1.0) / N;
    PackedBatch pb = {.n_tokens = N, .inputs = inputs, .targets = targets, .n_segments = PK_SEGS, .segs = segs};

    model_zero_grad(cpu);
    model_zero_grad(gpu);
    model_forward_packed(cpu, &pb, lp_c);
    model_forward_packed(gpu, &pb, lp_g);
    cpu->backend->get_logits(cpu, lg_c);
    gpu->backend->get_logits(gpu, lg_g);
    double d_logits = max_abs_diff(lg_c, lg_g, (size_t)N * V, NULL);
    double d_lp = max_abs_diff(lp_c, lp_g, N, NULL);
    printf("packed forward (%d tokens, %d segments): max |logits diff| %.3g (of max %.3g), max |logprob diff| %.3g\n",
           N, PK_SEGS, d_logits, max_abs(lg_c, (size_t)N * V), d_lp);
    EXPECT(d_logits <= 1e-4, "packed logits differ by %.3g (tolerance 1e-4)", d_logits);
    EXPECT(d_lp <= 1e-4, "packed log-probs differ by %.3g (tolerance 1e-4)", d_lp);
    int pad_ok = 1;
    for (int i = 0; i < N; i++) pad_ok &= targets[i] != TOK_PAD || lp_g[i] == 0.0f;
    EXPECT(pad_ok, "a TOK_PAD target got a non-zero log-prob on the GPU (packed)");

    model_backward(cpu, dlp);
    model_backward(gpu, dlp);
    compare_gradients(cpu, gpu, "packed ");

    /* the same bits again */
    float* grads_first = malloc(sizeof(float) * gpu->num_params);
    memcpy(grads_first, gpu->grads_memory, sizeof(float) * gpu->num_params);
    float* lp_first = malloc(sizeof(float) * N);
    memcpy(lp_first, lp_g, sizeof(float) * N);
    model_zero_grad(gpu);
    model_forward_packed(gpu, &pb, lp_g);
    model_backward(gpu, dlp);
    gpu->backend->download(gpu);
    EXPECT(!memcmp(lp_first, lp_g, sizeof(float) * N), "a second packed forward gave other log-prob bits");
    EXPECT(!memcmp(grads_first, gpu->grads_memory, sizeof(float) * gpu->num_params),
           "a second packed backward gave other gradient bits");

    /* sharing changes nothing: each completion run as its prompt followed by it, alone */
    double d_unshared = 0.0;
    int* in1 = malloc(sizeof(int) * cfg.n_ctx);
    int* tg1 = malloc(sizeof(int) * cfg.n_ctx);
    float* lp1 = malloc(sizeof(float) * cfg.n_ctx);
    for (int k = 0; k < PK_SEGS; k++) {
        const Segment* g = &segs[k];
        const Segment* p = g->prefix >= 0 ? &segs[g->prefix] : NULL;
        int plen = p ? p->len : 0, T = plen + g->len;
        for (int t = 0; t < plen; t++) {
            in1[t] = inputs[p->start + t];
            tg1[t] = TOK_PAD;
        }
        memcpy(in1 + plen, inputs + g->start, sizeof(int) * g->len);
        memcpy(tg1 + plen, targets + g->start, sizeof(int) * g->len);
        model_forward(gpu, in1, tg1, 1, T, lp1);
        double d = max_abs_diff(lp1 + plen, lp_first + g->start, g->len, NULL);
        if (!(d <= d_unshared)) d_unshared = d;
    }
    printf("packed vs unshared (each segment after its prompt, alone): max |logprob diff| %.3g\n", d_unshared);
    EXPECT(d_unshared <= 1e-4, "sharing a prompt changed a log-prob by %.3g (tolerance 1e-4)", d_unshared);

    free(in1);
    free(tg1);
    free(lp1);
    free(grads_first);
    free(lp_first);
    free(inputs);
    free(targets);
    free(lp_c);
    free(lp_g);
    free(dlp);
    free(lg_c);
    free(lg_g);
    model_free(cpu);
    model_free(gpu);
}

/* Four groups of three completions; the capacity holds two groups (six rows) at a time. */
static void test_generation_groups(const ModelBackend* be) {
    enum { G = 4, L = 3, NEW = 72, STRIDE = 80 };
    ModelShape cfg = {.n_layer = 2, .n_head = 4, .d_model = 32, .n_ctx = 128, .vocab = GPT_VOCAB};
    ModelCapacity cap = {.max_tokens = 128, .max_att = 4L * 128 * 128, .max_prefixes = 2, .max_rows = 2 * L,
                         .row_ctx = NEW};
    Model* cpu = model_create_cap(&cfg, model_backend_find("cpu"), &cap, 23);
    Model* gpu = model_create_cap(&cfg, be, &cap, 23);
    RngStream wr = rng_stream(6, 0, 0, RNG_TEST);
    for (size_t i = 0; i < cpu->num_params; i++) cpu->params_memory[i] += 0.2f * rng_normal(&wr);
    memset(cpu->params.wte + (size_t)TOK_EOS * cfg.d_model, 0, sizeof(float) * cfg.d_model);
    memcpy(gpu->params_memory, cpu->params_memory, cpu->num_params * sizeof(float));
    gpu->backend->upload(gpu);

    /* group 1 runs into n_ctx first; group 2 is BOS alone (no prompt cache at all) */
    int prompts[G * STRIDE], lens[G] = {5, 70, 1, 7};
    for (int g = 0; g < G; g++) {
        prompts[g * STRIDE] = TOK_BOS;
        for (int t = 1; t < STRIDE; t++) prompts[g * STRIDE + t] = 'a' + (int)rng_below(&wr, 26);
    }
    int out_c[G * L * NEW], len_c[G * L], out_g[G * L * NEW], len_g[G * L];
    GenConfig greedy = {.sampler = {.temperature = 0.0f, .top_p = 1.0f}, .max_new_tokens = NEW, .stop = NULL};
    RngStream unused1 = rng_stream(1, 0, 0, RNG_GENERATE), unused2 = rng_stream(1, 0, 0, RNG_GENERATE);
    model_generate_groups(cpu, prompts, STRIDE, lens, G, L, &greedy, &unused1, out_c, len_c);
    model_generate_groups(gpu, prompts, STRIDE, lens, G, L, &greedy, &unused2, out_g, len_g);
    for (int b = 0; b < G * L; b++) {
        int same = 0;
        while (same < len_c[b] && same < len_g[b] && out_c[b * NEW + same] == out_g[b * NEW + same]) same++;
        printf("grouped greedy row %2d (group %d, prompt %2d): cpu %2d tokens, gpu %2d tokens, %2d equal before the "
               "first difference\n", b, b / L, lens[b / L], len_c[b], len_g[b], same);
        EXPECT(len_c[b] == len_g[b] && same == len_c[b], "grouped row %d: greedy generation differs at token %d", b,
               same);
        if (lens[b / L] + NEW <= cfg.n_ctx) EXPECT(len_c[b] >= 64, "grouped row %d: only %d tokens (want >= 64)", b,
                                                   len_c[b]);
    }
    EXPECT(len_c[L] < NEW, "group 1 was meant to stop early at n_ctx (%d tokens)", len_c[L]);

    /* sampling: a group's rows differ; same stream on both sides */
    GenConfig sample = {.sampler = {.temperature = 1.0f, .top_p = 0.95f}, .max_new_tokens = NEW, .stop = NULL};
    RngStream r1 = rng_stream(78, 2, 9, RNG_GENERATE), r2 = rng_stream(78, 2, 9, RNG_GENERATE);
    model_generate_groups(cpu, prompts, STRIDE, lens, G, L, &sample, &r1, out_c, len_c);
    model_generate_groups(gpu, prompts, STRIDE, lens, G, L, &sample, &r2, out_g, len_g);
    int total = 0, equal = 0;
    for (int b = 0; b < G * L; b++) {
        int same = 0;
        while (same < len_c[b] && same < len_g[b] && out_c[b * NEW + same] == out_g[b * NEW + same]) same++;
        equal += same;
        total += len_c[b];
    }
    printf("grouped sampled (temperature 1, top-p 0.95): %d of %d cpu tokens equal before each row's first difference "
           "(informational)\n", equal, total);
    model_free(cpu);
    model_free(gpu);
}

static void test_generation(const ModelBackend* be) {
    enum { B = 4, MAXB = 6, NEW = 72, STRIDE = 80 };
    ModelShape cfg = {.n_layer = 2, .n_head = 4, .d_model = 32, .n_ctx = 128, .vocab = GPT_VOCAB};
    Model* cpu = model_create(&cfg, model_backend_find("cpu"), MAXB, 21);
    Model* gpu = model_create(&cfg, be, MAXB, 21);
    /* As in tests/unit/test_model_generate.c: larger weights separate the logits so float
     * rounding cannot flip a greedy choice, and a zero EOS embedding keeps rows running. */
    RngStream wr = rng_stream(5, 0, 0, RNG_TEST);
    for (size_t i = 0; i < cpu->num_params; i++) cpu->params_memory[i] += 0.2f * rng_normal(&wr);
    memset(cpu->params.wte + (size_t)TOK_EOS * cfg.d_model, 0, sizeof(float) * cfg.d_model);
    memcpy(gpu->params_memory, cpu->params_memory, cpu->num_params * sizeof(float));
    gpu->backend->upload(gpu);

    /* row 1 runs into n_ctx first; rows 0, 2, 3 then decode from slots {0, 2, 3} */
    int prompts[B * STRIDE], lens[B] = {3, 70, 17, 9};
    for (int b = 0; b < B; b++) {
        prompts[b * STRIDE] = TOK_BOS;
        for (int t = 1; t < STRIDE; t++) prompts[b * STRIDE + t] = 'a' + (int)rng_below(&wr, 26);
    }
    int out_c[B * NEW], len_c[B], out_g[B * NEW], len_g[B];
    GenConfig greedy = {.sampler = {.temperature = 0.0f, .top_p = 1.0f}, .max_new_tokens = NEW, .stop = NULL};
    RngStream unused1 = rng_stream(1, 0, 0, RNG_GENERATE), unused2 = rng_stream(1, 0, 0, RNG_GENERATE);
    model_generate(cpu, prompts, STRIDE, lens, B, &greedy, &unused1, out_c, len_c);
    model_generate(gpu, prompts, STRIDE, lens, B, &greedy, &unused2, out_g, len_g);
    for (int b = 0; b < B; b++) {
        int same = 0;
        while (same < len_c[b] && same < len_g[b] && out_c[b * NEW + same] == out_g[b * NEW + same]) same++;
        printf("greedy row %d: prompt %2d, cpu %2d tokens, gpu %2d tokens, %2d equal before the first difference\n", b,
               lens[b], len_c[b], len_g[b], same);
        EXPECT(len_c[b] == len_g[b] && same == len_c[b], "row %d: greedy generation differs at token %d", b, same);
        if (lens[b] + NEW <= cfg.n_ctx) EXPECT(len_c[b] >= 64, "row %d: only %d tokens (want >= 64)", b, len_c[b]);
    }
    EXPECT(len_c[1] < NEW, "row 1 was meant to stop early at n_ctx (%d tokens)", len_c[1]);

    /* sampling (temperature 1): same stream, so the same tokens until rounding flips one */
    GenConfig sample = {.sampler = {.temperature = 1.0f, .top_p = 0.95f}, .max_new_tokens = NEW, .stop = NULL};
    RngStream r1 = rng_stream(77, 2, 9, RNG_GENERATE), r2 = rng_stream(77, 2, 9, RNG_GENERATE);
    model_generate(cpu, prompts, STRIDE, lens, B, &sample, &r1, out_c, len_c);
    model_generate(gpu, prompts, STRIDE, lens, B, &sample, &r2, out_g, len_g);
    int total = 0, equal = 0;
    for (int b = 0; b < B; b++) {
        int same = 0;
        while (same < len_c[b] && same < len_g[b] && out_c[b * NEW + same] == out_g[b * NEW + same]) same++;
        equal += same;
        total += len_c[b];
    }
    printf("sampled (temperature 1, top-p 0.95): %d of %d cpu tokens equal before each row's first difference "
           "(informational)\n", equal, total);
    model_free(cpu);
    model_free(gpu);
}

/* Counts the floats whose bits differ (and prints the first). */
static long bit_diffs(const float* a, const float* b, size_t n, const char* what) {
    long d = 0;
    for (size_t i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], sizeof(float))) {
            if (!d) printf("  %s: first differing element %zu: cpu %.9g, gpu %.9g\n", what, i, a[i], b[i]);
            d++;
        }
    return d;
}

static void test_deterministic(const ModelBackend* be) {
    ModelShape cfg = {.n_layer = 2, .n_head = 4, .d_model = 64, .n_ctx = 64, .vocab = GPT_VOCAB, .deterministic = 1};
    ModelCapacity cap = {.max_tokens = 100, .max_att = 4L * 64 * 64, .max_prefixes = 3, .max_rows = 6, .row_ctx = 40};
    Model* cpu = model_create_cap(&cfg, model_backend_find("cpu"), &cap, 7);
    Model* gpu = model_create_cap(&cfg, be, &cap, 7);
    EXPECT(!memcmp(cpu->params_memory, gpu->params_memory, cpu->num_params * sizeof(float)), "deterministic init differs");
    same_weights(cpu, gpu, 0.05f, 31);
    Segment segs[PK_SEGS];
    int N = pk_segments(segs);
    int V = cfg.vocab, inputs[100], targets[100];
    float lp_c[100], lp_g[100], dlp[100];
    float *lg_c = malloc(sizeof(float) * N * V), *lg_g = malloc(sizeof(float) * N * V);
    RngStream r = rng_stream(17, 0, 0, RNG_TEST);
    for (int i = 0; i < N; i++) {
        inputs[i] = (int)rng_below(&r, 256);
        targets[i] = (int)rng_below(&r, 258);
        dlp[i] = (float)(rng_double(&r) * 2.0 - 1.0) / N;
    }
    inputs[0] = TOK_BOS;
    targets[3] = TOK_PAD;
    PackedBatch pb = {.n_tokens = N, .inputs = inputs, .targets = targets, .n_segments = PK_SEGS, .segs = segs,
                      .logit_scale = 1.0f / 0.9f};
    AdamWConfig hp = {.lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.1f};
    long d_lp = 0, d_lg = 0, d_gr = 0, d_norm = 0;
    for (int step = 0; step < 5; step++) {
        Model* ms[2] = {cpu, gpu};
        float norms[2];
        for (int k = 0; k < 2; k++) {
            model_zero_grad(ms[k]);
            for (int pass = 0; pass < 2; pass++) { /* two micro-batches: the gradients accumulate */
                model_forward_packed(ms[k], &pb, k ? lp_g : lp_c);
                model_backward(ms[k], dlp);
            }
            ms[k]->backend->get_logits(ms[k], k ? lg_g : lg_c);
            norms[k] = ms[k]->backend->grad_norm(ms[k]);
        }
        gpu->backend->download(gpu);
        d_lp += bit_diffs(lp_c, lp_g, N, "log-probs");
        d_lg += bit_diffs(lg_c, lg_g, (size_t)N * V, "logits");
        d_gr += bit_diffs(cpu->grads_memory, gpu->grads_memory, cpu->num_params, "gradients");
        d_norm += memcmp(&norms[0], &norms[1], sizeof(float)) != 0;
        model_step(cpu, &hp, 0.5f);
        model_step(gpu, &hp, 0.5f);
    }
    gpu->backend->download(gpu);
    long d_p = bit_diffs(cpu->params_memory, gpu->params_memory, cpu->num_params, "parameters");
    long d_m = bit_diffs(cpu->m_memory, gpu->m_memory, cpu->num_params, "first moments");
    long d_v = bit_diffs(cpu->v_memory, gpu->v_memory, cpu->num_params, "second moments");
    printf("deterministic: over 5 steps %ld log-prob, %ld logit, %ld gradient bits differ, %ld norms; after them %ld "
           "parameters, %ld + %ld moments\n", d_lp, d_lg, d_gr, d_norm, d_p, d_m, d_v);
    EXPECT(d_lp == 0 && d_lg == 0, "deterministic forward: %ld log-probs and %ld logits differ from the CPU's bits", d_lp,
           d_lg);
    EXPECT(d_gr == 0 && d_norm == 0, "deterministic backward: %ld gradients and %ld norms differ from the CPU's bits",
           d_gr, d_norm);
    EXPECT(d_p == 0 && d_m == 0 && d_v == 0, "deterministic AdamW: %ld parameters, %ld + %ld moments differ", d_p, d_m,
           d_v);
    /* sampled grouped generation: the decode kernels and the sampler */
    enum { G = 2, L = 3, NEW = 24 };
    int prompts[G * 64], lens[G] = {9, 1}, tok_c[G * L * NEW], tok_g[G * L * NEW], len_c[G * L], len_g[G * L];
    float glp_c[G * L * NEW], glp_g[G * L * NEW];
    for (int i = 0; i < G * 64; i++) prompts[i] = i % 64 == 0 ? TOK_BOS : (int)rng_below(&r, 256);
    GenConfig gc = {.sampler = {.temperature = 0.9f, .top_p = 0.95f}, .max_new_tokens = NEW};
    RngStream g1 = rng_stream(3, 0, 0, RNG_TEST), g2 = rng_stream(3, 0, 0, RNG_TEST);
    memset(glp_c, 0, sizeof glp_c);
    memset(glp_g, 0, sizeof glp_g);
    model_generate_groups_logprobs(cpu, prompts, 64, lens, G, L, &gc, &g1, tok_c, len_c, glp_c);
    model_generate_groups_logprobs(gpu, prompts, 64, lens, G, L, &gc, &g2, tok_g, len_g, glp_g);
    long d_tok = memcmp(len_c, len_g, sizeof len_c) != 0, d_glp = 0;
    for (int b = 0; b < G * L && !d_tok; b++) {
        d_tok += memcmp(tok_c + b * NEW, tok_g + b * NEW, sizeof(int) * len_c[b]) != 0;
        d_glp += bit_diffs(glp_c + b * NEW, glp_g + b * NEW, len_c[b], "generated log-probs");
    }
    printf("deterministic generation: %d rows, %ld differ in tokens, %ld log-probs differ in bits\n", G * L, d_tok, d_glp);
    EXPECT(d_tok == 0 && d_glp == 0, "deterministic generation differs: %ld rows, %ld log-probs", d_tok, d_glp);
    free(lg_c);
    free(lg_g);
    model_free(cpu);
    model_free(gpu);
}

int main(void) {
#ifndef SAPO_TEST_CUDA_EMULATION
#ifndef SAPO_HAVE_CUDA
    printf("skipped: this build has no CUDA backend (configure with -DSAPO_CUDA=ON where nvcc exists)\n");
    return 77;
#endif
#endif
    const ModelBackend* be = gpu_backend_of(0);
    if (!be) {
        printf("skipped: no CUDA device is visible (cudaGetDeviceCount gives none)\n");
        return 77;
    }
    const char* tf32 = getenv("SAPO_CUDA_TF32");
    printf("backend %s, TF32 %s\n", BACKEND_LABEL, tf32 && *tf32 && strcmp(tf32, "0") ? "ON" : "off");
    test_training(be);
    test_generation(be);
    test_packed(be);
    test_generation_groups(be);
    test_deterministic(be);
#ifdef SAPO_TEST_CUDA_EMULATION
    printf("emulated kernel launches: %d\n", cuda_emu_launch_count());
#endif
    return test_finish("gpu parity");
}
