/* A policy model as the settings describe it (PolicySpec), and the one front door to it above
 * src/model: whether the family reads a Hugging Face directory, the check that the directory is
 * usable, the shape the model will have, and opening it (a random byte-level GPT, or the
 * directory's weights and tokenizer; then model.init) with the prompt codec it reads through.
 * The code above src/model asks these and never tests which family it holds. */
#ifndef SAPO_MODEL_POLICY_H
#define SAPO_MODEL_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "core/config_enums.h"
#include "model/generate.h"
#include "model/model.h"
#include "model/prompt_codec.h"
#include "model/tokenizer.h"

typedef struct {
    ModelFamilyId family;  /* model.family */
    const char* hf_dir;    /* model.hf_dir: a family that reads one takes its weights and tokenizer there; "" = none */
    const char* init;      /* model.init: a checkpoint loaded over the first weights; "" = none */
    BackendChoice backend; /* model.backend, for model_backend_for */
    ModelShape shape;       /* the model's shape, model.deterministic in it; a family that reads hf_dir
                              takes only n_ctx (the most positions kept) and deterministic from it */
    int micro_tokens;      /* model.micro_tokens */
} PolicySpec;

/* An open policy: the model, and how it reads prompts. */
typedef struct {
    Model* model;
    Tokenizer* tokenizer; /* hf_dir/tokenizer.json; NULL: the model reads bytes */
    PromptCodec codec;    /* the chat codec of the tokenizer, else the byte codec */
} Policy;

/* 1 when the spec's family starts from a Hugging Face directory (hf_dir), 0 when from random weights. */
int policy_reads_hf_dir(const PolicySpec* s);
/* 0 when the family needs no directory or hf_dir names one; else -1 with why. */
int policy_hf_dir_named(const PolicySpec* s, char* why, size_t len);
/* Whether the spec can be opened before anything is allocated: a family that reads hf_dir needs
 * a directory with a readable config.json and a tokenizer.json. 0, or -1 with a one-line why. */
int policy_check(const PolicySpec* s, char* why, size_t len);
/* The shape the opened model has: the spec's own, or hf_dir's config.json with the context cut
 * to shape.n_ctx. 0, or -1 with why. */
int policy_shape(const PolicySpec* s, ModelShape* out, char* why, size_t len);
/* hf_dir/tokenizer.json alone (a family that reads hf_dir), for what counts its tokens; NULL with why. */
Tokenizer* policy_tokenizer_load(const PolicySpec* s, char* why, size_t len);
/* The spec of the model in Hugging Face directory dir itself (its family, no model.init), at
 * the context and numerics of s. */
PolicySpec policy_spec_of_hf_dir(const PolicySpec* s, const char* dir);

/* Opens the spec on backend's device with capacity cap: a random model from seed (a family
 * that reads bytes) or hf_dir's weights and tokenizer, then model.init over them. 0; -1 when
 * the first weights fail, -2 when model.init fails, with err and nothing left allocated. */
int policy_open(Policy* out, const PolicySpec* s, const ModelBackend* backend, const ModelCapacity* cap, uint64_t seed,
                char* err, size_t errlen);
/* Generation of an open policy that reads tokens stops at its codec's end of turn and at the
 * stop string in the decoded text; a byte-level gen is left as it is. codec must outlive gen. */
void policy_generation_stops(const PromptCodec* codec, GenConfig* gen);
void policy_close(Policy* p);

#endif
