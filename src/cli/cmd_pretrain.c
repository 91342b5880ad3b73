/* `sapo pretrain`: the supervised format warm-up. Trains node 0's policy on task
 * demonstrations (question -> "<answer>ANSWER</answer>") from tasks.names at tasks.preset on
 * model.backend, writes the checkpoint that `model.init` loads in every node, then measures
 * its pass@1 per task on the run's fixed held-out set, as the nodes do (swarm/evaluation.h),
 * and writes CKPT.json (what was demonstrated, the skill). pretrain.tasks narrows the
 * demonstrations to some of tasks.names (a specialist); draws that are held-out questions are
 * counted, and drawn again under tasks.exclude_eval.
 * The byte-level GPT starts fresh and reads its demonstrations as bytes; a llama node's model
 * (model.family = llama) starts from model.hf_dir's weights and reads them as its tokenizer's
 * ids, the prompt framed by the node's PromptCodec exactly as its generation reads it.
 * cmd_pretrain, at the end, runs the stages in order: options and config, checks, the
 * checkpoint's path, the model, the steps, the checkpoint and the table. */
#include <cblas.h>
#include <errno.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/commands.h"
#include "core/check.h"
#include "core/config.h"
#include "core/rng.h"
#include "core/stage.h"
#include "io/atomic_file.h"
#include "io/files.h"
#include "io/run_dir.h"
#include "model/checkpoint.h"
#include "model/generate.h"
#include "model/policy.h"
#include "model/prompt_codec.h"
#include "model/tokenizer.h"
#include "rl/sft.h"
#include "rl/sft_loop.h"
#include "swarm/budget_check.h"
#include "swarm/evalset.h"
#include "swarm/evaluation.h"
#include "swarm/node_settings.h"
#include "swarm/taskset.h"
#include "tasks/infra/answer.h"
#include "tasks/infra/registry.h"

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

static const CliOption OPTIONS[] = {
    {"out", "CKPT", "the checkpoint to write (default pretrain.out, else RUN_DIR/warmup.ckpt)"},
    {"quiet", NULL, "no progress lines (the pass@1 table is still printed)"},
    {"demos", "FILE", "write every demonstration as a JSON line (step, task, question, answer, the task whose "
                      "answer is shown, the completion trained)"},
    {NULL, NULL, NULL},
};
enum { OPT_OUT, OPT_QUIET, OPT_DEMOS };

static void usage(FILE* out) {
    fprintf(out,
            "usage: sapo pretrain CONFIG.ini [section.key=value ...] [--out CKPT] [--quiet]\n"
            "Supervised warm-up on task demonstrations: [pretrain] steps, batch, lr; every other\n"
            "model, optim and gen key as node 0 sees it ([node.0] applied, other [node.K] only\n"
            "budget-checked); tasks from [tasks]; starts from node 0's model.init when set\n"
            "(to specialise a warm-up on some tasks). Writes the checkpoint to --out,\n"
            "else pretrain.out, else RUN_DIR/warmup.ckpt, and prints pass@1 per task; CKPT.json\n"
            "beside it holds the same and the count of draws that were held-out questions.\n"
            "pretrain.tasks: demonstrate only these of tasks.names (a specialist's warm-up; the\n"
            "held-out set and the table stay tasks.names'). pretrain.format_tasks and\n"
            "pretrain.format_share: that share of each batch shows questions of those tasks with\n"
            "another question's answer (the answer format without the skill). tasks.exclude_eval:\n"
            "a draw that is a held-out question is drawn again.\n"
            "model.family = llama: starts from model.hf_dir's weights (context cut to model.n_ctx)\n"
            "and trains its token ids: each prompt as the node's chat form (system prompt, the\n"
            "question as the user's turn, the assistant header), the answer, then the end of turn\n"
            "(<|im_end|>, else <|endoftext|>); the checkpoint (version 2) loads with the same\n"
            "model.hf_dir and model.n_ctx in `sapo run ... model.init=`.\n");
    cli_print_options(out, OPTIONS);
}

/* ---- the command's state ------------------------------------------------------------ */

/* What one warm-up holds, from the options to the end; pretrain_end releases all of it. */
typedef struct {
    Config* cfg;
    const char* out; /* the checkpoint to write */
    char* owned;     /* out when this command built it (RUN_DIR/warmup.ckpt), else NULL */
    int quiet;
    const char* demos_path; /* --demos: every demonstration as a JSON line */
    FILE* demos_out;
    RunSettings set;    /* node 0 .. the highest [node.K]: the warm-up trains at node 0's settings, all of them */
    const SwarmSettings* sw;
    const NodeSettings* node0; /* set.node[0] */
    TaskSet ts;
    const ModelBackend* backend;
    Model* m;
    Tokenizer* tok;    /* a llama model's (model.hf_dir/tokenizer.json); NULL: byte-level */
    PromptCodec codec; /* how the model reads a prompt and its answers: the nodes' */
    GenConfig gen;     /* node 0's, stopping at </answer> (and a chat model's end of turn): the evaluation's */
    TaskSet demo_ts;   /* pretrain.tasks: the demonstrated tasks (n = 0: those of ts) */
    TaskSet format_ts; /* pretrain.format_tasks: the tasks demonstrated format-only (n = 0: none) */
    int format_rows;   /* format-only demonstrations in each step: pretrain.format_share of the batch */
    long format_demos; /* format-only demonstrations trained (also counted in demos) */
    EvalSet held_out;  /* the run's held-out set (tasks.names, run.eval_seed, run.eval_questions) */
    int has_held_out;  /* 0 when run.eval_questions = 0 */
    long demos, held_out_drawn; /* demonstrations trained; draws that were held-out questions */
    long held_out_by_task[TASK_N_IDS]; /* the latter per task id */
    double pass1, by_task[TASK_N_IDS], tagged[TASK_N_IDS]; /* the warm-up's skill (report_skill) */
    char err[1024];
} Pretrain;

/* pass@1 of the warm-up on the run's fixed held-out set (run.eval_questions from
 * run.eval_seed over tasks.names, swarm/evalset.h), answered once per question through
 * evaluation_run, the nodes' evaluation, sampled from the stream node 0 evaluates round 0
 * with: per task in tasks.names order, then the mean over the questions, printed and kept in
 * p's skill fields for the checkpoint's JSON. */
static void report_skill(Pretrain* p, FILE* out) {
    if (!p->has_held_out) {
        fprintf(out, "warm-up skill: not measured (run.eval_questions = 0)\n");
        return;
    }
    RngStream rng = rng_stream(p->sw->seed, 0, 0, RNG_EVAL);
    p->pass1 = evaluation_run(p->m, &p->codec, &p->gen, &p->held_out, &rng, p->by_task, p->tagged);
    fprintf(out,
            "warm-up skill (pass@1, temperature %.2f, on the held-out set of %d questions: run.eval_seed %llu, digest "
            "%016llx):\n",
            p->gen.sampler.temperature, p->held_out.n, (unsigned long long)p->sw->eval_seed,
            (unsigned long long)p->held_out.digest);
    for (int t = 0; t < p->ts.n; t++) {
        int id = p->ts.slots[t].task_id;
        if (!p->held_out.n_by_task[id]) continue;
        fprintf(out, "  %-24s %6.3f   (answer tags in %5.1f%%, %d questions)\n", p->ts.slots[t].spec->name,
                p->by_task[id], 100.0 * p->tagged[id], p->held_out.n_by_task[id]);
    }
    fprintf(out, "  %-24s %6.3f\n", "mean", p->pass1);
}

/* CKPT.json beside the checkpoint (atomically): what the warm-up demonstrated, how many of
 * its draws were held-out questions and whether they were drawn again, and its skill per
 * task; what a study's driver reads (never parsed from stdout). 0, or -1 with p->err. */
static int pretrain_write_json(Pretrain* p) {
    cJSON* root = cJSON_CreateObject();
    const TaskSet* demo = p->demo_ts.n ? &p->demo_ts : &p->ts;
    cJSON* demo_tasks = cJSON_AddArrayToObject(root, "demonstrated_tasks");
    for (int t = 0; t < demo->n; t++) cJSON_AddItemToArray(demo_tasks, cJSON_CreateString(demo->slots[t].spec->name));
    cJSON_AddNumberToObject(root, "steps", p->sw->pretrain.steps);
    cJSON_AddNumberToObject(root, "demonstrations", (double)p->demos);
    cJSON* format_tasks = cJSON_AddArrayToObject(root, "format_only_tasks");
    for (int t = 0; t < p->format_ts.n; t++)
        cJSON_AddItemToArray(format_tasks, cJSON_CreateString(p->format_ts.slots[t].spec->name));
    cJSON_AddNumberToObject(root, "format_only_demonstrations", (double)p->format_demos);
    cJSON_AddStringToObject(root, "format_decoy", p->sw->pretrain.format_other_task ? "other_task" : "same_task");
    cJSON_AddNumberToObject(root, "held_out_drawn", (double)p->held_out_drawn);
    cJSON* drawn = cJSON_AddObjectToObject(root, "held_out_drawn_by_task");
    for (int t = 0; t < demo->n; t++)
        cJSON_AddNumberToObject(drawn, demo->slots[t].spec->name, (double)p->held_out_by_task[demo->slots[t].task_id]);
    cJSON_AddBoolToObject(root, "exclude_eval", p->sw->exclude_eval);
    cJSON_AddNumberToObject(root, "seed", (double)p->sw->seed);
    cJSON_AddNumberToObject(root, "init_seed", (double)p->sw->init_seed);
    cJSON_AddNumberToObject(root, "eval_seed", (double)p->sw->eval_seed);
    cJSON_AddNumberToObject(root, "eval_questions", p->has_held_out ? p->held_out.n : 0);
    if (p->has_held_out) {
        char digest[17];
        snprintf(digest, sizeof digest, "%016llx", (unsigned long long)p->held_out.digest);
        cJSON_AddStringToObject(root, "eval_digest", digest);
        cJSON_AddNumberToObject(root, "pass1", p->pass1);
        cJSON* skill = cJSON_AddObjectToObject(root, "pass1_by_task");
        cJSON* tagged = cJSON_AddObjectToObject(root, "format_rate_by_task");
        for (int t = 0; t < p->ts.n; t++) {
            int id = p->ts.slots[t].task_id;
            if (!p->held_out.n_by_task[id]) continue;
            cJSON_AddNumberToObject(skill, p->ts.slots[t].spec->name, p->by_task[id]);
            cJSON_AddNumberToObject(tagged, p->ts.slots[t].spec->name, p->tagged[id]);
        }
    }
    size_t plen = strlen(p->out);
    char* path = mallocCheck(plen + 6);
    memcpy(path, p->out, plen);
    memcpy(path + plen, ".json", 6);
    int rc = atomic_file_write_json(path, root, p->err, sizeof p->err);
    cJSON_Delete(root);
    free(path);
    return rc;
}

/* The one way out of `sapo pretrain`: releases what the warm-up holds, returns `code` (0
 * done, 1 an output file, 2 bad options or config). */
static int pretrain_end(Pretrain* p, int code) {
    if (p->demos_out) { /* still open: the warm-up did not finish, and its partial log goes */
        fclose(p->demos_out);
        remove(p->demos_path);
    }
    free(p->owned);
    taskset_free(&p->ts);
    taskset_free(&p->demo_ts);
    taskset_free(&p->format_ts);
    if (p->has_held_out) evalset_free(&p->held_out);
    model_free(p->m);
    if (p->tok) tokenizer_free(p->tok);
    run_settings_free(&p->set);
    config_free(p->cfg);
    return code;
}

/* ---- the stages: each says go on, or exit with a status (core/stage.h) ---------------- */

/* The options and the config. */
static StageResult pretrain_read_options(Pretrain* p, int argc, char** argv) {
    CliArgs a;
    int parsed = cli_parse("pretrain", OPTIONS, argc, argv, &a);
    if (parsed > 0) usage(stdout);
    /* every [node.K] the config sets is budget-checked; the checkpoint serves them all */
    p->cfg = parsed == 0 ? cli_args_settings("pretrain", &a, 0, 0, &p->set) : NULL;
    p->out = a.opt[OPT_OUT];
    p->quiet = a.opt[OPT_QUIET] != NULL;
    p->demos_path = a.opt[OPT_DEMOS];
    cli_args_free(&a);
    if (parsed > 0) return stage_exit(0);
    if (!p->cfg) return stage_exit(2);
    p->sw = &p->set.sw;
    p->node0 = &p->set.node[0];
    return stage_go_on();
}

/* A model read from model.hf_dir: the directory usable (model/policy.h), and room for prompts
 * beside gen.max_new_tokens, as sapo run checks it. 0, or -1 after one line on stderr. */
static int pretrain_check_hf(const Pretrain* p) {
    const NodeSettings* ns = p->node0;
    PolicySpec spec = node_policy_spec(ns);
    char why[1024];
    if (!policy_reads_hf_dir(&spec)) return 0;
    if (policy_check(&spec, why, sizeof why)) {
        fprintf(stderr, "sapo pretrain: config error: %s\n", why);
        return -1;
    }
    if (ns->model.n_ctx < ns->gen.max_new_tokens + 16) {
        fprintf(stderr, "sapo pretrain: config error: model.n_ctx = %d leaves no room for prompts beside "
                        "gen.max_new_tokens = %d\n", ns->model.n_ctx, ns->gen.max_new_tokens);
        return -1;
    }
    return 0;
}

/* A key naming a subset of tasks.names (pretrain.tasks, pretrain.format_tasks) into *out; ""
 * leaves it empty. 0, or -1 after one line on stderr. */
static int pretrain_subset(Pretrain* p, const char* key, const char* names, TaskSet* out) {
    if (!*names) return 0;
    if (taskset_build(out, names, p->sw->tasks_preset, p->err, sizeof p->err)) {
        fprintf(stderr, "sapo pretrain: config error: %s: %s\n", key, p->err);
        return -1;
    }
    for (int t = 0; t < out->n; t++)
        if (!taskset_find(&p->ts, out->slots[t].task_id)) {
            fprintf(stderr, "sapo pretrain: config error: %s: %s is not in tasks.names (%s)\n", key,
                    out->slots[t].spec->name, p->sw->tasks_names);
            return -1;
        }
    return 0;
}

/* The tasks, the budget and the backend, before any output file. */
static StageResult pretrain_check(Pretrain* p) {
    if (taskset_build(&p->ts, p->sw->tasks_names, p->sw->tasks_preset, p->err, sizeof p->err)) {
        fprintf(stderr, "sapo pretrain: config error: %s\n", p->err);
        return stage_exit(2);
    }
    if (pretrain_subset(p, "pretrain.tasks", p->sw->pretrain.tasks, &p->demo_ts) ||
        pretrain_subset(p, "pretrain.format_tasks", p->sw->pretrain.format_tasks, &p->format_ts))
        return stage_exit(2);
    double share = p->sw->pretrain.format_share;
    if (share > 0 && !p->format_ts.n) {
        fprintf(stderr, "sapo pretrain: config error: pretrain.format_share = %g needs pretrain.format_tasks (the tasks "
                        "to demonstrate format-only)\n", share);
        return stage_exit(2);
    }
    if (p->sw->pretrain.format_other_task && p->format_ts.n == 1) {
        fprintf(stderr, "sapo pretrain: config error: pretrain.format_decoy = other_task needs two or more "
                        "pretrain.format_tasks (it has %s)\n", p->sw->pretrain.format_tasks);
        return stage_exit(2);
    }
    p->format_rows = (int)lround(share * p->sw->pretrain.batch);
    if (p->format_ts.n && !p->format_rows) {
        fprintf(stderr, "sapo pretrain: config error: pretrain.format_tasks is set but pretrain.format_share = %g "
                        "gives no format-only demonstration in a batch of %d\n", share, p->sw->pretrain.batch);
        return stage_exit(2);
    }
    if (p->sw->eval_questions > 0) {
        if (evalset_build(&p->held_out, &p->ts, p->sw->eval_seed, p->sw->eval_questions, p->err, sizeof p->err)) {
            fprintf(stderr, "sapo pretrain: config error: evaluation set: %s\n", p->err);
            return stage_exit(2);
        }
        p->has_held_out = 1;
    }
    if (pretrain_check_hf(p)) return stage_exit(2);
    /* The same budget check as sapo run, for every [node.K] the config sets (the warm-up
     * trains at node 0's settings; the checkpoint serves them all). */
    if (budget_check_settings(&p->set, stdout, "sapo pretrain: ", p->err, sizeof p->err)) {
        fprintf(stderr, "sapo pretrain: config error: %s\n", p->err);
        return stage_exit(2);
    }
    /* node 0's backend, as the nodes choose theirs (auto: CUDA when a GPU is visible) */
    p->backend = model_backend_for(p->node0->backend);
    if (!p->backend) {
        fprintf(stderr, "sapo pretrain: config error: model.backend = '%s' is not available in this build or on this "
                        "machine\n", model_backend_choice_name(p->node0->backend));
        return stage_exit(2);
    }
    return stage_go_on();
}

/* The checkpoint's path (--out, else pretrain.out, else a fresh RUN_DIR/warmup.ckpt) and its
 * folder, before any training: a path that cannot be written is found now, not after the
 * steps. */
static StageResult pretrain_out_path(Pretrain* p) {
    if (!p->out || !*p->out) p->out = p->sw->pretrain.out;
    if (!*p->out) {
        char* dir = run_dir_create(p->sw->run_out, "pretrain", p->sw->run_name, p->err, sizeof p->err);
        if (!dir) {
            fprintf(stderr, "sapo pretrain: %s\n", p->err);
            return stage_exit(1);
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
            return stage_exit(1);
        }
    }
    if (p->demos_path && !(p->demos_out = fopen(p->demos_path, "w"))) {
        fprintf(stderr, "sapo pretrain: --demos %s: %s\n", p->demos_path, strerror(errno));
        return stage_exit(1);
    }
    return stage_go_on();
}

/* The model at node 0's shape on its backend (a model read from model.hf_dir: that
 * directory's weights and tokenizer, and the chat codec a node generates through), from
 * model.init when set, and the line that says what is trained. */
static StageResult pretrain_model(Pretrain* p) {
    openblas_set_num_threads(1);
    const ModelShape* gc = &p->node0->model;
    PolicySpec spec = node_policy_spec(p->node0);
    int from_hf = policy_reads_hf_dir(&spec);
    p->gen = p->node0->gen;
    p->gen.stop = COMPLETION_STOP;
    /* one demonstration per group; evaluation generates for up to 64 prompts at once (a
     * model read from model.hf_dir: 16, as a node does, its KV cache being far larger) */
    int eval_rows = from_hf ? 16 : 64;
    ModelCapacity cap = model_capacity_for(gc, p->node0->micro_tokens, p->sw->pretrain.batch, 1, p->gen.max_new_tokens,
                                           eval_rows, eval_rows);
    Policy opened;
    int rc = policy_open(&opened, &spec, p->backend, &cap, p->sw->init_seed, p->err, sizeof p->err);
    if (rc) { /* continuing a warm-up from model.init, e.g. to specialise it, can fail too */
        fprintf(stderr, "sapo pretrain: %s: %s\n", rc == -2 ? "model.init" : "model.hf_dir", p->err);
        return stage_exit(2);
    }
    p->m = opened.model;
    p->tok = opened.tokenizer;
    p->codec = opened.codec;
    policy_generation_stops(&p->codec, &p->gen);
    printf("sapo pretrain: %d steps of %d demonstrations, %d tasks at preset %s; model %s%s%d layers, d_model %d, "
           "n_ctx %d (%zu parameters); lr %g\n",
           p->sw->pretrain.steps, p->sw->pretrain.batch, p->ts.n, task_preset_name(p->sw->tasks_preset),
           from_hf ? p->node0->hf_dir : "", from_hf ? ": " : "", gc->n_layer, gc->d_model, gc->n_ctx, p->m->num_params,
           p->sw->pretrain.lr);
    if (p->format_rows)
        printf("sapo pretrain: %d of the %d demonstrations of each step are format-only (pretrain.format_tasks: %s)\n",
               p->format_rows, p->sw->pretrain.batch, p->sw->pretrain.format_tasks);
    return stage_go_on();
}

/* A llama model's demonstration of q whose completion text is demo, as ids: the prompt as the
 * codec frames it for generation (at most n_ctx - gen.max_new_tokens tokens, into
 * prompt_ids), the completion encoded by the tokenizer (heap tk->completion). */
static SftTokens pretrain_tokens(const Pretrain* p, const Question* q, const char* demo, int* prompt_ids) {
    int T = p->node0->model.n_ctx, max_new = p->gen.max_new_tokens;
    SftTokens tk = {.prompt = prompt_ids};
    tk.prompt_len = prompt_codec_encode(&p->codec, q->prompt, prompt_ids, T - max_new);
    int* ids;
    prompt_codec_encode_text(&p->codec, demo, &ids, &tk.completion_len);
    tk.completion = ids;
    return tk;
}

/* One question of ts with a stored answer: a draw that is a question of the held-out set is
 * counted, and drawn again under tasks.exclude_eval (without it, kept: the draws, and so the
 * checkpoint, stay those of a warm-up that never looked). */
static void draw_demonstration(Pretrain* p, const TaskSet* ts, RngStream* rng, Question* q) {
    for (int tries = 0;; tries++) {
        if (!draw_demonstrable(ts, rng, q)) sapo_die("no task of the warm-up has a stored answer to demonstrate");
        if (!p->has_held_out || !evalset_contains(&p->held_out, q)) break;
        p->held_out_drawn++;
        p->held_out_by_task[q->slot->task_id]++;
        if (!p->sw->exclude_eval) break;
        if (tries + 1 == EVALSET_EXCLUDE_TRIES)
            sapo_die("tasks.exclude_eval: %d warm-up draws in a row were questions of the held-out set (last: %s); "
                     "the preset's question space is too small for run.eval_questions = %d",
                     EVALSET_EXCLUDE_TRIES, q->slot->spec->name, p->sw->eval_questions);
        question_free(q);
    }
}

/* --demos: one JSON line for a demonstration of q whose completion demo shows an answer of
 * shown's task. */
static void log_demonstration(Pretrain* p, int step, const Question* q, const TaskSlot* shown, const char* demo) {
    if (!p->demos_out) return;
    cJSON* line = cJSON_CreateObject();
    cJSON_AddNumberToObject(line, "step", step);
    cJSON_AddStringToObject(line, "task", q->slot->spec->name);
    cJSON_AddStringToObject(line, "question", question_text(q));
    cJSON_AddStringToObject(line, "answer", question_answer(q));
    cJSON_AddStringToObject(line, "shown_task", shown->spec->name);
    cJSON_AddStringToObject(line, "completion", demo);
    char* text = cJSON_PrintUnformatted(line);
    fprintf(p->demos_out, "%s\n", text);
    free(text);
    cJSON_Delete(line);
}

/* Row b's demonstration: a question of the demonstrated tasks and its answer, or (the last
 * format_rows rows) a question of pretrain.format_tasks shown with the answer of another
 * question, drawn after it (both draws under the held-out rule): of the same task, or under
 * pretrain.format_decoy = other_task of one of the other format tasks, drawn uniformly. The
 * completion text is heap. */
static char* next_demonstration(Pretrain* p, int step, int b, RngStream* rng, Question* q) {
    p->demos++;
    if (b < p->sw->pretrain.batch - p->format_rows) {
        draw_demonstration(p, p->demo_ts.n ? &p->demo_ts : &p->ts, rng, q);
        char* demo = answer_demonstration(question_answer(q));
        log_demonstration(p, step, q, q->slot, demo);
        return demo;
    }
    p->format_demos++;
    draw_demonstration(p, &p->format_ts, rng, q);
    TaskSet decoy = {.n = 0}; /* a view: its slots are owned by format_ts */
    for (int t = 0; t < p->format_ts.n; t++)
        if ((p->format_ts.slots[t].task_id == q->slot->task_id) != p->sw->pretrain.format_other_task)
            decoy.slots[decoy.n++] = p->format_ts.slots[t];
    Question other;
    draw_demonstration(p, &decoy, rng, &other);
    char* demo = answer_demonstration(question_answer(&other));
    log_demonstration(p, step, q, other.slot, demo);
    question_free(&other);
    return demo;
}

/* One step's demonstrations, kept until they are trained (an SftSource of rl/sft_loop.h). */
typedef struct {
    Pretrain* p;
    Question* qs;     /* [batch] */
    char** demos;     /* [batch] the completion texts */
    int* prompt_ids;  /* a llama model's prompts as ids, batch rows of n_ctx; NULL: byte-level */
    SftTokens* tk;    /* the last draw's ids, whose completions release frees */
} WarmupBatch;

static void warmup_draw(void* ctx, int step, RngStream* rng, SftExample* ex, SftTokens* tk) {
    WarmupBatch* w = ctx;
    Pretrain* p = w->p;
    int T = p->node0->model.n_ctx;
    w->tk = tk;
    for (int b = 0; b < p->sw->pretrain.batch; b++) {
        w->demos[b] = next_demonstration(p, step, b, rng, &w->qs[b]);
        if (tk) tk[b] = pretrain_tokens(p, &w->qs[b], w->demos[b], w->prompt_ids + (size_t)b * T);
        else ex[b] = (SftExample){prompt_tail(w->qs[b].prompt, T, p->gen.max_new_tokens), w->demos[b]};
    }
}

static void warmup_release(void* ctx) {
    WarmupBatch* w = ctx;
    for (int b = 0; b < w->p->sw->pretrain.batch; b++) {
        free(w->demos[b]);
        if (w->tk) free((int*)w->tk[b].completion);
        question_free(&w->qs[b]);
    }
}

/* pretrain.steps steps of pretrain.batch demonstrations each (rl/sft_loop.h), drawn from the
 * step's data stream, at node 0's AdamW with pretrain.lr; progress lines unless --quiet. */
static void pretrain_train(Pretrain* p) {
    int B = p->sw->pretrain.batch, T = p->node0->model.n_ctx;
    SftLoop loop = {.steps = p->sw->pretrain.steps,
                    .batch = B,
                    .adamw = p->node0->adamw,
                    .grad_clip = p->node0->grad_clip,
                    .seed = p->sw->seed,
                    .ids = p->tok != NULL,
                    .quiet = p->quiet};
    loop.adamw.lr = p->sw->pretrain.lr;
    WarmupBatch w = {.p = p,
                     .qs = callocCheck(B, sizeof(Question)),
                     .demos = mallocCheck(sizeof(char*) * B),
                     .prompt_ids = p->tok ? mallocCheck(sizeof(int) * (size_t)B * T) : NULL};
    sft_loop_run(p->m, &loop, &(SftSource){.ctx = &w, .draw = warmup_draw, .release = warmup_release});
    free(w.qs);
    free(w.demos);
    free(w.prompt_ids);
}

/* The checkpoint, then the pass@1 table and the line naming the checkpoint. */
static int pretrain_finish(Pretrain* p) {
    if (p->demos_out) {
        int bad = ferror(p->demos_out) | fclose(p->demos_out);
        p->demos_out = NULL;
        if (bad) {
            fprintf(stderr, "sapo pretrain: --demos %s: a write failed\n", p->demos_path);
            remove(p->demos_path);
            return 1;
        }
    }
    if (checkpoint_save(p->m, p->out, 0, p->err, sizeof p->err)) {
        fprintf(stderr, "sapo pretrain: %s\n", p->err);
        return 1;
    }
    printf("warm-up demonstrations: %ld of %ld were questions of the held-out set (%s)\n", p->held_out_drawn,
           p->demos,
           !p->has_held_out      ? "no held-out set: run.eval_questions = 0"
           : p->sw->exclude_eval ? "each drawn again: tasks.exclude_eval"
                                 : "kept: tasks.exclude_eval is off");
    if (p->format_demos)
        printf("of them, %ld format-only: each drew two questions (the one shown and the one whose answer it shows), both "
               "counted above\n", p->format_demos);
    report_skill(p, stdout);
    if (pretrain_write_json(p)) {
        fprintf(stderr, "sapo pretrain: %s\n", p->err);
        return 1;
    }
    printf("wrote %s and %s.json\n", p->out, p->out);
    return 0;
}

/* ---- the command --------------------------------------------------------------------- */

int cmd_pretrain(int argc, char** argv) {
    Pretrain p = {0};
    StageResult stage = pretrain_read_options(&p, argc, argv);
    if (stage_goes_on(stage)) stage = pretrain_check(&p);
    if (stage_goes_on(stage)) stage = pretrain_out_path(&p);
    if (stage_goes_on(stage)) stage = pretrain_model(&p);
    if (stage_goes_on(stage)) {
        pretrain_train(&p);
        stage = stage_exit(pretrain_finish(&p));
    }
    return pretrain_end(&p, stage.exit_code);
}
