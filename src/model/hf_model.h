/* A Llama/Qwen2 model and its tokenizer opened from a Hugging Face directory in one call, as
 * the tools that look at a model from outside need it (`sapo lm`, the reference tools):
 * config.json checked, the context cut to what the caller needs, the weights loaded, the
 * tokenizer.json read when present. */
#ifndef SAPO_MODEL_HF_MODEL_H
#define SAPO_MODEL_HF_MODEL_H

#include <stddef.h>

#include "model/model.h"
#include "model/tokenizer.h"

typedef struct {
    Model* model;
    Tokenizer* tokenizer; /* DIR/tokenizer.json; NULL when the directory has none */
} HfModel;

/* Opens DIR on the device of `device` (any backend of that device), with capacity cap and
 * the context cut to n_ctx positions (0: the file's max_position_embeddings), in the
 * deterministic mode when det. want_tokenizer: DIR/tokenizer.json must exist and load.
 * 0, or -1 with a one-line reason in err (nothing is left allocated). */
int hf_model_open(HfModel* out, const char* dir, const ModelBackend* device, const ModelCapacity* cap, int n_ctx,
                  int det, int want_tokenizer, char* err, size_t errlen);
/* The shape DIR's config.json gives, the context cut as hf_model_open cuts it. */
int hf_model_shape(const char* dir, int n_ctx, int det, ModelShape* cfg, char* err, size_t errlen);
void hf_model_close(HfModel* h);

#endif
