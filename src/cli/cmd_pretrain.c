/* `sapo pretrain`: the supervised warm-up that stands in for a pretrained LM. Trains a fresh
 * policy on task demonstrations (question -> "<answer>ANSWER</answer>") from tasks.names at
 * tasks.preset, then measures pass@1 per task with the run's sampler, and writes the
 * checkpoint that `model.init` loads in every node. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_timer.h"
#include "cli/commands.h"
#include "core/check.h"
#include "core/config.h"
#include "core/rng.h"
#include "io/run_dir.h"
#include "model/checkpoint.h"
#include "model/generate.h"
#include "model/model_from_config.h"
#include "model/tokenizer.h"
#include "rl/sft.h"
#include "swarm/budget_check.h"
#include "swarm/taskset.h"
#include "tasks/answer.h"
#include "tasks/registry.h"

/* Draws a question whose stored answer exists (propositional_logic stores None: no
 * demonstration can be written for it, so the warm-up skips it). */
static int draw_demonstrable(const TaskSet* ts, RngStream* rng, Question* q) {
    char err[512];
    for (int tries = 0; tries < 64; tries++) {
        if (question_draw(ts, rng, q, err, sizeof err)) sapo_die("warm-up question: %s", err);
        if (cJSON_IsString(cJSON_GetObjectItem(q->entry, "answer"))) return 1;
        question_free(q);
    }
    return 0;
}

/* pass@1 per task on `per_task` fresh questions each, sampled as the swarm samples. */
static void report_skill(Model* m, const TaskSet* ts, const GenConfig* gen, uint64_t seed, int per_task, FILE* out) {
    int rows = m->cap.max_prefixes < m->cap.max_rows ? m->cap.max_prefixes : m->cap.max_rows, n_ctx = m->cfg.n_ctx;
    int* prompts = mallocCheck(sizeof(int) * rows * n_ctx);
    int* lens = mallocCheck(sizeof(int) * rows);
    int* toks = mallocCheck(sizeof(int) * rows * gen->max_new_tokens);
    int* olens = mallocCheck(sizeof(int) * rows);
    Question* qs = callocCheck(rows, sizeof *qs);
    double total = 0.0;
    int counted = 0;
    fprintf(out, "warm-up skill (pass@1, temperature %.2f, %d questions per task):\n", gen->sampler.temperature, per_task);
    for (int t = 0; t < ts->n; t++) {
        TaskSet one = {.n = 1};
        one.slots[0] = ts->slots[t];
        RngStream rng = rng_stream(seed, 1000 + (uint32_t)t, 0, RNG_EVAL);
        double sum = 0.0, formatted = 0.0;
        for (int done = 0; done < per_task; done += rows) {
            int n = per_task - done < rows ? per_task - done : rows;
            char err[512];
            for (int i = 0; i < n; i++) {
                if (question_draw(&one, &rng, &qs[i], err, sizeof err)) sapo_die("evaluation question: %s", err);
                lens[i] = tok_encode_prompt(qs[i].prompt, prompts + (size_t)i * n_ctx, n_ctx - gen->max_new_tokens);
            }
            model_generate(m, prompts, n_ctx, lens, n, gen, &rng, toks, olens);
            for (int i = 0; i < n; i++) {
                char* text = tok_decode(toks + (size_t)i * gen->max_new_tokens, olens[i]);
                sum += task_reward(qs[i].slot->spec, text, qs[i].entry);
                char* a = answer_extract(text);
                formatted += a != NULL;
                free(a);
                free(text);
                question_free(&qs[i]);
            }
        }
        fprintf(out, "  %-24s %6.3f   (answer tags in %5.1f%%)\n", ts->slots[t].spec->name, sum / per_task,
                100.0 * formatted / per_task);
        total += sum;
        counted += per_task;
    }
    fprintf(out, "  %-24s %6.3f\n", "mean", counted ? total / counted : NAN);
    free(prompts);
    free(lens);
    free(toks);
    free(olens);
    free(qs);
}

static const CliOption OPTIONS[] = {
    {"out", "CKPT", "the checkpoint to write (default pretrain.out, else RUN_DIR/warmup.ckpt)"},
    {"quiet", NULL, "no progress lines (the pass@1 table is still printed)"},
    {NULL, NULL, NULL},
};
enum { OPT_OUT, OPT_QUIET };

static void usage(FILE* out) {
    fprintf(out,
            "usage: sapo pretrain CONFIG.ini [section.key=value ...] [--out CKPT] [--quiet]\n"
            "Supervised warm-up on task demonstrations: [pretrain] steps, batch, lr; the model\n"
            "shape from [model] (node 0); tasks from [tasks]; starts from model.init when set\n"
            "(to specialise a warm-up on some tasks). Writes the checkpoint to --out,\n"
            "else pretrain.out, else RUN_DIR/warmup.ckpt, and prints pass@1 per task.\n");
    cli_print_options(out, OPTIONS);
}

int cmd_pretrain(int argc, char** argv) {
    CliArgs a;
    int parsed = cli_parse("pretrain", OPTIONS, argc, argv, &a);
    if (parsed > 0) usage(stdout);
    Config* cfg = parsed == 0 ? cli_args_config("pretrain", &a) : NULL;
    const char* out = a.opt[OPT_OUT];
    int quiet = a.opt[OPT_QUIET] != NULL;
    cli_args_free(&a);
    if (parsed > 0) return 0;
    if (!cfg) return 2;
    char err[1024];
    TaskSet ts;
    if (taskset_build(&ts, config_string(cfg, "tasks.names"), config_string(cfg, "tasks.preset"), err, sizeof err)) {
        fprintf(stderr, "sapo pretrain: config error: %s\n", err);
        return 2;
    }
    /* The same budget check as sapo run, for every [node.K] the config sets (the warm-up
     * trains at node 0's settings; the checkpoint serves them all). Before any output file. */
    if (budget_check_config(cfg, config_max_node(cfg) + 1, stdout, "sapo pretrain: ", err, sizeof err)) {
        fprintf(stderr, "sapo pretrain: config error: %s\n", err);
        return 2;
    }
    char* owned = NULL;
    if (!out || !*out) out = config_string(cfg, "pretrain.out");
    if (!*out) {
        char* dir = run_dir_create(config_string(cfg, "run.out"), "pretrain", config_string(cfg, "run.name"), err, sizeof err);
        if (!dir) {
            fprintf(stderr, "sapo pretrain: %s\n", err);
            return 1;
        }
        out = owned = path_join(dir, "warmup.ckpt");
        free(dir);
    }
    openblas_set_num_threads(1);
    int steps = (int)config_int(cfg, "pretrain.steps"), B = (int)config_int(cfg, "pretrain.batch");
    GPTConfig gc = gpt_config_from(cfg, 0);
    AdamWConfig hp = adamw_config_from(cfg, 0);
    hp.lr = (float)config_float(cfg, "pretrain.lr");
    float clip = (float)config_float(cfg, "optim.grad_clip");
    uint64_t seed = (uint64_t)config_int(cfg, "swarm.seed");
    GenConfig gen = gen_config_from(cfg, 0);
    gen.stop = COMPLETION_STOP;
    /* one demonstration per group; evaluation generates for up to 64 prompts at once */
    ModelCapacity cap = model_capacity_for(&gc, (int)config_int(cfg, "model.micro_tokens"), B, 1, gen.max_new_tokens, 64, 64);
    Model* m = model_create_cap(&gc, model_backend_find("cpu"), &cap, (uint64_t)config_int(cfg, "model.init_seed"));
    const char* init = config_string(cfg, "model.init");
    if (*init && checkpoint_load(m, init, 0, err, sizeof err)) { /* continue a warm-up, e.g. to specialise it */
        fprintf(stderr, "sapo pretrain: model.init: %s\n", err);
        return 2;
    }
    int T = gc.n_ctx;
    printf("sapo pretrain: %d steps of %d demonstrations, %d tasks at preset %s; model %d layers, d_model %d, "
           "n_ctx %d (%zu parameters); lr %g\n",
           steps, B, ts.n, config_string(cfg, "tasks.preset"), gc.n_layer, gc.d_model, gc.n_ctx, m->num_params, hp.lr);
    Question* qs = callocCheck(B, sizeof *qs);
    SftExample* ex = mallocCheck(sizeof(SftExample) * B);
    char** demos = mallocCheck(sizeof(char*) * B);
    Packer pk;
    packer_init(&pk, m, 0, 1);
    float *lp = mallocCheck(sizeof(float) * pk.cap_tokens), *dlp = mallocCheck(sizeof(float) * pk.cap_tokens);
    double t0 = bench_now(), ema = 0.0, last_print = t0;
    for (int step = 1; step <= steps; step++) {
        RngStream rng = rng_stream(seed, 0, (uint32_t)step, RNG_DATA);
        for (int b = 0; b < B; b++) {
            if (!draw_demonstrable(&ts, &rng, &qs[b])) sapo_die("no task in tasks.names has a stored answer to demonstrate");
            demos[b] = answer_demonstration(cJSON_GetObjectItem(qs[b].entry, "answer")->valuestring);
            ex[b] = (SftExample){prompt_tail(qs[b].prompt, T, gen.max_new_tokens), demos[b]};
        }
        float loss = sft_accumulate(m, &pk, ex, B, lp, dlp);
        model_step(m, &hp, clip);
        ema = step == 1 ? loss : 0.98 * ema + 0.02 * loss;
        for (int b = 0; b < B; b++) {
            free(demos[b]);
            question_free(&qs[b]);
        }
        double now = bench_now();
        if (!quiet && (now - last_print > 5.0 || step == steps)) {
            double rate = step / (now - t0);
            printf("step %6d/%d  loss %.4f (avg %.4f)  %.1f steps/s  ETA %.0fs\n", step, steps, loss, ema, rate,
                   (steps - step) / rate);
            fflush(stdout);
            last_print = now;
        }
    }
    if (checkpoint_save(m, out, 0, err, sizeof err)) {
        fprintf(stderr, "sapo pretrain: %s\n", err);
        return 1;
    }
    report_skill(m, &ts, &gen, seed, 64, stdout);
    printf("wrote %s\n", out);
    free(qs);
    free(ex);
    free(demos);
    packer_free(&pk);
    free(lp);
    free(dlp);
    free(owned);
    taskset_free(&ts);
    model_free(m);
    config_free(cfg);
    return 0;
}
