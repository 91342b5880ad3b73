/* A model family: what differs between the byte-level GPT and the Llama/Qwen2 family, as one
 * table per family, so the code above src/model asks the table instead of testing the family.
 * A family names its tensors (one contiguous buffer, in this order), checks a shape, sizes
 * and initialises its tensors, estimates its memory and FLOPs, and lists its backends (one
 * ModelBackend per device: the numerics are the family's own). model_create_cap picks the
 * family's backend of the device the caller chose. */
#ifndef SAPO_MODEL_FAMILY_H
#define SAPO_MODEL_FAMILY_H

#include <stddef.h>
#include <stdint.h>

#include "core/rng.h"
#include "model/model.h"

struct ModelFamily {
    const char* name; /* as model.family writes it */
    int n_tensors;    /* <= MODEL_MAX_TENSORS */
    const char* const* tensor_names;
    /* Its sequences' framing tokens (TokenRoles in gpt.h); roles.none marks "no target" in a
     * PackedBatch (its log-prob is 0). */
    TokenRoles roles;
    /* 1: a model of this family starts from a Hugging Face directory (model.hf_dir: its weights
     * and its tokenizer's ids) and exports to one; 0: from random weights, reading bytes. */
    int from_hf_dir;
    /* Validates a shape of this family: 0, or -1 with a reason in err. */
    int (*check)(const ModelShape* cfg, char* err, size_t errlen);
    /* Floats of each tensor (n_tensors entries; a tensor the shape lacks has 0). */
    void (*tensor_sizes)(const ModelShape* cfg, size_t* sizes);
    /* Random initial parameters from the (seed, RNG_INIT) stream. */
    void (*init_weights)(Model* m, uint64_t seed);
    /* Points the family's named views that Model holds (byte_gpt: params, grads); NULL: none. */
    void (*point)(Model* m);
    /* Bytes a model of this shape and capacity allocates (model_memory_bytes). */
    double (*memory_bytes)(const ModelShape* cfg, const ModelCapacity* cap);
    /* FLOPs of one forward over B sequences of T tokens (multiply-add = 2). */
    double (*forward_flops)(const ModelShape* cfg, int B, int T);
    /* The family's backend for each device this build has, NULL-terminated. */
    const ModelBackend* const* backends;
};

extern const ModelFamily MODEL_FAMILY_BYTE_GPT_TABLE;
extern const ModelFamily MODEL_FAMILY_LLAMA_TABLE;

/* A standard normal without libm's log and cos (whose glibc variants differ by CPU): the
 * deterministic mode's initialisation, shared by the families. */
float normal_det(RngStream* rng);

/* The table of a family id (never NULL for a valid id). */
const ModelFamily* model_family(ModelFamilyId id);
/* The family's backend on the device that `device` (any family's backend) computes on:
 * device itself when it runs this family, else the family's backend of the same name; NULL
 * when the family has none there. */
const ModelBackend* model_family_backend(const ModelFamily* f, const ModelBackend* device);
/* The index of tensor `name` in the family's order, or -1. */
int model_family_tensor(const ModelFamily* f, const char* name);

#endif
