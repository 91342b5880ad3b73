/* The deterministic mode (model.deterministic): its arithmetic and its promises.
 *  - log_det and pow_det against double-precision libm; det_gemm bit for bit equal to the
 *    one-chain-per-element definition of det_matmul.h for every transpose, alpha, beta and
 *    shapes that exercise its edge blocks and k blocking;
 *  - the deterministic model agrees with the default one (log-probs and every gradient of a
 *    packed batch with shared prompts, within float tolerance: it is the same model);
 *  - KV-cache generation's log-probs equal the training forward's recomputation bit for bit
 *    (temperature, and top-p through sampler_logprob_of); the default mode's difference is
 *    printed, not asserted;
 *  - a golden digest: a fixed tiny model trained 3 AdamW steps (generation included) must give
 *    these exact bits on any machine, build (-march=x86-64-v2 or v3), OpenBLAS core type or
 *    thread count: the digest below was recorded once and is compared everywhere. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/fnv1a.h"
#include "core/rng.h"
#include "model/det_math.h"
#include "model/det_matmul.h"
#include "model/generate.h"
#include "model/model.h"
#include "model/recompute.h"
#include "model/tokenizer.h"
#include "rl/pack.h"
#include "../test_assert.h"

/* The digest of golden_run(); see the header. Recorded on an AMD EPYC (AVX-512) with
 * -march=x86-64-v3; a change here means the deterministic numerics changed. */
#define GOLDEN_DIGEST 0xea40e5902185bc7cull

static void test_log_pow(void) {
    double worst = 0.0, at = 0.0;
    for (int i = 0; i <= 400000; i++) {
        float x = exp2f(-140.0f + 268.0f * (float)i / 400000.0f); /* subnormals to 2^128 */
        double want = log((double)x), got = log_det(x);
        double ulp = fmax(fabs(want), 1e-30) * FLT_EPSILON;
        double e = fabs(got - want) / (fabs(want) < 1e-3 ? FLT_EPSILON * 1e-3 : ulp);
        if (e > worst) {
            worst = e;
            at = x;
        }
    }
    printf("log_det: worst error %.2f ulp at x = %g\n", worst, at);
    EXPECT(worst <= 2.0, "log_det error %.2f ulp at %g", worst, at);
    EXPECT(log_det(1.0f) == 0.0f && log_det(0.0f) == -INFINITY && isnan(log_det(-1.0f)), "log_det special values");
    for (long n = 0; n < 20000; n += 97) {
        double want = pow(0.999, (double)n), got = pow_det(0.999f, n);
        double wantf = pow((double)0.999f, (double)n);
        EXPECT(fabs(got - wantf) <= 1e-6 * wantf + 1e-30, "pow_det(0.999, %ld) = %.9g, want %.9g (%.9g)", n, got, wantf, want);
    }
}

static void ref_gemm(int ta, int tb, int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                     float beta, float* C, int ldc) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float acc = 0.0f;
            for (int k = 0; k < K; k++)
                acc = fmaf(ta ? A[(size_t)k * lda + i] : A[(size_t)i * lda + k],
                           tb ? B[(size_t)j * ldb + k] : B[(size_t)k * ldb + j], acc);
            float r = alpha * acc;
            C[(size_t)i * ldc + j] = beta != 0.0f ? C[(size_t)i * ldc + j] + r : r;
        }
}

static void test_gemm(void) {
    RngStream rng = rng_stream(3, 0, 0, RNG_TEST);
    int bad = 0;
    for (int trial = 0; trial < 60; trial++) {
        int M = 1 + (int)rng_below(&rng, 40), N = 1 + (int)rng_below(&rng, 300);
        int K = (int)rng_below(&rng, trial < 40 ? 80 : 700);
        int ta = trial & 1, tb = (trial >> 1) & 1;
        float alpha = trial % 3 ? 1.0f : 0.37f, beta = (float)((trial >> 2) & 1);
        int lda = (ta ? M : K) + 3, ldb = (tb ? K : N) + 1, ldc = N + 2;
        size_t na = (size_t)lda * (ta ? K : M) + 1, nb = (size_t)ldb * (tb ? N : K) + 1, nc = (size_t)ldc * M;
        float *A = malloc(na * 4), *B = malloc(nb * 4), *C1 = malloc(nc * 4), *C2 = malloc(nc * 4);
        for (size_t i = 0; i < na; i++) A[i] = rng_normal(&rng);
        for (size_t i = 0; i < nb; i++) B[i] = rng_normal(&rng);
        for (size_t i = 0; i < nc; i++) C1[i] = C2[i] = rng_normal(&rng);
        det_gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C1, ldc);
        ref_gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C2, ldc);
        if (memcmp(C1, C2, nc * 4)) {
            bad++;
            printf("det_gemm differs from its definition: M %d N %d K %d ta %d tb %d\n", M, N, K, ta, tb);
        }
        free(A);
        free(B);
        free(C1);
        free(C2);
    }
    EXPECT(bad == 0, "%d of 60 products differ from the one-chain definition", bad);
}

static const ModelShape SHAPE = {.n_layer = 2, .n_head = 4, .d_model = 32, .n_ctx = 64, .vocab = GPT_VOCAB};
static const char* PROMPTS[2] = {"What is 12+30?\n", "A longer question, with some words in it?\n"};
static const char* CA[3] = {"<answer>42</answer>", "4", "<answer>41"};
static const char* CB[2] = {"x", "<answer>no</answer>"};
static const float WA[3] = {1.2f, -0.3f, -0.9f}, WB[2] = {0.7f, -0.7f};

static Model* make(int det, uint64_t seed) {
    ModelShape c = SHAPE;
    c.deterministic = det;
    ModelCapacity cap = model_capacity_dense(&c, 8);
    return model_create_cap(&c, model_backend_find("cpu"), &cap, seed);
}

/* One GRPO-like backward over the two groups packed with shared prompts; log-probs into lp. */
static int packed_step(Model* m, float* lp, float scale) {
    TrainGroup g[2] = {{.prompt = PROMPTS[0], .n = 3, .completions = CA, .weights = WA},
                       {.prompt = PROMPTS[1], .n = 2, .completions = CB, .weights = WB}};
    Packer pk;
    packer_init(&pk, m, 0, 0);
    pk.logit_scale = scale;
    PackCursor cur = {0};
    int n = 0;
    model_zero_grad(m);
    while (pack_next(&pk, g, 2, &cur)) {
        float* d = malloc((size_t)pk.pb.n_tokens * sizeof(float));
        model_forward_packed(m, &pk.pb, lp + n);
        for (int i = 0; i < pk.pb.n_tokens; i++) d[i] = pk.pb.targets[i] == TOK_PAD ? 0.0f : -pk.weight[i] / 40.0f;
        model_backward(m, d);
        n += pk.pb.n_tokens;
        free(d);
    }
    packer_free(&pk);
    return n;
}

static void test_agrees_with_default(void) {
    Model *a = make(0, 7), *b = make(1, 7);
    memcpy(b->params_memory, a->params_memory, a->num_params * sizeof(float));
    float lpa[512], lpb[512];
    int n = packed_step(a, lpa, 1.25f);
    EXPECT(packed_step(b, lpb, 1.25f) == n, "same packing");
    double dl = 0, dg = 0, gs = 0;
    for (int i = 0; i < n; i++) dl = fmax(dl, fabs((double)lpa[i] - lpb[i]));
    for (size_t i = 0; i < a->num_params; i++) {
        dg = fmax(dg, fabs((double)a->grads_memory[i] - b->grads_memory[i]));
        gs = fmax(gs, fabs(a->grads_memory[i]));
    }
    printf("deterministic vs default: log-probs within %.2e, gradients within %.2e (scale %.2e)\n", dl, dg, gs);
    EXPECT(dl < 2e-5, "log-probs differ by %.3e", dl);
    EXPECT(dg < 1e-4 * gs, "gradients differ by %.3e of %.3e", dg, gs);
    model_free(a);
    model_free(b);
}

/* Generation's log-probs vs the forward's recomputation; returns the largest difference and
 * counts tokens whose bits differ. */
static double decode_vs_forward(int det, float temperature, float top_p, int* differ, int* total, int* fwd_differ) {
    Model* m = make(det, 11);
    RngStream r = rng_stream(5, 0, 0, RNG_TEST);
    for (size_t i = 0; i < m->num_params; i++) m->params_memory[i] += 0.05f * rng_normal(&r);
    enum { G = 2, L = 3, MAXNEW = 24 };
    int prompts[G * 64], plens[G], toks[G * L * MAXNEW], lens[G * L];
    float lps[G * L * MAXNEW];
    for (int g = 0; g < G; g++) plens[g] = tok_encode_prompt(PROMPTS[g], prompts + g * 64, 64 - MAXNEW);
    GenConfig gc = {.sampler = {.temperature = temperature, .top_p = top_p}, .max_new_tokens = MAXNEW};
    RngStream rng = rng_stream(9, 0, 0, RNG_TEST);
    model_generate_groups_logprobs(m, prompts, 64, plens, G, L, &gc, &rng, toks, lens, lps);
    float* logits = malloc((size_t)64 * GPT_VOCAB * sizeof(float));
    float scratch[3 * GPT_VOCAB], re[MAXNEW], flp[MAXNEW];
    double worst = 0.0;
    *differ = *total = *fwd_differ = 0;
    for (int row = 0; row < G * L; row++) {
        int g = row / L;
        EXPECT(recompute_logprobs(m, &gc.sampler, prompts + g * 64, plens[g], toks + row * MAXNEW, lens[row], re, flp,
                                  logits, scratch) == 0, "recompute fits");
        for (int i = 0; i < lens[row]; i++) {
            float claimed = lps[row * MAXNEW + i];
            worst = fmax(worst, fabs((double)claimed - re[i]));
            *differ += memcmp(&claimed, &re[i], sizeof claimed) != 0;
            *fwd_differ += memcmp(&claimed, &flp[i], sizeof claimed) != 0;
            (*total)++;
        }
    }
    free(logits);
    model_free(m);
    return worst;
}

static void test_decode_equals_forward(void) {
    float temps[2] = {1.0f, 0.7f}, tops[2] = {1.0f, 0.9f};
    for (int k = 0; k < 2; k++) {
        int differ, total, fwd;
        double w = decode_vs_forward(1, temps[k], tops[k], &differ, &total, &fwd);
        printf("deterministic, T %.1f top-p %.1f: %d of %d generated log-probs differ from the recomputation (max %.2e); "
               "%d from the training forward's\n", temps[k], tops[k], differ, total, w, fwd);
        EXPECT(differ == 0 && total > 20, "the deterministic decode and forward disagree on %d of %d tokens", differ, total);
        if (tops[k] >= 1.0f) EXPECT(fwd == 0, "the training forward's log-probs differ from the sampler's on %d tokens", fwd);
        w = decode_vs_forward(0, temps[k], tops[k], &differ, &total, &fwd);
        printf("default,       T %.1f top-p %.1f: %d of %d generated log-probs differ from the recomputation (max %.2e); "
               "%d from the training forward's\n", temps[k], tops[k], differ, total, w, fwd);
    }
}

/* A fixed tiny model from the deterministic init: generation, then 3 AdamW steps with
 * clipping; digest over the weights, both moments, the log-probs and the sampled tokens. */
static uint64_t golden_run(void) {
    ModelShape c = {.n_layer = 2, .n_head = 2, .d_model = 16, .n_ctx = 48, .vocab = GPT_VOCAB, .deterministic = 1};
    ModelCapacity cap = model_capacity_dense(&c, 8);
    Model* m = model_create_cap(&c, model_backend_find("cpu"), &cap, 2024);
    uint64_t h = FNV1A_OFFSET;
    int prompt[48], plen = tok_encode_prompt(PROMPTS[0], prompt, 32), toks[4 * 16], lens[4];
    float lps[4 * 16];
    GenConfig gc = {.sampler = {.temperature = 0.8f, .top_p = 0.95f}, .max_new_tokens = 16};
    RngStream rng = rng_stream(1, 2, 3, RNG_TEST);
    model_generate_groups_logprobs(m, prompt, 48, &plen, 1, 4, &gc, &rng, toks, lens, lps);
    h = fnv1a_update(h, toks, sizeof toks);
    h = fnv1a_update(h, lens, sizeof lens);
    h = fnv1a_update(h, lps, sizeof lps);
    AdamWConfig hp = {.lr = 3e-3f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.01f};
    float lp[512];
    for (int step = 0; step < 3; step++) {
        int n = packed_step(m, lp, 1.0f / 0.8f);
        h = fnv1a_update(h, lp, (size_t)n * sizeof(float));
        float norm = model_step(m, &hp, 0.5f);
        h = fnv1a_update(h, &norm, sizeof norm);
    }
    h = fnv1a_update(h, m->params_memory, m->num_params * sizeof(float));
    h = fnv1a_update(h, m->m_memory, m->num_params * sizeof(float));
    h = fnv1a_update(h, m->v_memory, m->num_params * sizeof(float));
    model_free(m);
    return h;
}

int main(void) {
    test_log_pow();
    test_gemm();
    test_agrees_with_default();
    test_decode_equals_forward();
    uint64_t d = golden_run();
    printf("golden digest %016llx (recorded %016llx)\n", (unsigned long long)d, (unsigned long long)GOLDEN_DIGEST);
    EXPECT(d == golden_run(), "the deterministic run does not repeat in one process");
    EXPECT(d == GOLDEN_DIGEST, "the deterministic numerics changed: digest %016llx, recorded %016llx",
           (unsigned long long)d, (unsigned long long)GOLDEN_DIGEST);
    return test_finish("model deterministic");
}
