/* Batched generation with the KV cache. A group's L completions share its prompt: the prompt
 * is prefilled once into a prompt cache, and each completion row keeps only its own positions
 * and reads the prompt's keys and values from there. Then one token per unfinished row per
 * step, until an end token (TOK_EOS, or the caller's), a stop string, max_new_tokens or the context is full. Groups beyond the
 * model's capacity run in successive chunks. All randomness comes from the caller's stream,
 * drawn in a fixed order (chunk by chunk, step by step, rows in index order), so a run
 * repeats exactly. */
#ifndef SAPO_MODEL_GENERATE_H
#define SAPO_MODEL_GENERATE_H

#include "core/rng.h"
#include "model/model.h"
#include "model/sampler.h"

struct Tokenizer;

typedef struct {
    SamplerConfig sampler;
    int max_new_tokens;
    const char* stop; /* stop string kept in the output (e.g. "</answer>"); NULL = none */
    /* Tokens that end a completion (kept in the output); none given: TOK_EOS (byte_gpt). */
    const int* stop_ids;
    int n_stop_ids;
    /* NULL: the stop string is matched against the row's byte tokens (byte_gpt); else the row
     * stops once the text this tokenizer decodes from its last tokens contains it. */
    const struct Tokenizer* tokenizer;
} GenConfig;

/* prompts: G rows of prompt_stride tokens, row g holding prompt_lens[g] >= 1 tokens (BOS
 * first); L completions of each. out_tokens: G*L rows of gc->max_new_tokens (row g*L + c is
 * completion c of prompt g); out_lens as for model_generate. Returns the tokens generated. */
long model_generate_groups(Model* m, const int* prompts, int prompt_stride, const int* prompt_lens, int G, int L,
                           const GenConfig* gc, RngStream* rng, int* out_tokens, int* out_lens);
/* model_generate_groups that also writes each generated token's log-prob under the
 * distribution it was sampled from (sampler_pick_logprob) into out_logprobs, laid out as
 * out_tokens. */
long model_generate_groups_logprobs(Model* m, const int* prompts, int prompt_stride, const int* prompt_lens, int G,
                                    int L, const GenConfig* gc, RngStream* rng, int* out_tokens, int* out_lens,
                                    float* out_logprobs);

/* One completion per prompt: model_generate_groups with L = 1.
 * prompts: B rows of prompt_stride tokens, row b holding prompt_lens[b] >= 1 tokens.
 * out_tokens: B rows of gc->max_new_tokens; out_lens[b] = tokens generated for row b,
 * a final TOK_EOS included when the model ended the completion itself.
 * Returns the number of tokens generated in all. */
long model_generate(Model* m, const int* prompts, int prompt_stride, const int* prompt_lens, int B,
                    const GenConfig* gc, RngStream* rng, int* out_tokens, int* out_lens);

#endif
