/* The family tables by id, and the look-ups every family shares (family.h). */
#include "model/family.h"

#include <string.h>

const ModelFamily* model_family(ModelFamilyId id) {
    switch (id) {
    case MODEL_FAMILY_BYTE_GPT: return &MODEL_FAMILY_BYTE_GPT_TABLE;
    case MODEL_FAMILY_LLAMA: return &MODEL_FAMILY_LLAMA_TABLE;
    }
    return NULL;
}

const ModelBackend* model_family_backend(const ModelFamily* f, const ModelBackend* device) {
    if (model_family(device->family) == f) return device; /* already the family's (or a test's stand-in) */
    for (const ModelBackend* const* b = f->backends; *b; b++)
        if (!strcmp((*b)->name, device->name)) return *b;
    return NULL;
}

int model_family_tensor(const ModelFamily* f, const char* name) {
    for (int i = 0; i < f->n_tensors; i++)
        if (!strcmp(f->tensor_names[i], name)) return i;
    return -1;
}
