/* Picking the next token from a row of logits: greedy, or temperature + nucleus (top-p)
 * sampling with one uniform draw from the caller's stream. */
#ifndef SAPO_MODEL_SAMPLER_H
#define SAPO_MODEL_SAMPLER_H

#include "core/rng.h"

typedef struct {
    float temperature; /* 0 = greedy */
    float top_p;       /* (0, 1]; 1 = the whole distribution */
    /* The deterministic mode (set by generation from the model's model.deterministic): the
     * probabilities are the training forward's softmax(logits * (1 / temperature)) through
     * det_math.h, and a token's log-prob is exactly what the forward returns for it at that
     * logit scale (minus log_det of the nucleus mass with top-p): bit for bit what a
     * verifier recomputes (`sapo verify`). */
    int deterministic;
} SamplerConfig;

/* scratch holds 3*V floats. Greedy takes the lowest index among equal maxima. Sampling
 * draws exactly one rng_float per call, so streams stay aligned across backends. */
int sampler_pick(const float* logits, int V, const SamplerConfig* sc, RngStream* rng, float* scratch);
/* sampler_pick that also writes the log-probability of the picked token under the
 * distribution it was drawn from (temperature and nucleus applied; 0 when greedy): the
 * behaviour log-prob a receiver of the completion can correct for. */
int sampler_pick_logprob(const float* logits, int V, const SamplerConfig* sc, RngStream* rng, float* scratch,
                         float* logprob);
/* The log-prob sampler_pick_logprob writes when it picks token tok from these logits (the
 * same arithmetic, no draw; 0 when greedy): what a verifier recomputes. scratch: 3*V floats. */
float sampler_logprob_of(const float* logits, int V, const SamplerConfig* sc, int tok, float* scratch);

#endif
