/* The supervised warm-up's training loop (sapo pretrain): steps of a batch of demonstrations
 * each, drawn by the caller from the step's data stream, trained packed (sft.h) as text or as
 * token ids, one AdamW step each, with a progress line. What a demonstration is (which task,
 * which answer, the held-out rule) is the caller's. */
#ifndef SAPO_RL_SFT_LOOP_H
#define SAPO_RL_SFT_LOOP_H

#include <stdint.h>

#include "core/rng.h"
#include "model/model.h"
#include "rl/sft.h"

typedef struct {
    int steps, batch;
    AdamWConfig adamw;
    float grad_clip;
    uint64_t seed; /* step s draws from rng_stream(seed, 0, s, RNG_DATA) */
    int ids;       /* 1: demonstrations as token ids (SftTokens), 0: as text (SftExample) */
    int quiet;     /* 1: no progress lines */
} SftLoop;

/* Where the demonstrations come from. */
typedef struct {
    void* ctx;
    /* Fills step's batch, rows 0 .. batch-1, from rng: ex[b] when the loop trains text, tk[b]
     * when it trains ids (the other array is NULL). */
    void (*draw)(void* ctx, int step, RngStream* rng, SftExample* ex, SftTokens* tk);
    /* Frees what draw made for the step, after it has been trained. */
    void (*release)(void* ctx);
} SftSource;

/* Trains m for loop->steps steps; unless quiet, a progress line (step, loss and its moving
 * average, the speed, the time left) at most every 5 seconds and at the last step. */
void sft_loop_run(Model* m, const SftLoop* loop, const SftSource* src);

#endif
