/* The GPU as the layers above model see it (swarm's placement of a rank on its GPU, `sapo
 * info`), without their including kernels/ headers: forwards to the CUDA backend's C
 * interface (kernels/cuda_backend.h) in a CUDA build, and answers "no GPU" in any other. */
#ifndef SAPO_MODEL_GPU_H
#define SAPO_MODEL_GPU_H

/* 1 when this build has the CUDA backend and its runtime sees a device; else 0. */
int model_gpu_available(void);

/* This process's rank among the ranks of its machine and their number: the GPU used is
 * local_rank modulo the visible devices (cuda_set_local_rank). Nothing without CUDA. */
void model_gpu_set_local_rank(int local_rank, int local_size);

#endif
