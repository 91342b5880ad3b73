/* Opening a Hugging Face directory as a model and tokenizer (see hf_model.h). */
#include "model/hf_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "core/check.h"
#include "model/family.h"
#include "model/hf_dir.h"

int hf_model_shape(const char* dir, int n_ctx, int det, ModelShape* cfg, char* err, size_t errlen) {
    if (hf_config_read(dir, cfg, err, errlen)) return -1;
    if (n_ctx > 0 && n_ctx < cfg->n_ctx) cfg->n_ctx = n_ctx;
    cfg->deterministic = det;
    char why[256];
    if (gpt_config_check(cfg, why, sizeof why)) return set_error(err, errlen, "%s/config.json: %s", dir, why);
    return 0;
}

int hf_model_open(HfModel* out, const char* dir, const ModelBackend* device, const ModelCapacity* cap, int n_ctx,
                  int det, int want_tokenizer, char* err, size_t errlen) {
    out->model = NULL;
    out->tokenizer = NULL;
    ModelShape cfg;
    if (hf_model_shape(dir, n_ctx, det, &cfg, err, errlen)) return -1;
    if (!model_family_backend(model_family(cfg.family), device))
        return set_error(err, errlen, "%s: the %s family has no %s backend in this build", dir,
                         model_family(cfg.family)->name, device->name);
    size_t n = snprintf(NULL, 0, "%s/tokenizer.json", dir) + 1;
    char* tok_path = mallocCheck(n);
    snprintf(tok_path, n, "%s/tokenizer.json", dir);
    struct stat st;
    if (want_tokenizer || stat(tok_path, &st) == 0) {
        char why[512];
        out->tokenizer = tokenizer_load(tok_path, why, sizeof why);
        if (!out->tokenizer) {
            free(tok_path);
            return set_error(err, errlen, "%s", why);
        }
    }
    free(tok_path);
    out->model = model_create_empty(&cfg, device, cap);
    if (hf_load_weights(out->model, dir, err, errlen)) {
        hf_model_close(out);
        return -1;
    }
    if (out->tokenizer) { /* a chat model ends its turn with <|im_end|>; a base model its text */
        int end = tokenizer_token_id(out->tokenizer, "<|im_end|>");
        out->model->roles.end = end >= 0 ? end : tokenizer_token_id(out->tokenizer, "<|endoftext|>");
    }
    return 0;
}

void hf_model_close(HfModel* h) {
    if (h->model) model_free(h->model);
    if (h->tokenizer) tokenizer_free(h->tokenizer);
    h->model = NULL;
    h->tokenizer = NULL;
}
