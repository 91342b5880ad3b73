/* Dumps what tests/reference/test_llama_vs_transformers.py compares with transformers for a
 * Hugging Face model: the per-token log-probs of groups packed into ONE batch (every prompt
 * shared by its completions, rl/pack.h) and the gradient of
 * L = sum over completion tokens of logprob * dlogprob with respect to every HF tensor, in
 * the HF name and shape (fused tensors split as model/hf_dir.h writes them).
 * usage: tool_llama_dump MODEL_DIR IN.jsonl OUT.bin [--deterministic]
 *   IN.jsonl: {"prompt": [ids], "completions": [[ids], ...], "dlogprobs": [[...], ...]} lines
 *   OUT.bin: records (u32 name length, name, u8 dtype 0 = f32, u32 ndims, u32 dims, data):
 *   "logprobs" (groups, completions, tokens in order), then "grad/<HF name>" each. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "model/hf_dir.h"
#include "model/hf_model.h"
#include "model/llama.h"
#include "model/family.h"
#include "model/lm_batch.h"
#include "rl/pack.h"
#include "dump_writer.h"

int main(int argc, char** argv) {
    if (argc < 4 || argc > 5 || (argc == 5 && strcmp(argv[4], "--deterministic"))) {
        fprintf(stderr, "usage: tool_llama_dump MODEL_DIR IN.jsonl OUT.bin [--deterministic]\n");
        return 2;
    }
    int det = argc == 5;
    char err[512];
    ModelShape cfg;
    if (hf_model_shape(argv[1], 0, det, &cfg, err, sizeof err)) sapo_die("%s", err);
    FILE* in = fopenCheck(argv[2], "rb");
    LmGroup g[64];
    int n = 0;
    char* line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, in) > 0 && n < 64) {
        if (lm_group_parse(line, &cfg, &g[n], err, sizeof err)) sapo_die("%s: group %d: %s", argv[2], n, err);
        if (!g[n].dlogprobs) sapo_die("%s: group %d has no dlogprobs", argv[2], n);
        n++;
    }
    free(line);
    fclose(in);
    TrainGroup tg[64];
    for (int i = 0; i < n; i++)
        tg[i] = train_group_ids(g[i].prompt, g[i].n_prompt, g[i].n_comp, g[i].comp, g[i].comp_len);
    long tokens, att;
    pack_size(tg, n, &model_family(cfg.family)->roles, cfg.n_head, cfg.n_ctx, 0, &tokens, &att);
    ModelCapacity mc = {.max_tokens = (int)tokens, .max_att = att, .max_prefixes = 1, .max_rows = 1, .row_ctx = 1};
    HfModel h;
    if (hf_model_open(&h, argv[1], model_backend_find("cpu"), &mc, 0, det, 0, err, sizeof err)) sapo_die("%s", err);
    Model* m = h.model;
    Packer pk;
    packer_init(&pk, m, 0, 0);
    PackCursor cur = {0};
    pack_next(&pk, tg, n, &cur); /* the capacity holds every group */
    float* lp = mallocCheck((size_t)tokens * sizeof(float));
    float* dlp = callocCheck((size_t)tokens, sizeof(float));
    model_zero_grad(m);
    model_forward_packed(m, &pk.pb, lp);
    long n_out = cur.loss_tokens;
    float* flat = mallocCheck((size_t)(n_out ? n_out : 1) * sizeof(float));
    float* dflat = mallocCheck((size_t)(n_out ? n_out : 1) * sizeof(float)); /* the dlogprobs in the same order */
    for (int i = 0, o = 0; i < n; i++)
        for (int k = 0; k < g[i].n_comp; k++)
            for (int j = 0; j < g[i].comp_len[k]; j++) dflat[o++] = g[i].dlogprobs[k][j];
    for (int t = 0; t < pk.pb.n_tokens; t++)
        if (pk.loss_id[t] >= 0) {
            flat[pk.loss_id[t]] = lp[t];
            dlp[t] = dflat[pk.loss_id[t]];
        }
    model_backward(m, dlp);
    m->backend->download(m);
    FILE* out = fopenCheck(argv[3], "wb");
    int dim = (int)n_out;
    put_array(out, "logprobs", 0, flat, 1, &dim);
    LlamaParams gp;
    llama_point_params(&gp, m->grads_memory, m->tensor_sizes);
    int nt = hf_tensor_count(&cfg);
    HfTensor* t = mallocCheck((size_t)nt * sizeof *t);
    nt = hf_tensor_views(&cfg, &gp, t);
    for (int i = 0; i < nt; i++) {
        char name[128];
        snprintf(name, sizeof name, "grad/%s", t[i].name);
        int dims[2] = {(int)t[i].shape[0], (int)t[i].shape[1]};
        put_array(out, name, 0, t[i].data, t[i].ndim, dims);
    }
    fcloseCheck(out);
    free(t);
    free(flat);
    free(lp);
    free(dlp);
    packer_free(&pk);
    free(dflat);
    for (int i = 0; i < n; i++) lm_group_free(&g[i]);
    hf_model_close(&h);
    return 0;
}
