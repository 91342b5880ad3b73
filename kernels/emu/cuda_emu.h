/* A small CPU emulation of the parts of CUDA and cuBLAS that kernels/ uses, so the CUDA
 * backend's code (the kernels and the host orchestration, one source) can be compiled with a
 * plain C++ compiler and compared with the CPU reference on machines without a GPU.
 *
 * What it models: a launch runs its blocks one after another, in a seeded random order, and
 * the threads of a block are fibers (ucontext) that switch only at __syncthreads (every live
 * thread of the block must arrive) and at warp-level operations (__syncwarp, __shfl_xor_sync:
 * every live lane of the mask must arrive with the same mask), so divergent barriers deadlock
 * here as they would hang there, and a shuffle reads what the partner lane wrote. The lanes
 * of a block also start and resume in a seeded order (warps rotated, lanes xor-ed), so a race
 * between blocks or between lanes that an in-order run hides changes the result.
 * SAPO_EMU_SEED picks the order (default 1; 0 runs blocks and lanes in order); one seed gives
 * the same order every run. A shuffle or __syncwarp by a lane outside its own mask, a shuffle
 * that reads a lane outside the mask or one that has exited, is an error. __shared__ data is
 * shared by the block's threads and is filled with 0xff bytes (NaN floats) before every block,
 * static and dynamic alike, so a read of shared memory the block never wrote shows. Launch
 * limits (1024 threads per block, 48 KiB of dynamic shared memory unless cudaFuncSetAttribute
 * raised the kernel's own limit, at most the opt-in maximum of an H100/H200, grid.y and grid.z
 * below 65536, no empty grid) are checked. A kernel can fault on purpose (emu_fault: tests):
 * like a real fault, the error is sticky and surfaces at the next synchronising call
 * (cudaDeviceSynchronize, cudaStreamSynchronize, a copy), not at the launch. Device memory is
 * host memory filled with 0xff bytes (NaN floats) on allocation, so a read of something never
 * written shows; every allocation is recorded, and a copy or memset checks its direction
 * against it (the device side inside one allocation, the host side outside all of them), as
 * cuBLAS checks its matrices (device) and alpha, beta (host); streams are checked to be live
 * (created, not destroyed). cuBLAS routines are plain column-major loops with the reference
 * BLAS definition.
 *
 * What it does not model: blocks or lanes running at the same time (a read-modify-write race
 * between blocks, or lanes between two barriers, runs as if atomic), timing, the memory model
 * (fences, visibility), the order between streams (everything runs at once, in call order),
 * kernels' own reads and writes of host memory or out of bounds (no fault), more than one
 * device, real floating-point differences of the device (expf and the like are the host's). */
#ifndef SAPO_KERNELS_EMU_CUDA_EMU_H
#define SAPO_KERNELS_EMU_CUDA_EMU_H

#include <ucontext.h>

#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

/* ---- language --------------------------------------------------------------------------- */
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __restrict__ __restrict
/* One block runs at a time: a static local is that block's. They all live in one section,
 * which emu_launch fills with 0xff bytes (NaN) before every block (GNU ld names its bounds). */
#define __shared__ static __attribute__((section("sapo_emu_shared")))
extern "C" char __start_sapo_emu_shared[] __attribute__((weak));
extern "C" char __stop_sapo_emu_shared[] __attribute__((weak));

struct dim3 {
    unsigned x, y, z;
    dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

enum { EMU_RUNNABLE, EMU_WARP_WAIT, EMU_BLOCK_WAIT, EMU_DONE };
enum { EMU_OP_SYNCWARP = 1, EMU_OP_SHFL = 2 }; /* the warp-level operation a lane waits at */

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
    unsigned wmask; /* EMU_WARP_WAIT: the operation's mask and kind (EMU_OP_*) */
    int wop;
    char* stack;
};

struct EmuStream {
    int id;
};
typedef struct EmuStream* cudaStream_t;

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
    const char* kernel = "(none)";            /* the running launch's kernel, for errors */
    uint64_t seed = 1;                        /* SAPO_EMU_SEED, read at the first launch */
    int seed_read = 0;
    unsigned long lane_rot = 0, lane_xor = 0; /* the running block's lane order (emu_lane_order) */
    std::vector<unsigned> order;              /* the running launch's block order */
    std::map<uintptr_t, size_t> device_mem;   /* cudaMalloc'd: start -> bytes */
    std::set<const EmuStream*> streams;       /* created, not destroyed */
    int stream_ids = 0;
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

/* An error inside the running kernel (printf-style), with the seed that ordered it. */
__attribute__((format(printf, 1, 2))) static void emu_die_running(const char* fmt, ...);

static inline void emu_wait(int kind) {
    EmuState& s = emu_state();
    if (s.direct) emu_die(s.kernel, "synchronized in a launch run without fibers; its first launch never did");
    s.waited = 1;
    EmuThread& t = s.threads[s.cur];
    t.state = kind;
#ifdef SAPO_EMU_FAST_SWITCH
    sapo_emu_switch(&t.sp, s.sched_sp);
#else
    swapcontext(&t.ctx, &s.sched);
#endif
}

/* A warp-level operation by lane (of the running thread t): every live lane of mask (lane
 * among them) must arrive at the same operation with the same mask; lanes of the mask that
 * have exited are not waited for. */
static inline void emu_warp_wait(EmuThread& t, int lane, unsigned mask, int op, const char* what) {
    if (!(mask >> lane & 1u)) emu_die_running("%s by lane %d, outside its own mask 0x%08x", what, lane, mask);
    t.wmask = mask;
    t.wop = op;
    emu_wait(EMU_WARP_WAIT);
}

static inline void __syncthreads() { emu_wait(EMU_BLOCK_WAIT); }
static inline void __syncwarp(unsigned mask = 0xffffffffu) {
    EmuState& s = emu_state();
    emu_warp_wait(s.threads[s.cur], emu_linear_tid() & 31, mask, EMU_OP_SYNCWARP, "__syncwarp");
}

/* Lane lane ^ lane_mask's v, in groups of width lanes: a partner in a later group gives one's
 * own v, one in an earlier group its v (CUDA's rule). The partner must be in mask and live. */
template <class T>
static inline T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
    EmuState& s = emu_state();
    if (width < 1 || width > 32 || (width & (width - 1))) emu_die_running("__shfl_xor_sync width %d", width);
    EmuThread& t = s.threads[s.cur];
    int me = emu_linear_tid(), lane = me & 31, src = lane ^ lane_mask;
    s.slots[me] = (double)v; /* exact for float and int */
    emu_warp_wait(t, lane, mask, EMU_OP_SHFL, "__shfl_xor_sync");
    if (src < 0 || src > 31 || src / width > lane / width) src = lane;
    if (!(mask >> src & 1u))
        emu_die_running("__shfl_xor_sync: lane %d reads lane %d, outside the mask 0x%08x", lane, src, mask);
    if (s.threads[(me & ~31) | src].state == EMU_DONE)
        emu_die_running("__shfl_xor_sync: lane %d reads lane %d, which has exited", lane, src);
    T r = (T)s.slots[(me & ~31) | src];
    emu_warp_wait(t, lane, mask, EMU_OP_SHFL, "__shfl_xor_sync");
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
    fprintf(stderr, "cuda emulation: kernel %s: %s (SAPO_EMU_SEED=%llu)\n", kernel, why,
            (unsigned long long)emu_state().seed);
    exit(EXIT_FAILURE);
}

static void emu_die_running(const char* fmt, ...) {
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    emu_die(emu_state().kernel, why);
}

/* splitmix64: the block and lane orders. */
static inline uint64_t emu_rand(uint64_t* st) {
    uint64_t z = (*st += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* SAPO_EMU_SEED: a decimal number, default 1; 0 runs blocks and lanes in order. */
static void emu_read_seed(EmuState& s) {
    if (s.seed_read) return;
    s.seed_read = 1;
    const char* v = getenv("SAPO_EMU_SEED");
    if (!v || !*v) return;
    char* end;
    unsigned long long n = strtoull(v, &end, 10);
    if (*end) {
        fprintf(stderr, "cuda emulation: SAPO_EMU_SEED=%s is not a number\n", v);
        exit(EXIT_FAILURE);
    }
    s.seed = n;
}

/* The i-th thread of a block of n (a multiple of 32) to run: the warps rotated and the lanes
 * xor-ed by the block's draw (in order when the seed is 0). */
static inline unsigned long emu_lane_order(const EmuState& s, unsigned long i, unsigned long n) {
    unsigned long w = (i >> 5) + s.lane_rot;
    if (w >= n >> 5) w -= n >> 5;
    return w << 5 | ((i & 31) ^ s.lane_xor);
}

/* Scans warp w (first thread w): counts its live threads and those at __syncthreads, and
 * releases the lanes whose warp-level operation every live lane of its mask has reached with
 * the same mask; returns whether any was released. */
static int emu_scan_warp(EmuState& s, unsigned long w, int* live, int* at_block) {
    unsigned done = 0, wait = 0, m0 = 0;
    int op0 = 0, uniform = 1;
    for (unsigned lane = 0; lane < 32; lane++) {
        const EmuThread& t = s.threads[w + lane];
        if (t.state == EMU_DONE) {
            done |= 1u << lane;
            continue;
        }
        ++*live;
        if (t.state == EMU_BLOCK_WAIT) ++*at_block;
        if (t.state != EMU_WARP_WAIT) continue;
        if (!wait) {
            m0 = t.wmask;
            op0 = t.wop;
        } else if (t.wmask != m0 || t.wop != op0) {
            uniform = 0;
        }
        wait |= 1u << lane;
    }
    if (!wait) return 0;
    int released = 0;
    unsigned seen = 0;
    for (unsigned lane = 0; lane < 32; lane++) {
        if (!(wait >> lane & 1u) || (seen >> lane & 1u)) continue;
        unsigned m = uniform ? m0 : s.threads[w + lane].wmask, group = uniform ? wait : 0;
        int op = s.threads[w + lane].wop;
        if (!uniform)
            for (unsigned j = 0; j < 32; j++)
                if ((wait >> j & 1u) && s.threads[w + j].wmask == m && s.threads[w + j].wop == op) group |= 1u << j;
        seen |= group;
        if (m & ~(group | done)) continue; /* a live lane of the mask is elsewhere */
        for (unsigned j = 0; j < 32; j++)
            if (group >> j & 1u) s.threads[w + j].state = EMU_RUNNABLE;
        released = 1;
    }
    return released;
}

/* Fills the block's shared memory, static and dynamic, with 0xff bytes (NaN floats). */
static void emu_fill_shared(EmuState& s, size_t smem) {
    uintptr_t lo = (uintptr_t)__start_sapo_emu_shared, hi = (uintptr_t)__stop_sapo_emu_shared;
    if (lo && hi > lo) memset(__start_sapo_emu_shared, 0xff, hi - lo);
    if (smem) memset(s.dynamic_shared.data(), 0xff, smem);
}

static int emu_stream_live(cudaStream_t st);

/* Runs kernel body over the grid; blocks in the seed's order, threads of a block as fibers. */
static void emu_launch(const char* name, const void* fn, dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                       const std::function<void()>& body) {
    EmuState& s = emu_state();
    emu_read_seed(s);
    s.kernel = name;
    unsigned long nthreads = (unsigned long)block.x * block.y * block.z;
    if (grid.x == 0 || grid.y == 0 || grid.z == 0 || nthreads == 0) emu_die(name, "empty grid or block");
    if (nthreads > 1024 || block.z > 64) emu_die(name, "more than 1024 threads per block");
    if (grid.y > 65535 || grid.z > 65535) emu_die(name, "grid.y or grid.z above 65535");
    if (!emu_stream_live(stream)) emu_die(name, "launched on a stream never created or already destroyed");
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
    s.dynamic_shared.resize((smem + 7) / 8 + 1);
    if (s.threads.size() < nthreads) {
        size_t old = s.threads.size();
        s.threads.resize(nthreads);
        for (size_t i = old; i < nthreads; i++) s.threads[i].stack = (char*)malloc(EMU_STACK);
    }
    if (!s.have_pristine) {
        getcontext(&s.pristine);
        s.have_pristine = 1;
    }
    /* the block order: a Fisher-Yates shuffle drawn from the seed and the launch's number */
    unsigned long nblocks = (unsigned long)grid.x * grid.y * grid.z;
    s.order.resize(nblocks);
    for (unsigned long b = 0; b < nblocks; b++) s.order[b] = (unsigned)b;
    uint64_t rng = s.seed * 0x2545f4914f6cdd1dull + (uint64_t)s.launches;
    if (s.seed)
        for (unsigned long b = nblocks - 1; b > 0; b--) {
            unsigned long j = (unsigned long)(emu_rand(&rng) % (b + 1));
            unsigned t = s.order[b];
            s.order[b] = s.order[j];
            s.order[j] = t;
        }
    for (unsigned long ob = 0; ob < nblocks; ob++) {
        unsigned long b = s.order[ob];
        s.block_idx = dim3((unsigned)(b % grid.x), (unsigned)(b / grid.x % grid.y),
                           (unsigned)(b / ((unsigned long)grid.x * grid.y)));
        uint64_t draw = s.seed ? emu_rand(&rng) : 0;
        s.lane_xor = (unsigned long)(draw & 31);
        s.lane_rot = (unsigned long)((draw >> 8) % (nthreads / 32));
        emu_fill_shared(s, smem);
        for (unsigned long i = 0; i < nthreads; i++) {
            EmuThread& t = s.threads[i];
            t.tid = dim3((unsigned)(i % block.x), (unsigned)(i / block.x % block.y),
                         (unsigned)(i / ((unsigned long)block.x * block.y)));
            t.state = EMU_RUNNABLE;
        }
        if (s.direct) {
            for (unsigned long i = 0; i < nthreads; i++) {
                s.cur = (int)emu_lane_order(s, i, nthreads);
                body();
            }
            continue;
        }
        for (unsigned long i = 0; i < nthreads; i++) emu_fiber_start(s, s.threads[i]);
        for (;;) {
            int ran = 0;
            for (unsigned long k = 0; k < nthreads; k++) {
                unsigned long i = emu_lane_order(s, k, nthreads);
                if (s.threads[i].state != EMU_RUNNABLE) continue;
                s.cur = (int)i;
                emu_fiber_resume(s, s.threads[i]);
                ran = 1;
            }
            int live = 0, at_block = 0, released = 0;
            for (unsigned long w = 0; w < nthreads; w += 32) released |= emu_scan_warp(s, w, &live, &at_block);
            if (!live) break;
            if (at_block == live) {
                for (unsigned long i = 0; i < nthreads; i++)
                    if (s.threads[i].state == EMU_BLOCK_WAIT) s.threads[i].state = EMU_RUNNABLE;
                released = 1;
            }
            if (!ran && !released)
                emu_die(name, "deadlock: threads wait at different barriers (or warp operations, masks)");
        }
    }
    if (!s.direct) s.syncs[name] = s.waited || s.syncs[name];
    s.direct = 0;
    s.kernel = "(none)";
}

/* ---- runtime ----------------------------------------------------------------------------- */
typedef int cudaError_t;
enum { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2, cudaErrorIllegalAddress = 700 };
enum cudaDeviceAttr { cudaDevAttrMaxSharedMemoryPerBlockOptin = 97 };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };

/* Called inside a kernel: the kernel faults (an illegal address on a GPU). */
static inline void emu_fault() { emu_state().fault = cudaErrorIllegalAddress; }
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

/* A host-side call used wrongly (printf-style): one line, then exit. */
__attribute__((format(printf, 2, 3))) static void emu_die_call(const char* call, const char* fmt, ...) {
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    fprintf(stderr, "cuda emulation: %s: %s\n", call, why);
    exit(EXIT_FAILURE);
}

/* Where [p, p + n) lies: 1 inside one cudaMalloc'd block, 0 p in none (host memory), -1 p in
 * one but the range runs past its end. */
static int emu_device_range(const void* p, size_t n) {
    const std::map<uintptr_t, size_t>& m = emu_state().device_mem;
    uintptr_t a = (uintptr_t)p;
    std::map<uintptr_t, size_t>::const_iterator it = m.upper_bound(a);
    if (it == m.begin()) return 0;
    --it;
    if (a >= it->first + (it->second ? it->second : 1)) return 0;
    return a + n <= it->first + it->second ? 1 : -1;
}

/* Checks one side of a copy, memset or cuBLAS call: device (inside one block) or host. */
static void emu_check_side(const char* call, const char* side, const void* p, size_t n, int want_device) {
    int r = emu_device_range(p, n);
    if (want_device && r == 0) emu_die_call(call, "the %s (%zu bytes at %p) is host memory, not device memory", side, n, p);
    if (r < 0) emu_die_call(call, "the %s (%zu bytes at %p) runs past the end of its cudaMalloc'd block", side, n, p);
    if (!want_device && r) emu_die_call(call, "the %s (%zu bytes at %p) is device memory, not host memory", side, n, p);
}

static int emu_stream_live(cudaStream_t st) { return !st || emu_state().streams.count(st); }
static void emu_check_stream(const char* call, cudaStream_t st) {
    if (!emu_stream_live(st)) emu_die_call(call, "stream %p was never created or is already destroyed", (void*)st);
}

static inline cudaError_t cudaMalloc(void** p, size_t n) {
    *p = aligned_alloc(256, (n + 255) / 256 * 256);
    if (!*p) return cudaErrorMemoryAllocation;
    memset(*p, 0xff, n); /* NaN floats, -1 ints: reads of unwritten memory show */
    emu_state().device_mem[(uintptr_t)*p] = n;
    return cudaSuccess;
}
static inline cudaError_t cudaFree(void* p) {
    if (!p) return cudaSuccess;
    if (!emu_state().device_mem.erase((uintptr_t)p)) emu_die_call("cudaFree", "%p is not a cudaMalloc'd block", p);
    free(p);
    return cudaSuccess;
}
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
/* The copy's kind must match where its two sides are (cudaMemcpyDefault: wherever they are,
 * a device side inside one block). */
static inline cudaError_t cudaMemcpyAsync(void* d, const void* s, size_t n, cudaMemcpyKind k, cudaStream_t st = 0) {
    static const char* const names[] = {"cudaMemcpyAsync(HostToHost)", "cudaMemcpyAsync(HostToDevice)",
                                        "cudaMemcpyAsync(DeviceToHost)", "cudaMemcpyAsync(DeviceToDevice)",
                                        "cudaMemcpyAsync(Default)"};
    if ((unsigned)k > cudaMemcpyDefault) emu_die_call("cudaMemcpyAsync", "kind %d", (int)k);
    emu_check_stream(names[k], st);
    if (emu_state().fault) return emu_state().fault;
    if (!n) return cudaSuccess;
    if (k == cudaMemcpyDefault) {
        emu_check_side(names[k], "destination", d, n, emu_device_range(d, n) != 0);
        emu_check_side(names[k], "source", s, n, emu_device_range(s, n) != 0);
    } else {
        emu_check_side(names[k], "destination", d, n, k == cudaMemcpyHostToDevice || k == cudaMemcpyDeviceToDevice);
        emu_check_side(names[k], "source", s, n, k == cudaMemcpyDeviceToHost || k == cudaMemcpyDeviceToDevice);
    }
    memmove(d, s, n);
    return cudaSuccess;
}
static inline cudaError_t cudaMemcpy(void* d, const void* s, size_t n, cudaMemcpyKind k) { return cudaMemcpyAsync(d, s, n, k); }
static inline cudaError_t cudaMemsetAsync(void* d, int v, size_t n, cudaStream_t st = 0) {
    emu_check_stream("cudaMemsetAsync", st);
    if (!n) return cudaSuccess;
    emu_check_side("cudaMemsetAsync", "destination", d, n, 1);
    memset(d, v, n);
    return cudaSuccess;
}
static inline cudaError_t cudaStreamCreate(cudaStream_t* s) {
    *s = new EmuStream{++emu_state().stream_ids};
    emu_state().streams.insert(*s);
    return cudaSuccess;
}
static inline cudaError_t cudaStreamSynchronize(cudaStream_t s) {
    emu_check_stream("cudaStreamSynchronize", s);
    return emu_state().fault;
}
static inline cudaError_t cudaStreamDestroy(cudaStream_t s) {
    if (!s) return cudaSuccess;
    emu_check_stream("cudaStreamDestroy", s);
    emu_state().streams.erase(s); /* not freed: no later stream takes its address */
    return cudaSuccess;
}
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
static inline cublasStatus_t cublasSetStream(cublasHandle_t h, cudaStream_t s) {
    (void)h;
    emu_check_stream("cublasSetStream", s);
    return CUBLAS_STATUS_SUCCESS;
}
/* The default pointer mode: the matrices on the device, alpha and beta on the host. */
static inline void emu_check_blas(const char* call, const float* alpha, const float* beta, const float* A,
                                  const float* B, const float* C) {
    emu_check_side(call, "alpha", alpha, sizeof *alpha, 0);
    emu_check_side(call, "beta", beta, sizeof *beta, 0);
    emu_check_side(call, "A", A, sizeof *A, 1);
    emu_check_side(call, "B (x)", B, sizeof *B, 1);
    emu_check_side(call, "C (y)", C, sizeof *C, 1);
}
static inline cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t m) { (void)h; (void)m; return CUBLAS_STATUS_SUCCESS; }

/* C (m x n) = alpha op(A) op(B) + beta C; C is not read when beta == 0 (BLAS rule). */
static inline cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                                                       int m, int n, int k, const float* alpha, const float* A, int lda,
                                                       long long sa, const float* B, int ldb, long long sb,
                                                       const float* beta, float* C, int ldc, long long sc, int batch) {
    (void)h;
    if (m < 0 || n < 0 || k < 0 || batch < 0) return CUBLAS_STATUS_INVALID_VALUE;
    if (m && n && batch) emu_check_blas("cublasSgemm", alpha, beta, k ? A : C, k ? B : C, C);
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
    if (m && n) emu_check_blas("cublasSgemv", alpha, beta, A, x, y);
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
