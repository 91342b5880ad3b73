/* Token sampling (see sampler.h). Top-p keeps the smallest set of most likely tokens whose
 * probability reaches top_p (ties ordered by token id), then samples within it. */
#include "model/sampler.h"

#include <math.h>
#include <stdlib.h>

#include "model/det_math.h"

static int argmax(const float* x, int n) {
    int best = 0;
    for (int i = 1; i < n; i++) if (x[i] > x[best]) best = i;
    return best;
}

typedef struct {
    float p;
    int id;
} Candidate;

static int by_prob_desc(const void* a, const void* b) {
    const Candidate *x = a, *y = b;
    if (x->p > y->p) return -1;
    if (x->p < y->p) return 1;
    return x->id - y->id;
}

/* The deterministic mode's distribution: probs = softmax(logits * (1 / T)) as the training
 * forward computes it (logprob_forward with det); returns the log-partition. */
static float det_probs(const float* logits, int V, float temperature, float* probs) {
    float scale = 1.0f / temperature, sum;
    for (int v = 0; v < V; v++) probs[v] = logits[v] * scale;
    float mx = softmax_row(probs, V, &sum);
    return mx + log_det(sum);
}

/* The nucleus of the deterministic mode: the smallest set of most likely tokens whose mass
 * (summed in double, in order) reaches top_p; order[0..*k) holds it. Returns its mass. */
static double det_nucleus(const float* probs, int V, float top_p, Candidate* order, int* k) {
    for (int v = 0; v < V; v++) order[v] = (Candidate){probs[v], v};
    qsort(order, V, sizeof *order, by_prob_desc);
    double kept = 0.0;
    int n = 0;
    while (n < V && kept < top_p) kept += order[n++].p;
    *k = n;
    return kept;
}

/* log p(tok) at scale 1 / T, less log of the nucleus mass, never above 0. */
static float det_logprob(const float* logits, float scale, float lse, int tok, double kept) {
    float lp = logits[tok] * scale - lse;
    if (kept < 1.0) lp = lp - log_det((float)kept);
    return lp < 0.0f ? lp : 0.0f;
}

static int pick_det(const float* logits, int V, const SamplerConfig* sc, RngStream* rng, float* scratch,
                    float* logprob) {
    float* probs = scratch;
    Candidate* order = (Candidate*)(scratch + V);
    float lse = det_probs(logits, V, sc->temperature, probs), scale = 1.0f / sc->temperature;
    float u = rng_float(rng);
    int tok = -1;
    double kept = 1.0;
    if (sc->top_p >= 1.0f) {
        double acc = 0.0;
        for (int v = 0; v < V && tok < 0; v++) {
            acc += probs[v];
            if (u < acc) tok = v;
        }
        if (tok < 0) tok = argmax(probs, V); /* u beyond the rounded total: the likeliest */
    } else {
        int k;
        kept = det_nucleus(probs, V, sc->top_p, order, &k);
        double target = u * kept, acc = 0.0;
        for (int i = 0; i < k && tok < 0; i++) {
            acc += order[i].p;
            if (target < acc) tok = order[i].id;
        }
        if (tok < 0) tok = order[0].id;
    }
    *logprob = det_logprob(logits, scale, lse, tok, kept);
    return tok;
}

float sampler_logprob_of(const float* logits, int V, const SamplerConfig* sc, int tok, float* scratch) {
    if (sc->temperature <= 0.0f) return 0.0f;
    if (sc->deterministic) {
        float lse = det_probs(logits, V, sc->temperature, scratch);
        double kept = 1.0;
        int k;
        if (sc->top_p < 1.0f) kept = det_nucleus(scratch, V, sc->top_p, (Candidate*)(scratch + V), &k);
        return det_logprob(logits, 1.0f / sc->temperature, lse, tok, kept);
    }
    /* the default arithmetic of sampler_pick_logprob, for the token given */
    float mx = logits[argmax(logits, V)];
    double sum = 0.0;
    for (int v = 0; v < V; v++) {
        scratch[v] = expf((logits[v] - mx) / sc->temperature);
        sum += scratch[v];
    }
    double kept = 1.0;
    if (sc->top_p < 1.0f) {
        Candidate* order = (Candidate*)(scratch + V);
        for (int v = 0; v < V; v++) order[v] = (Candidate){(float)(scratch[v] / sum), v};
        qsort(order, V, sizeof *order, by_prob_desc);
        kept = 0.0;
        for (int k = 0; k < V && kept < sc->top_p; k++) kept += order[k].p;
    }
    return (float)fmin((logits[tok] - mx) / sc->temperature - log(sum) - log(kept), 0.0);
}

int sampler_pick_logprob(const float* logits, int V, const SamplerConfig* sc, RngStream* rng, float* scratch,
                         float* logprob) {
    *logprob = 0.0f;
    if (sc->temperature <= 0.0f) return argmax(logits, V);
    if (sc->deterministic) return pick_det(logits, V, sc, rng, scratch, logprob);
    float* probs = scratch;
    Candidate* order = (Candidate*)(scratch + V);
    float mx = logits[argmax(logits, V)];
    double sum = 0.0;
    for (int v = 0; v < V; v++) {
        probs[v] = expf((logits[v] - mx) / sc->temperature);
        sum += probs[v];
    }
    for (int v = 0; v < V; v++) probs[v] = (float)(probs[v] / sum);
    double log_sum = log(sum);
    /* a probability is at most 1: rounding must not make its log positive */
#define PICKED(v, kept) (*logprob = (float)fmin((logits[v] - mx) / sc->temperature - log_sum - log(kept), 0.0), (v))
    float u = rng_float(rng);
    if (sc->top_p >= 1.0f) {
        double acc = 0.0;
        for (int v = 0; v < V; v++) {
            acc += probs[v];
            if (u < acc) return PICKED(v, 1.0);
        }
        int best = argmax(probs, V); /* u beyond the rounded total: the likeliest */
        return PICKED(best, 1.0);
    }
    for (int v = 0; v < V; v++) order[v] = (Candidate){probs[v], v};
    qsort(order, V, sizeof *order, by_prob_desc);
    double kept = 0.0;
    int k = 0;
    while (k < V && kept < sc->top_p) kept += order[k++].p;
    double target = u * kept, acc = 0.0;
    for (int i = 0; i < k; i++) {
        acc += order[i].p;
        if (target < acc) return PICKED(order[i].id, kept);
    }
    return PICKED(order[0].id, kept);
#undef PICKED
}

int sampler_pick(const float* logits, int V, const SamplerConfig* sc, RngStream* rng, float* scratch) {
    float unused;
    return sampler_pick_logprob(logits, V, sc, rng, scratch, &unused);
}
