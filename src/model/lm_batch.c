/* Reading and packing `sapo lm logprobs` groups (see lm_batch.h). */
#include "model/lm_batch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/check.h"

/* A JSON array of ids within the vocabulary into a heap array. */
static int read_ids(const cJSON* a, const char* what, int vocab, int** out, int* n, char* err, size_t errlen) {
    if (!cJSON_IsArray(a)) return set_error(err, errlen, "%s: expected a JSON array of token ids", what);
    int len = cJSON_GetArraySize(a);
    *out = mallocCheck((size_t)(len ? len : 1) * sizeof(int));
    *n = len;
    int i = 0;
    for (const cJSON* e = a->child; e; e = e->next, i++) {
        double v = cJSON_IsNumber(e) ? e->valuedouble : -1.0;
        if (!cJSON_IsNumber(e) || v != floor(v) || v < 0 || v >= vocab)
            return set_error(err, errlen, "%s: entry %d is not a token id in 0..%d", what, i, vocab - 1);
        (*out)[i] = (int)v;
    }
    return 0;
}

int lm_group_parse(const char* line, const ModelShape* cfg, LmGroup* g, char* err, size_t errlen) {
    memset(g, 0, sizeof *g);
    cJSON* root = cJSON_Parse(line);
    int rc = -1;
    if (!root || !cJSON_IsObject(root)) {
        set_error(err, errlen, "expected a JSON object {\"prompt\": [ids], \"completions\": [[ids], ...]}");
        goto done;
    }
    if (read_ids(cJSON_GetObjectItemCaseSensitive(root, "prompt"), "prompt", cfg->vocab, &g->prompt, &g->n_prompt, err,
                 errlen))
        goto done;
    if (g->n_prompt < 1) {
        set_error(err, errlen, "prompt: expected at least one token");
        goto done;
    }
    const cJSON* comps = cJSON_GetObjectItemCaseSensitive(root, "completions");
    if (!cJSON_IsArray(comps) || cJSON_GetArraySize(comps) < 1) {
        set_error(err, errlen, "completions: expected a non-empty JSON array of arrays of token ids");
        goto done;
    }
    const cJSON* dlp = cJSON_GetObjectItemCaseSensitive(root, "dlogprobs");
    if (dlp && (!cJSON_IsArray(dlp) || cJSON_GetArraySize(dlp) != cJSON_GetArraySize(comps))) {
        set_error(err, errlen, "dlogprobs: expected one array per completion");
        goto done;
    }
    int K = cJSON_GetArraySize(comps);
    g->comp = callocCheck((size_t)K, sizeof *g->comp);
    g->comp_len = callocCheck((size_t)K, sizeof *g->comp_len);
    if (dlp) g->dlogprobs = callocCheck((size_t)K, sizeof *g->dlogprobs);
    g->n_comp = K;
    for (int k = 0; k < K; k++) {
        char what[48];
        snprintf(what, sizeof what, "completion %d", k);
        if (read_ids(cJSON_GetArrayItem(comps, k), what, cfg->vocab, &g->comp[k], &g->comp_len[k], err, errlen))
            goto done;
        if (g->comp_len[k] < 1) {
            set_error(err, errlen, "completion %d: expected at least one token", k);
            goto done;
        }
        if (g->n_prompt + g->comp_len[k] > cfg->n_ctx) {
            set_error(err, errlen, "completion %d: %d prompt + %d completion tokens exceed the context of %d", k,
                      g->n_prompt, g->comp_len[k], cfg->n_ctx);
            goto done;
        }
        if (dlp) {
            const cJSON* d = cJSON_GetArrayItem(dlp, k);
            if (!cJSON_IsArray(d) || cJSON_GetArraySize(d) != g->comp_len[k]) {
                set_error(err, errlen, "dlogprobs %d: expected %d numbers", k, g->comp_len[k]);
                goto done;
            }
            g->dlogprobs[k] = mallocCheck((size_t)g->comp_len[k] * sizeof(float));
            int j = 0;
            for (const cJSON* e = d->child; e; e = e->next, j++) {
                if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble)) {
                    set_error(err, errlen, "dlogprobs %d: entry %d is not a finite number", k, j);
                    goto done;
                }
                g->dlogprobs[k][j] = (float)e->valuedouble;
            }
        }
    }
    rc = 0;
done:
    cJSON_Delete(root);
    return rc;
}

void lm_group_free(LmGroup* g) {
    for (int k = 0; k < g->n_comp; k++) {
        if (g->comp) free(g->comp[k]);
        if (g->dlogprobs) free(g->dlogprobs[k]);
    }
    free(g->comp);
    free(g->comp_len);
    free(g->dlogprobs);
    free(g->prompt);
    memset(g, 0, sizeof *g);
}

void lm_groups_size(const LmGroup* g, int n, int n_head, long* tokens, long* att) {
    long t = 0, a = 0;
    for (int i = 0; i < n; i++) {
        long p = g[i].n_prompt - 1;
        t += p;
        a += p * p;
        for (int k = 0; k < g[i].n_comp; k++) {
            long len = g[i].comp_len[k];
            t += len;
            a += len * (p + len);
        }
    }
    *tokens = t;
    *att = a * n_head;
}

void lm_pack(const LmGroup* g, int n, LmPacked* out) {
    long tokens, att;
    lm_groups_size(g, n, 1, &tokens, &att);
    int n_segs = 0;
    for (int i = 0; i < n; i++) n_segs += 1 + g[i].n_comp;
    out->inputs = mallocCheck((size_t)(tokens ? tokens : 1) * sizeof(int));
    out->targets = mallocCheck((size_t)(tokens ? tokens : 1) * sizeof(int));
    out->segs = mallocCheck((size_t)n_segs * sizeof(Segment));
    out->at = mallocCheck((size_t)(n ? n : 1) * sizeof(int*));
    int t = 0, s = 0;
    for (int i = 0; i < n; i++) {
        int p = g[i].n_prompt - 1, prefix = -1;
        if (p > 0) { /* the prompt but its last token: computed once for every completion */
            prefix = s;
            out->segs[s++] = (Segment){.start = t, .len = p, .prefix = -1};
            for (int j = 0; j < p; j++) {
                out->inputs[t] = g[i].prompt[j];
                out->targets[t++] = -1;
            }
        }
        out->at[i] = mallocCheck((size_t)g[i].n_comp * sizeof(int));
        for (int k = 0; k < g[i].n_comp; k++) {
            int len = g[i].comp_len[k];
            out->segs[s++] = (Segment){.start = t, .len = len, .prefix = prefix};
            out->at[i][k] = t;
            for (int j = 0; j < len; j++) {
                out->inputs[t] = j == 0 ? g[i].prompt[p] : g[i].comp[k][j - 1];
                out->targets[t++] = g[i].comp[k][j];
            }
        }
    }
    out->pb = (PackedBatch){.n_tokens = t, .inputs = out->inputs, .targets = out->targets, .n_segments = s,
                            .segs = out->segs, .logit_scale = 1.0f};
}

void lm_packed_free(LmPacked* p, int n) {
    for (int i = 0; i < n; i++) free(p->at[i]);
    free(p->at);
    free(p->inputs);
    free(p->targets);
    free(p->segs);
}
