/* `sapo bench model`: tokens/s of a training step (forward + backward + AdamW) and of
 * KV-cache generation for two model sizes, the GFLOP/s achieved overall and inside sgemm
 * next to this machine's measured sgemm peak, and the same work in PyTorch eager on the
 * same thread count, run in the same invocation and printed as ratios; then the same in the
 * deterministic mode (model.deterministic: det_gemm, no BLAS) and its cost as a ratio.
 * `--family llama` hands the whole command line to bench_llama.c. */
#include <cblas.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "bench/bench_harness.h"
#include "bench/bench_sgemm_peak.h"
#include "core/check.h"
#include "core/cli_options.h"
#include "core/rng.h"
#include "model/product_profile.h"
#include "model/generate.h"
#include "model/model.h"

typedef struct {
    int layers, heads, dmodel;
} BenchSize;

typedef struct {
    int ctx, batch, prompt, new_tokens, warmup, repeats, threads, torch;
    int modes; /* 1 = default numerics, 2 = deterministic, 3 = both */
    const char* backend;
    const ModelBackend* be; /* the backend found */
    int on_gpu;             /* be is cuda: no sgemm profile, PyTorch on the GPU too */
} BenchOptions;

typedef struct {
    Model* m;
    int B, T;
    int *inputs, *targets;
    float *logprobs, *dlogprobs;
    /* generation */
    int *prompts, *prompt_lens, *out, *out_lens;
    GenConfig gen;
    long generated;
    uint32_t round;
} BenchState;

static void train_step(void* arg) {
    BenchState* s = arg;
    AdamWConfig hp = {.lr = 1e-4f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.0f};
    model_zero_grad(s->m);
    model_forward(s->m, s->inputs, s->targets, s->B, s->T, s->logprobs);
    model_backward(s->m, s->dlogprobs);
    model_step(s->m, &hp, 0.0f);
}

static void generate_batch(void* arg) {
    BenchState* s = arg;
    RngStream rng = rng_stream(1, 0, s->round++, RNG_GENERATE);
    s->generated += model_generate(s->m, s->prompts, s->gen.max_new_tokens + 1, s->prompt_lens, s->B, &s->gen, &rng,
                                   s->out, s->out_lens);
}

/* Runs the PyTorch side into t. */
static void torch_side(const BenchSize* z, const BenchOptions* o, BenchSide* t) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "%s %s/" BENCH_SCRIPTS_DIR "/torch_model_bench.py --layers %d --heads %d --dmodel %d --ctx %d --batch %d "
             "--prompt %d --new %d --warmup %d --repeats %d --threads %d --device %s",
             bench_python(), SAPO_SOURCE_DIR, z->layers, z->heads, z->dmodel, o->ctx, o->batch, o->prompt,
             o->new_tokens, o->warmup, o->repeats, o->threads, o->on_gpu ? "cuda" : "cpu");
    t->repeats = o->repeats;
    if (bench_json_lines(cmd, bench_side_line, t) > 0) fprintf(stderr, "sapo bench: the PyTorch side failed (%s)\n", cmd);
}

/* One size in one numerics mode, its two rows printed; rates gets train and generate tok/s. */
static void bench_one(const BenchSize* z, const BenchOptions* o, double peak, int det, double rates[2]) {
    ModelShape cfg = {.n_layer = z->layers, .n_head = z->heads, .d_model = z->dmodel, .n_ctx = o->ctx, .vocab = GPT_VOCAB,
                     .deterministic = det};
    BenchState s = {.B = o->batch, .T = o->ctx};
    s.m = model_create(&cfg, o->be, o->batch, 1);
    size_t BT = (size_t)o->batch * o->ctx;
    s.inputs = mallocCheck(BT * sizeof(int));
    s.targets = mallocCheck(BT * sizeof(int));
    s.logprobs = mallocCheck(BT * sizeof(float));
    s.dlogprobs = mallocCheck(BT * sizeof(float));
    RngStream rng = rng_stream(2, 0, 0, RNG_TEST);
    for (size_t i = 0; i < BT; i++) {
        s.inputs[i] = (int)rng_below(&rng, 256);
        s.targets[i] = (int)rng_below(&rng, 256);
        s.dlogprobs[i] = -1.0f / (float)BT;
    }
    product_profile_reset(1);
    BenchTiming train = bench_time(train_step, &s, o->warmup, o->repeats);
    double sgemm_s = product_profile.seconds, sgemm_f = product_profile.flops;
    product_profile_reset(0);
    int runs = o->warmup + o->repeats;
    double train_flops = 3.0 * gpt_forward_flops(&cfg, o->batch, o->ctx); /* backward = 2x forward */
    double train_tps = BT / train.avg;

    int stride = o->new_tokens + 1;
    s.prompts = mallocCheck(sizeof(int) * o->batch * stride);
    s.prompt_lens = mallocCheck(sizeof(int) * o->batch);
    s.out = mallocCheck(sizeof(int) * o->batch * o->new_tokens);
    s.out_lens = mallocCheck(sizeof(int) * o->batch);
    for (int b = 0; b < o->batch; b++) {
        s.prompt_lens[b] = o->prompt;
        s.prompts[b * stride] = TOK_BOS;
        for (int t = 1; t < o->prompt; t++) s.prompts[b * stride + t] = (int)rng_below(&rng, 256);
    }
    s.gen = (GenConfig){.sampler = {.temperature = 1.0f, .top_p = 1.0f}, .max_new_tokens = o->new_tokens};
    if (o->warmup) generate_batch(&s); /* any warm-up: one untimed batch */
    s.generated = 0;
    BenchTiming gen = bench_time(generate_batch, &s, 0, o->repeats);
    double gen_tps = s.generated / (gen.avg * o->repeats);

    BenchSide ours = {.train = train, .gen = gen, .train_tokens = (double)BT,
                      .gen_tokens = (double)s.generated / o->repeats}, torch = {0};
    if (o->torch && !det) torch_side(z, o, &torch);
    rates[0] = train_tps;
    rates[1] = gen_tps;

    char name[48];
    snprintf(name, sizeof name, "L%d H%d C%d%s", z->layers, z->heads, z->dmodel, det ? " det" : "");
    bench_side_rows(name, &ours, &torch, 4);
    printf("# %s: train %.1f GFLOP/s", name, train_flops / train.avg / 1e9);
    if (!o->on_gpu && sgemm_s > 0) /* the sgemm counters only see the CPU backend's OpenBLAS calls */
        printf("; inside %s %.1f GFLOP/s = %.0f%% of the sgemm peak, %.0f%% of the step's time", det ? "det_gemm" : "sgemm",
               sgemm_f / sgemm_s / 1e9, 100.0 * sgemm_f / sgemm_s / 1e9 / peak, 100.0 * sgemm_s / (train.avg * runs));
    printf("\n");
    fflush(stdout);
    free(s.inputs);
    free(s.targets);
    free(s.logprobs);
    free(s.dlogprobs);
    free(s.prompts);
    free(s.prompt_lens);
    free(s.out);
    free(s.out_lens);
    model_free(s.m);
}

static const CliOption OPTIONS[] = {
    {"size", "L,H,C", "benchmark only this size (layers, heads, d_model)"},
    {"ctx", "T", "context length of the training batch, 2 to 4096 (default 128)"},
    {"batch", "B", "sequences per batch, 1 to 4096 (default 64)"},
    {"prompt", "P", "prompt tokens for generation, 1 to 4096 (default 32)"},
    {"new", "N", "new tokens per sequence, 1 to 4096 (default 96)"},
    {"warmup", "W", "untimed iterations, 0 to 100 (default 1)"},
    {"repeats", "R", "timed iterations, 1 to 1000 (default 3)"},
    {"threads", "K", "BLAS and torch threads, 1 to 256 (default 1: one rank per core)"},
    {"backend", "NAME", "cpu | cuda | auto (default cpu); on cuda the sgemm figures are left out\n"
                        "and the PyTorch side runs on the GPU"},
    {"no-torch", NULL, "skip the PyTorch side"},
    {"mode", "M", "fast | det | both (default both): the default numerics, the deterministic\n"
                  "mode (model.deterministic: det_gemm instead of sgemm, rows named 'det'; their\n"
                  "product figures are det_gemm's), or both with the cost as a ratio"},
    {"family", "NAME", "byte_gpt (default): this benchmark; llama: the Llama/Qwen2 family against\n"
                       "transformers (see `sapo bench model --family llama --help`)"},
    {NULL, NULL, NULL},
};
enum { OPT_SIZE, OPT_CTX, OPT_BATCH, OPT_PROMPT, OPT_NEW, OPT_WARMUP, OPT_REPEATS, OPT_THREADS, OPT_BACKEND,
       OPT_NO_TORCH, OPT_MODE, OPT_FAMILY };

static const char ABOUT[] =
    "usage: sapo bench model [options]\n"
    "Training-step and generation throughput of the policy model for two sizes\n"
    "(L2 H4 C64 and L4 H4 C128), GFLOP/s next to the measured sgemm peak, and the same\n"
    "work in PyTorch eager in the same run, as ratios. The PyTorch side is\n"
    BENCH_SCRIPTS_DIR "/torch_model_bench.py\n(" BENCH_PYTHON_HELP ").\n";

/* The options into o and sizes: 0, 1 after --help, -1 after a one-line error. */
static int parse_options(int argc, char** argv, BenchOptions* o, BenchSize* sizes, int* n_sizes) {
    CliArgs a;
    int parsed = bench_parse("bench model", OPTIONS, ABOUT, NULL, argc, argv, &a);
    if (parsed == 0 && a.n_pos) parsed = cli_unexpected("bench model", a.pos[0], "see --help");
    if (parsed == 0 && (cli_opt_int(&a, OPT_CTX, 2, 4096, &o->ctx) ||
                        cli_opt_int(&a, OPT_BATCH, 1, 4096, &o->batch) ||
                        cli_opt_int(&a, OPT_PROMPT, 1, 4096, &o->prompt) ||
                        cli_opt_int(&a, OPT_NEW, 1, 4096, &o->new_tokens) ||
                        cli_opt_int(&a, OPT_WARMUP, 0, 100, &o->warmup) ||
                        cli_opt_int(&a, OPT_REPEATS, 1, 1000, &o->repeats) ||
                        cli_opt_int(&a, OPT_THREADS, 1, 256, &o->threads)))
        parsed = -1;
    const char* mode = a.opt[OPT_MODE];
    if (parsed == 0 && mode) {
        o->modes = !strcmp(mode, "fast") ? 1 : !strcmp(mode, "det") ? 2 : !strcmp(mode, "both") ? 3 : 0;
        if (!o->modes) {
            fprintf(stderr, "sapo bench model: --mode '%s': expected fast, det or both\n", mode);
            parsed = -1;
        }
    }
    const char* family = a.opt[OPT_FAMILY];
    if (parsed == 0 && family && strcmp(family, "byte_gpt")) {
        fprintf(stderr, "sapo bench model: --family '%s': expected byte_gpt or llama\n", family);
        parsed = -1;
    }
    const char* size = a.opt[OPT_SIZE];
    if (parsed == 0 && size) {
        if (sscanf(size, "%d,%d,%d", &sizes[0].layers, &sizes[0].heads, &sizes[0].dmodel) != 3 ||
            sizes[0].layers < 1 || sizes[0].heads < 1 || sizes[0].dmodel < 1 || sizes[0].dmodel % sizes[0].heads) {
            fprintf(stderr, "sapo bench model: --size '%s': expected L,H,C with C a multiple of H\n", size);
            parsed = -1;
        }
        *n_sizes = 1;
    }
    if (a.opt[OPT_BACKEND]) o->backend = a.opt[OPT_BACKEND];
    if (a.opt[OPT_NO_TORCH]) o->torch = 0;
    cli_args_free(&a);
    return parsed;
}

/* The value of --family NAME (or --family=NAME) in argv, or NULL. */
static const char* family_arg(int argc, char** argv) {
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--family")) return i + 1 < argc ? argv[i + 1] : NULL;
        if (!strncmp(argv[i], "--family=", 9)) return argv[i] + 9;
    }
    return NULL;
}

int bench_model_main(int argc, char** argv) {
    const char* family = family_arg(argc, argv);
    if (family && !strcmp(family, "llama")) return bench_llama_main(argc, argv);
    BenchOptions o = {.ctx = 128, .batch = 64, .prompt = 32, .new_tokens = 96, .warmup = 1, .repeats = 3,
                      .threads = 1, .torch = 1, .modes = 3, .backend = "cpu"};
    BenchSize sizes[2] = {{2, 4, 64}, {4, 4, 128}};
    int n_sizes = 2;
    int parsed = parse_options(argc, argv, &o, sizes, &n_sizes);
    if (parsed) return parsed > 0 ? 0 : 2;
    if (o.prompt + o.new_tokens > o.ctx) {
        fprintf(stderr, "sapo bench model: --prompt %d + --new %d exceeds --ctx %d\n", o.prompt, o.new_tokens, o.ctx);
        return 2;
    }
    o.be = model_backend_find(o.backend);
    if (!o.be) {
        fprintf(stderr, "sapo bench model: backend '%s' is not available in this build or on this machine\n", o.backend);
        return 2;
    }
    o.on_gpu = strcmp(o.be->name, "cpu") != 0;
    openblas_set_num_threads(o.threads);
    printf("# sapo bench model: backend %s (%s), %d thread(s), batch %d, context %d, warm-up %d, repeats %d\n",
           o.backend, o.be->name, o.threads, o.batch, o.ctx, o.warmup, o.repeats);
    printf("# train = forward + backward + AdamW on batch x context tokens; generate = prompt %d + %d new tokens "
           "per sequence, KV cache, temperature 1\n", o.prompt, o.new_tokens);
    printf("# %s\n", openblas_get_config());
    double peak = bench_sgemm_peak_gflops(o.repeats, stdout);
    printf("# sgemm peak: %.1f GFLOP/s%s\n", peak, o.on_gpu ? " (CPU OpenBLAS, for reference; product figures are CPU-only)" : "");
    if (o.on_gpu && o.torch) printf("# the PyTorch side runs on the GPU too (--device cuda)\n");
    printf("# GFLOP/s counts matmuls and attention (backward = 2x forward); inside sgemm: the rate there, its\n"
           "# share of the sgemm peak and of the training step's time (det rows: det_gemm, the deterministic mode's)\n#\n");
    bench_table_header("model");
    double rates[2][2][2] = {{{0}}}; /* [size][det][train, generate] */
    for (int i = 0; i < n_sizes; i++)
        for (int det = 0; det < 2; det++)
            if (o.modes & (1 << det)) bench_one(&sizes[i], &o, peak, det, rates[i][det]);
    for (int i = 0; i < n_sizes && o.modes == 3; i++)
        printf("# L%d H%d C%d deterministic mode: train %.2fx slower, generate %.2fx slower than the default\n",
               sizes[i].layers, sizes[i].heads, sizes[i].dmodel, rates[i][0][0] / rates[i][1][0],
               rates[i][0][1] / rates[i][1][1]);
    return 0;
}
