/* GRPO loss, advantages and the training step (see grpo.h). */
#include "rl/grpo.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "model/det_math.h"
#include "rl/sft.h"

/* e^x: libm's expf, or exp_poly in the deterministic mode (the same bits on every CPU). */
static inline float grpo_exp(const GrpoConfig* gc, float x) { return gc->deterministic ? exp_poly(x) : expf(x); }

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

float grpo_loss_grad(const GrpoTokens* tk, const GrpoConfig* gc, float* dlp, GrpoLossStats* st) {
    long count = tk->norm;
    if (count <= 0)
        for (int i = 0; i < tk->n; i++) count += tk->targets[i] != tk->none;
    double loss = 0.0, kl_sum = 0.0, is_sum = 0.0;
    int clipped = 0, is_tokens = 0, is_capped = 0;
    float inv = count ? 1.0f / (float)count : 0.0f;
    float lo = 1.0f - gc->eps_low, hi = 1.0f + gc->eps_high;
    for (int i = 0; i < tk->n; i++) {
        dlp[i] = 0.0f;
        if (tk->targets[i] == tk->none) continue;
        float a = tk->adv[i], lp = tk->lp[i];
        float ratio = tk->old ? grpo_exp(gc, lp - tk->old[i]) : 1.0f;
        float w = 1.0f;
        if (gc->tis_cap > 0.0f && tk->behaviour && !isnan(tk->behaviour[i])) {
            float prox = tk->old ? tk->old[i] : lp;
            w = grpo_exp(gc, prox - tk->behaviour[i]);
            if (!(w < gc->tis_cap)) { /* a lying mu (or +inf) is bounded here */
                w = gc->tis_cap;
                is_capped++;
            }
            is_sum += w;
            is_tokens++;
        }
        float clipped_ratio = ratio < lo ? lo : ratio > hi ? hi : ratio;
        float unclipped = ratio * a, clipped_obj = clipped_ratio * a;
        /* the min picks the clipped branch, whose gradient is 0, when it is strictly lower */
        if (clipped_obj < unclipped) {
            loss -= w * clipped_obj;
            clipped++;
        } else {
            loss -= w * unclipped;
            dlp[i] = -w * a * ratio * inv; /* d(ratio)/d(lp) = ratio */
        }
        if (tk->ref && gc->kl > 0.0f) {
            float d = tk->ref[i] - lp;
            float e = grpo_exp(gc, d);
            kl_sum += e - d - 1.0f;
            dlp[i] += gc->kl * (1.0f - e) * inv; /* d/d(lp) of exp(ref-lp) - (ref-lp) - 1 */
        }
    }
    if (st) {
        st->kl = count ? (float)(kl_sum / (double)count) : 0.0f;
        st->clipped = clipped;
        st->is_weight_sum = is_sum;
        st->is_tokens = is_tokens;
        st->is_capped = is_capped;
    }
    return (float)(loss * inv + (tk->ref ? gc->kl * kl_sum * inv : 0.0));
}

int grpo_ftis_filter(const Packer* pk, const float* prox, const GrpoConfig* gc, float* adv, int* considered) {
    const PackedBatch* pb = &pk->pb;
    memcpy(adv, pk->weight, (size_t)pb->n_tokens * sizeof(float));
    int dropped = 0;
    *considered = 0;
    for (int s = 0; s < pb->n_segments; s++) {
        const Segment* sg = &pb->segs[s];
        if (pk->loss_id[sg->start] < 0) continue; /* a prompt */
        double k3 = 0.0;
        int n = 0;
        for (int i = sg->start; i < sg->start + sg->len; i++) {
            if (isnan(pk->behaviour[i])) continue;
            float d = prox[i] - pk->behaviour[i]; /* log rho */
            k3 += (double)grpo_exp(gc, d) - 1.0 - d;
            n++;
        }
        if (n == 0) continue; /* self-sampled, or no behaviour log-probs sent */
        (*considered)++;
        /* a completion's weight is the same at each of its tokens; +inf (a lying mu) drops too */
        if (pk->weight[sg->start] < 0.0f && !(k3 / n <= gc->ftis_kl)) {
            for (int i = sg->start; i < sg->start + sg->len; i++) adv[i] = 0.0f;
            dropped++;
        }
    }
    return dropped;
}

struct GrpoTrainer {
    Model* policy;
    Model* ref;
    Packer pk;
    float *lp, *reflp, *dlp, *old_mb, *ref_mb, *adv_mb; /* (micro-batch tokens) */
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
    t->adv_mb = mallocCheck(n * sizeof(float));
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
    free(t->adv_mb);
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

GrpoStats grpo_train(GrpoTrainer* t, const GrpoGroup* groups, int n_groups, const GrpoConfig* gc_in,
                     const AdamWConfig* hp, float max_norm, long steps_before) {
    GrpoStats st = {0};
    st.is_weight = st.is_capped = st.ftis_dropped = NAN; /* no importance-weighted token (yet) */
    Model* m = t->policy;
    GrpoConfig gcd = *gc_in;
    gcd.deterministic = gcd.deterministic || m->cfg.deterministic;
    const GrpoConfig* gc = &gcd;
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
    long clipped_total = 0, clip_tokens = 0, is_tokens = 0, is_capped = 0, ftis_seen = 0, ftis_dropped = 0;
    double is_sum = 0.0;
    t->pk.logit_scale = gc->logit_scale > 0.0f ? gc->logit_scale : 1.0f;
    for (int epoch = 0; epoch < gc->ppo_epochs; epoch++) {
        AdamWConfig step_hp = *hp;
        long step = steps_before + epoch;
        if (gc->warmup_steps > 0 && step < gc->warmup_steps) step_hp.lr = hp->lr * (float)(step + 1) / (float)gc->warmup_steps;
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
            const float* adv = t->pk.weight;
            if (gc->ftis_kl > 0.0f) { /* decided on the start-of-step policy: the same in every epoch */
                int seen, dropped = grpo_ftis_filter(&t->pk, epoch == 0 ? t->lp : t->old_mb, gc, t->adv_mb, &seen);
                if (epoch == 0) {
                    ftis_seen += seen;
                    ftis_dropped += dropped;
                }
                adv = t->adv_mb;
            }
            GrpoTokens tk = {.lp = t->lp, .old = epoch == 0 ? NULL : t->old_mb, .ref = use_ref ? t->ref_mb : NULL,
                             .behaviour = t->pk.behaviour, .targets = pb->targets, .none = t->pk.roles.none,
                             .adv = adv,
                             .n = pb->n_tokens, .norm = total};
            GrpoLossStats ls;
            float loss = grpo_loss_grad(&tk, gc, t->dlp, &ls);
            if (epoch == 0) {
                st.loss += loss;
                st.kl += ls.kl;
                is_sum += ls.is_weight_sum;
                is_tokens += ls.is_tokens;
                is_capped += ls.is_capped;
            } else {
                clipped_total += ls.clipped;
            }
            model_backward(m, t->dlp);
        }
        if (epoch > 0) clip_tokens += total;
        st.grad_norm = model_step(m, &step_hp, max_norm);
    }
    st.clip_fraction = clip_tokens ? (float)clipped_total / (float)clip_tokens : 0.0f;
    st.is_weight = is_tokens ? (float)(is_sum / (double)is_tokens) : NAN;
    st.is_capped = is_tokens ? (float)is_capped / (float)is_tokens : NAN;
    st.ftis_dropped = gc->ftis_kl > 0.0f && ftis_seen ? (float)ftis_dropped / (float)ftis_seen : NAN;
    return st;
}
