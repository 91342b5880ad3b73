/* Recomputing what the sampler claimed: the log-prob sampler_pick_logprob wrote for each token
 * of a completion, from the model's training forward over [prompt | completion] instead of
 * the KV-cache decode that generated it. In the deterministic mode (model.deterministic) the
 * two agree bit for bit on any machine, which is what `sapo verify` checks; with the default
 * numerics they differ in the last bits (decode and forward sum in different orders). */
#ifndef SAPO_MODEL_RECOMPUTE_H
#define SAPO_MODEL_RECOMPUTE_H

#include "model/model.h"
#include "model/sampler.h"

/* prompt: plen >= 1 tokens as generation fed them (its PromptCodec's: BOS first for the
 * byte-level GPT); completion:
 * n tokens; out[i] = the log-prob of completion[i] under sc (temperature and top-p; the model's
 * deterministic mode is applied as generation applies it). The model needs a capacity of
 * plen + n - 1 tokens in one forward (model_capacity_dense(cfg, 1) does). scratch: 3 * vocab
 * floats; logits: (plen + n - 1) * vocab floats. forward_lp, when not NULL, gets the training
 * forward's own log-prob of each completion token at logit scale 1 / temperature (what GRPO
 * trains on; equal to out[] in the deterministic mode without top-p). Returns 0, or -1 when
 * the sequence does not fit n_ctx. */
int recompute_logprobs(Model* m, const SamplerConfig* sc, const int* prompt, int plen, const int* completion, int n,
                       float* out, float* forward_lp, float* logits, float* scratch);

#endif
