/* What hardware and BLAS a run computed on, recorded in every node log, so that a replay on
 * another machine that differs in the last bits can be told apart from a bug: OpenBLAS picks
 * its sgemm kernel per CPU, and two kernels sum in different orders. */
#ifndef SAPO_CORE_HOST_INFO_H
#define SAPO_CORE_HOST_INFO_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The CPU's model name from /proc/cpuinfo ("?" when unknown) and the vector features the
 * numerics depend on, e.g. "AMD EPYC 7B13 (avx2 fma avx512f)". */
void host_cpu_model(char* out, size_t n);
/* OpenBLAS's build configuration (openblas_get_config), e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH ...". */
void host_blas_library(char* out, size_t n);
/* The sgemm kernel OpenBLAS runs on (openblas_get_corename), e.g. "Haswell". */
void host_blas_kernel(char* out, size_t n);

/* Whether SAPO_CUDA_TF32 asks the CUDA backend for cuBLAS's TF32 tensor-op math (set, not empty
 * and not "0"): the one reading, for the backend and for the node log, which records it. Inline,
 * so kernels/ (linked before core in the GPU test programs) needs no library of core's. */
static inline int host_cuda_tf32(void) {
    const char* v = getenv("SAPO_CUDA_TF32");
    return v && *v && strcmp(v, "0") != 0;
}

/* This host's name (gethostname; "?" when unknown), recorded per node so a run across hosts
 * says where each rank ran. */
void host_name(char* out, size_t n);

#endif
