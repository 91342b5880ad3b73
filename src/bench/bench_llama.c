/* `sapo bench model --family llama`: the Llama/Qwen2 family against transformers eager, side
 * by side in one invocation, on the same weights, token content and thread count, for a
 * ~10M-parameter Qwen2 shape (random weights, hf_export-ed so transformers loads the very
 * same) and the SmolLM2-135M shape (the real weights of scripts/get-model.sh when present):
 * training tokens/s (forward + backward + AdamW over G groups x K completions sharing a
 * prompt, packed in micro-batches), generated tokens/s (K completions per prompt with the
 * shared-prompt KV cache) and the peak RSS of each side, each side measured in its own
 * process (the C side in a forked child, the PyTorch side in scripts/bench/
 * torch_llama_bench.py), next to the model's own memory estimate. */
#include <cblas.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/bench_harness.h"
#include "core/check.h"
#include "core/cli_options.h"
#include "core/rng.h"
#include "io/files.h"
#include "model/family.h"
#include "model/generate.h"
#include "model/model.h"
#include "model/hf_dir.h"
#include "model/hf_model.h"
#include "model/llama.h"
#include "model/lm_batch.h"
#include "rl/pack.h"

#define LB_CMD "bench model --family llama"
#define LB_ERR "sapo " LB_CMD ": "
#define LB_MEM_BUDGET (3.0 * 1024 * 1024 * 1024) /* what one SmolLM2 rank must fit in */
#define LB_CONFIG_MICRO 4096                     /* model.micro_tokens' default (core/config_schema.c) */

typedef struct {
    int groups, completions, prompt, new_tokens, ctx, micro_tokens, gen_prompts, warmup, repeats, threads, torch;
    int gen_together; /* the prompts in one model_generate_groups call, as a node's groups */
    const char* hf_dir; /* the SmolLM2 directory; NULL: ask scripts/get-model.sh */
} LlamaBenchOptions;

typedef struct {
    char name[48];
    ModelShape cfg;
    int smollm2; /* the SmolLM2 shape: its real weights when a directory is found */
} LlamaShape;

/* One side's numbers beyond BenchSide's. */
typedef struct {
    BenchSide s;
    BenchTiming gen_shared;
    double peak_kb, work_peak_kb;
    double check_logprob; /* mean log-prob of group 0's completion tokens before training; 0: none */
    char versions[96];
} LlamaSide;

/* One shape's run: the weights' directory, the token content, the micro-batches and the
 * capacity every side works with. */
typedef struct {
    const LlamaShape* shape;
    const LlamaBenchOptions* o;
    char model_dir[PATH_MAX + 96];
    int real;      /* model_dir holds the real weights (else the C side exports random ones there) */
    char work_dir[PATH_MAX + 80];
    LmGroup* groups;
    TrainGroup* views; /* groups as rl/pack.h packs them */
    int n_groups;
    int* gen_prompts; /* the generation prompts one after another, gen_prompts x prompt tokens */
    int* gen_lens;    /* each prompt's length (all prompt tokens) */
    int n_micro;
    int* micro_start; /* micro-batch b is groups [micro_start[b], micro_start[b + 1]) */
    ModelCapacity cap;
    int cap_raised; /* the batches needed more than model_capacity_for gives */
    long train_tokens;
    long targets;
    int comp_min, comp_max; /* completion lengths */
} ShapeRun;

static const AdamWConfig LB_ADAMW = {.lr = 1e-5f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.0f};
static const float LB_GRAD_CLIP = 1.0f;

/* --size NAME: qwen10m, smollm2, tiny or L,C,H,KV,F,V (a Qwen2-style random shape). 0, or -1
 * after the one-line error. */
static int shape_parse(const char* text, int ctx, LlamaShape* s) {
    memset(s, 0, sizeof *s);
    int L, C, H, KV, F, V;
    char tail;
    if (!strcmp(text, "qwen10m")) {
        s->cfg = llama_config(8, 256, 8, 2, 704, 32000, 1, 1e6f, 1e-6f);
    } else if (!strcmp(text, "smollm2")) {
        s->cfg = llama_config(30, 576, 9, 3, 1536, 49152, 0, 1e5f, 1e-5f);
        s->smollm2 = 1;
    } else if (!strcmp(text, "tiny")) {
        s->cfg = llama_config(2, 64, 4, 2, 128, 512, 1, 1e6f, 1e-6f);
    } else if (sscanf(text, "%d,%d,%d,%d,%d,%d%c", &L, &C, &H, &KV, &F, &V, &tail) == 6 && H > 0 && C % H == 0) {
        s->cfg = llama_config(L, C, H, KV, F, V, 1, 1e6f, 1e-6f);
    } else {
        fprintf(stderr, LB_ERR "--size '%s': expected qwen10m, smollm2, tiny or L,C,H,KV,F,V (C a multiple of H)\n",
                text);
        return -1;
    }
    s->cfg.n_ctx = ctx;
    char why[256];
    if (gpt_config_check(&s->cfg, why, sizeof why)) {
        fprintf(stderr, LB_ERR "--size '%s': %s\n", text, why);
        return -1;
    }
    snprintf(s->name, sizeof s->name, "%s", text);
    return 0;
}

static double shape_params(const ModelShape* c) {
    size_t sizes[MODEL_MAX_TENSORS];
    gpt_tensor_sizes(c, sizes);
    double n = 0;
    for (int i = 0; i < model_family(c->family)->n_tensors; i++) n += (double)sizes[i];
    return n;
}

/* The SmolLM2 directory scripts/get-model.sh prints (it is instant once prepared), or 0. */
static int smollm2_dir(char* out, size_t n) {
    char cmd[PATH_MAX + 96];
    snprintf(cmd, sizeof cmd, "'%s/scripts/get-model.sh' smollm2-135m-instruct 2>/dev/null", SAPO_SOURCE_DIR);
    FILE* p = popen(cmd, "r");
    if (!p) return 0;
    char line[PATH_MAX];
    int got = fgets(line, sizeof line, p) != NULL;
    if (pclose(p) != 0 || !got) return 0;
    line[strcspn(line, "\n")] = '\0';
    snprintf(out, n, "%s", line);
    char cfg[PATH_MAX + 16];
    snprintf(cfg, sizeof cfg, "%s/config.json", out);
    return access(cfg, R_OK) == 0;
}

/* Completion k of group g: between N/2 and N tokens, as RL completions vary. */
static int completion_len(int N, int g, int k, int K) { return N - ((g * K + k) * 7) % ((N + 1) / 2); }

static int* random_ids(RngStream* rng, int n, int V) {
    int* ids = mallocCheck((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++) ids[i] = (int)rng_below(rng, (uint64_t)V);
    return ids;
}

/* The groups, the generation prompts, the micro-batches (whole groups, greedily up to
 * micro_tokens, one group at least) and a capacity that holds them: model_capacity_for's
 * (a rank training these groups, generating for `groups` prompts x K rows), raised where a
 * micro-batch or a prompt needs more. */
static void content_make(ShapeRun* r, const LlamaBenchOptions* o, int seed) {
    const ModelShape* c = &r->shape->cfg;
    int G = o->groups, K = o->completions, P = o->prompt, N = o->new_tokens;
    RngStream rng = rng_stream(2, 0, (uint32_t)seed, RNG_TEST);
    r->n_groups = G;
    r->groups = callocCheck((size_t)G, sizeof(LmGroup));
    r->views = callocCheck((size_t)G, sizeof(TrainGroup));
    r->train_tokens = r->targets = 0;
    r->comp_min = N, r->comp_max = 1;
    for (int g = 0; g < G; g++) {
        LmGroup* lg = &r->groups[g];
        lg->n_prompt = P;
        lg->prompt = random_ids(&rng, P, c->vocab);
        lg->n_comp = K;
        lg->comp = callocCheck((size_t)K, sizeof(int*));
        lg->comp_len = callocCheck((size_t)K, sizeof(int));
        for (int k = 0; k < K; k++) {
            lg->comp_len[k] = completion_len(N, g, k, K);
            lg->comp[k] = random_ids(&rng, lg->comp_len[k], c->vocab);
            r->targets += lg->comp_len[k];
            if (lg->comp_len[k] < r->comp_min) r->comp_min = lg->comp_len[k];
            if (lg->comp_len[k] > r->comp_max) r->comp_max = lg->comp_len[k];
        }
        r->train_tokens += P;
        r->views[g] = train_group_ids(lg->prompt, P, K, lg->comp, lg->comp_len);
    }
    r->train_tokens += r->targets;
    r->gen_prompts = random_ids(&rng, o->gen_prompts * P, c->vocab);
    r->gen_lens = mallocCheck((size_t)o->gen_prompts * sizeof(int));
    for (int i = 0; i < o->gen_prompts; i++) r->gen_lens[i] = P;

    r->cap = model_capacity_for(c, o->micro_tokens, G, K, N, G, G * K);
    ModelCapacity need = r->cap;
    r->micro_start = mallocCheck((size_t)(G + 1) * sizeof(int));
    r->n_micro = 0;
    const TokenRoles* roles = &model_family(c->family)->roles;
    for (int g0 = 0; g0 < G;) {
        long tokens, att;
        int g1 = g0 + 1;
        pack_size(r->views + g0, 1, roles, c->n_head, c->n_ctx, 0, &tokens, &att);
        while (g1 < G) {
            long t2, a2;
            pack_size(r->views + g0, g1 - g0 + 1, roles, c->n_head, c->n_ctx, 0, &t2, &a2);
            if (t2 > o->micro_tokens) break;
            tokens = t2, att = a2, g1++;
        }
        if (tokens > need.max_tokens) need.max_tokens = (int)tokens;
        if (att > need.max_att) need.max_att = att;
        r->micro_start[r->n_micro++] = g0;
        g0 = g1;
    }
    r->micro_start[r->n_micro] = G;
    int Q = o->gen_together ? o->gen_prompts : 1; /* generation prompts prefilled and decoded at once */
    if ((long)Q * (P - 1) > need.max_tokens) need.max_tokens = Q * (P - 1);
    if ((long)Q * c->n_head * (P - 1) * (P - 1) > need.max_att) need.max_att = (long)Q * c->n_head * (P - 1) * (P - 1);
    if (Q > need.max_prefixes) need.max_prefixes = Q;
    if (Q * K > need.max_rows) need.max_rows = Q * K;
    r->cap_raised = need.max_tokens != r->cap.max_tokens || need.max_att != r->cap.max_att ||
                    need.max_prefixes != r->cap.max_prefixes || need.max_rows != r->cap.max_rows;
    r->cap = need;
}

static void content_free(ShapeRun* r, const LlamaBenchOptions* o) {
    for (int g = 0; g < r->n_groups; g++) lm_group_free(&r->groups[g]);
    free(r->groups);
    free(r->views);
    free(r->gen_prompts);
    free(r->gen_lens);
    free(r->micro_start);
}

/* WORK/work.json: what the PyTorch side needs besides the weights. */
static int content_write(const ShapeRun* r, const LlamaBenchOptions* o, const char* path) {
    cJSON* j = cJSON_CreateObject();
    cJSON* groups = cJSON_AddArrayToObject(j, "groups");
    for (int g = 0; g < r->n_groups; g++) {
        const LmGroup* lg = &r->groups[g];
        cJSON* gj = cJSON_CreateObject();
        cJSON_AddItemToObject(gj, "prompt", cJSON_CreateIntArray(lg->prompt, lg->n_prompt));
        cJSON* comps = cJSON_AddArrayToObject(gj, "completions");
        for (int k = 0; k < lg->n_comp; k++) cJSON_AddItemToArray(comps, cJSON_CreateIntArray(lg->comp[k], lg->comp_len[k]));
        cJSON_AddItemToArray(groups, gj);
    }
    cJSON* micro = cJSON_AddArrayToObject(j, "micro");
    for (int b = 0; b < r->n_micro; b++) {
        cJSON* mb = cJSON_CreateArray();
        for (int g = r->micro_start[b]; g < r->micro_start[b + 1]; g++) cJSON_AddItemToArray(mb, cJSON_CreateNumber(g));
        cJSON_AddItemToArray(micro, mb);
    }
    cJSON* gp = cJSON_AddArrayToObject(j, "gen_prompts");
    for (int i = 0; i < o->gen_prompts; i++) cJSON_AddItemToArray(gp, cJSON_CreateIntArray(r->gen_prompts + (size_t)i * o->prompt, o->prompt));
    cJSON_AddNumberToObject(j, "completions", o->completions);
    cJSON_AddBoolToObject(j, "gen_together", o->gen_together);
    cJSON_AddNumberToObject(j, "new", o->new_tokens);
    cJSON_AddNumberToObject(j, "train_tokens", (double)r->train_tokens);
    const BenchNumber adamw[] = {{"lr", LB_ADAMW.lr}, {"beta1", LB_ADAMW.beta1}, {"beta2", LB_ADAMW.beta2},
                                 {"eps", LB_ADAMW.eps}, {"weight_decay", LB_ADAMW.weight_decay}};
    bench_json_numbers(cJSON_AddObjectToObject(j, "adamw"), adamw, sizeof adamw / sizeof adamw[0]);
    cJSON_AddNumberToObject(j, "grad_clip", LB_GRAD_CLIP);
    int rc = bench_json_write(path, j);
    cJSON_Delete(j);
    return rc;
}

typedef struct {
    Model* m;
    const ShapeRun* r;
    const LlamaBenchOptions* o;
    Packer* packed; /* one per micro-batch */
    int n_micro;      /* those a step runs: all, or the first for a warm-up */
    int n_prompts;    /* those c_generate generates for: all, or the first for a warm-up */
    float** dlogprobs;
    float* logprobs;
    GenConfig gen;
    int *out, *out_lens;
    long generated;
    uint32_t round;
} CSide;

static void c_train_step(void* arg) {
    CSide* s = arg;
    model_zero_grad(s->m);
    for (int b = 0; b < s->n_micro; b++) {
        model_forward_packed(s->m, &s->packed[b].pb, s->logprobs);
        model_backward(s->m, s->dlogprobs[b]);
    }
    model_step(s->m, &LB_ADAMW, LB_GRAD_CLIP);
}

static void c_generate(void* arg) {
    CSide* s = arg;
    int P = s->o->prompt, per = s->o->gen_together ? s->n_prompts : 1; /* prompts one call generates for */
    for (int i = 0; i < s->n_prompts; i += per) {
        RngStream rng = rng_stream(1, 0, s->round++, RNG_GENERATE);
        s->generated += model_generate_groups(s->m, s->r->gen_prompts + (size_t)i * P, P, s->r->gen_lens, per,
                                              s->o->completions, &s->gen, &rng, s->out, s->out_lens);
    }
}

/* The C side of one shape (arg: its ShapeRun), in a forked child; writes WORK/ours.json and returns the exit
 * status. */
static int c_side_run(void* arg) {
    const ShapeRun* r = arg;
    const LlamaBenchOptions* o = r->o;
    openblas_set_num_threads(o->threads);
    const ModelBackend* cpu = model_backend_built("cpu");
    char err[512];
    Model* m;
    if (r->real) {
        HfModel h;
        if (hf_model_open(&h, r->model_dir, cpu, &r->cap, r->shape->cfg.n_ctx, 0, 0, err, sizeof err)) {
            fprintf(stderr, LB_ERR "%s\n", err);
            return 1;
        }
        m = h.model;
        if (h.tokenizer) tokenizer_free(h.tokenizer);
    } else {
        m = model_create_cap(&r->shape->cfg, cpu, &r->cap, 1);
        if (hf_export(m, r->model_dir, NULL, err, sizeof err)) {
            fprintf(stderr, LB_ERR "%s\n", err);
            model_free(m);
            return 1;
        }
    }
    double load_kb = (double)bench_status_kb("VmHWM");
    int reset_ok = bench_peak_reset();

    /* the same weights on both sides: the mean log-prob of group 0's completion tokens */
    Packer check;
    packer_init(&check, m, 0, 0);
    PackCursor cur = {0};
    pack_next(&check, r->views, 1, &cur);
    float* check_lp = mallocCheck((size_t)check.pb.n_tokens * sizeof(float));
    model_forward_packed(m, &check.pb, check_lp);
    double lp_sum = 0;
    long lp_n = 0;
    for (int i = 0; i < check.pb.n_tokens; i++)
        if (check.pb.targets[i] >= 0) lp_sum += check_lp[i], lp_n++;
    free(check_lp);
    packer_free(&check);

    CSide s = {.m = m, .r = r, .o = o};
    s.packed = callocCheck((size_t)r->n_micro, sizeof(Packer));
    s.dlogprobs = callocCheck((size_t)r->n_micro, sizeof(float*));
    s.logprobs = mallocCheck((size_t)r->cap.max_tokens * sizeof(float));
    for (int b = 0; b < r->n_micro; b++) {
        int g0 = r->micro_start[b], n = r->micro_start[b + 1] - g0;
        PackCursor at = {0};
        packer_init(&s.packed[b], m, 0, 0);
        pack_next(&s.packed[b], r->views + g0, n, &at); /* the capacity holds the micro-batch */
        const PackedBatch* pb = &s.packed[b].pb;
        s.dlogprobs[b] = mallocCheck((size_t)pb->n_tokens * sizeof(float));
        for (int i = 0; i < pb->n_tokens; i++)
            s.dlogprobs[b][i] = pb->targets[i] >= 0 ? -1.0f / (float)r->targets : 0.0f;
    }
    s.n_micro = 1; /* the warm-up: steps on the first micro-batch, which touch every buffer */
    for (int i = 0; i < o->warmup; i++) c_train_step(&s);
    s.n_micro = r->n_micro;
    BenchTiming train = bench_time(c_train_step, &s, 0, o->repeats);

    static const int no_stop[1] = {-1}; /* no end token: every row generates N tokens, as on the PyTorch side */
    s.gen = (GenConfig){.sampler = {.temperature = 1.0f, .top_p = 1.0f}, .max_new_tokens = o->new_tokens,
                        .stop_ids = no_stop, .n_stop_ids = 1};
    size_t rows = (size_t)o->completions * (o->gen_together ? o->gen_prompts : 1);
    s.out = mallocCheck(rows * o->new_tokens * sizeof(int));
    s.out_lens = mallocCheck(rows * sizeof(int));
    s.n_prompts = 1; /* the warm-up: the first prompt */
    if (o->warmup) c_generate(&s);
    s.n_prompts = o->gen_prompts;
    s.generated = 0;
    BenchTiming gen = bench_time(c_generate, &s, 0, o->repeats);

    cJSON* j = cJSON_CreateObject();
    cJSON_AddItemToObject(j, "train", bench_timing_json(&train));
    cJSON_AddItemToObject(j, "generate", bench_timing_json(&gen));
    cJSON_AddNumberToObject(j, "gen_tokens", (double)s.generated / o->repeats);
    cJSON_AddNumberToObject(j, "check_logprob", lp_sum / (double)lp_n);
    double hwm = bench_peak_rss_kb(); /* since the reset, else the whole run's */
    cJSON_AddNumberToObject(j, "peak_kb", load_kb > hwm ? load_kb : hwm);
    cJSON_AddNumberToObject(j, "work_peak_kb", reset_ok ? hwm : -1);
    char path[PATH_MAX + 96];
    snprintf(path, sizeof path, "%s/ours.json", r->work_dir);
    int rc = bench_json_write(path, j);
    cJSON_Delete(j);
    for (int b = 0; b < r->n_micro; b++) {
        packer_free(&s.packed[b]);
        free(s.dlogprobs[b]);
    }
    free(s.packed);
    free(s.dlogprobs);
    free(s.logprobs);
    free(s.out);
    free(s.out_lens);
    model_free(m);
    if (rc) fprintf(stderr, LB_ERR "cannot write %s\n", path);
    return rc ? 1 : 0;
}

/* Runs the C side in a forked child (its own peak RSS); fills ours from WORK/ours.json. */
static int c_side(ShapeRun* r, const LlamaBenchOptions* o, LlamaSide* ours) {
    char side[96];
    snprintf(side, sizeof side, "the C side of %s", r->shape->name);
    cJSON* j = bench_child_json(c_side_run, r, LB_ERR, side, r->work_dir);
    if (!j) return -1;
    ours->s.train = bench_timing_read(cJSON_GetObjectItem(j, "train"), o->repeats);
    ours->s.gen = bench_timing_read(cJSON_GetObjectItem(j, "generate"), o->repeats);
    ours->s.train_tokens = (double)r->train_tokens;
    ours->s.gen_tokens = bench_num(j, "gen_tokens");
    ours->peak_kb = bench_num(j, "peak_kb");
    ours->work_peak_kb = bench_num(j, "work_peak_kb");
    ours->check_logprob = bench_num(j, "check_logprob");
    cJSON_Delete(j);
    return 0;
}

/* One JSON line of the PyTorch side into the LlamaSide at arg. */
static int torch_line(const char* what, cJSON* j, void* arg) {
    LlamaSide* t = arg;
    bench_side_line(what, j, &t->s);
    if (!strcmp(what, "generate_shared")) {
        t->gen_shared = bench_timing_read(j, 1);
    } else if (!strcmp(what, "rss")) {
        t->peak_kb = bench_num(j, "peak_kb");
        t->work_peak_kb = bench_num(j, "work_peak_kb");
    } else if (!strcmp(what, "check")) {
        t->check_logprob = bench_num(j, "logprob");
    } else if (!strcmp(what, "info")) {
        const char *tv = bench_str(j, "torch"), *hv = bench_str(j, "transformers");
        snprintf(t->versions, sizeof t->versions, "torch %s, transformers %s", tv ? tv : "?", hv ? hv : "?");
    }
    return 0;
}

/* Runs scripts/bench/torch_llama_bench.py on the shape's weights and work.json; fills t from its JSON lines. */
static void torch_side(const ShapeRun* r, const LlamaBenchOptions* o, LlamaSide* t) {
    char cmd[3 * PATH_MAX + 512];
    snprintf(cmd, sizeof cmd,
             "'%s' '%s/" BENCH_SCRIPTS_DIR "/torch_llama_bench.py' --model-dir '%s' --work '%s/work.json' "
             "--threads %d --warmup %d --repeats %d",
             bench_python(), SAPO_SOURCE_DIR, r->model_dir, r->work_dir, o->threads, o->warmup, o->repeats);
    t->s.repeats = o->repeats;
    if (bench_json_lines(cmd, torch_line, t) > 0) fprintf(stderr, LB_ERR "the PyTorch side of %s failed (%s)\n", r->shape->name, cmd);
}

/* A side's peak RSS in MB as a one-value timing (repeats 0 when there is none). */
static BenchTiming rss_mb(double kb) { return (BenchTiming){kb / 1024.0, NAN, NAN, kb > 0}; }

static int shape_bench(const LlamaShape* sh, int index, const LlamaBenchOptions* o, const char* tmp) {
    ShapeRun r = {.shape = sh, .o = o};
    LlamaShape real_shape;
    const char* weights = "random weights (seed 1), hf_export-ed for transformers";
    if (sh->smollm2) {
        char dir[PATH_MAX];
        int found = o->hf_dir ? (snprintf(dir, sizeof dir, "%s", o->hf_dir), 1) : smollm2_dir(dir, sizeof dir);
        char err[512];
        if (found) {
            real_shape = *sh;
            if (hf_model_shape(dir, o->ctx, 0, &real_shape.cfg, err, sizeof err)) {
                fprintf(stderr, LB_ERR "%s\n", err);
                return 2;
            }
            r.shape = sh = &real_shape;
            r.real = 1;
            snprintf(r.model_dir, sizeof r.model_dir, "%s", dir);
            weights = "the real SmolLM2-135M-Instruct weights";
        } else {
            weights = "random weights (scripts/get-model.sh smollm2-135m-instruct found none), hf_export-ed";
        }
    }
    snprintf(r.work_dir, sizeof r.work_dir, "%s/%d-%s", tmp, index, sh->name);
    if (mkdir(r.work_dir, 0700)) {
        fprintf(stderr, LB_ERR "cannot create %s: %s\n", r.work_dir, strerror(errno));
        return 1;
    }
    if (!r.real) snprintf(r.model_dir, sizeof r.model_dir, "%s/model", r.work_dir);
    content_make(&r, o, index);
    const ModelShape* c = &sh->cfg;
    char work[PATH_MAX + 96];
    snprintf(work, sizeof work, "%s/work.json", r.work_dir);
    if (content_write(&r, o, work)) {
        fprintf(stderr, LB_ERR "cannot write %s\n", work);
        content_free(&r, o);
        return 1;
    }
    printf("# %s: L%d C%d H%d/%d kv hd%d F%d V%d%s%s, %.3gM parameters, %s\n", sh->name, c->n_layer, c->d_model,
           c->n_head, c->n_kv_head, c->head_dim, c->d_ff, c->vocab, c->qkv_bias ? " qkv-bias" : "",
           c->tied ? " tied" : "", shape_params(c) / 1e6, weights);
    printf("# %s: train %d groups x %d completions, prompt %d, completions %d..%d tokens = %ld tokens "
           "(prompts once + completions) in %d micro-batch(es) of whole groups up to %d tokens\n",
           sh->name, o->groups, o->completions, o->prompt, r.comp_min, r.comp_max, r.train_tokens, r.n_micro,
           o->micro_tokens);
    fflush(stdout);

    LlamaSide ours = {0}, torch = {0};
    int failed = c_side(&r, o, &ours) != 0;
    if (!failed && o->torch) torch_side(&r, o, &torch);

    bench_side_rows(sh->name, &ours.s, &torch.s, 4);
    BenchTiming rss_ours = rss_mb(ours.peak_kb), rss_torch = rss_mb(torch.peak_kb);
    bench_row(sh->name, "rss_mb", &rss_ours, &rss_torch, 0, 0, 0);
    double est = model_memory_bytes(c, &r.cap), gib = 1024.0 * 1024.0 * 1024.0;
    printf("# %s: model_memory_bytes %.0f MB = %.2f GiB (capacity %d tokens, %ld att, %d prompts x %d rows, row_ctx %d,"
           " n_ctx %d%s) vs peak RSS %.0f MB = %.2f GiB (%.0f MB from the end of loading on): one rank training %d x %d"
           " %s 3 GiB\n",
           sh->name, est / 1048576.0, est / gib, r.cap.max_tokens, r.cap.max_att, r.cap.max_prefixes, r.cap.max_rows,
           r.cap.row_ctx, c->n_ctx, r.cap_raised ? ", raised above model_capacity_for for these batches" : "",
           ours.peak_kb / 1024.0, ours.peak_kb * 1024.0 / gib,
           ours.work_peak_kb > 0 ? ours.work_peak_kb / 1024.0 : ours.peak_kb / 1024.0, o->groups, o->completions,
           est <= LB_MEM_BUDGET && ours.peak_kb * 1024.0 <= LB_MEM_BUDGET ? "fits in" : "does NOT fit in");
    if (o->micro_tokens != LB_CONFIG_MICRO) {
        ModelCapacity cfg_cap = model_capacity_for(c, LB_CONFIG_MICRO, o->groups, o->completions, o->new_tokens,
                                                   o->groups, o->groups * o->completions);
        double e2 = model_memory_bytes(c, &cfg_cap);
        printf("# %s: with the config's default model.micro_tokens = %d: model_memory_bytes %.0f MB = %.2f GiB"
               " (%s 3 GiB)\n",
               sh->name, LB_CONFIG_MICRO, e2 / 1048576.0, e2 / gib, e2 <= LB_MEM_BUDGET ? "within" : "over");
    }
    if (torch.gen_shared.repeats > 0 && ours.s.gen.repeats > 0)
        printf("# %s: torch generate with the prompt prefilled once and its cache repeated (timed once): %.1f tok/s;"
               " ours %.2fx\n",
               sh->name, torch.s.gen_tokens / torch.gen_shared.avg,
               (ours.s.gen_tokens / ours.s.gen.avg) / (torch.s.gen_tokens / torch.gen_shared.avg));
    if (torch.check_logprob != 0)
        printf("# %s: same weights: mean log-prob of group 0's completion tokens before training: ours %.6f, "
               "torch %.6f (|diff| %.1e)\n", sh->name, ours.check_logprob, torch.check_logprob,
               fabs(ours.check_logprob - torch.check_logprob));
    if (torch.versions[0]) printf("# %s: PyTorch side: %s, eager attention\n", sh->name, torch.versions);
    fflush(stdout);
    content_free(&r, o);
    return failed ? 1 : 0;
}

static const CliOption OPTIONS[] = {
    {"family", "NAME", "llama: this benchmark (byte_gpt, the default: `sapo bench model --help`)"},
    {"size", "NAME", "qwen10m | smollm2 | tiny | L,C,H,KV,F,V (a random Qwen2-style shape); repeat\n"
                     "for several (default: qwen10m and smollm2)"},
    {"groups", "G", "training groups (each one prompt), 1 to 64 (default 4)"},
    {"completions", "K", "completions per prompt, training and generation, 1 to 64 (default 8)"},
    {"prompt", "P", "prompt tokens, 1 to 4096 (default 100)"},
    {"new", "N", "tokens per completion: training completions take N/2..N, generation N (default 48)"},
    {"ctx", "T", "the model's context (SmolLM2's 8192 is cut to it), 16 to 8192 (default 512)"},
    {"micro-tokens", "M", "tokens per training micro-batch (model.micro_tokens), 64 to 65536 (default 512)"},
    {"gen-prompts", "Q", "prompts generated for, one after another, 1 to 64 (default 2)"},
    {"gen-together", NULL, "generate for the Q prompts in one batch, all Q x K rows decoding together, as a\n"
                           "swarm node generates for its groups (both sides)"},
    {"warmup", "W", "untimed training steps on the first micro-batch, 0 to 100 (default 1; any: one\n"
                    "untimed generation for the first prompt)"},
    {"repeats", "R", "timed iterations, 1 to 1000 (default 1, to keep a 2-core run short; 2 or more\n"
                     "for min/max)"},
    {"threads", "K", "BLAS and torch threads, 1 to 256 (default 1: one rank per core)"},
    {"hf-dir", "DIR", "the SmolLM2 directory (default: what scripts/get-model.sh smollm2-135m-instruct\n"
                      "prints; random weights of that shape when it finds none)"},
    {"no-torch", NULL, "skip the PyTorch side"},
    {"quick", NULL, "a short run: 2 groups, prompt 32, new 16, one generation prompt"},
    {NULL, NULL, NULL},
};
enum { OPT_FAMILY, OPT_SIZE, OPT_GROUPS, OPT_COMPLETIONS, OPT_PROMPT, OPT_NEW, OPT_CTX, OPT_MICRO, OPT_GEN_PROMPTS,
       OPT_GEN_TOGETHER, OPT_WARMUP, OPT_REPEATS, OPT_THREADS, OPT_HF_DIR, OPT_NO_TORCH, OPT_QUICK };

static const char ABOUT[] =
    "usage: sapo bench model --family llama [options]\n"
    "The Llama/Qwen2 family against transformers eager on the same weights, tokens and threads,\n"
    "for a ~10M-parameter Qwen2 shape and SmolLM2-135M: training tokens/s (forward + backward +\n"
    "AdamW over G groups x K completions sharing a prompt), generated tokens/s (K completions per\n"
    "prompt with the KV cache) and each side's peak RSS, as ratios. The PyTorch side's\n"
    BENCH_SCRIPTS_DIR "/torch_llama_bench.py\n(" BENCH_PYTHON_HELP ").\n";

/* 0, 1 after --help, -1 after a one-line error. */
static int options_parse(int argc, char** argv, LlamaBenchOptions* o, LlamaShape* shapes, int* n_shapes, int max) {
    CliArgs a;
    int parsed = bench_parse(LB_CMD, OPTIONS, ABOUT, NULL, argc, argv, &a);
    if (parsed == 0 && a.n_pos) parsed = cli_unexpected(LB_CMD, a.pos[0], "see --help");
    if (parsed == 0 && a.opt[OPT_QUICK]) {
        o->groups = 2, o->prompt = 32, o->new_tokens = 16, o->gen_prompts = 1;
    }
    if (parsed == 0 && (cli_opt_int(&a, OPT_GROUPS, 1, 64, &o->groups) ||
                        cli_opt_int(&a, OPT_COMPLETIONS, 1, 64, &o->completions) ||
                        cli_opt_int(&a, OPT_PROMPT, 1, 4096, &o->prompt) ||
                        cli_opt_int(&a, OPT_NEW, 1, 4096, &o->new_tokens) ||
                        cli_opt_int(&a, OPT_CTX, 16, 8192, &o->ctx) ||
                        cli_opt_int(&a, OPT_MICRO, 64, 65536, &o->micro_tokens) ||
                        cli_opt_int(&a, OPT_GEN_PROMPTS, 1, 64, &o->gen_prompts) ||
                        cli_opt_int(&a, OPT_WARMUP, 0, 100, &o->warmup) ||
                        cli_opt_int(&a, OPT_REPEATS, 1, 1000, &o->repeats) ||
                        cli_opt_int(&a, OPT_THREADS, 1, 256, &o->threads)))
        parsed = -1;
    if (parsed == 0 && strcmp(a.opt[OPT_FAMILY] ? a.opt[OPT_FAMILY] : "", "llama")) {
        fprintf(stderr, LB_ERR "--family '%s': expected llama here\n", a.opt[OPT_FAMILY] ? a.opt[OPT_FAMILY] : "");
        parsed = -1;
    }
    if (parsed == 0 && o->prompt + o->new_tokens > o->ctx) {
        fprintf(stderr, LB_ERR "--prompt %d + --new %d exceeds --ctx %d\n", o->prompt, o->new_tokens, o->ctx);
        parsed = -1;
    }
    *n_shapes = 0;
    for (int i = 0; parsed == 0 && i < a.n_given; i++) {
        if (a.given[i].opt != OPT_SIZE) continue;
        if (*n_shapes == max) {
            fprintf(stderr, LB_ERR "--size: at most %d sizes\n", max);
            parsed = -1;
        } else if (shape_parse(a.given[i].value, o->ctx, &shapes[*n_shapes])) {
            parsed = -1;
        } else {
            (*n_shapes)++;
        }
    }
    if (parsed == 0 && *n_shapes == 0) {
        shape_parse("qwen10m", o->ctx, &shapes[0]);
        shape_parse("smollm2", o->ctx, &shapes[1]);
        *n_shapes = 2;
    }
    if (a.opt[OPT_HF_DIR]) o->hf_dir = a.opt[OPT_HF_DIR];
    if (a.opt[OPT_NO_TORCH]) o->torch = 0;
    if (a.opt[OPT_GEN_TOGETHER]) o->gen_together = 1;
    cli_args_free(&a);
    return parsed;
}

int bench_llama_main(int argc, char** argv) {
    LlamaBenchOptions o = {.groups = 4, .completions = 8, .prompt = 100, .new_tokens = 48, .ctx = 512,
                           .micro_tokens = 512, .gen_prompts = 2, .warmup = 1, .repeats = 1, .threads = 1, .torch = 1};
    enum { MAX_SHAPES = 8 };
    LlamaShape shapes[MAX_SHAPES];
    int n_shapes = 0;
    int parsed = options_parse(argc, argv, &o, shapes, &n_shapes, MAX_SHAPES);
    if (parsed) return parsed > 0 ? 0 : 2;
    if (o.hf_dir) { /* checked before anything is printed: a bad directory is a one-line error */
        char cfg_path[PATH_MAX + 16];
        snprintf(cfg_path, sizeof cfg_path, "%s/config.json", o.hf_dir);
        if (access(cfg_path, R_OK)) {
            fprintf(stderr, LB_ERR "--hf-dir '%s': no readable config.json there\n", o.hf_dir);
            return 2;
        }
    }
    char tmp[PATH_MAX];
    if (bench_work_dir("sapo-bench-llama", tmp, sizeof tmp)) {
        fprintf(stderr, LB_ERR "cannot create a work directory %s: %s\n", tmp, strerror(errno));
        return 1;
    }
    bench_thread_env(o.threads);
    openblas_set_num_threads(o.threads);
    double load[3] = {0};
    FILE* lf = fopen("/proc/loadavg", "r");
    if (lf) {
        if (fscanf(lf, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = load[1] = load[2] = 0;
        fclose(lf);
    }
    printf("# sapo bench model --family llama: cpu, %d thread(s) each side (OPENBLAS_NUM_THREADS, "
           "torch.set_num_threads), %ld core(s) online, load average %.2f %.2f %.2f at start\n", o.threads,
           sysconf(_SC_NPROCESSORS_ONLN), load[0], load[1], load[2]);
    printf("# warm-up: %d untimed training step(s) on the first micro-batch%s; then %d timed repeat(s) each\n",
           o.warmup, o.warmup ? " and one generation for the first prompt" : "", o.repeats);
    printf("# train = forward + backward + AdamW (lr %g, clip %g) over all groups, one micro-batch at a time; "
           "ours packs each group's prompt once, torch pads [prompt | completion] rows with an attention mask\n",
           LB_ADAMW.lr, LB_GRAD_CLIP);
    printf("# generate = %d prompt(s) of %d tokens, %d completions each of %d new tokens (temperature 1, no end "
           "token), with the KV cache: %s\n",
           o.gen_prompts, o.prompt, o.completions, o.new_tokens,
           o.gen_together ? "all rows decoded together (--gen-together, as a node's groups)"
                          : "each prompt's rows decoded together, prompts one after another");
    printf("# tok/s counts the same tokens on both sides (train: prompts once + completions)\n");
    printf("# %s\n", openblas_get_config());
    printf("#\n");
    bench_table_header("model");
    fflush(stdout);
    int rc = 0;
    for (int i = 0; i < n_shapes; i++) {
        int r = shape_bench(&shapes[i], i, &o, tmp);
        if (r > rc) rc = r;
    }
    remove_tree(tmp);
    return rc;
}
