/* Counter-based random streams (Philox4x32-10). A stream is keyed by (seed, rank, round,
 * purpose), so any stream can be recreated on its own, on any rank or backend, without
 * replaying the others. Draws within a stream come from an incrementing block counter. */
#ifndef SAPO_CORE_RNG_H
#define SAPO_CORE_RNG_H

#include <stdint.h>

/* What a stream is for; part of its key, so streams for different purposes never overlap. */
typedef enum {
    RNG_INIT = 1,      /* model weight initialisation */
    RNG_QUESTIONS = 2, /* which tasks and generator seeds a node asks this round */
    RNG_GENERATE = 3,  /* token sampling */
    RNG_POOL = 4,      /* drawing external groups from the pool */
    RNG_NETEM = 5,     /* latency, drops, churn */
    RNG_EVAL = 6,      /* held-out evaluation questions */
    RNG_DATA = 7,      /* supervised warm-up data */
    RNG_BUDGET = 8,    /* the items the budget check measures (src/swarm/budget_check.c) */
    RNG_EVAL_SET = 9,  /* the fixed held-out evaluation set (keyed by run.eval_seed, not swarm.seed) */
    RNG_SYNC = 10,     /* NoLoCo's averaging groups (swarm/weight_sync.c) */
    RNG_TEST = 99,     /* tests and benchmarks */
} RngPurpose;

typedef struct {
    uint32_t key[2];
    uint32_t ctr[4]; /* ctr[0..1]: block index; ctr[2]: round; ctr[3]: purpose */
    uint32_t buf[4];
    int avail;       /* unread words left in buf */
} RngStream;

RngStream rng_stream(uint64_t seed, uint32_t rank, uint32_t round, uint32_t purpose);

uint32_t rng_u32(RngStream* s);
uint64_t rng_u64(RngStream* s);
float rng_float(RngStream* s);      /* uniform in [0, 1), 24 bits */
double rng_double(RngStream* s);    /* uniform in [0, 1), 53 bits */
float rng_normal(RngStream* s);     /* standard normal (Box-Muller, one value per call) */
uint64_t rng_below(RngStream* s, uint64_t n); /* uniform in [0, n), unbiased; n >= 1 */

/* The raw Philox4x32-10 block function, exposed for tests and GPU twins. */
void philox4x32_10(const uint32_t key[2], const uint32_t ctr[4], uint32_t out[4]);

#endif
