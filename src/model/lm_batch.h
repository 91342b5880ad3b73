/* Groups of token ids as `sapo lm logprobs` reads them, one JSON line a group:
 * {"prompt": [ids], "completions": [[ids], ...]} (optionally "dlogprobs": [[floats], ...],
 * one per completion token, for tools that take a backward pass), checked against a model
 * shape. Their users pack them as training does, with rl/pack.h (train_group_ids). */
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

#endif
