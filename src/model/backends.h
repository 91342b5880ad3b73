/* The backends this build has, per family and device (backends.c): the one file of src/model
 * that knows which devices were built in, and so the only one that includes a kernels/ header.
 * Each family's table (family.h) points at its own list; byte_gpt's is MODEL_BACKENDS
 * (gpt.h), which the look-ups of gpt.h (model_backend_for, _find, _built) read. */
#ifndef SAPO_MODEL_BACKENDS_H
#define SAPO_MODEL_BACKENDS_H

#include "model/model.h"

/* The Llama/Qwen2 family's backends, one per device of MODEL_BACKENDS, in the same order
 * (model_family_backend matches them by name); NULL after the last. */
extern const ModelBackend* const LLAMA_BACKENDS[];

#endif
