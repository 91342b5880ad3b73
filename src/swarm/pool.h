/* The receiver's pool of verified external groups and its sampler: optionally drop groups
 * whose rewards are all equal (zero advantage: nothing to learn), then draw J uniformly
 * without replacement from what remains. */
#ifndef SAPO_SWARM_POOL_H
#define SAPO_SWARM_POOL_H

#include "core/rng.h"
#include "swarm/net/message.h"

typedef struct {
    RolloutGroup group;
    float* rewards;  /* the receiver's own scores, one per completion */
    int all_equal;   /* every reward equal: all advantages zero */
    int sender;
    int sent_round;      /* the round its age counts from (Inbox.age_from) */
} PoolGroup;

typedef struct {
    PoolGroup* items;
    int n, cap;
} Pool;

/* Takes ownership of *g (left empty). */
void pool_add(Pool* p, RolloutGroup* g, const float* rewards, int sender, int sent_round);
/* Groups the filter keeps (all when filter_zero_adv is 0). */
int pool_eligible(const Pool* p, int filter_zero_adv);
/* Draws up to J eligible groups uniformly without replacement; writes their indices in
 * draw order to chosen and returns how many (less than J when the pool runs short). */
int pool_draw(const Pool* p, int J, int filter_zero_adv, RngStream* rng, int* chosen);
void pool_clear(Pool* p);
void pool_free(Pool* p);

#endif
