/* `sapo pretrain`: the supervised warm-up that stands in for a pretrained LM. Trains a fresh
 * policy on task demonstrations (question -> "<answer>ANSWER</answer>") from tasks.names at
 * tasks.preset on model.backend, writes the checkpoint that `model.init` loads in every
 * node, then measures its pass@1 per task on the run's fixed held-out set, as the nodes do
 * (swarm/evaluation.h). cmd_pretrain, at the end, runs the stages in order: options and
 * config, checks, the checkpoint's path, the model, the steps, the checkpoint and the table. */
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
    PromptCodec codec = prompt_codec_byte();
    double pass1 = evaluation_run(m, &codec, gen, &es, &rng, by_task, tagged);
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

/* ---- the command's state ------------------------------------------------------------ */

/* What one warm-up holds, from the options to the end; pretrain_end releases all of it. */
typedef struct {
    Config* cfg;
    const char* out; /* the checkpoint to write */
    char* owned;     /* out when this command built it (RUN_DIR/warmup.ckpt), else NULL */
    int quiet;
    SwarmSettings sw;
    NodeSettings node0; /* the warm-up trains at node 0's settings, all of them */
    TaskSet ts;
    const ModelBackend* backend;
    Model* m;
    GenConfig gen; /* node 0's, stopping at </answer>: the evaluation's */
    char err[1024];
} Pretrain;

/* The one way out of `sapo pretrain`: releases what the warm-up holds, returns `code` (0
 * done, 1 an output file, 2 bad options or config). */
static int pretrain_end(Pretrain* p, int code) {
    free(p->owned);
    taskset_free(&p->ts);
    model_free(p->m);
    config_free(p->cfg);
    return code;
}

/* ---- the stages: each returns -1 to go on, else the exit status ---------------------- */

/* The options and the config. */
static int pretrain_read_options(Pretrain* p, int argc, char** argv) {
    CliArgs a;
    int parsed = cli_parse("pretrain", OPTIONS, argc, argv, &a);
    if (parsed > 0) usage(stdout);
    p->cfg = parsed == 0 ? cli_args_config("pretrain", &a) : NULL;
    p->out = a.opt[OPT_OUT];
    p->quiet = a.opt[OPT_QUIET] != NULL;
    cli_args_free(&a);
    if (parsed > 0) return 0;
    if (!p->cfg) return 2;
    p->sw = swarm_settings_read(p->cfg);
    p->node0 = node_settings_read(p->cfg, 0);
    return -1;
}

/* The tasks, the budget and the backend, before any output file. */
static int pretrain_check(Pretrain* p) {
    if (taskset_build(&p->ts, p->sw.tasks_names, p->sw.tasks_preset, p->err, sizeof p->err)) {
        fprintf(stderr, "sapo pretrain: config error: %s\n", p->err);
        return 2;
    }
    /* The same budget check as sapo run, for every [node.K] the config sets (the warm-up
     * trains at node 0's settings; the checkpoint serves them all). */
    if (budget_check_config(p->cfg, config_max_node(p->cfg) + 1, stdout, "sapo pretrain: ", p->err, sizeof p->err)) {
        fprintf(stderr, "sapo pretrain: config error: %s\n", p->err);
        return 2;
    }
    /* node 0's backend, as the nodes choose theirs (auto: CUDA when a GPU is visible) */
    p->backend = model_backend_for(p->node0.backend);
    if (!p->backend) {
        fprintf(stderr, "sapo pretrain: config error: model.backend = '%s' is not available in this build or on this "
                        "machine\n", model_backend_choice_name(p->node0.backend));
        return 2;
    }
    return -1;
}

/* The checkpoint's path (--out, else pretrain.out, else a fresh RUN_DIR/warmup.ckpt) and its
 * folder, before any training: a path that cannot be written is found now, not after the
 * steps. */
static int pretrain_out_path(Pretrain* p) {
    if (!p->out || !*p->out) p->out = p->sw.pretrain.out;
    if (!*p->out) {
        char* dir = run_dir_create(p->sw.run_out, "pretrain", p->sw.run_name, p->err, sizeof p->err);
        if (!dir) {
            fprintf(stderr, "sapo pretrain: %s\n", p->err);
            return 1;
        }
        p->out = p->owned = path_join(dir, "warmup.ckpt");
        free(dir);
    }
    const char* slash = strrchr(p->out, '/');
    if (slash && slash != p->out) {
        char* parent = strndup(p->out, (size_t)(slash - p->out));
        int bad = make_dirs(parent, p->err, sizeof p->err);
        free(parent);
        if (bad) {
            fprintf(stderr, "sapo pretrain: --out %s: %s\n", p->out, p->err);
            return 1;
        }
    }
    return -1;
}

/* The model at node 0's shape on its backend, from model.init when set, and the line that
 * says what is trained. */
static int pretrain_model(Pretrain* p) {
    openblas_set_num_threads(1);
    const GPTConfig* gc = &p->node0.model;
    p->gen = p->node0.gen;
    p->gen.stop = COMPLETION_STOP;
    /* one demonstration per group; evaluation generates for up to 64 prompts at once */
    ModelCapacity cap =
        model_capacity_for(gc, p->node0.micro_tokens, p->sw.pretrain.batch, 1, p->gen.max_new_tokens, 64, 64);
    p->m = model_create_cap(gc, p->backend, &cap, p->sw.init_seed);
    const char* init = p->node0.init; /* continue a warm-up, e.g. to specialise it */
    if (*init && checkpoint_load(p->m, init, 0, p->err, sizeof p->err)) {
        fprintf(stderr, "sapo pretrain: model.init: %s\n", p->err);
        return 2;
    }
    printf("sapo pretrain: %d steps of %d demonstrations, %d tasks at preset %s; model %d layers, d_model %d, "
           "n_ctx %d (%zu parameters); lr %g\n",
           p->sw.pretrain.steps, p->sw.pretrain.batch, p->ts.n, task_preset_name(p->sw.tasks_preset), gc->n_layer,
           gc->d_model, gc->n_ctx, p->m->num_params, p->sw.pretrain.lr);
    return -1;
}

/* pretrain.steps steps of pretrain.batch demonstrations each, drawn from the step's data
 * stream; a progress line at most every 5 seconds and at the last step, unless --quiet. */
static void pretrain_train(Pretrain* p) {
    int steps = p->sw.pretrain.steps, B = p->sw.pretrain.batch, T = p->node0.model.n_ctx;
    AdamWConfig hp = p->node0.adamw;
    hp.lr = p->sw.pretrain.lr;
    float clip = p->node0.grad_clip;
    uint64_t seed = p->sw.seed;
    Question* qs = callocCheck(B, sizeof *qs);
    SftExample* ex = mallocCheck(sizeof(SftExample) * B);
    char** demos = mallocCheck(sizeof(char*) * B);
    Packer pk;
    packer_init(&pk, p->m, 0, 1);
    float *lp = mallocCheck(sizeof(float) * pk.cap_tokens), *dlp = mallocCheck(sizeof(float) * pk.cap_tokens);
    double t0 = clock_now(), ema = 0.0, last_print = t0;
    for (int step = 1; step <= steps; step++) {
        RngStream rng = rng_stream(seed, 0, (uint32_t)step, RNG_DATA);
        for (int b = 0; b < B; b++) {
            if (!draw_demonstrable(&p->ts, &rng, &qs[b]))
                sapo_die("no task in tasks.names has a stored answer to demonstrate");
            demos[b] = answer_demonstration(cJSON_GetObjectItem(qs[b].entry, "answer")->valuestring);
            ex[b] = (SftExample){prompt_tail(qs[b].prompt, T, p->gen.max_new_tokens), demos[b]};
        }
        float loss = sft_accumulate(p->m, &pk, ex, B, lp, dlp);
        model_step(p->m, &hp, clip);
        ema = step == 1 ? loss : 0.98 * ema + 0.02 * loss;
        for (int b = 0; b < B; b++) {
            free(demos[b]);
            question_free(&qs[b]);
        }
        double now = clock_now();
        if (!p->quiet && (now - last_print > 5.0 || step == steps)) {
            double rate = step / (now - t0);
            printf("step %6d/%d  loss %.4f (avg %.4f)  %.1f steps/s  ETA %.0fs\n", step, steps, loss, ema, rate,
                   (steps - step) / rate);
            fflush(stdout);
            last_print = now;
        }
    }
    free(qs);
    free(ex);
    free(demos);
    packer_free(&pk);
    free(lp);
    free(dlp);
}

/* The checkpoint, then the pass@1 table and the line naming the checkpoint. */
static int pretrain_finish(Pretrain* p) {
    if (checkpoint_save(p->m, p->out, 0, p->err, sizeof p->err)) {
        fprintf(stderr, "sapo pretrain: %s\n", p->err);
        return 1;
    }
    if (report_skill(p->m, p->cfg, &p->ts, &p->gen, p->sw.seed, stdout, p->err, sizeof p->err)) {
        fprintf(stderr, "sapo pretrain: evaluation set: %s\n", p->err);
        return 1;
    }
    printf("wrote %s\n", p->out);
    return 0;
}

/* ---- the command --------------------------------------------------------------------- */

int cmd_pretrain(int argc, char** argv) {
    Pretrain p = {0};
    int code = pretrain_read_options(&p, argc, argv);
    if (code < 0) code = pretrain_check(&p);
    if (code < 0) code = pretrain_out_path(&p);
    if (code < 0) code = pretrain_model(&p);
    if (code < 0) {
        pretrain_train(&p);
        code = pretrain_finish(&p);
    }
    return pretrain_end(&p, code);
}
