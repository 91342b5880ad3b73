/* Error checks for the CUDA code: cudaCheck and cublasCheck stop the process with the file,
 * the line and the library's own message; cudaCheckLaunch follows every kernel launch
 * (SAPO_LAUNCH, cuda_compat.h, is the only way kernels start), so a bad launch configuration
 * is reported where it happened. A fault inside a kernel (an illegal address) surfaces only
 * at the next synchronising call, under that call's name; SAPO_CUDA_SYNC=1 makes
 * cudaCheckLaunch also wait for the kernel (cudaDeviceSynchronize) and name it in the error
 * (slow: a debugging mode, off by default). Header-only so that kernels/ needs nothing from
 * libsapo. */
#ifndef SAPO_KERNELS_CUDA_CHECK_H
#define SAPO_KERNELS_CUDA_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The value of SAPO_CUDA_SYNC: on for any non-empty value but "0" (unset, "" and "0": off). */
static inline int cuda_sync_mode_parse(const char* v) { return v && *v && strcmp(v, "0") != 0; }

/* SAPO_CUDA_SYNC, read once per process (per translation unit: each caches its own copy). */
static inline int cuda_sync_mode(void) {
    static int mode = -1;
    if (mode < 0) mode = cuda_sync_mode_parse(getenv("SAPO_CUDA_SYNC"));
    return mode;
}

/* After every launch: a launch error (bad grid, too much shared memory) shows up here; with
 * SAPO_CUDA_SYNC=1 a fault while the kernel ran does too, under the kernel's name. */
static inline void cuda_check_launch_impl(const char* kernel, const char* file, int line) {
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) {
        fprintf(stderr, "%s:%d: CUDA error launching kernel %s: %s (%d)\n", file, line, kernel,
                cudaGetErrorString(err), (int)err);
        fflush(stderr);
        exit(EXIT_FAILURE);
    }
    if (!cuda_sync_mode()) return;
    err = cudaDeviceSynchronize();
    if (err != cudaSuccess) {
        fprintf(stderr, "%s:%d: CUDA error in kernel %s (SAPO_CUDA_SYNC=1: checked after it ran): %s (%d)\n", file,
                line, kernel, cudaGetErrorString(err), (int)err);
        fflush(stderr);
        exit(EXIT_FAILURE);
    }
}

#define cudaCheck(call) cuda_check_impl((call), #call, __FILE__, __LINE__)
#define cublasCheck(call) cublas_check_impl((call), #call, __FILE__, __LINE__)
#define cudaCheckLaunch(name) cuda_check_launch_impl(name, __FILE__, __LINE__)

#endif
