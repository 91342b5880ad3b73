/* The policy front door (see policy.h): the spec's checks, its shape and its opening. */
#include "model/policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/check.h"
#include "model/checkpoint.h"
#include "model/family.h"
#include "model/hf_model.h"

int policy_reads_hf_dir(const PolicySpec* s) {
    return model_family(s->family)->from_hf_dir;
}

int policy_hf_dir_named(const PolicySpec* s, char* why, size_t len) {
    if (!policy_reads_hf_dir(s) || *s->hf_dir) return 0;
    return set_error(why, len, "model.family = %s needs model.hf_dir (a Hugging Face directory)",
                     model_family(s->family)->name);
}

/* hf_dir/tokenizer.json on the heap. */
static char* tokenizer_path(const PolicySpec* s) {
    size_t n = strlen(s->hf_dir) + 32;
    char* path = mallocCheck(n);
    snprintf(path, n, "%s/tokenizer.json", s->hf_dir);
    return path;
}

int policy_check(const PolicySpec* s, char* why, size_t len) {
    if (!policy_reads_hf_dir(s)) return 0;
    if (policy_hf_dir_named(s, why, len)) return -1;
    char inner[512];
    ModelShape h;
    if (hf_model_shape(s->hf_dir, s->shape.n_ctx, 0, &h, inner, sizeof inner))
        return set_error(why, len, "model.hf_dir: %s", inner);
    char* path = tokenizer_path(s);
    struct stat st;
    int there = stat(path, &st) == 0;
    free(path);
    if (!there) return set_error(why, len, "model.hf_dir %s has no tokenizer.json", s->hf_dir);
    return 0;
}

int policy_shape(const PolicySpec* s, ModelShape* out, char* why, size_t len) {
    if (!policy_reads_hf_dir(s)) {
        *out = s->shape;
        return 0;
    }
    return hf_model_shape(s->hf_dir, s->shape.n_ctx, s->shape.deterministic, out, why, len);
}

Tokenizer* policy_tokenizer_load(const PolicySpec* s, char* why, size_t len) {
    if (policy_hf_dir_named(s, why, len)) return NULL;
    char* path = tokenizer_path(s);
    Tokenizer* tok = tokenizer_load(path, why, len);
    free(path);
    return tok;
}

PolicySpec policy_spec_of_hf_dir(const PolicySpec* s, const char* dir) {
    PolicySpec d = *s;
    d.family = MODEL_FAMILY_LLAMA; /* the one family a Hugging Face directory holds */
    d.hf_dir = dir;
    d.init = "";
    return d;
}

int policy_open(Policy* out, const PolicySpec* s, const ModelBackend* backend, const ModelCapacity* cap, uint64_t seed,
                char* err, size_t errlen) {
    memset(out, 0, sizeof *out);
    if (!policy_reads_hf_dir(s)) {
        out->model = model_create_cap(&s->shape, backend, cap, seed);
        out->codec = prompt_codec_byte();
    } else {
        HfModel h;
        if (hf_model_open(&h, s->hf_dir, backend, cap, s->shape.n_ctx, s->shape.deterministic, 1, err, errlen))
            return -1;
        out->model = h.model;
        out->tokenizer = h.tokenizer;
        out->codec = prompt_codec_chat(out->tokenizer, PROMPT_CODEC_SYSTEM);
    }
    if (*s->init && checkpoint_load(out->model, s->init, 0, err, errlen)) {
        policy_close(out);
        return -2;
    }
    return 0;
}

void policy_generation_stops(const PromptCodec* codec, GenConfig* gen) {
    if (!codec->tok) return;
    gen->stop_ids = codec->stops;
    gen->n_stop_ids = codec->stops[1] >= 0 ? 2 : 1;
    gen->tokenizer = codec->tok;
}

void policy_close(Policy* p) {
    if (p->model) model_free(p->model);
    if (p->tokenizer) tokenizer_free(p->tokenizer);
    memset(p, 0, sizeof *p);
}
