/* The off-policy rule (see weighting.h): one case per arm. */
#include "rl/weighting.h"

#include "core/check.h"

ExternalRule weighting_external_rule(ExternalWeighting external) {
    switch (external) {
    case EXTERNAL_RATIO1: /* the paper: trained as if self-sampled */
        return (ExternalRule){0};
    case EXTERNAL_POSITIVE_ONLY: /* imitate the peers' better answers only */
        return (ExternalRule){.drop_negatives = 1};
    case EXTERNAL_TIS:
        return (ExternalRule){.sender_logprobs = 1, .tis = 1};
    case EXTERNAL_FTIS:
        return (ExternalRule){.sender_logprobs = 1, .tis = 1, .ftis = 1};
    }
    sapo_die("grpo.external: no rule for value %d", (int)external);
}

/* 1 when the node's own negative advantages are dropped. */
static int local_drops_negatives(LocalWeighting local) {
    switch (local) {
    case LOCAL_ALL: /* GRPO */
        return 0;
    case LOCAL_POSITIVE_ONLY: /* the control that separates peers' data from dropping negatives */
        return 1;
    }
    sapo_die("grpo.local: no rule for value %d", (int)local);
}

int weighting_needs_sender_logprobs(const Weighting* w) {
    return weighting_external_rule(w->external).sender_logprobs;
}

void weighting_grpo_config(const Weighting* w, GrpoConfig* gc) {
    ExternalRule r = weighting_external_rule(w->external);
    gc->tis_cap = r.tis ? w->tis_cap : 0.0f;
    gc->ftis_kl = r.ftis ? w->ftis_kl : 0.0f;
}

void weighting_group_weights(const Weighting* w, int received, float* adv, int n) {
    int drop = received ? weighting_external_rule(w->external).drop_negatives : local_drops_negatives(w->local);
    if (drop)
        for (int c = 0; c < n; c++) adv[c] = adv[c] > 0.0f ? adv[c] : 0.0f;
}
