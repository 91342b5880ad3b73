/* GRPO as SAPO uses it: group-relative advantages (r - mean) / (std + 1e-8) with the
 * unbiased std; a token-level loss normalised by the batch's completion tokens (DAPO);
 * asymmetric clipping eps_low / eps_high over ppo_epochs passes on the same batch; an
 * optional KL penalty to a frozen reference model (k3 estimator). One optimizer step per
 * epoch. Received completions are treated as if the node's own policy had produced them. */
#ifndef SAPO_RL_GRPO_H
#define SAPO_RL_GRPO_H

#include "model/gpt.h"

typedef struct {
    float eps_low, eps_high; /* ratio clipped to [1 - eps_low, 1 + eps_high] */
    float kl;                /* weight of the KL penalty to the reference model; 0 = none */
    int ppo_epochs;          /* optimizer steps on each batch */
} GrpoConfig;

/* One training sequence: prompt text, completion text, and its advantage. */
typedef struct {
    const char* prompt;
    const char* completion;
    float advantage;
} GrpoSample;

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

/* The per-token loss and its gradient d(loss)/d(logprob) for n = B*T positions:
 * loss = -(1/N) sum_t min(ratio_t A_t, clip(ratio_t) A_t) + kl * (1/N) sum_t k3_t,
 * ratio_t = exp(lp_t - old_t), k3_t = exp(ref_t - lp_t) - (ref_t - lp_t) - 1, N = number
 * of targets != TOK_PAD. adv is per position (the row's advantage). old and ref may be
 * NULL (ratio 1; no KL). Writes dlp; returns the loss; *kl_out and *clipped_out (may be
 * NULL) receive the mean KL and the count of clipped tokens. */
float grpo_loss_grad(const float* lp, const float* old, const float* ref, const int* targets, const float* adv, int n,
                     const GrpoConfig* gc, float* dlp, float* kl_out, int* clipped_out);

typedef struct GrpoTrainer GrpoTrainer;
/* Buffers for batches of up to max_rows sequences of the policy's n_ctx tokens. ref may be
 * NULL (then gc->kl must be 0). */
GrpoTrainer* grpo_trainer_create(Model* policy, Model* ref, int max_rows);
void grpo_trainer_free(GrpoTrainer* t);
/* Trains on n samples: ppo_epochs AdamW steps with gradient clipping max_norm (0 = off). */
GrpoStats grpo_train(GrpoTrainer* t, const GrpoSample* samples, int n, const GrpoConfig* gc, const AdamWConfig* hp,
                     float max_norm);

#endif
