/* `sapo lm generate`: a completion from a Hugging Face model, through sapo's own KV-cache
 * generation (model/generate.h) and tokenizer: the quickest way to see that a converted or
 * exported model still speaks, and the reference test's greedy check. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "core/check.h"
#include "core/rng.h"
#include "model/text/chat_prompt.h"
#include "model/generate.h"
#include "model/hf_model.h"

#define CMD "lm generate"

static const CliOption OPTIONS[] = {
    {"model", "DIR", "a Hugging Face directory (config.json, model.safetensors, tokenizer.json)"},
    {"prompt", "TEXT", "the prompt, as plain text"},
    {"chat", "TEXT", "a user message, wrapped in the ChatML form Qwen and SmolLM use\n"
                     "(<|im_start|>user ... <|im_end|> then the assistant header)"},
    {"system", "TEXT", "with --chat: a system message before it"},
    {"max-new", "N", "tokens to generate at most (default 64)"},
    {"greedy", NULL, "the most likely token each step (the default is sampling at --temperature)"},
    {"temperature", "T", "sampling temperature (default 1)"},
    {"top-p", "P", "nucleus sampling mass in (0, 1] (default 1)"},
    {"seed", "S", "the sampling stream's seed (default 0)"},
    {"stop", "TEXT", "also stop once the completion contains TEXT (kept in the output)"},
    {"n-ctx", "N", "positions to allocate for (default: prompt + max-new)"},
    {"backend", "NAME", "cpu (default), cuda or auto"},
    {"deterministic", NULL, "the fixed-order numerics of model.deterministic"},
    {NULL, NULL, NULL},
};
enum { OPT_MODEL, OPT_PROMPT, OPT_CHAT, OPT_SYSTEM, OPT_MAXNEW, OPT_GREEDY, OPT_TEMP, OPT_TOPP, OPT_SEED, OPT_STOP,
       OPT_NCTX, OPT_BACKEND, OPT_DET };

static void usage(FILE* out) {
    fprintf(out, "usage: sapo lm generate --model DIR (--prompt TEXT | --chat TEXT [--system TEXT]) [--max-new N]\n"
                 "                        [--greedy | --temperature T [--top-p P] [--seed S]] [--stop TEXT]\n"
                 "Prints the completion's text. Generation stops at the tokenizer's <|im_end|> or\n"
                 "<|endoftext|> (not printed), at --stop, or after --max-new tokens.\n");
    cli_print_options(out, OPTIONS);
    fprintf(out, "Exit 0, or 2 on bad input (one line on stderr).\n");
}

/* A float option in [lo, hi] (lo_open: lo excluded), or -1 after one line. */
static int float_opt(const CliArgs* a, int k, const char* flag, double lo, double hi, int lo_open, float* out) {
    const char* t = a->opt[k];
    if (!t) return 0;
    char* end;
    errno = 0;
    double v = strtod(t, &end);
    if (end == t || *end || errno || !isfinite(v) || v > hi || v < lo || (lo_open && v == lo)) {
        fprintf(stderr, "sapo %s: %s '%s': expected a number in %s%g, %g]\n", CMD, flag, t, lo_open ? "(" : "[", lo, hi);
        return -1;
    }
    *out = (float)v;
    return 0;
}

static int parse(int argc, char** argv, CliArgs* a, int* max_new, int* n_ctx, long long* seed, float* temp,
                 float* top_p, const ModelBackend** device) {
    int parsed = cli_parse(CMD, OPTIONS, argc, argv, a);
    if (parsed == 1) usage(stdout);
    if (parsed) return parsed;
    if (cli_opt_int(a, OPT_MAXNEW, 1, 1 << 20, max_new) || cli_opt_int(a, OPT_NCTX, 2, INT_MAX, n_ctx) ||
        cli_opt_ll(a, OPT_SEED, 0, LLONG_MAX, seed) || float_opt(a, OPT_TEMP, "--temperature", 0, 100, 1, temp) ||
        float_opt(a, OPT_TOPP, "--top-p", 0, 1, 1, top_p))
        return -1;
    if (!a->opt[OPT_MODEL] || !a->opt[OPT_PROMPT] == !a->opt[OPT_CHAT]) {
        fprintf(stderr, "sapo %s: --model DIR and one of --prompt TEXT, --chat TEXT are required (see `sapo %s --help`)\n",
                CMD, CMD);
        return -1;
    }
    if (a->opt[OPT_SYSTEM] && !a->opt[OPT_CHAT]) {
        fprintf(stderr, "sapo %s: --system goes with --chat\n", CMD);
        return -1;
    }
    if (a->n_pos) return cli_unexpected(CMD, a->pos[0], "this command takes no positional arguments");
    *device = model_backend_find(a->opt[OPT_BACKEND] ? a->opt[OPT_BACKEND] : "cpu");
    if (!*device) {
        fprintf(stderr, "sapo %s: --backend %s: expected cpu, cuda or auto, available here\n", CMD, a->opt[OPT_BACKEND]);
        return -1;
    }
    return 0;
}

int cmd_lm_generate(int argc, char** argv) {
    CliArgs a;
    int max_new = 64, n_ctx = 0;
    long long seed = 0;
    float temp = 1.0f, top_p = 1.0f;
    const ModelBackend* device = NULL;
    int parsed = parse(argc, argv, &a, &max_new, &n_ctx, &seed, &temp, &top_p, &device);
    if (parsed) {
        cli_args_free(&a);
        return parsed == 1 ? 0 : 2;
    }
    const char* dir = a.opt[OPT_MODEL];
    char err[512];
    int rc = 2, det = a.opt[OPT_DET] != NULL;
    char* text = a.opt[OPT_CHAT] ? chatml_prompt(a.opt[OPT_SYSTEM], a.opt[OPT_CHAT]) : NULL;
    const char* prompt_text = text ? text : a.opt[OPT_PROMPT];
    /* the tokenizer first (it sizes the prompt), then the model sized for that prompt */
    size_t n = strlen(dir) + 32;
    char* tok_path = mallocCheck(n);
    snprintf(tok_path, n, "%s/tokenizer.json", dir);
    Tokenizer* tok = tokenizer_load(tok_path, err, sizeof err);
    free(tok_path);
    int *ids = NULL, n_ids = 0;
    ModelShape cfg;
    if (!tok || tokenizer_encode(tok, prompt_text, strlen(prompt_text), &ids, &n_ids, err, sizeof err) ||
        hf_model_shape(dir, 0, det, &cfg, err, sizeof err)) {
        fprintf(stderr, "sapo %s: %s\n", CMD, err);
    } else if (n_ids < 1) {
        fprintf(stderr, "sapo %s: the prompt encodes to no tokens\n", CMD);
    } else {
        int want = n_ctx ? n_ctx : n_ids + max_new;
        if (n_ids + max_new > want || want > cfg.n_ctx) {
            fprintf(stderr, "sapo %s: %d prompt tokens + --max-new %d exceed the context (%d positions)\n", CMD, n_ids,
                    max_new, want < cfg.n_ctx ? want : cfg.n_ctx);
        } else {
            ModelCapacity cap = {.max_tokens = n_ids, .max_att = (long)cfg.n_head * n_ids * n_ids, .max_prefixes = 1,
                                 .max_rows = 1, .row_ctx = max_new};
            HfModel h;
            if (hf_model_open(&h, dir, device, &cap, want, det, 0, err, sizeof err)) {
                fprintf(stderr, "sapo %s: %s\n", CMD, err);
            } else {
                int stops[2], n_stops = 0;
                const char* ends[] = {"<|im_end|>", "<|endoftext|>"};
                for (int i = 0; i < 2; i++) {
                    int id = tokenizer_token_id(tok, ends[i]);
                    if (id >= 0) stops[n_stops++] = id;
                }
                GenConfig gc = {.sampler = {.temperature = a.opt[OPT_GREEDY] ? 0.0f : temp, .top_p = top_p},
                                .max_new_tokens = max_new, .stop = a.opt[OPT_STOP], .stop_ids = stops,
                                .n_stop_ids = n_stops, .tokenizer = tok};
                if (n_stops == 0) gc.stop_ids = NULL;
                int* out = mallocCheck((size_t)max_new * sizeof(int));
                int len = 0, plen = n_ids;
                RngStream rng = rng_stream((uint64_t)seed, 0, 0, RNG_GENERATE);
                model_generate(h.model, ids, n_ids, &plen, 1, &gc, &rng, out, &len);
                int keep = len; /* the end token itself is not text */
                for (int i = 0; i < n_stops; i++)
                    if (len > 0 && out[len - 1] == stops[i]) keep = len - 1;
                char* completion = tokenizer_decode(tok, out, keep);
                printf("%s\n", completion);
                free(completion);
                free(out);
                hf_model_close(&h);
                rc = 0;
            }
        }
    }
    free(ids);
    if (tok) tokenizer_free(tok);
    free(text);
    cli_args_free(&a);
    return rc;
}
