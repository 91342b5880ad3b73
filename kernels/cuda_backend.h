/* C interface of the CUDA backend for the rest of sapo (only with SAPO_HAVE_CUDA): the backend
 * table MODEL_BACKEND_CUDA that model_backend_find("cuda" or "auto") returns and the Llama
 * family's, MODEL_BACKEND_LLAMA_CUDA, whether a GPU is usable, the node-local rank that
 * picks this process's GPU, and that GPU. The layers above model reach the last three
 * through the table (its available, place and device entries; the NCCL transport gets the
 * GPU from swarm/node_gpu.c, which asks the table); the GPU tests call them by name. */
#ifndef SAPO_KERNELS_CUDA_BACKEND_H
#define SAPO_KERNELS_CUDA_BACKEND_H

#include "model/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The backend table (kernels/cuda_backend.cu), found through model_backend_find. */
extern const ModelBackend MODEL_BACKEND_CUDA;
/* The Llama/Qwen2 family's (kernels/llama_cuda_backend.cu), in LLAMA_BACKENDS (model/backends.c):
 * model_family_backend gives it for MODEL_BACKEND_CUDA. */
extern const ModelBackend MODEL_BACKEND_LLAMA_CUDA;

/* 1 when the CUDA runtime sees at least one device; 0 (never a crash) without a driver or
 * a GPU. The answer is computed once. */
int cuda_backend_available(void);

/* This process's rank among the ranks of its machine and their number (from
 * MPI_Comm_split_type SHARED, see node_create). The GPU used is local_rank modulo the
 * visible devices, so 8 ranks can share one GPU. Without this call the rank comes from
 * OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID or PMI_LOCAL_RANK, else 0. */
void cuda_set_local_rank(int local_rank, int local_size);

/* The device this process uses (local rank modulo the device count), or -1 without one. */
int cuda_device_for_this_rank(void);

#ifdef __cplusplus
}
#endif

#endif
