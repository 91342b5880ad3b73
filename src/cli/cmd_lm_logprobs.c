/* `sapo lm logprobs`: per-token log-probs of completions under a Hugging Face model, through
 * the same packed shared-prompt forward that training uses (rl/pack.h): what the
 * reference tests compare with transformers, and a way for users to score text by hand. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "core/check.h"
#include "model/hf_model.h"
#include "model/family.h"
#include "model/lm_batch.h"
#include "rl/pack.h"

#define CMD "lm logprobs"

static const CliOption OPTIONS[] = {
    {"model", "DIR", "a Hugging Face directory (config.json, model.safetensors)"},
    {"n-ctx", "N", "positions to allocate for (default: the smaller of 4096 and the file's\nmax_position_embeddings)"},
    {"backend", "NAME", "cpu (default), cuda or auto"},
    {"deterministic", NULL, "the fixed-order numerics of model.deterministic"},
    {NULL, NULL, NULL},
};
enum { OPT_MODEL, OPT_NCTX, OPT_BACKEND, OPT_DET };

static void usage(FILE* out) {
    fprintf(out,
            "usage: sapo lm logprobs --model DIR [--n-ctx N] [--backend NAME] [--deterministic] [FILE|-]\n"
            "Reads JSON lines (FILE, or stdin when absent or -), each one group:\n"
            "  {\"prompt\": [ids], \"completions\": [[ids], ...]}\n"
            "and writes for each one line {\"logprobs\": [[...], ...]}: log p(token | prompt and the\n"
            "completion's earlier tokens) for every completion token, in fp32, computed with the prompt\n"
            "shared by its completions as training computes it.\n");
    cli_print_options(out, OPTIONS);
    fprintf(out, "Exit 0, or 2 on bad input: one line on stderr naming the input line and what was wrong;\n"
                 "nothing is written then.\n");
}

static int read_groups(FILE* in, const ModelShape* cfg, LmGroup** out, int* n_out) {
    char* line = NULL;
    size_t cap = 0;
    ssize_t got;
    int n = 0, room = 16, lineno = 0;
    LmGroup* g = mallocCheck((size_t)room * sizeof *g);
    char err[256];
    while ((got = getline(&line, &cap, in)) >= 0) {
        lineno++;
        if (got == 0 || line[strspn(line, " \t\r\n")] == '\0') continue;
        if (n == room) {
            LmGroup* bigger = mallocCheck((size_t)(room *= 2) * sizeof *g);
            memcpy(bigger, g, (size_t)n * sizeof *g);
            free(g);
            g = bigger;
        }
        if (lm_group_parse(line, cfg, &g[n], err, sizeof err)) {
            fprintf(stderr, "sapo %s: line %d: %s\n", CMD, lineno, err);
            lm_group_free(&g[n]);
            for (int i = 0; i < n; i++) lm_group_free(&g[i]);
            free(g);
            free(line);
            return -1;
        }
        n++;
    }
    free(line);
    *out = g;
    *n_out = n;
    return 0;
}

int cmd_lm_logprobs(int argc, char** argv) {
    CliArgs a;
    int parsed = cli_parse(CMD, OPTIONS, argc, argv, &a), rc = 2, n_ctx = 4096;
    if (parsed == 1) usage(stdout);
    if (parsed == 0 && cli_opt_int(&a, OPT_NCTX, 2, INT_MAX, &n_ctx)) parsed = -1;
    if (parsed == 0 && !a.opt[OPT_MODEL]) {
        fprintf(stderr, "sapo %s: --model DIR is required (see `sapo %s --help`)\n", CMD, CMD);
        parsed = -1;
    }
    if (parsed == 0 && a.n_pos > 1) parsed = cli_unexpected(CMD, a.pos[1], "one input file at most");
    const ModelBackend* device = NULL;
    if (parsed == 0) {
        device = model_backend_find(a.opt[OPT_BACKEND] ? a.opt[OPT_BACKEND] : "cpu");
        if (!device) {
            fprintf(stderr, "sapo %s: --backend %s: expected cpu, cuda or auto, available here\n", CMD,
                    a.opt[OPT_BACKEND]);
            parsed = -1;
        }
    }
    if (parsed != 0) {
        cli_args_free(&a);
        return parsed == 1 ? 0 : 2;
    }
    char err[512];
    ModelShape cfg;
    LmGroup* groups = NULL;
    TrainGroup* tg = NULL; /* the groups as rl/pack.h packs them */
    int n = 0, det = a.opt[OPT_DET] != NULL;
    const char* path = a.n_pos ? a.pos[0] : "-";
    FILE* in = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!in) {
        fprintf(stderr, "sapo %s: cannot open %s\n", CMD, path);
    } else if (hf_model_shape(a.opt[OPT_MODEL], n_ctx, det, &cfg, err, sizeof err)) {
        fprintf(stderr, "sapo %s: %s\n", CMD, err);
    } else if (read_groups(in, &cfg, &groups, &n) == 0) {
        long tokens = 1, att = 1;
        tg = mallocCheck((size_t)(n ? n : 1) * sizeof *tg);
        for (int i = 0; i < n; i++) { /* one group a forward: the largest sets the capacity */
            tg[i] = train_group_ids(groups[i].prompt, groups[i].n_prompt, groups[i].n_comp, groups[i].comp,
                                    groups[i].comp_len);
            long t, at;
            pack_size(&tg[i], 1, &model_family(cfg.family)->roles, cfg.n_head, cfg.n_ctx, 0, &t, &at);
            if (t > tokens) tokens = t;
            if (at > att) att = at;
        }
        if (tokens > INT_MAX) tokens = INT_MAX;
        ModelCapacity cap = {.max_tokens = (int)tokens, .max_att = att, .max_prefixes = 1, .max_rows = 1, .row_ctx = 1};
        HfModel h;
        if (hf_model_open(&h, a.opt[OPT_MODEL], device, &cap, n_ctx, det, 0, err, sizeof err)) {
            fprintf(stderr, "sapo %s: %s\n", CMD, err);
        } else {
            float* lp = mallocCheck((size_t)tokens * sizeof(float));
            float* flat = mallocCheck((size_t)tokens * sizeof(float)); /* the completion tokens' in order */
            Packer pk;
            packer_init(&pk, h.model, 0, 0);
            for (int i = 0; i < n; i++) {
                PackCursor cur = {0};
                pack_next(&pk, &tg[i], 1, &cur); /* the capacity holds the whole group */
                model_forward_packed(h.model, &pk.pb, lp);
                for (int t = 0; t < pk.pb.n_tokens; t++)
                    if (pk.loss_id[t] >= 0) flat[pk.loss_id[t]] = lp[t];
                printf("{\"logprobs\": [");
                for (int k = 0, at = 0; k < groups[i].n_comp; at += groups[i].comp_len[k++]) {
                    printf(k ? ", [" : "[");
                    for (int j = 0; j < groups[i].comp_len[k]; j++) printf(j ? ", %.9g" : "%.9g", flat[at + j]);
                    printf("]");
                }
                printf("]}\n");
            }
            packer_free(&pk);
            free(flat);
            free(lp);
            hf_model_close(&h);
            rc = 0;
        }
    }
    if (in && in != stdin) fclose(in);
    for (int i = 0; i < n; i++) lm_group_free(&groups[i]);
    free(groups);
    free(tg);
    cli_args_free(&a);
    return rc;
}
