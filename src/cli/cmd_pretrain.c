/* `sapo pretrain`: the supervised warm-up that stands in for a pretrained LM. Trains a fresh
 * policy on task demonstrations (question -> "<answer>ANSWER</answer>") from tasks.names at
 * tasks.preset on model.backend, writes the checkpoint that `model.init` loads in every
 * node, then measures its pass@1 per task on the run's fixed held-out set, as the nodes do
 * (swarm/evaluation.h). */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "core/check.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/rng.h"
#include "io/run_dir.h"
#include "model/checkpoint.h"
#include "model/generate.h"
#include "model/tokenizer.h"
#include "rl/sft.h"
#include "swarm/budget_check.h"
#include "swarm/evaluation.h"
#include "swarm/node_settings.h"
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

/* pass@1 of the warm-up on the run's fixed held-out set (run.eval_questions from
 * run.eval_seed, swarm/evalset.h), answered once per question through evaluation_run, the
 * nodes' evaluation, sampled from the stream node 0 evaluates round 0 with: per task in
 * tasks.names order, then the mean over the questions. Returns -1 with err when the set
 * cannot be built. */
static int report_skill(Model* m, const Config* cfg, const TaskSet* ts, const GenConfig* gen, uint64_t seed, FILE* out,
                        char* err, size_t errlen) {
    SwarmSettings sw = swarm_settings_read(cfg);
    int n = sw.eval_questions;
    uint64_t eval_seed = sw.eval_seed;
    if (n == 0) {
        fprintf(out, "warm-up skill: not measured (run.eval_questions = 0)\n");
        return 0;
    }
    EvalSet es;
    if (evalset_build(&es, ts, eval_seed, n, err, errlen)) return -1;
    RngStream rng = rng_stream(seed, 0, 0, RNG_EVAL);
    double by_task[TASK_N_IDS], tagged[TASK_N_IDS];
    double pass1 = evaluation_run(m, gen, &es, &rng, by_task, tagged);
    fprintf(out,
            "warm-up skill (pass@1, temperature %.2f, on the held-out set of %d questions: run.eval_seed %llu, digest "
            "%016llx):\n",
            gen->sampler.temperature, n, (unsigned long long)eval_seed, (unsigned long long)es.digest);
    for (int t = 0; t < ts->n; t++) {
        int id = ts->slots[t].task_id;
        if (!es.n_by_task[id]) continue;
        fprintf(out, "  %-24s %6.3f   (answer tags in %5.1f%%, %d questions)\n", ts->slots[t].spec->name, by_task[id],
                100.0 * tagged[id], es.n_by_task[id]);
    }
    fprintf(out, "  %-24s %6.3f\n", "mean", pass1);
    evalset_free(&es);
    return 0;
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
            "Supervised warm-up on task demonstrations: [pretrain] steps, batch, lr; every other\n"
            "model, optim and gen key as node 0 sees it ([node.0] applied, other [node.K] only\n"
            "budget-checked); tasks from [tasks]; starts from node 0's model.init when set\n"
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
    SwarmSettings sw = swarm_settings_read(cfg);
    NodeSettings node0 = node_settings_read(cfg, 0); /* the warm-up trains at node 0's settings, all of them */
    TaskSet ts;
    if (taskset_build(&ts, sw.tasks_names, sw.tasks_preset, err, sizeof err)) {
        fprintf(stderr, "sapo pretrain: config error: %s\n", err);
        return 2;
    }
    /* The same budget check as sapo run, for every [node.K] the config sets (the warm-up
     * trains at node 0's settings; the checkpoint serves them all). Before any output file. */
    if (budget_check_config(cfg, config_max_node(cfg) + 1, stdout, "sapo pretrain: ", err, sizeof err)) {
        fprintf(stderr, "sapo pretrain: config error: %s\n", err);
        return 2;
    }
    /* node 0's backend, as the nodes choose theirs (auto: CUDA when a GPU is visible) */
    const ModelBackend* backend = model_backend_for(node0.backend);
    if (!backend) {
        fprintf(stderr, "sapo pretrain: config error: model.backend = '%s' is not available in this build or on this "
                        "machine\n", model_backend_choice_name(node0.backend));
        return 2;
    }
    char* owned = NULL;
    if (!out || !*out) out = sw.pretrain.out;
    if (!*out) {
        char* dir = run_dir_create(sw.run_out, "pretrain", sw.run_name, err, sizeof err);
        if (!dir) {
            fprintf(stderr, "sapo pretrain: %s\n", err);
            return 1;
        }
        out = owned = path_join(dir, "warmup.ckpt");
        free(dir);
    }
    /* The checkpoint's folder before any training: a path that cannot be written is found
     * now, not after the steps. */
    const char* slash = strrchr(out, '/');
    if (slash && slash != out) {
        char* parent = strndup(out, (size_t)(slash - out));
        int bad = make_dirs(parent, err, sizeof err);
        free(parent);
        if (bad) {
            fprintf(stderr, "sapo pretrain: --out %s: %s\n", out, err);
            free(owned);
            return 1;
        }
    }
    openblas_set_num_threads(1);
    int steps = sw.pretrain.steps, B = sw.pretrain.batch;
    GPTConfig gc = node0.model;
    AdamWConfig hp = node0.adamw;
    hp.lr = sw.pretrain.lr;
    float clip = node0.grad_clip;
    uint64_t seed = sw.seed;
    GenConfig gen = node0.gen;
    gen.stop = COMPLETION_STOP;
    /* one demonstration per group; evaluation generates for up to 64 prompts at once */
    ModelCapacity cap = model_capacity_for(&gc, node0.micro_tokens, B, 1, gen.max_new_tokens, 64, 64);
    Model* m = model_create_cap(&gc, backend, &cap, sw.init_seed);
    const char* init = node0.init;
    if (*init && checkpoint_load(m, init, 0, err, sizeof err)) { /* continue a warm-up, e.g. to specialise it */
        fprintf(stderr, "sapo pretrain: model.init: %s\n", err);
        return 2;
    }
    int T = gc.n_ctx;
    printf("sapo pretrain: %d steps of %d demonstrations, %d tasks at preset %s; model %d layers, d_model %d, "
           "n_ctx %d (%zu parameters); lr %g\n",
           steps, B, ts.n, task_preset_name(sw.tasks_preset), gc.n_layer, gc.d_model, gc.n_ctx, m->num_params, hp.lr);
    Question* qs = callocCheck(B, sizeof *qs);
    SftExample* ex = mallocCheck(sizeof(SftExample) * B);
    char** demos = mallocCheck(sizeof(char*) * B);
    Packer pk;
    packer_init(&pk, m, 0, 1);
    float *lp = mallocCheck(sizeof(float) * pk.cap_tokens), *dlp = mallocCheck(sizeof(float) * pk.cap_tokens);
    double t0 = clock_now(), ema = 0.0, last_print = t0;
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
        double now = clock_now();
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
    if (report_skill(m, cfg, &ts, &gen, seed, stdout, err, sizeof err)) {
        fprintf(stderr, "sapo pretrain: evaluation set: %s\n", err);
        return 1;
    }
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
