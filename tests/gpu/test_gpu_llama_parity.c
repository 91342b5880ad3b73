/* Parity of the Llama/Qwen2 family's CUDA backend (kernels/llama_cuda_backend.cu) with its CPU
 * backend (src/model/llama_cpu_backend.c), same weights and batches on both, on tiny random
 * shapes: grouped-query heads (n_head 4 over 2 key/value heads, and over 1), a head_dim that
 * is not d_model / n_head (10, and 34: more channels than a warp's lanes), q/k/v and output
 * biases on and off, the output layer tied and untied, every weight perturbed off its
 * initialisation (norm weights off 1, biases off 0). Each shape, in the default mode and in
 * the deterministic one (model.deterministic):
 *   - a packed batch of 67 tokens (two prompts, each read by completions that are not
 *     adjacent to it, and segments of their own; rows without a target; logit scale 1/0.9):
 *     log-probs (no target: exactly 0), every row's logits;
 *   - the backward: every gradient tensor and the gradient norm, and (default mode) the same
 *     bits from a second forward and backward (no atomics, fixed orders);
 *   - one AdamW step (weight decay, clipping): the parameters, both moments, and the log-probs
 *     after it;
 *   - generation: two prompts prefilled, then 6 decode steps of 4 rows (two reading prompt 0,
 *     one prompt 1, one no prompt; non-contiguous cache rows; a row that stops early): the
 *     logits of every step.
 * Plus a vocabulary large enough (140000) that the head runs in three chunks of rows.
 * Tolerances (fp32, no TF32; the sides differ in summation order and expf against exp_poly):
 * log-probs and logits max |diff| <= 1e-5 x max(1, max |cpu|); each gradient tensor and the
 * norm 2e-5 of the tensor's largest |cpu| (1e-4 with the 140000 logits, whose sums are
 * longer); after the step the moments 1e-5 relative, the parameters 1e-6 (a few ulps) where
 * the clipped gradient is >= 100 eps (nearer 0 Adam's step follows the sign of rounding noise:
 * held to the bound of two steps, 2 lr). Every max difference is printed with its tolerance.
 * The deterministic mode is held to no tolerance: every comparison above is of bits (det_gemm,
 * det_attention.h, llama_math.h with exp_poly, the same order of every sum on both sides).
 * Built twice like test_gpu_parity.c: gpu/test_gpu_llama_parity against the real backend
 * (exit 77, skipped, without a GPU) and unit/test_gpu_llama_parity_emu against the CPU
 * emulation of the same CUDA sources (kernels/emu), which runs everywhere. SAPO_CUDA_TF32=1
 * relaxes nothing: expect failures. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "model/model.h"
#include "model/llama.h"
#include "model/llama_loop.h" /* llama_head_chunk */
#include "../test_assert.h"

#include "gpu_backend.h"

static int g_det; /* the deterministic mode: every comparison is of bits */

/* Gradients, relative to each tensor's largest |cpu| (the emulation measures about a fifth). */
#define GRAD_REL 2e-5

/* GPU against CPU: bits in the deterministic mode, else max |diff| <= rel * max(floor, max
 * |cpu|). Prints the max difference and the tolerance. */
static void check(const char* what, const float* cpu, const float* gpu, size_t n, double rel, double floor) {
    double d = 0.0, scale = 0.0;
    long bits = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)cpu[i] - gpu[i]);
        if (!(e <= d)) d = e; /* NaN wins */
        if (fabs(cpu[i]) > scale) scale = fabs(cpu[i]);
        bits += memcmp(&cpu[i], &gpu[i], sizeof(float)) != 0;
    }
    if (g_det) {
        printf("  %-24s max |diff| %-9.3g (max |cpu| %-8.3g) bits: %ld of %zu differ\n", what, d, scale, bits, n);
        EXPECT(bits == 0, "%s: %ld of %zu values differ from the CPU's bits in the deterministic mode (max |diff| "
               "%.3g)", what, bits, n, d);
        return;
    }
    double tol = rel * (scale > floor ? scale : floor);
    printf("  %-24s max |diff| %-9.3g (max |cpu| %-8.3g) tolerance %.3g\n", what, d, scale, tol);
    EXPECT(d <= tol, "%s: max |diff| %.3g above the tolerance %.3g", what, d, tol);
}

static ModelShape shape(int bias, int tied, int n_kv_head, int head_dim) {
    ModelShape c = {.family = MODEL_FAMILY_LLAMA, .n_layer = 2, .n_head = 4, .n_kv_head = n_kv_head,
                   .head_dim = head_dim, .d_model = 36, .d_ff = 44, .n_ctx = 40, .vocab = 83,
                   .rope_theta = 10000.0f, .norm_eps = 1e-5f, .qkv_bias = bias, .o_bias = bias, .tied = tied,
                   .deterministic = g_det};
    return c;
}

/* The packed batch, in batch order: prompt A (12 tokens), prompt B (9), then completions of A
 * and B interleaved with segments of their own: 67 tokens, more than one row chunk (64) of the
 * norms' weight gradients. */
enum { PK_SEGS = 8, PK_N = 67 };
static const int PK_LEN[PK_SEGS] = {12, 9, 8, 10, 14, 7, 1, 6};
static const int PK_PREFIX[PK_SEGS] = {-1, -1, 0, 1, 0, -1, 1, 0};
static Segment g_segs[PK_SEGS];
static int g_inputs[PK_N], g_targets[PK_N];
static float g_dlp[PK_N];

static void make_batch(int V, uint64_t seed) {
    RngStream r = rng_stream(seed, 0, 0, RNG_TEST);
    int N = 0;
    for (int k = 0; k < PK_SEGS; k++) {
        g_segs[k] = (Segment){.start = N, .len = PK_LEN[k], .prefix = PK_PREFIX[k]};
        N += PK_LEN[k];
    }
    for (int i = 0; i < N; i++) {
        g_inputs[i] = (int)rng_below(&r, V);
        g_targets[i] = i % 7 == 3 ? -1 : (int)rng_below(&r, V); /* some rows without a target */
        g_dlp[i] = (float)(rng_double(&r) * 2.0 - 1.0) / N;
    }
    g_targets[PK_LEN[0] - 1] = -1; /* a prompt's last token predicts nothing */
}

static ModelCapacity capacity(const ModelShape* c) {
    /* above the batch on every axis: strides must come from the batch, not the capacity */
    ModelCapacity cap = {.max_tokens = 80, .max_att = (long)c->n_head * 80 * c->n_ctx, .max_prefixes = 3,
                         .max_rows = 6, .row_ctx = 12};
    return cap;
}

/* The same perturbed weights on both. */
static void same_weights(Model* cpu, Model* gpu, uint64_t seed) {
    RngStream r = rng_stream(seed, 1, 0, RNG_TEST);
    for (size_t i = 0; i < cpu->num_params; i++) cpu->params_memory[i] += 0.25f * rng_normal(&r);
    cpu->backend->upload(cpu);
    memcpy(gpu->params_memory, cpu->params_memory, cpu->num_params * sizeof(float));
    gpu->backend->upload(gpu);
}

static void forward_both(Model* cpu, Model* gpu, float scale, float* lp_c, float* lp_g) {
    PackedBatch pb = {.n_tokens = PK_N, .inputs = g_inputs, .targets = g_targets, .n_segments = PK_SEGS,
                      .segs = g_segs, .logit_scale = scale};
    model_forward_packed(cpu, &pb, lp_c);
    model_forward_packed(gpu, &pb, lp_g);
}

/* Every gradient tensor (each reached: non-zero on the CPU) and the norm, within rel of the
 * tensor's largest |cpu|. */
static void compare_gradients(Model* cpu, Model* gpu, double rel) {
    float norm_c = cpu->backend->grad_norm(cpu), norm_g = gpu->backend->grad_norm(gpu);
    gpu->backend->download(gpu);
    size_t off = 0;
    for (int t = 0; t < cpu->n_tensors; t++) {
        size_t n = cpu->tensor_sizes[t];
        if (n) {
            char what[64];
            snprintf(what, sizeof what, "grad %s", LLAMA_TENSOR_NAMES[t]);
            check(what, cpu->grads_memory + off, gpu->grads_memory + off, n, rel, 0.0);
            double mx = 0.0;
            for (size_t i = 0; i < n; i++) mx = fmax(mx, fabs(cpu->grads_memory[off + i]));
            EXPECT(mx > 0.0, "gradient %s is all zero on the CPU: the test does not reach it", LLAMA_TENSOR_NAMES[t]);
        }
        off += n;
    }
    check("grad norm", &norm_c, &norm_g, 1, rel, 0.0);
}

/* The parameters after one AdamW step, whose gradients were multiplied by grad_scale (the
 * clipping). Adam's first step moves a parameter by lr g / (|g| + eps): where |g| is >= 100 eps
 * it hardly depends on g, and both sides must agree to a few ulps of the weights (1e-6);
 * nearer 0 it is the sign of the gradients' rounding noise, held to the bound of two steps. */
static void compare_step(Model* cpu, Model* gpu, const AdamWConfig* hp, float grad_scale) {
    gpu->backend->download(gpu);
    size_t n = cpu->num_params;
    check("Adam first moment", cpu->m_memory, gpu->m_memory, n, 1e-5, 0.0);
    check("Adam second moment", cpu->v_memory, gpu->v_memory, n, 1e-5, 0.0);
    if (g_det) {
        check("params after the step", cpu->params_memory, gpu->params_memory, n, 0.0, 0.0);
        return;
    }
    double d = 0.0, d_noise = 0.0;
    long n_noise = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)cpu->params_memory[i] - gpu->params_memory[i]);
        if (!(fabs(cpu->grads_memory[i] * grad_scale) < 100.0 * hp->eps)) {
            if (!(e <= d)) d = e;
        } else {
            n_noise++;
            if (e > d_noise) d_noise = e;
        }
    }
    printf("  %-24s max |diff| %-9.3g tolerance 1e-6 where |scaled grad| >= 100 eps; the %ld elements below differ by "
           "up to %.3g (tolerance 2 lr = %.3g)\n", "params after the step", d, n_noise, d_noise, 2.0 * hp->lr);
    EXPECT(d <= 1e-6, "parameters after one AdamW step differ by up to %.3g (tolerance 1e-6)", d);
    EXPECT(d_noise <= 2.0 * hp->lr, "near-zero-gradient parameters differ by %.3g, more than two steps can", d_noise);
}

static void test_training(Model* cpu, Model* gpu, float scale) {
    int V = cpu->cfg.vocab;
    float lp_c[PK_N], lp_g[PK_N], lp_first[PK_N];
    float *lg_c = malloc(sizeof(float) * PK_N * V), *lg_g = malloc(sizeof(float) * PK_N * V);
    model_zero_grad(cpu);
    model_zero_grad(gpu);
    forward_both(cpu, gpu, scale, lp_c, lp_g);
    check("log-probs", lp_c, lp_g, PK_N, 1e-5, 1.0);
    int none_ok = 1;
    for (int i = 0; i < PK_N; i++) none_ok &= g_targets[i] >= 0 || lp_g[i] == 0.0f;
    EXPECT(none_ok, "a row without a target got a non-zero log-prob on the GPU");
    cpu->backend->get_logits(cpu, lg_c);
    gpu->backend->get_logits(gpu, lg_g);
    check("logits", lg_c, lg_g, (size_t)PK_N * V, 1e-5, 1.0);
    model_backward(cpu, g_dlp);
    model_backward(gpu, g_dlp);
    compare_gradients(cpu, gpu, GRAD_REL);

    if (!g_det) { /* the GPU repeats itself bit for bit */
        float* grads_first = malloc(sizeof(float) * gpu->num_params);
        memcpy(grads_first, gpu->grads_memory, sizeof(float) * gpu->num_params);
        memcpy(lp_first, lp_g, sizeof lp_first);
        model_zero_grad(gpu);
        PackedBatch pb = {.n_tokens = PK_N, .inputs = g_inputs, .targets = g_targets, .n_segments = PK_SEGS,
                          .segs = g_segs, .logit_scale = scale};
        model_forward_packed(gpu, &pb, lp_g);
        model_backward(gpu, g_dlp);
        gpu->backend->download(gpu);
        EXPECT(!memcmp(lp_first, lp_g, sizeof lp_first), "a second forward gave other log-prob bits");
        EXPECT(!memcmp(grads_first, gpu->grads_memory, sizeof(float) * gpu->num_params),
               "a second backward gave other gradient bits");
        printf("  %-24s %s\n", "repeat", "same bits");
        free(grads_first);
    }

    AdamWConfig hp = {.lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.01f};
    const float max_norm = 1.0f;
    float norm_c = model_step(cpu, &hp, max_norm), norm_g = model_step(gpu, &hp, max_norm); /* clipped */
    EXPECT(norm_c > max_norm, "the step was meant to clip (norm %g)", norm_c);
    check("norm at the step", &norm_c, &norm_g, 1, GRAD_REL, 0.0);
    compare_step(cpu, gpu, &hp, max_norm / norm_c);
    forward_both(cpu, gpu, scale, lp_c, lp_g);
    check("log-probs after the step", lp_c, lp_g, PK_N, 1e-5, 1.0);
    free(lg_c);
    free(lg_g);
}

/* Prefill prompts of 7 and 5 tokens into slots 0 and 1, then decode 6 steps: row 0 (cache row
 * 3) and row 1 (cache row 0) read prompt 0, row 2 (cache row 4) prompt 1, row 3 (cache row 1)
 * none; row 1 stops after 3 steps, so rows 0 and 2 are no longer adjacent. */
static void test_generation(Model* cpu, Model* gpu) {
    enum { P0 = 7, P1 = 5, STEPS = 6, ROWS = 4 };
    int V = cpu->cfg.vocab, prompt[P0 + P1], tg[P0 + P1];
    RngStream r = rng_stream(77, 0, 0, RNG_TEST);
    for (int i = 0; i < P0 + P1; i++) {
        prompt[i] = (int)rng_below(&r, V);
        tg[i] = -1;
    }
    Segment segs[2] = {{0, P0, -1}, {P0, P1, -1}};
    PackedBatch pb = {.n_tokens = P0 + P1, .inputs = prompt, .targets = tg, .n_segments = 2, .segs = segs};
    cpu->backend->prefill(cpu, &pb);
    gpu->backend->prefill(gpu, &pb);
    const int cache_row[ROWS] = {3, 0, 4, 1}, slot[ROWS] = {0, 0, 1, 0}, plen[ROWS] = {P0, P0, P1, 0};
    float *lg_c = malloc(sizeof(float) * ROWS * V), *lg_g = malloc(sizeof(float) * ROWS * V);
    float *all_c = malloc(sizeof(float) * STEPS * ROWS * V), *all_g = malloc(sizeof(float) * STEPS * ROWS * V);
    size_t n_all = 0;
    for (int t = 0; t < STEPS; t++) {
        int rows[ROWS], pfx[ROWS], pl[ROWS], tok[ROWS], pos[ROWS], n = 0;
        for (int i = 0; i < ROWS; i++) {
            if (i == 1 && t >= 3) continue;
            rows[n] = cache_row[i];
            pfx[n] = slot[i];
            pl[n] = plen[i];
            tok[n] = (int)rng_below(&r, V);
            pos[n] = plen[i] + t;
            n++;
        }
        DecodeStep d = {.n = n, .rows = rows, .prefix = pfx, .prefix_len = pl, .tokens = tok, .pos = pos};
        cpu->backend->decode(cpu, &d, lg_c);
        gpu->backend->decode(gpu, &d, lg_g);
        memcpy(all_c + n_all, lg_c, sizeof(float) * n * V);
        memcpy(all_g + n_all, lg_g, sizeof(float) * n * V);
        n_all += (size_t)n * V;
    }
    check("decode logits", all_c, all_g, n_all, 1e-5, 1.0);
    free(lg_c);
    free(lg_g);
    free(all_c);
    free(all_g);
}

static void run_shape(const ModelBackend* gpu_be, int bias, int tied, int n_kv_head, int head_dim, float scale,
                      uint64_t seed) {
    ModelShape c = shape(bias, tied, n_kv_head, head_dim);
    ModelCapacity cap = capacity(&c);
    printf("%s mode: %d of %d key/value heads, head_dim %d (d_model %d), biases %s, output %s, logit scale %g\n",
           g_det ? "deterministic" : "default", c.n_kv_head, c.n_head, c.head_dim, c.d_model, bias ? "on" : "off",
           tied ? "tied" : "untied", scale > 0.0f ? scale : 1.0f);
    Model* cpu = model_create_cap(&c, model_backend_find("cpu"), &cap, seed);
    Model* gpu = model_create_cap(&c, gpu_be, &cap, seed);
    EXPECT(!strcmp(gpu->backend->name, "cuda") && gpu->backend->family == MODEL_FAMILY_LLAMA,
           "the model runs on %s, not the llama family's cuda backend", gpu->backend->name);
    make_batch(c.vocab, seed + 1);
    same_weights(cpu, gpu, seed + 2);
    test_training(cpu, gpu, scale);
    test_generation(cpu, gpu);
    model_free(cpu);
    model_free(gpu);
}

/* A vocabulary whose (chunk, V) head buffers hold fewer rows than the batch has (llama_head_chunk:
 * 29 rows of 140000): the gathers, log-probs and scatters of three chunks. */
static void test_head_chunks(const ModelBackend* gpu_be) {
    ModelShape c = {.family = MODEL_FAMILY_LLAMA, .n_layer = 1, .n_head = 2, .n_kv_head = 1, .head_dim = 4,
                   .d_model = 8, .d_ff = 8, .n_ctx = 40, .vocab = 140000, .rope_theta = 10000.0f,
                   .norm_eps = 1e-6f, .tied = 0, .deterministic = g_det};
    ModelCapacity cap = capacity(&c);
    printf("%s mode: vocabulary %d, the head in chunks of %d rows\n", g_det ? "deterministic" : "default", c.vocab,
           llama_head_chunk(&c, cap.max_tokens));
    Model* cpu = model_create_cap(&c, model_backend_find("cpu"), &cap, 5);
    Model* gpu = model_create_cap(&c, gpu_be, &cap, 5);
    make_batch(c.vocab, 6);
    same_weights(cpu, gpu, 7);
    float lp_c[PK_N], lp_g[PK_N];
    model_zero_grad(cpu);
    model_zero_grad(gpu);
    forward_both(cpu, gpu, 0.0f, lp_c, lp_g);
    check("log-probs", lp_c, lp_g, PK_N, 1e-5, 1.0);
    model_backward(cpu, g_dlp);
    model_backward(gpu, g_dlp);
    compare_gradients(cpu, gpu, 1e-4); /* d(lnf) sums over 140000 logits a row */
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
    const ModelBackend* be = gpu_backend_of(1);
    if (!be) {
        printf("skipped: no CUDA device is visible (cudaGetDeviceCount gives none)\n");
        return 77;
    }
    const char* tf32 = getenv("SAPO_CUDA_TF32");
    printf("backend %s, TF32 %s\n", BACKEND_LABEL, tf32 && *tf32 && strcmp(tf32, "0") ? "ON" : "off");
    for (g_det = 0; g_det <= 1; g_det++) {
        run_shape(be, 1, 0, 2, 10, 1.0f / 0.9f, 11);
        run_shape(be, 0, 1, 1, 34, 0.0f, 21);
        test_head_chunks(be);
    }
#ifdef SAPO_TEST_CUDA_EMULATION
    printf("emulated kernel launches: %d\n", cuda_emu_launch_count());
#endif
    return test_finish("gpu llama parity");
}
