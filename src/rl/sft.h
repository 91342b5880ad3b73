/* Supervised training on (prompt, completion) pairs, as text (the byte-level GPT's tokens are
 * its bytes) or as a BPE model's token ids: the warm-up that gives a policy partial skill and
 * the answer format before RL. Loss only on completion tokens and the final end token. */
#ifndef SAPO_RL_SFT_H
#define SAPO_RL_SFT_H

#include "model/model.h"
#include "rl/pack.h"

typedef struct {
    const char* prompt;
    const char* completion;
} SftExample;

/* One demonstration as token ids (a BPE model's), without the model's start or end token
 * (TokenRoles): the packer adds them. */
typedef struct {
    const int* prompt;
    int prompt_len;
    const int* completion;
    int completion_len;
} SftTokens;

/* Packs one sequence [BOS] prompt completion [EOS if append_eos] into a row of T tokens,
 * shifted into inputs/targets, with prompt targets and padding set to TOK_PAD. A prompt
 * that does not fit loses its beginning; a completion that does not fit is cut. Returns
 * the number of target tokens that carry loss (the completion's, and the EOS). */
int seq_pack(const char* prompt, const char* completion, int append_eos, int T, int* inputs, int* targets);

/* seq_pack for n examples, EOS appended, into n rows; returns the loss-carrying tokens. */
int sft_pack(const SftExample* ex, int n, int T, int* inputs, int* targets);

/* Masked mean negative log-likelihood over targets != TOK_PAD, and its gradient with
 * respect to each log-prob (-1/count on those positions, 0 elsewhere). */
float sft_loss_grad(const float* logprobs, const int* targets, int n, float* dlogprobs);

/* The gradients of one supervised step on n examples, packed without padding in
 * micro-batches that fit pk (packer_init with append_eos = 1): zeroes the gradients, then
 * accumulates d(mean NLL over every completion token and EOS)/d(params). lp and dlp hold
 * pk->cap_tokens floats. Returns the loss. */
float sft_accumulate(Model* m, Packer* pk, const SftExample* ex, int n, float* lp, float* dlp);
/* sft_accumulate on demonstrations given as token ids. */
float sft_accumulate_ids(Model* m, Packer* pk, const SftTokens* ex, int n, float* lp, float* dlp);

#endif
