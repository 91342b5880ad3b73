/* The training groups of a node whose model reads BPE tokens (the llama family): token ids,
 * never bytes of text. Its own groups train exactly the ids it sampled. A received group
 * trains the ids its sender sampled when the sender's tokenizer is the node's (the same
 * fingerprint, every id within the node's vocabulary), with the sender's per-token behaviour
 * log-probs for an importance correction; otherwise its texts are re-encoded with the node's
 * tokenizer and trained with ratio 1 (or positive_only), never with an importance weight,
 * since a log-prob of another tokenizer's token belongs to no token of ours. */
#ifndef SAPO_SWARM_TOKEN_GROUPS_H
#define SAPO_SWARM_TOKEN_GROUPS_H

#include <stdint.h>

#include "model/prompt_codec.h"
#include "rl/grpo.h"
#include "swarm/net/message.h"

/* The id arrays of one round's external groups (used groups of up to width completions). */
typedef struct {
    int** prompt;    /* (used) each group's prompt as the node frames it */
    int* prompt_len;
    int** comp;      /* (used * width) each completion's ids */
    int* comp_len;
    int used, width;
} TokenGroups;

void token_groups_init(TokenGroups* t, int used, int width);
void token_groups_free(TokenGroups* t);

/* g trains the given prompt ids and completion ids (views; g's text fields are not read). */
void token_group_own(GrpoGroup* g, const int* prompt, int prompt_len, const int* const* completions,
                     const int* completion_lens);

/* External group e of t from the received rg: its prompt text framed by codec into at most
 * room tokens (n_ctx floats of buffer), its completions as sent (when rg's tokenizer is
 * `fingerprint` and its ids are below vocab) or re-encoded by codec; g's ids point into t,
 * its behaviour at rg's token log-probs when tis and as sent, else NULL. Returns 1 when
 * re-encoded, 0 when trained as sent. */
int token_group_external(TokenGroups* t, int e, const PromptCodec* codec, uint64_t fingerprint, int vocab,
                         const char* prompt, int n_ctx, int room, const RolloutGroup* rg, int tis, GrpoGroup* g);

#endif
