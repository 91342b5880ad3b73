/* Recomputing the sampler's log-probs with the training forward (see recompute.h). The batch
 * is laid out as generation ran: the prompt but its last token is one segment (prefill), the
 * completion a segment that starts with the prompt's last token and reads the prompt first
 * (decode), so each position sees the same keys in the same order. */
#include "model/recompute.h"

#include <stdlib.h>

#include "core/check.h"

int recompute_logprobs(Model* m, const SamplerConfig* sc, const int* prompt, int plen, const int* completion, int n,
                       float* out, float* forward_lp, float* logits, float* scratch) {
    if (n <= 0) return 0;
    int p = plen - 1, N = p + n, V = m->cfg.vocab;
    if (plen < 1 || plen + n - 1 > m->cfg.n_ctx) return -1;
    int* in = mallocCheck((size_t)N * sizeof(int));
    int* tg = mallocCheck((size_t)N * sizeof(int));
    float* lp = mallocCheck((size_t)N * sizeof(float));
    for (int i = 0; i < p; i++) {
        in[i] = prompt[i];
        tg[i] = m->roles.none;
    }
    for (int i = 0; i < n; i++) {
        in[p + i] = i == 0 ? prompt[p] : completion[i - 1];
        tg[p + i] = completion[i];
    }
    Segment segs[2];
    int ns = 0;
    if (p > 0) segs[ns++] = (Segment){.start = 0, .len = p, .prefix = -1};
    segs[ns] = (Segment){.start = p, .len = n, .prefix = p > 0 ? 0 : -1};
    ns++;
    SamplerConfig s = *sc;
    s.deterministic = s.deterministic || m->cfg.deterministic; /* as generate.c samples */
    PackedBatch pb = {.n_tokens = N, .inputs = in, .targets = tg, .n_segments = ns, .segs = segs,
                      .logit_scale = s.temperature > 0.0f ? 1.0f / s.temperature : 1.0f};
    model_forward_packed(m, &pb, lp);
    m->backend->get_logits(m, logits);
    for (int i = 0; i < n && forward_lp; i++) forward_lp[i] = lp[p + i];
    for (int i = 0; i < n; i++)
        out[i] = sampler_logprob_of(logits + (size_t)(p + i) * V, V, &s, completion[i], scratch);
    free(in);
    free(tg);
    free(lp);
    return 0;
}
