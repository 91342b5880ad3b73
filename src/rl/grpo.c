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
                     long norm, const GrpoConfig* gc, float* dlp, float* kl_out, int* clipped_out) {
    long count = norm;
    if (count <= 0)
        for (int i = 0; i < n; i++) count += targets[i] != TOK_PAD;
    double loss = 0.0, kl_sum = 0.0;
    int clipped = 0;
    float inv = count ? 1.0f / (float)count : 0.0f;
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
    if (kl_out) *kl_out = count ? (float)(kl_sum / (double)count) : 0.0f;
    if (clipped_out) *clipped_out = clipped;
    return (float)(loss * inv + (ref ? gc->kl * kl_sum * inv : 0.0));
}

struct GrpoTrainer {
    Model* policy;
    Model* ref;
    Packer pk;
    float *lp, *reflp, *dlp, *old_mb, *ref_mb; /* (micro-batch tokens) */
    float *old, *ref_all;                      /* (loss tokens of the whole batch), grown on demand */
    long cap_loss;
};

GrpoTrainer* grpo_trainer_create(Model* policy, Model* ref) {
    GrpoTrainer* t = callocCheck(1, sizeof *t);
    t->policy = policy;
    t->ref = ref;
    int cap = policy->cap.max_tokens;
    if (ref && (ref->cap.max_tokens < cap || ref->cap.max_att < policy->cap.max_att))
        sapo_die("GRPO: the reference model's capacity is below the policy's");
    packer_init(&t->pk, policy, 0, 0);
    size_t n = (size_t)t->pk.cap_tokens;
    t->lp = mallocCheck(n * sizeof(float));
    t->reflp = mallocCheck(n * sizeof(float));
    t->dlp = mallocCheck(n * sizeof(float));
    t->old_mb = mallocCheck(n * sizeof(float));
    t->ref_mb = mallocCheck(n * sizeof(float));
    return t;
}

void grpo_trainer_free(GrpoTrainer* t) {
    if (!t) return;
    packer_free(&t->pk);
    free(t->lp);
    free(t->reflp);
    free(t->dlp);
    free(t->old_mb);
    free(t->ref_mb);
    free(t->old);
    free(t->ref_all);
    free(t);
}

/* Copies per-token values of the micro-batch's loss tokens to (to_global) or from the
 * whole-batch arrays indexed by loss token. */
static void scatter_loss_tokens(const Packer* pk, float* global, const float* mb) {
    for (int i = 0; i < pk->pb.n_tokens; i++)
        if (pk->loss_id[i] >= 0) global[pk->loss_id[i]] = mb[i];
}
static void gather_loss_tokens(const Packer* pk, float* mb, const float* global) {
    for (int i = 0; i < pk->pb.n_tokens; i++) mb[i] = pk->loss_id[i] >= 0 ? global[pk->loss_id[i]] : 0.0f;
}

GrpoStats grpo_train(GrpoTrainer* t, const GrpoGroup* groups, int n_groups, const GrpoConfig* gc,
                     const AdamWConfig* hp, float max_norm) {
    GrpoStats st = {0};
    Model* m = t->policy;
    long total = pack_count_loss_tokens(groups, n_groups, m->cfg.n_ctx, 0);
    if (total <= 0) return st;
    st.tokens = (int)total;
    if (total > t->cap_loss) {
        t->cap_loss = total;
        free(t->old);
        free(t->ref_all);
        t->old = mallocCheck((size_t)total * sizeof(float));
        t->ref_all = mallocCheck((size_t)total * sizeof(float));
    }
    int use_ref = gc->kl > 0.0f && t->ref;
    long clipped_total = 0, clip_tokens = 0;
    for (int epoch = 0; epoch < gc->ppo_epochs; epoch++) {
        model_zero_grad(m);
        PackCursor cur = {0};
        while (pack_next(&t->pk, groups, n_groups, &cur)) {
            const PackedBatch* pb = &t->pk.pb;
            model_forward_packed(m, pb, t->lp);
            if (epoch == 0) {
                scatter_loss_tokens(&t->pk, t->old, t->lp); /* the policy that sampled */
                if (use_ref) {
                    model_forward_packed(t->ref, pb, t->reflp);
                    scatter_loss_tokens(&t->pk, t->ref_all, t->reflp);
                }
            } else {
                gather_loss_tokens(&t->pk, t->old_mb, t->old);
            }
            if (use_ref) gather_loss_tokens(&t->pk, t->ref_mb, t->ref_all);
            float kl = 0.0f;
            int clipped = 0;
            float loss = grpo_loss_grad(t->lp, epoch == 0 ? NULL : t->old_mb, use_ref ? t->ref_mb : NULL, pb->targets,
                                        t->pk.weight, pb->n_tokens, total, gc, t->dlp, &kl, &clipped);
            if (epoch == 0) {
                st.loss += loss;
                st.kl += kl;
            } else {
                clipped_total += clipped;
            }
            model_backward(m, t->dlp);
        }
        if (epoch > 0) clip_tokens += total;
        st.grad_norm = model_step(m, hp, max_norm);
    }
    st.clip_fraction = clip_tokens ? (float)clipped_total / (float)clip_tokens : 0.0f;
    return st;
}
