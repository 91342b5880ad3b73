/* Backend registration: the backends of every family on every device this build has (cpu,
 * and cuda with SAPO_HAVE_CUDA), and the look-ups by name and by model.backend's choice
 * (gpt.h). The only file of src/model that includes a kernels/ header (CMakeLists.txt holds
 * the others to it); a new family or device registers its backends here. */
#include "model/backends.h"

#include <string.h>

#include "core/config_enums.h"
#ifdef SAPO_HAVE_CUDA
#include "cuda_backend.h" /* MODEL_BACKEND_CUDA, MODEL_BACKEND_LLAMA_CUDA */
#endif

/* The CPU backends (model/cpu_backend.c, model/llama_cpu_backend.c). */
extern const ModelBackend MODEL_BACKEND_CPU;
extern const ModelBackend MODEL_BACKEND_LLAMA_CPU;

const ModelBackend* const MODEL_BACKENDS[] = {
    &MODEL_BACKEND_CPU,
#ifdef SAPO_HAVE_CUDA
    &MODEL_BACKEND_CUDA,
#endif
    NULL,
};

const ModelBackend* const LLAMA_BACKENDS[] = {
    &MODEL_BACKEND_LLAMA_CPU,
#ifdef SAPO_HAVE_CUDA
    &MODEL_BACKEND_LLAMA_CUDA,
#endif
    NULL,
};

const ModelBackend* model_backend_built(const char* name) {
    for (const ModelBackend* const* b = MODEL_BACKENDS; *b; b++)
        if (!strcmp((*b)->name, name)) return *b;
    return NULL;
}

int model_backend_runs(const ModelBackend* b) { return !b->available || b->available(); }

static const char* const BACKEND_CHOICE_NAMES[] = {BACKEND_CHOICE_VALUES(CONFIG_ENUM_NAME)};
#define N_BACKEND_CHOICES ((int)(sizeof BACKEND_CHOICE_NAMES / sizeof BACKEND_CHOICE_NAMES[0]))

const ModelBackend* model_backend_for(BackendChoice choice) {
    switch (choice) {
    case BACKEND_CPU: return &MODEL_BACKEND_CPU;
    case BACKEND_CUDA: {
        const ModelBackend* b = model_backend_built("cuda");
        return b && model_backend_runs(b) ? b : NULL;
    }
    case BACKEND_AUTO: {
        const ModelBackend* cuda = model_backend_for(BACKEND_CUDA);
        return cuda ? cuda : &MODEL_BACKEND_CPU;
    }
    }
    return NULL;
}

const char* model_backend_choice_name(BackendChoice choice) {
    return (unsigned)choice < (unsigned)N_BACKEND_CHOICES ? BACKEND_CHOICE_NAMES[choice] : "?";
}

const ModelBackend* model_backend_find(const char* name) {
    for (int i = 0; i < N_BACKEND_CHOICES; i++)
        if (!strcmp(name, BACKEND_CHOICE_NAMES[i])) return model_backend_for((BackendChoice)i);
    return NULL;
}
