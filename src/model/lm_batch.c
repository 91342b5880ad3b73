/* Reading `sapo lm logprobs` groups (see lm_batch.h). */
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
