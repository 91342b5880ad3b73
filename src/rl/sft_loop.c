/* The supervised warm-up's training loop (see sft_loop.h). */
#include "rl/sft_loop.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/check.h"
#include "core/clock.h"
#include "rl/pack.h"

/* The progress line of step of steps at rate steps a second. */
static void print_progress(int step, int steps, float loss, double ema, double rate) {
    /* under a step a second (a real model on a CPU), the seconds a step takes */
    char speed[32];
    if (rate >= 1.0) snprintf(speed, sizeof speed, "%.1f steps/s", rate);
    else snprintf(speed, sizeof speed, "%.1f s/step", 1.0 / rate);
    printf("step %6d/%d  loss %.4f (avg %.4f)  %s  ETA %.0fs\n", step, steps, loss, ema, speed, (steps - step) / rate);
    fflush(stdout);
}

void sft_loop_run(Model* m, const SftLoop* loop, const SftSource* src) {
    int B = loop->batch;
    SftExample* ex = loop->ids ? NULL : mallocCheck(sizeof(SftExample) * B);
    SftTokens* tk = loop->ids ? callocCheck(B, sizeof *tk) : NULL;
    Packer pk;
    packer_init(&pk, m, 0, 1);
    float *lp = mallocCheck(sizeof(float) * pk.cap_tokens), *dlp = mallocCheck(sizeof(float) * pk.cap_tokens);
    double t0 = clock_now(), ema = 0.0, last_print = t0;
    for (int step = 1; step <= loop->steps; step++) {
        RngStream rng = rng_stream(loop->seed, 0, (uint32_t)step, RNG_DATA);
        src->draw(src->ctx, step, &rng, ex, tk);
        float loss = tk ? sft_accumulate_ids(m, &pk, tk, B, lp, dlp) : sft_accumulate(m, &pk, ex, B, lp, dlp);
        model_step(m, &loop->adamw, loop->grad_clip);
        ema = step == 1 ? loss : 0.98 * ema + 0.02 * loss;
        src->release(src->ctx);
        double now = clock_now();
        if (!loop->quiet && (now - last_print > 5.0 || step == loop->steps)) {
            print_progress(step, loop->steps, loss, ema, step / (now - t0));
            last_print = now;
        }
    }
    free(ex);
    free(tk);
    packer_free(&pk);
    free(lp);
    free(dlp);
}
