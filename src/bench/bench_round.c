/* `sapo bench round`: the cost of ONE swarm node-round (generate + score + train) for
 * experiments/quick.ini and experiments/paper/8L0E.ini next to the same round in PyTorch eager,
 * from the same weights and prompts, in the same invocation. Three processes, so that neither
 * side's memory mixes into the other's peak:
 *   parent   parses, checks every config, prints; no MPI, no model (bench_round_main)
 *   child    this binary again (the hidden `--child DIR`, child_main): MPI_Init as a singleton,
 *            node_create with one node, DIR/init.ckpt (the initial weights) and DIR/round.json
 *            (the settings and every round's questions), the warm-up and timed node_rounds,
 *            DIR/ours.json (per-round phases, VmHWM, the matrix products: bench_products.h)
 *   python   scripts/bench/torch_round_bench.py DIR: one JSON line per round, then a summary */
#include <cblas.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/bench_harness.h"
#include "bench/bench_products.h"
#include "bench/bench_sgemm_peak.h"
#include "core/check.h"
#include "core/cli_options.h"
#include "core/config.h"
#include "core/rng.h"
#include "core/stage.h"
#include "io/files.h"
#include "model/checkpoint.h"
#include "model/product_profile.h"
#include "swarm/node.h"
#include "swarm/node_config.h"
#include "swarm/node_settings.h"
#include "swarm/round_record.h"
#include "swarm/settings_load.h"
#include "swarm/taskset.h"
#include "tasks/infra/registry.h"

#define MAX_CONFIGS 8
#define MAX_INITS 8

typedef struct {
    char label[64];       /* quick, paper, or the file's stem */
    char path[PATH_MAX];  /* the INI file */
    Config* cfg;          /* resolved: the file, the user's overrides, the bench's forced keys */
    RunSettings set;      /* cfg's, for a swarm of 1 (read again only when --init changes cfg); set.node[0].init:
                           * model.init after resolution ("" = random init) */
} RoundConfig;

typedef struct {
    int rounds, warmup, threads, torch, keep;
    const char* names[MAX_CONFIGS]; /* --config, in order */
    int n_names;
    RoundConfig configs[MAX_CONFIGS];
    int n_configs;
    const char* inits[MAX_INITS];
    int n_inits;
    char** overrides;
    int n_overrides;
    const char* child_dir; /* --child DIR, else NULL */
} RoundOptions;

/* One side's measurement of one config: avg / min / max over the timed rounds. */
typedef struct {
    int ok;
    BenchTiming gen, train, total;
    double peak_rss_mb, base_rss_mb;
    double completion_len, reward, train_tokens, format_rate; /* averages over timed rounds */
    char scorer[64], note[256];
    BenchProducts products; /* ours only: where the matrix products' time went */
} RoundSide;

/* What the benchmark forces over the user's keys: one node, I = G (the user's G, read before
 * the forced keys), no external groups, all-gather, no evaluation, no checkpoints. */
static int force_round_keys(Config* cfg, char* err, size_t errlen) {
    char groups[64];
    snprintf(groups, sizeof groups, "sampling.local=%ld", (long)node_settings_read(cfg, 0).n_groups);
    const char* forced[] = {"swarm.nodes=1", "sampling.external=0", groups, "net.transport=allgather",
                            "run.eval_every=0", "run.checkpoint_every=0", "net.fault=none"};
    for (size_t i = 0; i < sizeof forced / sizeof forced[0]; i++)
        if (config_set_override(cfg, forced[i], err, errlen)) return -1;
    return 0;
}

/* Loads one config: the file, then the user's overrides, then force_round_keys, and its
 * settings into *set, checked. */
static Config* load_round_config(const char* path, char** overrides, int n_over, RunSettings* set, char* err,
                                 size_t errlen) {
    SettingsRequest req = {.path = path, .n_overrides = n_over, .overrides = overrides, .force = force_round_keys,
                           .n_nodes = 1, .check = 1};
    return settings_load(&req, set, err, errlen);
}

/* --config NAME into the next of o->configs (their number is checked with the options): its label and path. */
static int resolve_config(RoundOptions* o, const char* name) {
    RoundConfig* rc = &o->configs[o->n_configs];
    memset(rc, 0, sizeof *rc);
    if (!strcmp(name, "quick")) {
        snprintf(rc->label, sizeof rc->label, "quick");
        snprintf(rc->path, sizeof rc->path, "%s/experiments/quick.ini", SAPO_SOURCE_DIR);
    } else if (!strcmp(name, "paper")) {
        snprintf(rc->label, sizeof rc->label, "paper");
        snprintf(rc->path, sizeof rc->path, "%s/experiments/paper/8L0E.ini", SAPO_SOURCE_DIR);
    } else {
        size_t n = strlen(name);
        struct stat st;
        if (n < 5 || strcmp(name + n - 4, ".ini") || stat(name, &st) || !S_ISREG(st.st_mode)) {
            fprintf(stderr, "sapo bench round: --config '%s': expected quick, paper or an existing FILE.ini\n", name);
            return -1;
        }
        snprintf(rc->path, sizeof rc->path, "%s", name);
        const char* base = strrchr(name, '/');
        base = base ? base + 1 : name;
        snprintf(rc->label, sizeof rc->label, "%.*s", (int)(strlen(base) - 4 < 63 ? strlen(base) - 4 : 63), base);
    }
    o->n_configs++;
    return 0;
}

/* Each --init goes to the configs whose model shape it has (their settings read again, with
 * this model.init); one that fits none is an error. */
static int place_inits(RoundOptions* o) {
    char err[1024];
    for (int k = 0; k < o->n_inits; k++) {
        CheckpointInfo info;
        if (checkpoint_read_info(o->inits[k], &info, err, sizeof err)) {
            fprintf(stderr, "sapo bench round: --init: %s\n", err);
            return -1;
        }
        int used = 0;
        for (int c = 0; c < o->n_configs; c++) {
            RoundConfig* rc = &o->configs[c];
            ModelShape g = rc->set.node[0].model;
            if (g.n_layer != info.cfg.n_layer || g.n_head != info.cfg.n_head || g.d_model != info.cfg.d_model ||
                g.n_ctx != info.cfg.n_ctx)
                continue;
            char assign[PATH_MAX + 16];
            snprintf(assign, sizeof assign, "model.init=%s", o->inits[k]);
            if (config_set_override(rc->cfg, assign, err, sizeof err)) {
                fprintf(stderr, "sapo bench round: --init: %s\n", err);
                return -1;
            }
            run_settings_free(&rc->set);
            rc->set = run_settings_read(rc->cfg, 1);
            run_settings_read_model_shapes(&rc->set);
            used = 1;
        }
        if (!used) {
            fprintf(stderr,
                    "sapo bench round: --init %s has n_layer=%d n_head=%d d_model=%d n_ctx=%d: no selected config has "
                    "that shape\n",
                    o->inits[k], info.cfg.n_layer, info.cfg.n_head, info.cfg.d_model, info.cfg.n_ctx);
            return -1;
        }
    }
    return 0;
}

/* The I questions node_round asks in round r: the same stream and draws as src/swarm/node.c. */
static cJSON* round_questions(const TaskSet* ts, uint64_t seed, int round, int n_q, unsigned* asked_mask) {
    cJSON* arr = cJSON_CreateArray();
    RngStream qrng = rng_stream(seed, 0, (uint32_t)round, RNG_QUESTIONS);
    char err[512];
    *asked_mask = 0;
    for (int i = 0; i < n_q; i++) {
        Question q;
        if (question_draw(ts, &qrng, &q, err, sizeof err)) sapo_die("sapo bench round: question: %s", err);
        cJSON* o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "task", q.slot->spec->name);
        cJSON_AddStringToObject(o, "prompt", q.prompt);
        cJSON_AddItemToObject(o, "entry", cJSON_Duplicate(q.entry, 1));
        cJSON_AddItemToArray(arr, o);
        *asked_mask |= 1u << q.slot->task_id;
        question_free(&q);
    }
    return arr;
}

/* A failure before the rounds: one line, then the singleton ends with `code`. */
static void child_fail(const char* err, int code) {
    fprintf(stderr, "sapo bench round (child): %s\n", err);
    MPI_Abort(MPI_COMM_WORLD, code);
}

/* The node of DIR/config.ini (the parent's resolved config), its initial weights written
 * to DIR/init.ckpt for the PyTorch side. */
static SwarmNode* child_node(const char* dir, Config** cfg_out, RunSettings* set) {
    char path[PATH_MAX + 64], err[1024];
    snprintf(path, sizeof path, "%s/config.ini", dir);
    SettingsRequest req = {.path = path, .n_nodes = 1};
    if (!(*cfg_out = settings_load(&req, set, err, sizeof err))) child_fail(err, 2);
    SwarmNode* node = node_create(set, 0, MPI_COMM_WORLD, err, sizeof err);
    if (!node) child_fail(err, 2);
    snprintf(path, sizeof path, "%s/init.ckpt", dir);
    if (checkpoint_save(node->policy, path, 0, err, sizeof err)) child_fail(err, 1);
    return node;
}

/* The model's shape and node 0's generation, optimiser and GRPO settings, as round.json
 * gives them to the PyTorch side. */
static cJSON* round_settings_json(const RunSettings* set, const Model* m) {
    const NodeSettings* node0 = &set->node[0];
    const GenConfig* gen = &node0->gen;
    const AdamWConfig* hp = &node0->adamw;
    const BenchNumber model_gen[] = {
        {"n_layer", m->cfg.n_layer}, {"n_head", m->cfg.n_head}, {"d_model", m->cfg.d_model}, {"n_ctx", m->cfg.n_ctx},
        {"vocab", m->cfg.vocab}, {"num_params", (double)m->num_params}, {"local", node0->n_local},
        {"completions", node0->n_completions}, {"seed", (double)set->sw.seed},
        {"temperature", gen->sampler.temperature}, {"top_p", gen->sampler.top_p},
        {"max_new_tokens", gen->max_new_tokens}};
    const BenchNumber train[] = {
        {"lr", hp->lr}, {"beta1", hp->beta1}, {"beta2", hp->beta2}, {"eps", hp->eps},
        {"weight_decay", hp->weight_decay}, {"grad_clip", node0->grad_clip}, {"eps_low", node0->grpo.eps_low},
        {"eps_high", node0->grpo.eps_high}, {"ppo_epochs", node0->grpo.ppo_epochs}, {"kl", node0->grpo.kl}};
    cJSON* j = cJSON_CreateObject();
    bench_json_numbers(j, model_gen, sizeof model_gen / sizeof model_gen[0]);
    cJSON_AddStringToObject(j, "stop", COMPLETION_STOP);
    bench_json_numbers(j, train, sizeof train / sizeof train[0]);
    cJSON_AddStringToObject(j, "backend", m->backend->name);
    return j;
}

/* DIR/round.json: the settings and the questions of each of the `total` rounds; asked[r]
 * gets the tasks of round r as a bit mask. */
static void child_write_round_json(const char* dir, const RunSettings* set, const Model* m, int total,
                                   unsigned* asked) {
    const SwarmSettings* sw = &set->sw;
    int n_q = set->node[0].n_local;
    char path[PATH_MAX + 64], err[1024];
    TaskSet ts;
    if (taskset_build(&ts, sw->tasks_names, sw->tasks_preset, err, sizeof err))
        sapo_die("sapo bench round (child): %s", err);
    cJSON* j = round_settings_json(set, m);
    cJSON* rounds_json = cJSON_AddArrayToObject(j, "rounds");
    for (int r = 0; r < total; r++) cJSON_AddItemToArray(rounds_json, round_questions(&ts, sw->seed, r, n_q, &asked[r]));
    snprintf(path, sizeof path, "%s/round.json", dir);
    if (bench_json_write(path, j)) sapo_die("sapo bench round (child): cannot write %s", path);
    cJSON_Delete(j);
    taskset_free(&ts);
}

/* One round's line of ours.json: its phases from the RoundRecord and what it sampled. */
static cJSON* round_record_json(int r, int timed, const RoundRecord* rec) {
    cJSON* o = cJSON_CreateObject();
    const BenchNumber phases[] = {
        {"gen", rec->m[RM_T_GENERATE]}, {"train", rec->m[RM_T_TRAIN]},
        {"exchange", rec->m[RM_T_EXCHANGE] + rec->m[RM_T_WAIT]}, {"total", rec->m[RM_T_ROUND]},
        {"completion_len", rec->m[RM_COMPLETION_LEN]}, {"reward", rec->m[RM_REWARD_OWN]},
        {"format_rate", rec->m[RM_FORMAT_RATE]}, {"train_tokens", rec->m[RM_TRAIN_TOKENS]}};
    cJSON_AddNumberToObject(o, "round", r);
    cJSON_AddBoolToObject(o, "timed", timed);
    bench_json_numbers(o, phases, sizeof phases / sizeof phases[0]);
    return o;
}

/* The warm-up and timed rounds, then DIR/ours.json: every round, the peak and base RSS and
 * whether the tasks a round asked differ from those written to round.json. */
static void child_rounds(const char* dir, SwarmNode* node, int warmup, int total, const unsigned* asked, long base_kb) {
    cJSON* out = cJSON_CreateObject();
    cJSON* per = cJSON_AddArrayToObject(out, "rounds");
    int mismatch = 0;
    for (int r = 0; r < total; r++) {
        RoundRecord rec;
        if (r == warmup) product_profile_reset(1); /* the timed rounds' products only */
        node_round(node, r, &rec);
        unsigned seen = 0;
        for (int t = 0; t < TASK_N_IDS; t++)
            if (!isnan(rec.reward_by_task[t])) seen |= 1u << t;
        mismatch |= seen != asked[r];
        cJSON_AddItemToArray(per, round_record_json(r, r >= warmup, &rec));
    }
    product_profile.enabled = 0;
    cJSON_AddItemToObject(out, "products", bench_products_json(&product_profile, total - warmup,
                                                               bench_sgemm_peak_gflops(1, NULL)));
    cJSON_AddNumberToObject(out, "peak_rss_kb", bench_peak_rss_kb());
    cJSON_AddNumberToObject(out, "base_rss_kb", (double)base_kb);
    cJSON_AddBoolToObject(out, "prompts_mismatch", mismatch);
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/ours.json", dir);
    if (bench_json_write(path, out)) sapo_die("sapo bench round (child): cannot write %s", path);
    cJSON_Delete(out);
}

/* `sapo bench round --child DIR`: the C side of one config in its own process. */
static int child_main(const char* dir, int rounds, int warmup, int threads) {
    openblas_set_num_threads(threads);
    MPI_Init(NULL, NULL); /* a singleton: no mpirun needed */
    long base_kb = bench_status_kb("VmRSS");
    Config* cfg;
    RunSettings set;
    SwarmNode* node = child_node(dir, &cfg, &set);
    int total = warmup + rounds;
    unsigned* asked = callocCheck((size_t)total, sizeof *asked);
    child_write_round_json(dir, &set, node->policy, total, asked);
    child_rounds(dir, node, warmup, total, asked, base_kb);
    free(asked);
    node_finish(node, total);
    node_free(node);
    run_settings_free(&set);
    config_free(cfg);
    MPI_Finalize();
    return 0;
}

/* The timed rounds' lines of one side (ours.json's "rounds", or torch's "round" lines) into s. */
static void side_from_rounds(RoundSide* s, const cJSON* rounds) {
    int n = cJSON_GetArraySize(rounds) + 1, k = 0;
    double* v = callocCheck(3 * (size_t)n, sizeof(double)); /* gen, train and total of each timed round */
    double *g = v, *t = v + n, *a = v + 2 * n;
    const cJSON* r;
    cJSON_ArrayForEach(r, rounds) {
        if (!cJSON_IsTrue(cJSON_GetObjectItem(r, "timed"))) continue;
        g[k] = bench_num(r, "gen");
        t[k] = bench_num(r, "train");
        a[k] = bench_num(r, "total");
        s->completion_len += bench_num(r, "completion_len");
        s->reward += bench_num(r, "reward");
        s->format_rate += bench_num(r, "format_rate");
        s->train_tokens += bench_num(r, "train_tokens");
        k++;
    }
    s->gen = bench_timing_of(g, k);
    s->train = bench_timing_of(t, k);
    s->total = bench_timing_of(a, k);
    if (k) {
        s->completion_len /= k;
        s->reward /= k;
        s->format_rate /= k;
        s->train_tokens /= k;
    }
    s->ok = k > 0;
    free(v);
}

/* In the forked child: this binary again as `sapo bench round --child DIR ...` (argv). */
static int exec_child(void* arg) {
    char** argv = arg;
    execv(argv[0], argv);
    perror("sapo bench round: exec");
    return 127;
}

/* Runs the C side in a fresh child process; fills ours from DIR/ours.json. */
static int run_ours(const RoundOptions* o, const char* dir, RoundSide* ours, int* mismatch) {
    char rounds[16], warm[16], threads[16];
    snprintf(rounds, sizeof rounds, "%d", o->rounds);
    snprintf(warm, sizeof warm, "%d", o->warmup);
    snprintf(threads, sizeof threads, "%d", o->threads);
    char* argv[] = {(char*)bench_self_path(), "bench", "round", "--child", (char*)dir, "--rounds", rounds,
                    "--warmup-rounds", warm, "--threads", threads, NULL};
    cJSON* j = bench_child_json(exec_child, argv, "sapo bench round: ", "the C side", dir);
    if (!j) return -1;
    side_from_rounds(ours, cJSON_GetObjectItem(j, "rounds"));
    ours->peak_rss_mb = bench_num(j, "peak_rss_kb") / 1024.0;
    ours->base_rss_mb = bench_num(j, "base_rss_kb") / 1024.0;
    *mismatch = cJSON_IsTrue(cJSON_GetObjectItem(j, "prompts_mismatch"));
    bench_products_read(&ours->products, cJSON_GetObjectItem(j, "products"));
    cJSON_Delete(j);
    return ours->ok ? 0 : -1;
}

/* What the PyTorch side prints: "round" lines, kept in an array, and the "summary". */
typedef struct {
    RoundSide* side;
    cJSON* rounds;
} RoundTorchLines;

static int torch_line(const char* what, cJSON* j, void* arg) {
    RoundTorchLines* t = arg;
    RoundSide* tr = t->side;
    if (!strcmp(what, "round")) {
        cJSON_AddItemToArray(t->rounds, j);
        return 1;
    }
    if (!strcmp(what, "summary")) {
        tr->peak_rss_mb = bench_num(j, "peak_rss_kb") / 1024.0;
        tr->base_rss_mb = bench_num(j, "base_rss_kb") / 1024.0;
        const char *scorer = bench_str(j, "scorer"), *note = bench_str(j, "note");
        if (scorer) snprintf(tr->scorer, sizeof tr->scorer, "%s", scorer);
        if (note) snprintf(tr->note, sizeof tr->note, "%s", note);
    }
    return 0;
}

/* Runs scripts/bench/torch_round_bench.py on DIR; fills torch from its JSON lines. */
static int run_torch(const RoundOptions* o, const char* dir, const char* device, RoundSide* tr) {
    char cmd[4 * PATH_MAX + 512];
    snprintf(cmd, sizeof cmd,
             "'%s' '%s/" BENCH_SCRIPTS_DIR "/torch_round_bench.py' --dir '%s' --rounds %d --warmup %d --threads %d "
             "--device %s",
             bench_python(), SAPO_SOURCE_DIR, dir, o->rounds, o->warmup, o->threads, device);
    RoundTorchLines t = {tr, cJSON_CreateArray()};
    int rc = bench_json_lines(cmd, torch_line, &t);
    if (rc == -1) {
        cJSON_Delete(t.rounds);
        snprintf(tr->note, sizeof tr->note, "cannot start python");
        return -1;
    }
    side_from_rounds(tr, t.rounds);
    cJSON_Delete(t.rounds);
    if (rc != 0 || !tr->ok || !(tr->peak_rss_mb > 0)) {
        fprintf(stderr, "sapo bench round: the PyTorch side failed (%s)\n", cmd);
        tr->ok = 0;
        return -1;
    }
    return 0;
}

static const CliOption OPTIONS[] = {
    {"config", "C", "quick (experiments/quick.ini), paper (experiments/paper/8L0E.ini) or an\n"
                    "INI file; repeat for several; default: quick, then paper"},
    {"rounds", "N", "timed rounds per config and side, 1 to 100000 (default 3); avg/min/max\n"
                    "over them"},
    {"warmup-rounds", "K", "untimed rounds before them, 0 to 100000 (default 1)"},
    {"init", "CKPT", "start from this checkpoint (e.g. `sapo pretrain` output) instead of a\n"
                     "random init; applied to every selected config of its shape (an error\n"
                     "when none has it); repeat for configs of different shapes"},
    {"threads", "T", "OpenBLAS threads of our side and torch.set_num_threads of theirs,\n"
                     "1 to 256 (default 1: one rank per core)"},
    {"no-torch", NULL, "measure our side only (the torch columns print '-')"},
    {"keep", NULL, "keep each config's work directory (config.ini, init.ckpt, round.json,\n"
                   "ours.json) and print its path"},
    {"child", "DIR", NULL}, /* internal: the C side in its own process (run_ours) */
    {NULL, NULL, NULL},
};
enum { OPT_CONFIG, OPT_ROUNDS, OPT_WARMUP_ROUNDS, OPT_INIT, OPT_THREADS, OPT_NO_TORCH, OPT_KEEP, OPT_CHILD };

static const char ABOUT[] =
    "usage: sapo bench round [--config quick|paper|FILE.ini]... [--rounds N] [--warmup-rounds K]\n"
    "                        [--init CKPT]... [--no-torch] [--threads T] [--keep] [section.key=value ...]\n"
    "The cost of ONE swarm node-round (generate + score + train) next to the same round in\n"
    "PyTorch eager, measured in the same invocation, one config after the other, as one table.\n\n"
    "Ours: this binary run again in a fresh child process (no mpirun: MPI_Init as a singleton)\n"
    "builds node 0 of the config ([node.0] applied, other [node.K] ignored) with node_create\n"
    "(swarm of 1: sampling.local = sampling.groups so I = G, sampling.external = 0,\n"
    "net.transport = allgather, run.eval_every = 0, no checkpoints) and runs node_round;\n"
    "the phases are the round's own timers (src/swarm/round_record.h):\n"
    "  gen+score  t_generate: draw I questions, generate L completions each (batched, KV\n"
    "             cache, stop at </answer>), score them with our verifiers\n"
    "  train      t_train: pack the I x L rows, one GRPO step (forward + backward + AdamW)\n"
    "  total      t_round: the whole round (the exchange of a 1-node all-gather included)\n"
    "  peak RSS   VmHWM of that child process in MB (the PyTorch side's memory never mixes in)\n"
    "Under each config's rows, where our matrix products went in the timed rounds (CPU backend;\n"
    "src/model/product_profile.h): per phase (generation = prefill and decode steps, passes =\n"
    "packed forward and backward passes) seconds per round and the share of the phase's timer,\n"
    "and per kind (linear layers and head; attention) seconds, GFLOP/s, the share of this\n"
    "machine's sgemm peak (square sgemm up to 1024, measured by the child) and calls per round.\n"
    "Torch: " BENCH_SCRIPTS_DIR "/torch_round_bench.py\n(" BENCH_PYTHON_HELP ")\n"
    "loads the SAME initial weights and answers the SAME prompts (those node_round asks in each\n"
    "round) the way TRL / genrl do: left-padded batched sampling with a KV cache until </answer>,\n"
    "EOS or gen.max_new_tokens; reasoning_gym's score_answer (exact match when it does not\n"
    "import; the footer says which); one GRPO step on the right-padded rows (token-level loss,\n"
    "group advantages (r - mean) / (std + 1e-8), AdamW with optim.*, clip_grad_norm_ when\n"
    "optim.grad_clip > 0). Its peak RSS is the python process's own (imports included). With\n"
    "model.backend=cuda it runs on the GPU.\n\n"
    "Both sides then train on their own samples, so after the first round they sample from\n"
    "(slightly) different policies: the footer gives each side's completion length and reward.\n"
    "Without --init a random model writes gen.max_new_tokens bytes in every row: the worst case;\n"
    "the header says which case each config measured.\n";
static const char MORE[] =
    "  section.key=value  override a config key (see `sapo info`) in every selected config,\n"
    "                     before the benchmark's own settings above\n\n"
    "output: '#' lines are metadata; one row per config and phase: each side's avg/min/max\n"
    "(seconds; MB for peak RSS; no tok/s here) and x torch = torch / ours of the averages (> 1:\n"
    "we are faster or smaller). Exit status 0, 2 on bad arguments or config, 1 when a side fails.\n";

/* What the parent measured, per selected config. */
typedef struct {
    RoundSide ours[MAX_CONFIGS], torch[MAX_CONFIGS];
    int mismatch[MAX_CONFIGS]; /* the child's prompts_mismatch */
} RoundResults;

/* The one way out of the parent (and of option errors): releases the configs and the
 * overrides, returns `code`. */
static int round_end(RoundOptions* o, int code) {
    for (int c = 0; c < o->n_configs; c++) {
        run_settings_free(&o->configs[c].set);
        config_free(o->configs[c].cfg);
    }
    free(o->overrides);
    return code;
}

/* The options into o: the overrides, --config names, --init files, the counts and flags,
 * --child. Exits with 0 after --help, 2 on a bad option. */
static StageResult round_read_options(RoundOptions* o, int argc, char** argv) {
    CliArgs a;
    int parsed = bench_parse("bench round", OPTIONS, ABOUT, MORE, argc, argv, &a);
    o->overrides = mallocCheck(sizeof(char*) * (size_t)(a.n_pos + 1));
    for (int i = 0; parsed == 0 && i < a.n_pos; i++) {
        if (strchr(a.pos[i], '=')) o->overrides[o->n_overrides++] = a.pos[i];
        else parsed = cli_unexpected("bench round", a.pos[i], "not section.key=value; see --help");
    }
    for (int i = 0; parsed == 0 && i < a.n_given; i++) {
        const CliGiven* g = &a.given[i];
        if (g->opt == OPT_CONFIG && o->n_names >= MAX_CONFIGS) {
            fprintf(stderr, "sapo bench round: at most %d --config\n", MAX_CONFIGS);
            parsed = -1;
        } else if (g->opt == OPT_CONFIG) {
            o->names[o->n_names++] = g->value;
        } else if (g->opt == OPT_INIT && o->n_inits >= MAX_INITS) {
            fprintf(stderr, "sapo bench round: at most %d --init\n", MAX_INITS);
            parsed = -1;
        } else if (g->opt == OPT_INIT) {
            o->inits[o->n_inits++] = g->value;
        }
    }
    if (parsed == 0 && (cli_opt_int(&a, OPT_ROUNDS, 1, 100000, &o->rounds) ||
                        cli_opt_int(&a, OPT_WARMUP_ROUNDS, 0, 100000, &o->warmup) ||
                        cli_opt_int(&a, OPT_THREADS, 1, 256, &o->threads)))
        parsed = -1;
    if (a.opt[OPT_NO_TORCH]) o->torch = 0;
    if (a.opt[OPT_KEEP]) o->keep = 1;
    o->child_dir = a.opt[OPT_CHILD];
    cli_args_free(&a);
    return parsed ? stage_exit(parsed > 0 ? 0 : 2) : stage_go_on();
}

/* Every selected config (default quick, then paper) resolved, loaded and checked, the
 * --init files placed, before anything runs. Exits with 2 on a bad one. */
static StageResult round_load_configs(RoundOptions* o) {
    if (o->n_names == 0) {
        o->names[o->n_names++] = "quick";
        o->names[o->n_names++] = "paper";
    }
    char err[1024];
    for (int k = 0; k < o->n_names; k++) {
        if (resolve_config(o, o->names[k])) return stage_exit(2);
        RoundConfig* rc = &o->configs[o->n_configs - 1];
        rc->cfg = load_round_config(rc->path, o->overrides, o->n_overrides, &rc->set, err, sizeof err);
        if (!rc->cfg) {
            fprintf(stderr, "sapo bench round: config error (%s): %s\n", rc->label, err);
            return stage_exit(2);
        }
    }
    if (place_inits(o)) return stage_exit(2);
    for (int c = 0; c < o->n_configs; c++) { /* the init now set: its shape checked again */
        if (swarm_config_check(&o->configs[c].set, err, sizeof err)) {
            fprintf(stderr, "sapo bench round: config error (%s): %s\n", o->configs[c].label, err);
            return stage_exit(2);
        }
    }
    return stage_go_on();
}

/* The '#' lines before the table: how each side runs, each config's shape and init, the
 * table's column names. */
static void round_print_header(const RoundOptions* o) {
    printf("# sapo bench round: one swarm node-round (generate + score + train), ours vs PyTorch eager%s\n",
           o->torch ? "" : " (--no-torch: ours only)");
    printf("# %d thread(s) per side, warm-up rounds %d (untimed), timed rounds %d; ours: `%s bench round --child` "
           "(a fresh process, MPI singleton)\n", o->threads, o->warmup, o->rounds, bench_self_path());
    if (o->torch) printf("# torch: %s " BENCH_SCRIPTS_DIR "/torch_round_bench.py\n", bench_python());
    for (int c = 0; c < o->n_configs; c++) {
        const SwarmSettings* sw = &o->configs[c].set.sw;
        const NodeSettings* node0 = &o->configs[c].set.node[0];
        ModelShape g = node0->model;
        long n_q = node0->n_local, n_l = node0->n_completions;
        printf("# %-6s %s: L%d H%d C%d n_ctx %d, I=%ld questions x L=%ld completions = %ld rows, max_new_tokens %ld, "
               "temperature %g, tasks %s (%s), backend %s\n",
               o->configs[c].label, o->configs[c].path, g.n_layer, g.n_head, g.d_model, g.n_ctx, n_q, n_l, n_q * n_l,
               (long)node0->gen.max_new_tokens, node0->gen.sampler.temperature, sw->tasks_names,
               task_preset_name(sw->tasks_preset), model_backend_choice_name(node0->backend));
        if (*node0->init)
            printf("# %-6s init: %s (a trained model: completions stop at </answer> when it answers)\n",
                   o->configs[c].label, node0->init);
        else
            printf("# %-6s init: random (worst case: every row writes gen.max_new_tokens bytes of garbage)\n",
                   o->configs[c].label);
    }
    printf("#\n");
    bench_table_header("config");
    fflush(stdout);
}

/* A fresh work directory under $TMPDIR (else /tmp) into dir, holding the config as
 * config.ini. Returns 0, else 1 with the line printed. */
static int round_work_dir(const Config* cfg, char* dir, size_t dirlen) {
    if (bench_work_dir("sapo-bench-round", dir, dirlen)) {
        fprintf(stderr, "sapo bench round: cannot create a work directory %s: %s\n", dir, strerror(errno));
        return 1;
    }
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/config.ini", dir);
    FILE* f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "sapo bench round: cannot write %s\n", path);
        return 1;
    }
    config_write(cfg, f);
    fclose(f);
    return 0;
}

/* One config's four rows of the table: gen+score, train, total, peak RSS. */
static void round_print_rows(const char* label, const RoundSide* ours, const RoundSide* torch) {
    static const RoundSide none; /* a torch side that did not run or failed: its columns '-' */
    if (!torch->ok) torch = &none;
    bench_row(label, "gen+score s", &ours->gen, &torch->gen, 0, 0, 3);
    bench_row(label, "train s", &ours->train, &torch->train, 0, 0, 3);
    bench_row(label, "total s", &ours->total, &torch->total, 0, 0, 3);
    BenchTiming ra = {ours->peak_rss_mb, NAN, NAN, ours->ok}, rb = {torch->peak_rss_mb, NAN, NAN, torch->ok};
    bench_row(label, "peak RSS MB", &ra, &rb, 0, 0, 1);
    bench_products_print(label, &ours->products, ours->gen.avg, ours->train.avg);
    fflush(stdout);
}

/* Config c measured: its work directory, our side in a child, then (unless --no-torch and
 * when ours ran) the PyTorch side on the config's device, its rows printed, the directory
 * kept or removed. Sets *failed when a side fails. Exits with 1 when there is no work
 * directory. */
static StageResult round_measure(const RoundOptions* o, int c, RoundResults* res, int* failed) {
    const RoundConfig* rc = &o->configs[c];
    char dir[PATH_MAX];
    if (round_work_dir(rc->cfg, dir, sizeof dir)) return stage_exit(1);
    if (run_ours(o, dir, &res->ours[c], &res->mismatch[c])) {
        *failed = 1;
    } else if (o->torch) {
        const ModelBackend* be = model_backend_for(rc->set.node[0].backend);
        const char* device = be && strcmp(be->name, "cpu") ? "cuda" : "cpu";
        if (run_torch(o, dir, device, &res->torch[c])) *failed = 1;
    }
    round_print_rows(rc->label, &res->ours[c], &res->torch[c]);
    if (o->keep) printf("# %s: kept %s\n", rc->label, dir);
    else remove_tree(dir);
    return stage_go_on();
}

/* The footer: per config and side what the timed rounds sampled, a warning where the
 * prompts differ, how to read the ratios. */
static void round_print_footer(const RoundOptions* o, const RoundResults* res) {
    printf("#\n# per timed round, averaged (both sides train on their own samples, so these drift apart "
           "after round 0):\n");
    for (int c = 0; c < o->n_configs; c++) {
        const char* lab = o->configs[c].label;
        const RoundSide *ours = &res->ours[c], *torch = &res->torch[c];
        if (ours->ok)
            printf("# %-6s ours : completion %6.1f bytes/row, answer tags %5.1f%%, reward %.3f, %7.0f train tokens; "
                   "RSS %.1f MB after MPI_Init, before the node\n",
                   lab, ours->completion_len, 100.0 * ours->format_rate, ours->reward, ours->train_tokens,
                   ours->base_rss_mb);
        if (torch->ok)
            printf("# %-6s torch: completion %6.1f bytes/row, answer tags %5.1f%%, reward %.3f, %7.0f train tokens; "
                   "RSS %.1f MB after imports, before the model; scorer: %s%s%s\n",
                   lab, torch->completion_len, 100.0 * torch->format_rate, torch->reward, torch->train_tokens,
                   torch->base_rss_mb, torch->scorer, torch->note[0] ? "; " : "", torch->note);
        if (res->mismatch[c])
            printf("# %-6s WARNING: the tasks node_round asked differ from the prompts given to torch "
                   "(did src/swarm/node.c change how it draws questions?)\n", lab);
    }
    printf("# gen+score and train are the round's own timers; total is the whole round.\n");
}

int bench_round_main(int argc, char** argv) {
    RoundOptions o = {.rounds = 3, .warmup = 1, .threads = 1, .torch = 1};
    StageResult stage = round_read_options(&o, argc, argv);
    if (!stage_goes_on(stage)) return round_end(&o, stage.exit_code);
    if (o.child_dir) {
        free(o.overrides);
        return child_main(o.child_dir, o.rounds, o.warmup, o.threads);
    }
    stage = round_load_configs(&o);
    if (!stage_goes_on(stage)) return round_end(&o, stage.exit_code);
    bench_thread_env(o.threads); /* both sides' processes */
    round_print_header(&o);
    RoundResults res;
    memset(&res, 0, sizeof res);
    int failed = 0;
    for (int c = 0; c < o.n_configs; c++) {
        stage = round_measure(&o, c, &res, &failed);
        if (!stage_goes_on(stage)) return round_end(&o, stage.exit_code);
    }
    round_print_footer(&o, &res);
    return round_end(&o, failed ? 1 : 0);
}
