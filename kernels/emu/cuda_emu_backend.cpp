/* The CUDA backend compiled for the CPU emulation (cuda_emu.h): the very sources of kernels/
 * in one C++ translation unit, with the exported names renamed so that this library can be
 * linked next to the real one (MODEL_BACKEND_CUDA_EMU, MODEL_BACKEND_LLAMA_CUDA_EMU,
 * CUDA_LAYER_TABLE_EMU, cuda_emu_backend_available, ...). */
#define SAPO_CUDA_EMULATE 1
#define MODEL_BACKEND_CUDA MODEL_BACKEND_CUDA_EMU
#define MODEL_BACKEND_LLAMA_CUDA MODEL_BACKEND_LLAMA_CUDA_EMU
#define cuda_backend_available cuda_emu_backend_available
#define cuda_set_local_rank cuda_emu_set_local_rank
#define cuda_device_for_this_rank cuda_emu_device_for_this_rank
#define CUDA_LAYER_TABLE CUDA_LAYER_TABLE_EMU

#include "../cuda_layers.cu"
#include "../cuda_backend.cu"
#include "../cuda_layer_table.cu"
#include "../llama_cuda_backend.cu"

/* Kernel launches so far, for tests that want to see the emulation ran. */
extern "C" int cuda_emu_launch_count(void) { return emu_state().launches; }
