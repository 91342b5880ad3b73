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

#include "model/gpt.h"
#include "rl/pack.h"

typedef struct {
    float eps_low, eps_high; /* ratio clipped to [1 - eps_low, 1 + eps_high] */
    float kl;                /* weight of the KL penalty to the reference model; 0 = none */
    int ppo_epochs;          /* optimizer steps on each batch */
} GrpoConfig;

/* One group: a prompt, its completions and their advantages (a TrainGroup's weights). */
typedef TrainGroup GrpoGroup;

typedef struct {
    float loss;          /* surrogate loss of the first epoch (before any step) */
    float kl;            /* mean per-token KL estimate, first epoch */
    float clip_fraction; /* share of tokens clipped, over all epochs after the first */
    float grad_norm;     /* of the last step, before clipping */
    int tokens;          /* completion tokens in the batch */
} GrpoStats;

/* Advantages of one group of L rewards: (r - mean) / (std + 1e-8), std unbiased (0 for
 * L < 2). Returns 1 when every reward is equal (all advantages zero), else 0. */
int grpo_advantages(const float* rewards, int L, float* adv);

/* The per-token loss and its gradient d(loss)/d(logprob) for n positions:
 * loss = -(1/N) sum_t min(ratio_t A_t, clip(ratio_t) A_t) + kl * (1/N) sum_t k3_t,
 * ratio_t = exp(lp_t - old_t), k3_t = exp(ref_t - lp_t) - (ref_t - lp_t) - 1, the sums over
 * targets != TOK_PAD, and N = norm (the whole batch's loss tokens when this is one
 * micro-batch of it), or the count of targets != TOK_PAD here when norm is 0. adv is per
 * position (the row's advantage). old and ref may be NULL (ratio 1; no KL). Writes dlp;
 * returns the loss; *kl_out and *clipped_out (may be NULL) receive the KL sum over N and
 * the count of clipped tokens. */
float grpo_loss_grad(const float* lp, const float* old, const float* ref, const int* targets, const float* adv, int n,
                     long norm, const GrpoConfig* gc, float* dlp, float* kl_out, int* clipped_out);

typedef struct GrpoTrainer GrpoTrainer;
/* Micro-batches fit the policy's capacity (and ref's, which must be at least as large).
 * ref may be NULL (then gc->kl must be 0). */
GrpoTrainer* grpo_trainer_create(Model* policy, Model* ref);
void grpo_trainer_free(GrpoTrainer* t);
/* Trains on n_groups groups: ppo_epochs AdamW steps with gradient clipping max_norm (0 =
 * off), each over every micro-batch. */
GrpoStats grpo_train(GrpoTrainer* t, const GrpoGroup* groups, int n_groups, const GrpoConfig* gc,
                     const AdamWConfig* hp, float max_norm);

#endif
