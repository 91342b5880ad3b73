/* GRPO loss, advantages and the training step (see grpo.h). */
#include "rl/grpo.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "rl/sft.h"

int grpo_advantages(const float* rewards, int L, float* adv) {
    double mean = 0.0;
    for (int i = 0; i < L; i++) mean += rewards[i];
    mean /= L;
    double var = 0.0;
    for (int i = 0; i < L; i++) var += (rewards[i] - mean) * (rewards[i] - mean);
    double std = L > 1 ? sqrt(var / (L - 1)) : 0.0;
    int all_equal = 1;
    for (int i = 0; i < L; i++) {
        adv[i] = (float)((rewards[i] - mean) / (std + 1e-8));
        if (rewards[i] != rewards[0]) all_equal = 0;
    }
    if (all_equal)
        for (int i = 0; i < L; i++) adv[i] = 0.0f;
    return all_equal;
}

float grpo_loss_grad(const float* lp, const float* old, const float* ref, const int* targets, const float* adv, int n,
                     const GrpoConfig* gc, float* dlp, float* kl_out, int* clipped_out) {
    int count = 0;
    for (int i = 0; i < n; i++) count += targets[i] != TOK_PAD;
    double loss = 0.0, kl_sum = 0.0;
    int clipped = 0;
    float inv = count ? 1.0f / count : 0.0f;
    for (int i = 0; i < n; i++) {
        dlp[i] = 0.0f;
        if (targets[i] == TOK_PAD) continue;
        float a = adv[i];
        float ratio = old ? expf(lp[i] - old[i]) : 1.0f;
        float lo = 1.0f - gc->eps_low, hi = 1.0f + gc->eps_high;
        float clipped_ratio = ratio < lo ? lo : ratio > hi ? hi : ratio;
        float unclipped = ratio * a, clipped_obj = clipped_ratio * a;
        /* the min picks the clipped branch, whose gradient is 0, when it is strictly lower */
        if (clipped_obj < unclipped) {
            loss -= clipped_obj;
            clipped++;
        } else {
            loss -= unclipped;
            dlp[i] = -a * ratio * inv; /* d(ratio)/d(lp) = ratio */
        }
        if (ref && gc->kl > 0.0f) {
            float d = ref[i] - lp[i];
            float e = expf(d);
            kl_sum += e - d - 1.0f;
            dlp[i] += gc->kl * (1.0f - e) * inv; /* d/d(lp) of exp(ref-lp) - (ref-lp) - 1 */
        }
    }
    if (kl_out) *kl_out = count ? (float)(kl_sum / count) : 0.0f;
    if (clipped_out) *clipped_out = clipped;
    return (float)(loss * inv + (ref ? gc->kl * kl_sum * inv : 0.0));
}

struct GrpoTrainer {
    Model* policy;
    Model* ref;
    int max_rows;
    int *inputs, *targets;
    float *adv, *lp, *old, *reflp, *dlp;
};

GrpoTrainer* grpo_trainer_create(Model* policy, Model* ref, int max_rows) {
    GrpoTrainer* t = callocCheck(1, sizeof *t);
    size_t n = (size_t)max_rows * policy->cfg.n_ctx;
    t->policy = policy;
    t->ref = ref;
    t->max_rows = max_rows;
    t->inputs = mallocCheck(n * sizeof(int));
    t->targets = mallocCheck(n * sizeof(int));
    t->adv = mallocCheck(n * sizeof(float));
    t->lp = mallocCheck(n * sizeof(float));
    t->old = mallocCheck(n * sizeof(float));
    t->reflp = mallocCheck(n * sizeof(float));
    t->dlp = mallocCheck(n * sizeof(float));
    return t;
}

void grpo_trainer_free(GrpoTrainer* t) {
    if (!t) return;
    free(t->inputs);
    free(t->targets);
    free(t->adv);
    free(t->lp);
    free(t->old);
    free(t->reflp);
    free(t->dlp);
    free(t);
}

GrpoStats grpo_train(GrpoTrainer* t, const GrpoSample* samples, int n, const GrpoConfig* gc, const AdamWConfig* hp,
                     float max_norm) {
    GrpoStats st = {0};
    if (n <= 0) return st;
    if (n > t->max_rows) sapo_die("GRPO batch of %d sequences exceeds the trainer's %d", n, t->max_rows);
    Model* m = t->policy;
    /* The shortest T that holds every sequence keeps the batch small. */
    int T = 2;
    for (int i = 0; i < n; i++) {
        int len = 1 + (int)strlen(samples[i].prompt) + (int)strlen(samples[i].completion);
        if (len > T) T = len;
    }
    if (T > m->cfg.n_ctx) T = m->cfg.n_ctx;
    int N = n * T;
    for (int i = 0; i < n; i++) {
        st.tokens += seq_pack(samples[i].prompt, samples[i].completion, 0, T, t->inputs + (size_t)i * T,
                              t->targets + (size_t)i * T);
        for (int j = 0; j < T; j++) t->adv[(size_t)i * T + j] = samples[i].advantage;
    }
    int use_ref = gc->kl > 0.0f && t->ref;
    if (use_ref) model_forward(t->ref, t->inputs, t->targets, n, T, t->reflp);
    int clipped_total = 0, clip_tokens = 0;
    for (int epoch = 0; epoch < gc->ppo_epochs; epoch++) {
        model_zero_grad(m);
        model_forward(m, t->inputs, t->targets, n, T, t->lp);
        if (epoch == 0) memcpy(t->old, t->lp, (size_t)N * sizeof(float)); /* the policy that sampled */
        float kl = 0.0f;
        int clipped = 0;
        float loss = grpo_loss_grad(t->lp, epoch == 0 ? NULL : t->old, use_ref ? t->reflp : NULL, t->targets, t->adv,
                                    N, gc, t->dlp, &kl, &clipped);
        if (epoch == 0) {
            st.loss = loss;
            st.kl = kl;
        } else {
            clipped_total += clipped;
            clip_tokens += st.tokens;
        }
        model_backward(m, t->dlp);
        st.grad_norm = model_step(m, hp, max_norm);
    }
    st.clip_fraction = clip_tokens ? (float)clipped_total / clip_tokens : 0.0f;
    return st;
}
