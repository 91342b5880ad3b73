/* GRPO as SAPO uses it: group-relative advantages (r - mean) / (std + 1e-8) with the
 * unbiased std; a token-level loss normalised by the batch's completion tokens (DAPO);
 * asymmetric clipping eps_low / eps_high over ppo_epochs passes on the same batch; an
 * optional KL penalty to a frozen reference model (k3 estimator). One optimizer step per
 * epoch. Received completions are treated as if the node's own policy had produced them.
 * A step runs over packed micro-batches (rl/pack.h): each group's prompt is computed once
 * for its completions, and gradients accumulate across micro-batches, so the step equals
 * the one-batch step while its memory stays bounded. */
#ifndef SAPO_RL_GRPO_H
#define SAPO_RL_GRPO_H

#include "model/model.h"
#include "rl/pack.h"

typedef struct {
    float eps_low, eps_high; /* ratio clipped to [1 - eps_low, 1 + eps_high] */
    float kl;                /* weight of the KL penalty to the reference model; 0 = none */
    int ppo_epochs;          /* optimizer steps on each batch */
    /* Tokens with a behaviour log-prob mu (received completions, TrainGroup.behaviour) are
     * weighted by min(pi_prox / mu, tis_cap), pi_prox the policy at the start of the step
     * (decoupled PPO with truncated importance weights); 0 = no correction (ratio 1). */
    float tis_cap;
    /* F-TIS's filter (grpo.external = ftis): a completion whose tokens have behaviour
     * log-probs mu and whose advantage is negative is dropped (weight 0) when the mean over
     * its tokens of k3 = rho - 1 - log rho, rho = pi_prox / mu, exceeds ftis_kl. That mean
     * estimates KL(mu || pi_prox) per token from the sender's own samples (k3: unbiased for
     * samples of mu, never negative). 0 = no filter. */
    float ftis_kl;
    float logit_scale;       /* training log-probs of softmax(logits * scale): 1 / the
                                sampling temperature (0 = 1) */
    int warmup_steps;        /* lr rises linearly over the first warmup_steps steps; 0 = none */
    int deterministic;       /* exponentials by exp_poly (det_math.h), not libm's expf; grpo_train
                                sets it from the policy's model.deterministic */
} GrpoConfig;

/* One group: a prompt, its completions and their advantages (a TrainGroup's weights). */
typedef TrainGroup GrpoGroup;

typedef struct {
    float loss;          /* surrogate loss of the first epoch (before any step) */
    float kl;            /* mean per-token KL estimate, first epoch */
    float clip_fraction; /* share of tokens clipped, over all epochs after the first */
    float grad_norm;     /* of the last step, before clipping */
    int tokens;          /* completion tokens in the batch */
    float is_weight;     /* mean importance weight of the tokens that have one (first epoch); NaN if none */
    float is_capped;     /* share of those whose weight was capped; NaN if none */
    float ftis_dropped;  /* share of the completions with behaviour log-probs that the F-TIS
                            filter dropped; NaN without the filter or without such completions */
} GrpoStats;

/* Advantages of one group of L rewards: (r - mean) / (std + 1e-8), std unbiased (0 for
 * L < 2). Returns 1 when every reward is equal (all advantages zero), else 0. */
int grpo_advantages(const float* rewards, int L, float* adv);

/* The per-token inputs of the loss, n positions (one micro-batch or a whole batch). */
typedef struct {
    const float* lp;        /* current log-probs */
    const float* old;       /* at the start of the step (NULL: this is the first epoch, ratio 1) */
    const float* ref;       /* the reference model's (NULL: no KL) */
    const float* behaviour; /* the sampler's log-probs; NaN where none (NULL: none at all) */
    const int* targets;     /* `none`: no loss */
    int none;               /* the model's roles.none (byte_gpt: TOK_PAD) */
    const float* adv;       /* the row's advantage at every position */
    int n;
    long norm;              /* N below: the whole batch's loss tokens; 0 = those here */
} GrpoTokens;

typedef struct {
    float kl;            /* KL sum over N */
    int clipped;         /* tokens on the clipped branch */
    double is_weight_sum; /* importance weights of the tokens with a behaviour log-prob */
    int is_tokens, is_capped;
} GrpoLossStats;

/* The per-token loss and its gradient d(loss)/d(logprob):
 * loss = -(1/N) sum_t w_t min(ratio_t A_t, clip(ratio_t) A_t) + kl * (1/N) sum_t k3_t,
 * ratio_t = exp(lp_t - old_t), k3_t = exp(ref_t - lp_t) - (ref_t - lp_t) - 1, the sums over
 * targets != none; w_t = min(exp(prox_t - mu_t), tis_cap) where the token has a behaviour
 * log-prob mu_t and tis_cap > 0 (prox_t = old_t, or lp_t in the first epoch; w_t is a
 * constant, not differentiated), else 1. Writes dlp; returns the loss; st may be NULL. */
float grpo_loss_grad(const GrpoTokens* tk, const GrpoConfig* gc, float* dlp, GrpoLossStats* st);

/* The F-TIS filter over one packed micro-batch: pk's per-token weights with every dropped
 * completion's weights set to 0 go to adv (pk->pb.n_tokens values); prox holds the
 * start-of-step policy's log-probs of the batch's tokens. Counts the completions with
 * behaviour log-probs in *considered and returns how many were dropped. */
int grpo_ftis_filter(const Packer* pk, const float* prox, const GrpoConfig* gc, float* adv, int* considered);

typedef struct GrpoTrainer GrpoTrainer;
/* Micro-batches fit the policy's capacity (and ref's, which must be at least as large).
 * ref may be NULL (then gc->kl must be 0). */
GrpoTrainer* grpo_trainer_create(Model* policy, Model* ref);
void grpo_trainer_free(GrpoTrainer* t);
/* Trains on n_groups groups: ppo_epochs AdamW steps with gradient clipping max_norm (0 =
 * off), each over every micro-batch. steps_before: GRPO steps this policy took before (the
 * lr warm-up's clock). */
GrpoStats grpo_train(GrpoTrainer* t, const GrpoGroup* groups, int n_groups, const GrpoConfig* gc,
                     const AdamWConfig* hp, float max_norm, long steps_before);

#endif
