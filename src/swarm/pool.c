/* External pool and sampler (see pool.h). */
#include "swarm/pool.h"

#include <stdlib.h>
#include <string.h>

#include "core/check.h"

void pool_add(Pool* p, RolloutGroup* g, const float* rewards, int sender, int sent_round) {
    if (p->n == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 16;
        PoolGroup* grown = realloc(p->items, sizeof *grown * p->cap);
        if (!grown) sapo_die("out of memory growing the pool to %d groups", p->cap);
        p->items = grown;
    }
    PoolGroup* e = &p->items[p->n++];
    e->group = *g;
    memset(g, 0, sizeof *g);
    int L = e->group.n_completions;
    e->rewards = mallocCheck(sizeof(float) * (L > 0 ? L : 1));
    memcpy(e->rewards, rewards, sizeof(float) * L);
    e->all_equal = 1;
    for (int i = 1; i < L; i++)
        if (rewards[i] != rewards[0]) e->all_equal = 0;
    e->sender = sender;
    e->sent_round = sent_round;
}

int pool_eligible(const Pool* p, int filter_zero_adv) {
    int n = 0;
    for (int i = 0; i < p->n; i++) n += !(filter_zero_adv && p->items[i].all_equal);
    return n;
}

int pool_draw(const Pool* p, int J, int filter_zero_adv, RngStream* rng, int* chosen) {
    int* candidates = mallocCheck(sizeof(int) * (p->n > 0 ? p->n : 1));
    int n = 0;
    for (int i = 0; i < p->n; i++)
        if (!(filter_zero_adv && p->items[i].all_equal)) candidates[n++] = i;
    int take = J < n ? J : n;
    for (int k = 0; k < take; k++) { /* partial Fisher-Yates */
        int j = k + (int)rng_below(rng, (uint64_t)(n - k));
        int tmp = candidates[k];
        candidates[k] = candidates[j];
        candidates[j] = tmp;
        chosen[k] = candidates[k];
    }
    free(candidates);
    return take;
}

void pool_clear(Pool* p) {
    for (int i = 0; i < p->n; i++) {
        rollout_group_free(&p->items[i].group);
        free(p->items[i].rewards);
    }
    p->n = 0;
}

void pool_free(Pool* p) {
    pool_clear(p);
    free(p->items);
    memset(p, 0, sizeof *p);
}
