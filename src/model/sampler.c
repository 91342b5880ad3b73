/* Token sampling (see sampler.h). Top-p keeps the smallest set of most likely tokens whose
 * probability reaches top_p (ties ordered by token id), then samples within it. */
#include "model/sampler.h"

#include <math.h>
#include <stdlib.h>

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

int sampler_pick_logprob(const float* logits, int V, const SamplerConfig* sc, RngStream* rng, float* scratch,
                         float* logprob) {
    *logprob = 0.0f;
    if (sc->temperature <= 0.0f) return argmax(logits, V);
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
