/* `sapo demo`: the policy model end to end on one core, before any swarm: supervised
 * training on a toy task (two-number addition), progress lines, greedy accuracy on held-out
 * prompts, a few samples, a checkpoint and a loss log in a run directory. cmd_demo, at the
 * end, runs the stages in order: options and config, run directory, model, steps,
 * evaluation, checkpoint. */
#include <cblas.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "core/check.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/rng.h"
#include "core/stage.h"
#include "io/files.h"
#include "io/run_dir.h"
#include "model/checkpoint.h"
#include "model/generate.h"
#include "model/model.h"
#include "model/tokenizer.h"
#include "rl/sft.h"
#include "swarm/node_settings.h"

enum { DEMO_T = 16, TEXT = 16 };

/* One addition example "a+b=" -> "c" with a, b in [0, 100). */
static void make_example(RngStream* rng, char* prompt, char* completion) {
    int a = (int)rng_below(rng, 100), b = (int)rng_below(rng, 100);
    snprintf(prompt, TEXT, "%d+%d=", a, b);
    snprintf(completion, TEXT, "%d", a + b);
}

static const CliOption OPTIONS[] = {
    {"steps", "N", "training steps (default 600)"},
    {"batch", "B", "examples per step, 1 to 4096 (default 32)"},
    {"out", "DIR", "the run directory (default results/runs/demo-DATE-TIME)"},
    {NULL, NULL, NULL},
};
enum { OPT_STEPS, OPT_BATCH, OPT_OUT };

static void usage(FILE* out) {
    fprintf(out,
            "usage: sapo demo [CONFIG.ini] [section.key=value ...] [--steps N] [--batch B] [--out DIR]\n"
            "Trains a fresh policy model on a toy task (a+b=c) by supervised learning and reports\n"
            "greedy accuracy on held-out prompts. Uses [model], [optim] (as node 0 sees them) and\n"
            "model.init_seed from the config (see `sapo info`). Writes model.ckpt and loss.csv into\n"
            "the run directory (default results/runs/demo-DATE-TIME).\n");
    cli_print_options(out, OPTIONS);
}

/* ---- the command's state ------------------------------------------------------------ */

/* What one demo holds, from the options to the end; demo_end releases all of it. */
typedef struct {
    Config* cfg;
    const char* out_dir; /* --out DIR, else NULL */
    int steps, B;
    RunSettings set;    /* set.node[0]: [model] and [optim] as node 0 sees them */
    uint64_t seed;      /* model.init_seed: the weights and every data stream */
    char* dir;          /* the run directory */
    char* loss_path;    /* DIR/loss.csv */
    Model* m;
    char err[512];
} Demo;

/* The one way out of `sapo demo`: releases what the demo holds, returns `code` (0 done, 1
 * an output file, 2 bad options or config). */
static int demo_end(Demo* d, int code) {
    free(d->loss_path);
    free(d->dir);
    model_free(d->m);
    run_settings_free(&d->set);
    config_free(d->cfg);
    return code;
}

/* ---- the stages: each says go on, or exit with a status (core/stage.h) ---------------- */

/* The options and the config. */
static StageResult demo_read_options(Demo* d, int argc, char** argv) {
    CliArgs a;
    int parsed = cli_parse("demo", OPTIONS, argc, argv, &a);
    if (parsed > 0) usage(stdout);
    d->cfg = parsed == 0 ? cli_args_settings("demo", &a, 1, 0, &d->set) : NULL;
    d->out_dir = a.opt[OPT_OUT];
    d->steps = 600;
    d->B = 32;
    int bad = d->cfg &&
              (cli_opt_int(&a, OPT_STEPS, 1, INT_MAX, &d->steps) || cli_opt_int(&a, OPT_BATCH, 1, 4096, &d->B));
    cli_args_free(&a);
    if (parsed > 0) return stage_exit(0);
    if (!d->cfg || bad) return stage_exit(2);
    return stage_go_on();
}

/* The run directory (--out, else results/runs/demo-DATE-TIME). */
static StageResult demo_run_dir(Demo* d) {
    d->dir = run_dir_create(d->out_dir, "demo", "", d->err, sizeof d->err);
    if (!d->dir) {
        fprintf(stderr, "sapo demo: %s\n", d->err);
        return stage_exit(1);
    }
    return stage_go_on();
}

/* A fresh CPU model at node 0's shape (n_ctx at least DEMO_T), then the lines that say
 * where it writes and what it trains. */
static void demo_model(Demo* d) {
    openblas_set_num_threads(1);
    ModelShape gc = d->set.node[0].model;
    if (gc.n_ctx < DEMO_T) gc.n_ctx = DEMO_T;
    d->seed = d->set.sw.init_seed;
    d->m = model_create(&gc, model_backend_find("cpu"), d->B, d->seed);
    printf("sapo demo: run directory %s\n", d->dir);
    printf("model: %d layers, %d heads, d_model %d, %zu parameters; AdamW lr %g, clip %g; batch %d x %d tokens\n",
           gc.n_layer, gc.n_head, gc.d_model, d->m->num_params, d->set.node[0].adamw.lr, d->set.node[0].grad_clip,
           d->B, DEMO_T);
}

/* --steps steps of --batch examples from each step's data stream, one line of loss.csv a
 * step, a progress line every 100 steps and at the last. */
static void demo_train(Demo* d) {
    int B = d->B, steps = d->steps;
    AdamWConfig hp = d->set.node[0].adamw;
    float clip = d->set.node[0].grad_clip;
    d->loss_path = path_join(d->dir, "loss.csv");
    FILE* log = fopenCheck(d->loss_path, "w");
    fprintf(log, "step,loss,grad_norm\n");
    char (*prompts)[TEXT] = mallocCheck(sizeof(*prompts) * B);
    char (*completions)[TEXT] = mallocCheck(sizeof(*completions) * B);
    SftExample* ex = mallocCheck(sizeof(SftExample) * B);
    int *in = mallocCheck(sizeof(int) * B * DEMO_T), *tg = mallocCheck(sizeof(int) * B * DEMO_T);
    float *lp = mallocCheck(sizeof(float) * B * DEMO_T), *dlp = mallocCheck(sizeof(float) * B * DEMO_T);
    double t0 = clock_now(), ema = 0.0;
    for (int step = 1; step <= steps; step++) {
        RngStream data = rng_stream(d->seed, 0, (uint32_t)step, RNG_DATA);
        for (int b = 0; b < B; b++) {
            make_example(&data, prompts[b], completions[b]);
            ex[b] = (SftExample){prompts[b], completions[b]};
        }
        sft_pack(ex, B, DEMO_T, in, tg);
        model_zero_grad(d->m);
        model_forward(d->m, in, tg, B, DEMO_T, lp);
        float loss = sft_loss_grad(lp, tg, B * DEMO_T, dlp);
        model_backward(d->m, dlp);
        float norm = model_step(d->m, &hp, clip);
        ema = step == 1 ? loss : 0.95 * ema + 0.05 * loss;
        fprintf(log, "%d,%.6f,%.6f\n", step, loss, norm);
        if (step % 100 == 0 || step == steps)
            printf("step %5d/%d  loss %.4f (avg %.4f)  %.1f ms/step\n", step, steps, loss, ema,
                   1e3 * (clock_now() - t0) / step);
    }
    fcloseCheck(log);
    free(prompts);
    free(completions);
    free(ex);
    free(in);
    free(tg);
    free(lp);
    free(dlp);
}

enum { EVAL = 256 };

/* Held-out evaluation: greedy answers to EVAL prompts from a stream training never used,
 * --batch at a time; the first 5 printed as samples. Returns how many were correct. */
static int demo_evaluate(Demo* d) {
    int B = d->B, correct = 0, shown = 0;
    GenConfig gen = {.sampler = {.temperature = 0.0f, .top_p = 1.0f}, .max_new_tokens = 6, .stop = NULL};
    RngStream held = rng_stream(d->seed, 1, 0, RNG_EVAL);
    RngStream unused = rng_stream(d->seed, 1, 0, RNG_GENERATE);
    char (*prompts)[TEXT] = mallocCheck(sizeof(*prompts) * B);
    char (*completions)[TEXT] = mallocCheck(sizeof(*completions) * B);
    int* ptoks = mallocCheck(sizeof(int) * B * DEMO_T);
    int* plens = mallocCheck(sizeof(int) * B);
    int* out = mallocCheck(sizeof(int) * B * gen.max_new_tokens);
    int* olens = mallocCheck(sizeof(int) * B);
    for (int done = 0; done < EVAL; done += B) {
        int n = EVAL - done < B ? EVAL - done : B;
        for (int b = 0; b < n; b++) {
            make_example(&held, prompts[b], completions[b]);
            plens[b] = tok_encode_prompt(prompts[b], ptoks + b * DEMO_T, DEMO_T);
        }
        model_generate(d->m, ptoks, DEMO_T, plens, n, &gen, &unused, out, olens);
        for (int b = 0; b < n; b++) {
            char* text = tok_decode(out + b * gen.max_new_tokens, olens[b]);
            int ok = !strcmp(text, completions[b]);
            correct += ok;
            if (shown < 5) {
                printf("  sample: %-7s -> %-5s (%s)\n", prompts[b], text, ok ? "correct" : "wrong");
                shown++;
            }
            free(text);
        }
    }
    free(prompts);
    free(completions);
    free(ptoks);
    free(plens);
    free(out);
    free(olens);
    return correct;
}

/* DIR/model.ckpt, then the accuracy line and the line naming what was written. */
static int demo_finish(Demo* d, int correct) {
    char* ckpt = path_join(d->dir, "model.ckpt");
    if (checkpoint_save(d->m, ckpt, 1, d->err, sizeof d->err)) {
        fprintf(stderr, "sapo demo: %s\n", d->err);
        free(ckpt);
        return 1;
    }
    printf("held-out greedy accuracy: %d/%d = %.1f%%\n", correct, EVAL, 100.0 * correct / EVAL);
    printf("wrote %s and %s\n", ckpt, d->loss_path);
    free(ckpt);
    return 0;
}

/* ---- the command --------------------------------------------------------------------- */

int cmd_demo(int argc, char** argv) {
    Demo d = {0};
    StageResult stage = demo_read_options(&d, argc, argv);
    if (stage_goes_on(stage)) stage = demo_run_dir(&d);
    if (stage_goes_on(stage)) {
        demo_model(&d);
        demo_train(&d);
        stage = stage_exit(demo_finish(&d, demo_evaluate(&d)));
    }
    return demo_end(&d, stage.exit_code);
}
