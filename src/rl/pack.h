/* Training batches without padding and without repeating a shared prompt: a group's prompt is
 * one segment, each of its completions a segment that continues it (PackedBatch in
 * model/gpt.h), and the groups are cut into micro-batches that fit the model's capacity, so
 * a step of any size runs in bounded memory with gradient accumulation. A group too large
 * for one micro-batch continues in the next one, its prompt packed again. */
#ifndef SAPO_RL_PACK_H
#define SAPO_RL_PACK_H

#include "model/model.h"

/* A prompt and n completions that share it, as text (a byte-level model's tokens are its
 * bytes) or, when prompt_ids is set, as the model's token ids (a BPE model's: the text
 * fields are then not read). Neither holds the model's start or end token (TokenRoles):
 * the packer adds them. */
typedef struct {
    const char* prompt;
    int n;
    const char* const* completions;
    const float* weights; /* per completion (an advantage, a loss weight); NULL = 1 */
    /* per completion, the sampler's log-prob of each token (a received group's behaviour
     * log-probs, for an importance correction); NULL, or NULL entries: none */
    const float* const* behaviour;
    const int* prompt_ids; /* NULL: the tokens are the bytes of prompt and completions */
    int prompt_len;
    const int* const* completion_ids;
    const int* completion_lens;
} TrainGroup;

/* A group of the model's token ids (prompt_ids set), as a view of the caller's arrays. */
TrainGroup train_group_ids(const int* prompt, int prompt_len, int n, int* const* completions, const int* lens);

/* Where packing stands: the next completion to pack. */
typedef struct {
    int group, completion;
    long loss_tokens; /* loss-carrying tokens packed so far (the global index of the next one) */
} PackCursor;

typedef struct {
    int cap_tokens, cap_segments;
    long cap_att;
    int n_head, n_ctx;
    int append_eos; /* train the end of text (supervised) or not (RL) */
    TokenRoles roles; /* the model's: its start, end and no-target tokens */
    float logit_scale; /* copied into every micro-batch (PackedBatch.logit_scale); 1 by default */
    PackedBatch pb; /* points into the arrays below */
    int *inputs, *targets;
    Segment* segs;
    float* weight;  /* (N) the weight of the token's completion; 0 on prompt tokens */
    float* behaviour; /* (N) the token's behaviour log-prob; NaN where there is none */
    long* loss_id;  /* (N) global index of a loss-carrying token, -1 elsewhere */
} Packer;

/* Buffers for micro-batches that fit the model m (its capacity), or a smaller budget of
 * max_tokens (0 = the model's). */
void packer_init(Packer* pk, const Model* m, int max_tokens, int append_eos);
void packer_free(Packer* pk);

/* Loss-carrying tokens of the whole batch (what a token-level loss divides by). */
long pack_count_loss_tokens(const TrainGroup* groups, int n_groups, int n_ctx, int append_eos);
/* The token of completion c at i, and its length, whichever form the group holds. */
int train_completion_len(const TrainGroup* g, int c);

/* What groups [0, n) take when pack_next lays them out in one micro-batch for a model of
 * n_head heads, context n_ctx and these roles: its tokens and its attention weights per layer,
 * the capacity they need (for sizing a model before it is opened). */
void pack_size(const TrainGroup* groups, int n, const TokenRoles* roles, int n_head, int n_ctx, int append_eos,
               long* tokens, long* att);

/* Packs the next micro-batch from cur on into pk->pb and advances cur; returns 0 when every
 * completion is packed. Dies with a clear message when a single prompt and completion
 * cannot fit the capacity. */
int pack_next(Packer* pk, const TrainGroup* groups, int n_groups, PackCursor* cur);

#endif
