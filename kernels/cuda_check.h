/* Error checks for the CUDA code: cudaCheck and cublasCheck stop the process with the file,
 * the line and the library's own message; cudaCheckLaunch follows every kernel launch, so a
 * bad launch configuration or a fault is reported where it happened, not at the next copy.
 * Header-only so that kernels/ needs nothing from libsapo. */
#ifndef SAPO_KERNELS_CUDA_CHECK_H
#define SAPO_KERNELS_CUDA_CHECK_H

#include <stdio.h>
#include <stdlib.h>

static inline void cuda_check_impl(cudaError_t err, const char* what, const char* file, int line) {
    if (err != cudaSuccess) {
        fprintf(stderr, "%s:%d: CUDA error in %s: %s (%d)\n", file, line, what, cudaGetErrorString(err), (int)err);
        fflush(stderr);
        exit(EXIT_FAILURE);
    }
}

static inline void cublas_check_impl(cublasStatus_t st, const char* what, const char* file, int line) {
    if (st != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "%s:%d: cuBLAS error in %s: %s (%d)\n", file, line, what, cublasGetStatusString(st), (int)st);
        fflush(stderr);
        exit(EXIT_FAILURE);
    }
}

#define cudaCheck(call) cuda_check_impl((call), #call, __FILE__, __LINE__)
#define cublasCheck(call) cublas_check_impl((call), #call, __FILE__, __LINE__)
/* After every launch: a launch error (bad grid, too much shared memory) shows up here. */
#define cudaCheckLaunch(name) cuda_check_impl(cudaGetLastError(), name, __FILE__, __LINE__)

#endif
