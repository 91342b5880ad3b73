/* The off-policy rule (rl/weighting.h), arm by arm: which received groups drop their
 * negative advantages, carry the sender's log-probs, are importance weighted (tis_cap) and
 * F-TIS filtered (ftis_kl); grpo.local's control on the node's own groups; and the same
 * numbers as a node reads them from a config ([node.K] overrides included). Every value of
 * grpo.external must have its row in ARMS: a new arm without one fails here. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/config.h"
#include "core/config_enums.h"
#include "rl/weighting.h"
#include "swarm/node_settings.h"
#include "../test_assert.h"

typedef struct {
    const char* name;
    int drop_negatives, sender_logprobs, tis, ftis;
} Arm;

static const Arm ARMS[] = {
    {"ratio1", 0, 0, 0, 0},
    {"positive_only", 1, 0, 0, 0},
    {"tis", 0, 1, 1, 0},
    {"ftis", 0, 1, 1, 1},
};
enum { N_ARMS = sizeof ARMS / sizeof ARMS[0] };

static const char* const EXTERNAL_NAMES[] = {EXTERNAL_WEIGHTING_VALUES(CONFIG_ENUM_NAME)};
enum { N_EXTERNAL = sizeof EXTERNAL_NAMES / sizeof EXTERNAL_NAMES[0] };

static const Arm* arm_named(const char* name) {
    for (int i = 0; i < N_ARMS; i++)
        if (!strcmp(ARMS[i].name, name)) return &ARMS[i];
    return NULL;
}

/* adv = {1.5, -0.5, 0, -2, NaN} through the rule; the expected weights with or without the
 * negatives dropped (NaN is not positive: dropped to 0 as well). */
static void check_weights(const Weighting* w, int received, int drop, const char* what) {
    float a[5] = {1.5f, -0.5f, 0.0f, -2.0f, NAN};
    weighting_group_weights(w, received, a, 5);
    int ok = a[0] == 1.5f && a[2] == 0.0f;
    if (drop) ok = ok && a[1] == 0.0f && a[3] == 0.0f && a[4] == 0.0f;
    else ok = ok && a[1] == -0.5f && a[3] == -2.0f && isnan(a[4]);
    EXPECT(ok, "%s: weights %g %g %g %g %g", what, a[0], a[1], a[2], a[3], a[4]);
}

static void test_arms(void) {
    EXPECT((int)N_EXTERNAL == (int)N_ARMS, "grpo.external has %d values, the test %d rows", N_EXTERNAL, N_ARMS);
    for (int e = 0; e < N_EXTERNAL; e++) {
        const char* name = EXTERNAL_NAMES[e];
        const Arm* want = arm_named(name);
        EXPECT(want, "grpo.external = %s has no row in ARMS", name);
        if (!want) continue;
        ExternalRule r = weighting_external_rule((ExternalWeighting)e);
        EXPECT(r.drop_negatives == want->drop_negatives && r.sender_logprobs == want->sender_logprobs &&
                   r.tis == want->tis && r.ftis == want->ftis,
               "%s: rule drop %d logprobs %d tis %d ftis %d", name, r.drop_negatives, r.sender_logprobs, r.tis, r.ftis);
        Weighting w = {.local = LOCAL_ALL, .external = (ExternalWeighting)e, .tis_cap = 3.0f, .ftis_kl = 0.25f};
        EXPECT(weighting_needs_sender_logprobs(&w) == want->sender_logprobs, "%s: sender log-probs", name);
        GrpoConfig gc = {.tis_cap = -1.0f, .ftis_kl = -1.0f, .eps_low = 0.2f};
        weighting_grpo_config(&w, &gc);
        EXPECT(gc.tis_cap == (want->tis ? 3.0f : 0.0f) && gc.ftis_kl == (want->ftis ? 0.25f : 0.0f) &&
                   gc.eps_low == 0.2f,
               "%s: tis_cap %g ftis_kl %g", name, gc.tis_cap, gc.ftis_kl);
        char what[64];
        snprintf(what, sizeof what, "%s, received", name);
        check_weights(&w, 1, want->drop_negatives, what);
        snprintf(what, sizeof what, "%s, own (local all)", name);
        check_weights(&w, 0, 0, what);
        w.local = LOCAL_POSITIVE_ONLY;
        snprintf(what, sizeof what, "%s, own (local positive_only)", name);
        check_weights(&w, 0, 1, what);
    }
}

static void set(Config* cfg, const char* assignment) {
    char err[256];
    EXPECT(config_set_override(cfg, assignment, err, sizeof err) == 0, "%s: %s", assignment, err);
}

/* As a node reads them: node 0 at the global arm, node 1 at its own; tis_cap and ftis_kl
 * reach GrpoConfig only under the arms that use them. */
static void test_settings(void) {
    for (int e = 0; e < N_EXTERNAL; e++) {
        const Arm* want = arm_named(EXTERNAL_NAMES[e]);
        if (!want) continue;
        Config* cfg = config_new();
        char a[96];
        snprintf(a, sizeof a, "grpo.external=%s", want->name);
        set(cfg, a);
        set(cfg, "grpo.tis_cap=4");
        set(cfg, "grpo.ftis_kl=0.5");
        set(cfg, "node.1.grpo.external=ftis");
        set(cfg, "node.1.grpo.local=positive_only");
        NodeSettings n0 = node_settings_read(cfg, 0), n1 = node_settings_read(cfg, 1);
        EXPECT(n0.weighting.external == (ExternalWeighting)e && n0.weighting.local == LOCAL_ALL,
               "%s: node 0 reads external %d local %d", want->name, (int)n0.weighting.external, (int)n0.weighting.local);
        EXPECT(n0.grpo.tis_cap == (want->tis ? 4.0f : 0.0f) && n0.grpo.ftis_kl == (want->ftis ? 0.5f : 0.0f),
               "%s: node 0 tis_cap %g ftis_kl %g", want->name, n0.grpo.tis_cap, n0.grpo.ftis_kl);
        EXPECT(n1.weighting.external == EXTERNAL_FTIS && n1.weighting.local == LOCAL_POSITIVE_ONLY &&
                   n1.grpo.tis_cap == 4.0f && n1.grpo.ftis_kl == 0.5f,
               "node 1 (ftis, local positive_only): tis_cap %g ftis_kl %g", n1.grpo.tis_cap, n1.grpo.ftis_kl);
        config_free(cfg);
    }
}

int main(void) {
    test_arms();
    test_settings();
    return test_finish("test_weighting");
}
