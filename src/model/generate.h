/* Batched generation with the KV cache: prefill every prompt at once, then decode one token
 * per unfinished sequence per step, until TOK_EOS, a stop string, max_new_tokens or the
 * context is full. All randomness comes from the caller's stream, drawn in a fixed order
 * (step by step, rows in index order), so a run repeats exactly. */
#ifndef SAPO_MODEL_GENERATE_H
#define SAPO_MODEL_GENERATE_H

#include "core/rng.h"
#include "model/gpt.h"
#include "model/sampler.h"

typedef struct {
    SamplerConfig sampler;
    int max_new_tokens;
    const char* stop; /* stop string kept in the output (e.g. "</answer>"); NULL = none */
} GenConfig;

/* prompts: B rows of prompt_stride tokens, row b holding prompt_lens[b] >= 1 tokens.
 * out_tokens: B rows of gc->max_new_tokens; out_lens[b] = tokens generated for row b,
 * a final TOK_EOS included when the model ended the completion itself.
 * Returns the number of tokens generated in all. */
long model_generate(Model* m, const int* prompts, int prompt_stride, const int* prompt_lens, int B,
                    const GenConfig* gc, RngStream* rng, int* out_tokens, int* out_lens);

#endif
