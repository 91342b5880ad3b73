/* The one place that decides between the real CUDA toolkit and the CPU emulation of it
 * (kernels/emu/cuda_emu.h, built with SAPO_CUDA_EMULATE so the kernels' index arithmetic,
 * launch shapes and the backend's orchestration are tested on machines without a GPU).
 * SAPO_LAUNCH is the only way kernels are started: it checks the launch right after. */
#ifndef SAPO_KERNELS_CUDA_COMPAT_H
#define SAPO_KERNELS_CUDA_COMPAT_H

#ifdef SAPO_CUDA_EMULATE
#include "emu/cuda_emu.h"
#define SAPO_LAUNCH(kernel, grid, block, smem, stream, ...)                                \
    do {                                                                                   \
        emu_launch(#kernel, (const void*)&kernel, dim3(grid), dim3(block), (size_t)(smem), \
                   (stream), [=]() { kernel(__VA_ARGS__); });                              \
        cudaCheckLaunch(#kernel);                                                          \
    } while (0)
#define SAPO_DYNAMIC_SHARED(type, name) type* name = (type*)emu_dynamic_shared()
#else
#include <cublas_v2.h>
#include <cuda_runtime.h>
#define SAPO_LAUNCH(kernel, grid, block, smem, stream, ...)                     \
    do {                                                                        \
        kernel<<<(grid), (block), (smem), (stream)>>>(__VA_ARGS__);             \
        cudaCheckLaunch(#kernel);                                               \
    } while (0)
#define SAPO_DYNAMIC_SHARED(type, name) extern __shared__ type name[]
#endif

#include "cuda_check.h"

#endif
