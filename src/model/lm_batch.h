/* Groups of token ids as `sapo lm logprobs` reads them, one JSON line a group:
 * {"prompt": [ids], "completions": [[ids], ...]} (optionally "dlogprobs": [[floats], ...],
 * one per completion token, for tools that take a backward pass), checked against a model
 * shape, and packed the way training packs a group: the prompt but its last token as one
 * segment, each completion a segment that starts with the prompt's last token and continues
 * it, so the log-prob of every completion token is read off its own position. */
#ifndef SAPO_MODEL_LM_BATCH_H
#define SAPO_MODEL_LM_BATCH_H

#include <stddef.h>

#include "model/model.h"

typedef struct {
    int n_prompt;
    int* prompt;
    int n_comp;
    int* comp_len;
    int** comp;       /* comp[k][0..comp_len[k]) */
    float** dlogprobs; /* NULL, or one array per completion */
} LmGroup;

/* Parses one JSON line into g (freed by lm_group_free, also after an error): every id within
 * 0..vocab-1, a non-empty prompt, at least one non-empty completion, prompt + completion
 * within n_ctx positions, dlogprobs (when present) matching the completions. 0, or -1 with
 * the reason (without a line number) in err. */
int lm_group_parse(const char* line, const ModelShape* cfg, LmGroup* g, char* err, size_t errlen);
void lm_group_free(LmGroup* g);

/* Tokens and attention weights a layer (as packed_att_size counts them) of groups [0, n)
 * packed together. */
void lm_groups_size(const LmGroup* g, int n, int n_head, long* tokens, long* att);

/* A packed batch of groups [0, n): inputs, targets (-1 where none) and segments are heap
 * arrays (lm_packed_free); comp_at[k] of group gi is where completion k's first target sits:
 * the position of its token j is at[gi][k] + j. */
typedef struct {
    PackedBatch pb;
    int* inputs;
    int* targets;
    Segment* segs;
    int** at;
} LmPacked;

void lm_pack(const LmGroup* g, int n, LmPacked* out);
void lm_packed_free(LmPacked* p, int n);

#endif
