/* The backend a tests/gpu/ program compares with the CPU: the real CUDA backend of the model
 * family (model_create picks it for the device backend "cuda"; NULL when this build has none or
 * no GPU is visible), or, built a second time as unit/<test>_emu (SAPO_TEST_CUDA_EMULATION,
 * kernels/emu), that family's backend under the CPU emulation. BACKEND_LABEL says which. */
#ifndef SAPO_TESTS_GPU_BACKEND_H
#define SAPO_TESTS_GPU_BACKEND_H

#include "model/model.h"

#ifdef SAPO_TEST_CUDA_EMULATION
extern const ModelBackend MODEL_BACKEND_CUDA_EMU;
extern const ModelBackend MODEL_BACKEND_LLAMA_CUDA_EMU;
int cuda_emu_launch_count(void);
#define BACKEND_LABEL "cuda (CPU emulation)"
#else
#define BACKEND_LABEL "cuda"
#endif

/* llama: the Llama/Qwen2 family's backend, else the byte-level GPT's. */
static inline const ModelBackend* gpu_backend_of(int llama) {
#ifdef SAPO_TEST_CUDA_EMULATION
    return llama ? &MODEL_BACKEND_LLAMA_CUDA_EMU : &MODEL_BACKEND_CUDA_EMU;
#else
    (void)llama;
    return model_backend_find("cuda");
#endif
}

#endif
