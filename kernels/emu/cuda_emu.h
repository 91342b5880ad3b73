/* A small CPU emulation of the parts of CUDA and cuBLAS that kernels/ uses, so the CUDA
 * backend's code (the kernels and the host orchestration, one source) can be compiled with a
 * plain C++ compiler and compared with the CPU reference on machines without a GPU.
 *
 * What it models: a launch runs its blocks one after another; the threads of a block are
 * fibers (ucontext) that switch only at __syncthreads (every live thread of the block must
 * arrive) and at warp-level operations (__syncwarp, __shfl_xor_sync: every live thread of the
 * warp must arrive), so divergent barriers deadlock here as they would hang there, and a
 * shuffle reads what the partner lane wrote. __shared__ data is shared by the block's
 * threads. Launch limits (1024 threads per block, 48 KiB of dynamic shared memory unless
 * cudaFuncSetAttribute raised the kernel's own limit, at most the opt-in maximum of an
 * H100/H200, grid.y and grid.z below 65536, no empty grid) are checked. A kernel can fault
 * on purpose (emu_fault: tests): like a real fault, the error is sticky and surfaces at the
 * next synchronising call (cudaDeviceSynchronize, cudaStreamSynchronize, a copy), not at the
 * launch. Device memory is host memory filled
 * with 0xff bytes (NaN floats) on allocation, so a read of something never written shows.
 * cuBLAS routines are plain column-major loops with the reference BLAS definition.
 *
 * What it does not model: concurrency between blocks, timing, the memory model, real
 * floating-point differences of the device (expf and the like are the host's). */
#ifndef SAPO_KERNELS_EMU_CUDA_EMU_H
#define SAPO_KERNELS_EMU_CUDA_EMU_H

#include <ucontext.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

/* ---- language --------------------------------------------------------------------------- */
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __shared__ static /* one block runs at a time: a static local is that block's */

struct dim3 {
    unsigned x, y, z;
    dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

enum { EMU_RUNNABLE, EMU_WARP_WAIT, EMU_BLOCK_WAIT, EMU_DONE };

/* Fiber switching. glibc's swapcontext makes a system call (the signal mask) per switch,
 * which made the emulated tests slow; on x86-64 a few instructions do (callee-saved
 * registers, MXCSR and the x87 control word, the stack pointer). Elsewhere: ucontext. */
#if defined(__x86_64__) && !defined(SAPO_EMU_UCONTEXT)
#define SAPO_EMU_FAST_SWITCH 1
extern "C" void sapo_emu_switch(void** save_sp, void* load_sp);
__asm__(
    ".text\n"
    ".globl sapo_emu_switch\n"
    ".type sapo_emu_switch,@function\n"
    "sapo_emu_switch:\n"
    "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
    "  subq $8, %rsp\n  stmxcsr (%rsp)\n  fnstcw 4(%rsp)\n"
    "  movq %rsp, (%rdi)\n  movq %rsi, %rsp\n"
    "  ldmxcsr (%rsp)\n  fldcw 4(%rsp)\n  addq $8, %rsp\n"
    "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
    "  ret\n"
    ".size sapo_emu_switch, .-sapo_emu_switch\n");
#endif

struct EmuThread {
    ucontext_t ctx;
    void* sp; /* fast switch: the saved stack pointer */
    dim3 tid;
    int state;
    char* stack;
};

struct EmuState {
    dim3 block_idx, block_dim, grid_dim;
    std::vector<EmuThread> threads;
    int cur = 0;
    int direct = 0;      /* threads run as plain calls: the kernel is known not to synchronize */
    int waited = 0;      /* the running launch synchronized at least once */
    ucontext_t sched;
    void* sched_sp = nullptr;
    ucontext_t pristine; /* from one getcontext, copied for every fiber (getcontext is a syscall) */
    int have_pristine = 0;
    std::map<std::string, int> syncs; /* kernel name -> seen synchronizing */
    const std::function<void()>* body = nullptr;
    std::vector<double> slots;          /* shuffle exchange, one per thread */
    std::vector<double> dynamic_shared; /* 8-byte aligned */
    int launches = 0;
    int device_syncs = 0;                     /* cudaDeviceSynchronize calls */
    int fault = 0;                            /* sticky error of a faulted kernel (emu_fault), 0: none */
    std::map<const void*, size_t> smem_optin; /* kernel -> cudaFuncAttributeMaxDynamicSharedMemorySize */
};

/* An H100/H200's cudaDevAttrMaxSharedMemoryPerBlockOptin (227 KiB). */
static const size_t EMU_SMEM_OPTIN_MAX = 232448;

static EmuState& emu_state() {
    static EmuState s;
    return s;
}

#define threadIdx (emu_state().threads[emu_state().cur].tid)
#define blockIdx (emu_state().block_idx)
#define blockDim (emu_state().block_dim)
#define gridDim (emu_state().grid_dim)
#define warpSize 32

static const size_t EMU_STACK = 128 * 1024;

static inline int emu_linear_tid() {
    const EmuState& s = emu_state();
    const dim3& t = s.threads[s.cur].tid;
    return (int)(t.x + s.block_dim.x * (t.y + s.block_dim.y * t.z));
}

static inline void emu_die(const char* kernel, const char* why);

static inline void emu_wait(int kind) {
    EmuState& s = emu_state();
    if (s.direct) emu_die("(running)", "synchronized in a launch run without fibers; its first launch never did");
    s.waited = 1;
    EmuThread& t = s.threads[s.cur];
    t.state = kind;
#ifdef SAPO_EMU_FAST_SWITCH
    sapo_emu_switch(&t.sp, s.sched_sp);
#else
    swapcontext(&t.ctx, &s.sched);
#endif
}

static inline void __syncthreads() { emu_wait(EMU_BLOCK_WAIT); }
static inline void __syncwarp(unsigned mask = 0xffffffffu) { (void)mask; emu_wait(EMU_WARP_WAIT); }

template <class T>
static inline T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
    (void)mask;
    (void)width;
    EmuState& s = emu_state();
    int me = emu_linear_tid();
    s.slots[me] = (double)v; /* exact for float and int */
    emu_wait(EMU_WARP_WAIT);
    int partner = (me & ~31) | ((me & 31) ^ lane_mask);
    T r = (T)s.slots[partner];
    emu_wait(EMU_WARP_WAIT);
    return r;
}

static inline void* emu_dynamic_shared() { return emu_state().dynamic_shared.data(); }

static void emu_fiber_entry() {
    EmuState& s = emu_state();
    (*s.body)();
    s.threads[s.cur].state = EMU_DONE;
#ifdef SAPO_EMU_FAST_SWITCH
    sapo_emu_switch(&s.threads[s.cur].sp, s.sched_sp); /* never resumed */
    abort();
#endif
    /* ucontext: uc_link returns to the scheduler */
}

/* A fresh fiber on thread t's stack that starts in emu_fiber_entry. */
static void emu_fiber_start(EmuState& s, EmuThread& t) {
#ifdef SAPO_EMU_FAST_SWITCH
    /* what sapo_emu_switch pops: MXCSR/x87 word, r15..r12, rbx, rbp, then the return address */
    uintptr_t top = ((uintptr_t)(t.stack + EMU_STACK) & ~(uintptr_t)15) - 16;
    void** sp = (void**)top;
    *sp = (void*)emu_fiber_entry; /* at a 16-aligned address: entry sees rsp % 16 == 8 */
    for (int r = 0; r < 6; r++) *--sp = nullptr;
    --sp;
    uint32_t ctl[2];
    __asm__ volatile("stmxcsr %0" : "=m"(ctl[0]));
    __asm__ volatile("fnstcw %0" : "=m"(*(uint16_t*)&ctl[1]));
    memcpy(sp, ctl, 8);
    t.sp = sp;
#else
    t.ctx = s.pristine;
    t.ctx.uc_stack.ss_sp = t.stack;
    t.ctx.uc_stack.ss_size = EMU_STACK;
    t.ctx.uc_link = &s.sched;
    makecontext(&t.ctx, emu_fiber_entry, 0);
#endif
}

static void emu_fiber_resume(EmuState& s, EmuThread& t) {
#ifdef SAPO_EMU_FAST_SWITCH
    sapo_emu_switch(&s.sched_sp, t.sp);
#else
    swapcontext(&s.sched, &t.ctx);
#endif
}

static inline void emu_die(const char* kernel, const char* why) {
    fprintf(stderr, "cuda emulation: kernel %s: %s\n", kernel, why);
    exit(EXIT_FAILURE);
}

/* Runs kernel body over the grid; blocks in order, threads of a block as fibers. */
static void emu_launch(const char* name, const void* fn, dim3 grid, dim3 block, size_t smem,
                       const std::function<void()>& body) {
    EmuState& s = emu_state();
    unsigned long nthreads = (unsigned long)block.x * block.y * block.z;
    if (grid.x == 0 || grid.y == 0 || grid.z == 0 || nthreads == 0) emu_die(name, "empty grid or block");
    if (nthreads > 1024 || block.z > 64) emu_die(name, "more than 1024 threads per block");
    if (grid.y > 65535 || grid.z > 65535) emu_die(name, "grid.y or grid.z above 65535");
    if (smem > 48 * 1024) {
        std::map<const void*, size_t>::iterator optin = emu_state().smem_optin.find(fn);
        if (optin == emu_state().smem_optin.end())
            emu_die(name, "more than 48 KiB of dynamic shared memory without cudaFuncSetAttribute");
        if (smem > optin->second) emu_die(name, "more dynamic shared memory than cudaFuncSetAttribute allowed");
    }
    if (nthreads % 32) emu_die(name, "block size not a multiple of the warp (the kernels assume whole warps)");
    s.launches++;
    s.body = &body;
    /* A kernel that never synchronized in its first launch runs its threads as plain calls
     * from then on (fast); synchronizing later is reported, never silently mis-run. */
    std::map<std::string, int>::iterator known = s.syncs.find(name);
    s.direct = known != s.syncs.end() && !known->second;
    s.waited = 0;
    s.grid_dim = grid;
    s.block_dim = block;
    s.slots.assign(nthreads, 0.0);
    s.dynamic_shared.assign((smem + 7) / 8 + 1, NAN);
    if (s.threads.size() < nthreads) {
        size_t old = s.threads.size();
        s.threads.resize(nthreads);
        for (size_t i = old; i < nthreads; i++) s.threads[i].stack = (char*)malloc(EMU_STACK);
    }
    if (!s.have_pristine) {
        getcontext(&s.pristine);
        s.have_pristine = 1;
    }
    for (unsigned bz = 0; bz < grid.z; bz++)
        for (unsigned by = 0; by < grid.y; by++)
            for (unsigned bx = 0; bx < grid.x; bx++) {
                s.block_idx = dim3(bx, by, bz);
                for (unsigned long i = 0; i < nthreads; i++) {
                    EmuThread& t = s.threads[i];
                    t.tid = dim3((unsigned)(i % block.x), (unsigned)(i / block.x % block.y),
                                 (unsigned)(i / ((unsigned long)block.x * block.y)));
                    t.state = EMU_RUNNABLE;
                }
                if (s.direct) {
                    for (unsigned long i = 0; i < nthreads; i++) {
                        s.cur = (int)i;
                        body();
                    }
                    continue;
                }
                for (unsigned long i = 0; i < nthreads; i++) emu_fiber_start(s, s.threads[i]);
                for (;;) {
                    int ran = 0;
                    for (unsigned long i = 0; i < nthreads; i++) {
                        if (s.threads[i].state != EMU_RUNNABLE) continue;
                        s.cur = (int)i;
                        emu_fiber_resume(s, s.threads[i]);
                        ran = 1;
                    }
                    int live = 0, at_block = 0, released = 0;
                    for (unsigned long w = 0; w < nthreads; w += 32) {
                        int wlive = 0, wwait = 0;
                        for (unsigned long i = w; i < w + 32; i++) {
                            int st = s.threads[i].state;
                            wlive += st != EMU_DONE;
                            wwait += st == EMU_WARP_WAIT;
                            at_block += st == EMU_BLOCK_WAIT;
                        }
                        live += wlive;
                        if (wlive && wwait == wlive) {
                            for (unsigned long i = w; i < w + 32; i++)
                                if (s.threads[i].state == EMU_WARP_WAIT) s.threads[i].state = EMU_RUNNABLE;
                            released = 1;
                        }
                    }
                    if (!live) break;
                    if (at_block == live) {
                        for (unsigned long i = 0; i < nthreads; i++)
                            if (s.threads[i].state == EMU_BLOCK_WAIT) s.threads[i].state = EMU_RUNNABLE;
                        released = 1;
                    }
                    if (!ran && !released) emu_die(name, "deadlock: threads wait at different barriers");
                }
            }
    if (!s.direct) s.syncs[name] = s.waited || s.syncs[name];
    s.direct = 0;
}

/* ---- runtime ----------------------------------------------------------------------------- */
typedef int cudaError_t;
enum { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2, cudaErrorIllegalAddress = 700 };
enum cudaDeviceAttr { cudaDevAttrMaxSharedMemoryPerBlockOptin = 97 };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };

/* Called inside a kernel: the kernel faults (an illegal address on a GPU). */
static inline void emu_fault() { emu_state().fault = cudaErrorIllegalAddress; }
typedef struct EmuStream* cudaStream_t;
enum cudaMemcpyKind { cudaMemcpyHostToHost, cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice,
                      cudaMemcpyDefault };

static inline const char* cudaGetErrorString(cudaError_t e) {
    return e == cudaSuccess                 ? "no error"
           : e == cudaErrorMemoryAllocation ? "out of memory"
           : e == cudaErrorIllegalAddress   ? "an illegal memory access was encountered"
                                            : "invalid value";
}
static inline cudaError_t cudaGetLastError() { return cudaSuccess; }
static inline cudaError_t cudaGetDeviceCount(int* n) { *n = 1; return cudaSuccess; }
static inline cudaError_t cudaSetDevice(int d) { return d == 0 ? cudaSuccess : cudaErrorInvalidValue; }
static inline cudaError_t cudaGetDevice(int* d) { *d = 0; return cudaSuccess; }
static inline cudaError_t cudaMalloc(void** p, size_t n) {
    *p = aligned_alloc(256, (n + 255) / 256 * 256);
    if (!*p) return cudaErrorMemoryAllocation;
    memset(*p, 0xff, n); /* NaN floats, -1 ints: reads of unwritten memory show */
    return cudaSuccess;
}
static inline cudaError_t cudaFree(void* p) { free(p); return cudaSuccess; }
static inline cudaError_t cudaDeviceGetAttribute(int* v, cudaDeviceAttr a, int d) {
    if (d != 0 || a != cudaDevAttrMaxSharedMemoryPerBlockOptin) return cudaErrorInvalidValue;
    *v = (int)EMU_SMEM_OPTIN_MAX;
    return cudaSuccess;
}
template <class T>
static inline cudaError_t cudaFuncSetAttribute(T* fn, cudaFuncAttribute a, int v) {
    if (a != cudaFuncAttributeMaxDynamicSharedMemorySize || v < 0 || (size_t)v > EMU_SMEM_OPTIN_MAX)
        return cudaErrorInvalidValue;
    emu_state().smem_optin[(const void*)fn] = (size_t)v;
    return cudaSuccess;
}
static inline cudaError_t cudaMemcpyAsync(void* d, const void* s, size_t n, cudaMemcpyKind k, cudaStream_t st = 0) {
    (void)k;
    (void)st;
    if (emu_state().fault) return emu_state().fault;
    if (n) memmove(d, s, n);
    return cudaSuccess;
}
static inline cudaError_t cudaMemcpy(void* d, const void* s, size_t n, cudaMemcpyKind k) { return cudaMemcpyAsync(d, s, n, k); }
static inline cudaError_t cudaMemsetAsync(void* d, int v, size_t n, cudaStream_t st = 0) {
    (void)st;
    if (n) memset(d, v, n);
    return cudaSuccess;
}
static inline cudaError_t cudaStreamCreate(cudaStream_t* s) { *s = nullptr; return cudaSuccess; }
static inline cudaError_t cudaStreamSynchronize(cudaStream_t s) { (void)s; return emu_state().fault; }
static inline cudaError_t cudaStreamDestroy(cudaStream_t s) { (void)s; return cudaSuccess; }
static inline cudaError_t cudaDeviceSynchronize() {
    emu_state().device_syncs++;
    return emu_state().fault;
}

/* ---- cuBLAS (column-major, reference definitions) ---------------------------------------- */
typedef int cublasStatus_t;
enum { CUBLAS_STATUS_SUCCESS = 0, CUBLAS_STATUS_INVALID_VALUE = 7 };
typedef enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 } cublasOperation_t;
typedef enum { CUBLAS_DEFAULT_MATH = 0, CUBLAS_PEDANTIC_MATH = 2, CUBLAS_TF32_TENSOR_OP_MATH = 3 } cublasMath_t;
typedef struct EmuBlas* cublasHandle_t;

static inline const char* cublasGetStatusString(cublasStatus_t st) { return st ? "invalid value" : "success"; }
static inline cublasStatus_t cublasCreate(cublasHandle_t* h) { *h = nullptr; return CUBLAS_STATUS_SUCCESS; }
static inline cublasStatus_t cublasDestroy(cublasHandle_t h) { (void)h; return CUBLAS_STATUS_SUCCESS; }
static inline cublasStatus_t cublasSetStream(cublasHandle_t h, cudaStream_t s) { (void)h; (void)s; return CUBLAS_STATUS_SUCCESS; }
static inline cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t m) { (void)h; (void)m; return CUBLAS_STATUS_SUCCESS; }

/* C (m x n) = alpha op(A) op(B) + beta C; C is not read when beta == 0 (BLAS rule). */
static inline cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                                                       int m, int n, int k, const float* alpha, const float* A, int lda,
                                                       long long sa, const float* B, int ldb, long long sb,
                                                       const float* beta, float* C, int ldc, long long sc, int batch) {
    (void)h;
    if (m < 0 || n < 0 || k < 0 || batch < 0) return CUBLAS_STATUS_INVALID_VALUE;
    if (lda < (ta == CUBLAS_OP_N ? (m > 1 ? m : 1) : (k > 1 ? k : 1))) return CUBLAS_STATUS_INVALID_VALUE;
    if (ldb < (tb == CUBLAS_OP_N ? (k > 1 ? k : 1) : (n > 1 ? n : 1))) return CUBLAS_STATUS_INVALID_VALUE;
    if (ldc < (m > 1 ? m : 1)) return CUBLAS_STATUS_INVALID_VALUE;
    for (int bi = 0; bi < batch; bi++) {
        const float* a = A + bi * sa;
        const float* b = B + bi * sb;
        float* c = C + bi * sc;
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++) {
                float acc = 0.0f;
                for (int p = 0; p < k; p++) {
                    float x = ta == CUBLAS_OP_N ? a[i + (size_t)p * lda] : a[p + (size_t)i * lda];
                    float y = tb == CUBLAS_OP_N ? b[p + (size_t)j * ldb] : b[j + (size_t)p * ldb];
                    acc += x * y;
                }
                float* out = c + i + (size_t)j * ldc;
                *out = *beta == 0.0f ? *alpha * acc : *alpha * acc + *beta * *out;
            }
    }
    return CUBLAS_STATUS_SUCCESS;
}

static inline cublasStatus_t cublasSgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                         int k, const float* alpha, const float* A, int lda, const float* B, int ldb,
                                         const float* beta, float* C, int ldc) {
    return cublasSgemmStridedBatched(h, ta, tb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1);
}

/* y = alpha op(A) x + beta y, A (m x n) column-major. */
static inline cublasStatus_t cublasSgemv(cublasHandle_t h, cublasOperation_t t, int m, int n, const float* alpha,
                                         const float* A, int lda, const float* x, int incx, const float* beta, float* y,
                                         int incy) {
    (void)h;
    if (m < 0 || n < 0 || lda < (m > 1 ? m : 1) || incx == 0 || incy == 0) return CUBLAS_STATUS_INVALID_VALUE;
    int rows = t == CUBLAS_OP_N ? m : n, cols = t == CUBLAS_OP_N ? n : m;
    for (int i = 0; i < rows; i++) {
        float acc = 0.0f;
        for (int j = 0; j < cols; j++) {
            float a = t == CUBLAS_OP_N ? A[i + (size_t)j * lda] : A[j + (size_t)i * lda];
            acc += a * x[(size_t)j * incx];
        }
        float* out = y + (size_t)i * incy;
        *out = *beta == 0.0f ? *alpha * acc : *alpha * acc + *beta * *out;
    }
    return CUBLAS_STATUS_SUCCESS;
}

#endif
