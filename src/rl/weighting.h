/* The off-policy rule, the project's main research axis, in one place: how the groups a node
 * trains on are weighted, its own (grpo.local) and the received ones (grpo.external: ratio1,
 * positive_only, tis, ftis), which of the TIS / F-TIS numbers GRPO gets, and whether the
 * received groups carry the sender's log-probs. The maths those numbers drive (the truncated
 * importance weight, the F-TIS filter) is rl/grpo.c's; the batch is the round's
 * (swarm/node.c round_train). A new arm: a value in core/config_enums.h, its line in
 * core/config_schema.c, its case in weighting.c (weighting_external_rule) and its row in
 * tests/unit/test_weighting.c. */
#ifndef SAPO_RL_WEIGHTING_H
#define SAPO_RL_WEIGHTING_H

#include "core/config_enums.h"
#include "rl/grpo.h"

typedef struct {
    LocalWeighting local;       /* grpo.local: the node's own groups */
    ExternalWeighting external; /* grpo.external: the received groups */
    float tis_cap, ftis_kl;     /* grpo.tis_cap, grpo.ftis_kl as configured (used by the arms that need them) */
} Weighting;

/* What an arm does to a received group. */
typedef struct {
    int drop_negatives; /* negative advantages become 0 (imitate the better answers only) */
    int sender_logprobs; /* the sender's log-probs go into the batch (TrainGroup.behaviour) */
    int tis;            /* tokens weighted by min(pi/mu, tis_cap) */
    int ftis;           /* the F-TIS filter: drop a negative completion whose KL estimate exceeds ftis_kl */
} ExternalRule;

ExternalRule weighting_external_rule(ExternalWeighting external);
/* 1 when received groups must carry the sender's log-probs (tis, ftis). */
int weighting_needs_sender_logprobs(const Weighting* w);
/* Sets gc's off-policy numbers: tis_cap = w->tis_cap when received tokens are importance
 * weighted, else 0 (ratio 1); ftis_kl = w->ftis_kl under the F-TIS filter, else 0. */
void weighting_grpo_config(const Weighting* w, GrpoConfig* gc);
/* A group's n advantages become its per-completion training weights, in place: an own group
 * (received = 0) by w->local, a received one by w->external. */
void weighting_group_weights(const Weighting* w, int received, float* adv, int n);

#endif
