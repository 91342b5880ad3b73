/* Token-id training groups of a BPE node (see token_groups.h). */
#include "swarm/token_groups.h"

#include <stdlib.h>

#include "core/check.h"

void token_groups_init(TokenGroups* t, int used, int width) {
    size_t u = used > 0 ? (size_t)used : 1, w = width > 0 ? (size_t)width : 1;
    t->prompt = callocCheck(u, sizeof(int*));
    t->prompt_len = callocCheck(u, sizeof(int));
    t->comp = callocCheck(u * w, sizeof(int*));
    t->comp_len = callocCheck(u * w, sizeof(int));
    t->used = used;
    t->width = width;
}

void token_groups_free(TokenGroups* t) {
    if (!t->prompt) return;
    for (int e = 0; e < t->used; e++) {
        free(t->prompt[e]);
        for (int c = 0; c < t->width; c++) free(t->comp[(size_t)e * t->width + c]);
    }
    free(t->prompt);
    free(t->prompt_len);
    free(t->comp);
    free(t->comp_len);
    t->prompt = NULL;
}

void token_group_own(GrpoGroup* g, const int* prompt, int prompt_len, const int* const* completions,
                     const int* completion_lens) {
    g->prompt_ids = prompt;
    g->prompt_len = prompt_len;
    g->completion_ids = completions;
    g->completion_lens = completion_lens;
}

/* Whether rg's ids are ours to train as sent. */
static int same_tokens(uint64_t fingerprint, int vocab, const RolloutGroup* rg) {
    if (!rg->tokenizer || rg->tokenizer != fingerprint || !rg->token_ids || !rg->n_tokens) return 0;
    for (int c = 0; c < rg->n_completions; c++)
        for (int k = 0; k < rg->n_tokens[c]; k++)
            if (rg->token_ids[c][k] < 0 || rg->token_ids[c][k] >= vocab) return 0;
    return 1;
}

int token_group_external(TokenGroups* t, int e, const PromptCodec* codec, uint64_t fingerprint, int vocab,
                         const char* prompt, int n_ctx, int room, const RolloutGroup* rg, int tis, GrpoGroup* g) {
    int as_sent = same_tokens(fingerprint, vocab, rg);
    t->prompt[e] = mallocCheck((size_t)(n_ctx > 0 ? n_ctx : 1) * sizeof(int));
    t->prompt_len[e] = prompt_codec_encode(codec, prompt, t->prompt[e], room);
    for (int c = 0; c < rg->n_completions && c < t->width; c++) {
        size_t k = (size_t)e * t->width + c;
        if (as_sent) {
            int n = rg->n_tokens[c];
            t->comp_len[k] = n;
            t->comp[k] = mallocCheck(sizeof(int) * (size_t)(n ? n : 1));
            for (int j = 0; j < n; j++) t->comp[k][j] = rg->token_ids[c][j];
        } else {
            prompt_codec_encode_text(codec, rg->completions[c], &t->comp[k], &t->comp_len[k]);
        }
    }
    token_group_own(g, t->prompt[e], t->prompt_len[e], (const int* const*)(t->comp + (size_t)e * t->width),
                    t->comp_len + (size_t)e * t->width);
    g->behaviour = as_sent && tis ? (const float* const*)rg->token_logprobs : NULL;
    return !as_sent;
}
