/* The emulation's own checks (cuda_emu.h), each shown to catch a deliberately broken toy kernel
 * or call (unit/test_cuda_emu_checks); every case runs in a child process (emu_child.h):
 *  - block and lane order (SAPO_EMU_SEED): a kernel whose last block sums the others'
 *    partials, and one whose lanes read a neighbour's global write without a barrier, are
 *    right in order (seed 0) and wrong in the default seed's order, the same on every run;
 *  - __shared__ filled with NaN before every block: shared memory written only by block 0,
 *    a sum into shared memory never initialised, a missing __syncthreads, dynamic shared;
 *  - shuffles honour their masks: a lane outside its own mask, a read of a lane outside the
 *    mask or of one that has exited are errors; a half-warp mask and a width work;
 *  - copies check their direction: a copy whose kind does not match its sides, one past its
 *    block, a memset of host memory, cuBLAS given a host matrix, a destroyed stream. */
#define SAPO_CUDA_EMULATE 1
#include "../cuda_compat.h"
#include "emu_child.h"

extern "C" {
#include "../../tests/test_assert.h"
}

static const int N_BLOCKS = 16;

/* ---- order ------------------------------------------------------------------------------ */
/* Broken: the last block assumes it runs last (on a GPU it needs a fence and a counter). */
__global__ void toy_last_block_sums(int* partial, int* total) {
    if (threadIdx.x != 0) return;
    partial[blockIdx.x] = (int)blockIdx.x + 1;
    if (blockIdx.x == gridDim.x - 1) {
        int t = 0;
        for (unsigned b = 0; b < gridDim.x; b++) t += partial[b];
        *total = t;
    }
}
/* Broken: lane t reads lane t - 1's global write without a barrier. */
__global__ void toy_lane_neighbour(int* buf, int* out) {
    int t = (int)threadIdx.x;
    buf[t] = t + 1;
    out[t] = t ? buf[t - 1] : 0;
}

static int* device_ints(int n) {
    void* p;
    cudaCheck(cudaMalloc(&p, (size_t)n * sizeof(int)));
    return (int*)p;
}

/* "blocks=<total> lanes=<lanes whose read was right>" */
static void order_races(char* out) {
    int *partial = device_ints(N_BLOCKS), *total = device_ints(1), *buf = device_ints(64), *got = device_ints(64);
    SAPO_LAUNCH(toy_last_block_sums, N_BLOCKS, 32, 0, (cudaStream_t)0, partial, total);
    SAPO_LAUNCH(toy_lane_neighbour, 1, 64, 0, (cudaStream_t)0, buf, got);
    int t, lanes[64], right = 0;
    cudaCheck(cudaMemcpy(&t, total, sizeof t, cudaMemcpyDeviceToHost));
    cudaCheck(cudaMemcpy(lanes, got, sizeof lanes, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 64; i++) right += lanes[i] == i;
    snprintf(out, 256, "blocks=%d lanes=%d", t, right);
}

/* ---- shared memory ---------------------------------------------------------------------- */
/* Broken: only block 0 writes the shared array that every block reads. */
__global__ void toy_shared_block0(float* out) {
    __shared__ float sh[64];
    if (blockIdx.x == 0) sh[threadIdx.x] = 1.0f;
    __syncthreads();
    out[blockIdx.x * 64 + threadIdx.x] = sh[threadIdx.x];
}
/* Broken: sums into shared memory it never initialised (zero on a GPU only by luck). */
__global__ void toy_shared_uninit_sum(float* out) {
    __shared__ float acc[32];
    acc[threadIdx.x] += 1.0f;
    out[threadIdx.x] = acc[threadIdx.x];
}
/* Broken: reads another warp's shared write with no __syncthreads between. */
__global__ void toy_shared_no_barrier(float* out) {
    __shared__ float sh[64];
    sh[threadIdx.x] = 1.0f;
    out[threadIdx.x] = sh[threadIdx.x ^ 32];
}
/* Broken: like toy_shared_block0, in dynamic shared memory. */
__global__ void toy_dynamic_block0(float* out) {
    SAPO_DYNAMIC_SHARED(float, sh);
    if (blockIdx.x == 0) sh[threadIdx.x] = 1.0f;
    __syncthreads();
    out[blockIdx.x * 32 + threadIdx.x] = sh[threadIdx.x];
}

/* "<NaN count> <NaN count> ...": one per kernel, of the values it wrote */
static void shared_nans(char* out) {
    static float h[4 * 64];
    void* d;
    cudaCheck(cudaMalloc(&d, sizeof h));
    float* o = (float*)d;
    int nan[4] = {0, 0, 0, 0}, n[4] = {4 * 64, 32, 64, 4 * 32};
    for (int k = 0; k < 4; k++) {
        if (k == 0) SAPO_LAUNCH(toy_shared_block0, 4, 64, 0, (cudaStream_t)0, o);
        if (k == 1) SAPO_LAUNCH(toy_shared_uninit_sum, 1, 32, 0, (cudaStream_t)0, o);
        if (k == 2) SAPO_LAUNCH(toy_shared_no_barrier, 1, 64, 0, (cudaStream_t)0, o);
        if (k == 3) SAPO_LAUNCH(toy_dynamic_block0, 4, 32, 32 * sizeof(float), (cudaStream_t)0, o);
        cudaCheck(cudaMemcpy(h, o, (size_t)n[k] * sizeof(float), cudaMemcpyDeviceToHost));
        for (int i = 0; i < n[k]; i++) nan[k] += h[i] != h[i];
    }
    snprintf(out, 256, "%d %d %d %d", nan[0], nan[1], nan[2], nan[3]);
}

/* ---- shuffle masks ---------------------------------------------------------------------- */
/* case 0, broken: lanes 0-15 read lanes 16-31, outside their mask; 1, broken: every lane
 * uses lanes 0-15's mask; 2, broken: lanes 16-31 have returned before a full-warp shuffle;
 * 3, right: each half-warp sums its own 16 lanes under its own mask; 4, right: width 16 and an
 * xor of 16: lanes 0-15 keep their own value (a later group), lanes 16-31 read lanes 0-15. */
__global__ void toy_shuffle(int* out, int which) {
    int lane = (int)threadIdx.x & 31;
    float v = (float)lane;
    if (which == 0) {
        if (lane < 16) v = __shfl_xor_sync(0x0000ffffu, v, 16);
    } else if (which == 1) {
        v = __shfl_xor_sync(0x0000ffffu, v, 1);
    } else if (which == 2) {
        if (lane >= 16) return;
        v = __shfl_xor_sync(0xffffffffu, v, 16);
    } else if (which == 3) {
        unsigned mask = lane < 16 ? 0x0000ffffu : 0xffff0000u;
        for (int o = 8; o > 0; o >>= 1) v += __shfl_xor_sync(mask, v, o);
    } else {
        v = __shfl_xor_sync(0xffffffffu, v, 16, 16);
    }
    out[threadIdx.x] = (int)v;
}
static void shuffle_case(char* out, int which) {
    int* d = device_ints(32);
    SAPO_LAUNCH(toy_shuffle, 1, 32, 0, (cudaStream_t)0, d, which);
    int h[32];
    cudaCheck(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    snprintf(out, 256, "%d %d %d", h[0], h[15], h[31]);
}
static void shuffle_outside(char* out) { shuffle_case(out, 0); }
static void shuffle_not_own(char* out) { shuffle_case(out, 1); }
static void shuffle_exited(char* out) { shuffle_case(out, 2); }
static void shuffle_halves(char* out) { shuffle_case(out, 3); }
static void shuffle_width(char* out) { shuffle_case(out, 4); }

/* ---- copies ----------------------------------------------------------------------------- */
static float g_host[64];
static float* device_floats(void) {
    void* p;
    cudaCheck(cudaMalloc(&p, sizeof g_host));
    return (float*)p;
}
static void copy_right(char* out) { /* a round trip, a device copy and a memset, all right */
    float *a = device_floats(), *b = device_floats();
    cudaStream_t st;
    cudaCheck(cudaStreamCreate(&st));
    for (int i = 0; i < 64; i++) g_host[i] = (float)i;
    cudaCheck(cudaMemcpyAsync(a, g_host, sizeof g_host, cudaMemcpyHostToDevice, st));
    cudaCheck(cudaMemcpyAsync(b, a, sizeof g_host, cudaMemcpyDeviceToDevice, st));
    cudaCheck(cudaMemsetAsync(a, 0, sizeof g_host, st));
    cudaCheck(cudaMemcpyAsync(g_host, b, sizeof g_host, cudaMemcpyDeviceToHost, st));
    cudaCheck(cudaStreamSynchronize(st));
    cudaCheck(cudaStreamDestroy(st));
    snprintf(out, 256, "%g", (double)g_host[63]);
}
static void copy_to_host_as_h2d(char* out) { /* broken: an upload into host memory */
    static float other[64];
    cudaCheck(cudaMemcpy(other, g_host, sizeof g_host, cudaMemcpyHostToDevice));
    snprintf(out, 256, "copied");
}
static void copy_swapped(char* out) { /* broken: a download with its two pointers swapped */
    float* d = device_floats();
    cudaCheck(cudaMemcpy(d, g_host, sizeof g_host, cudaMemcpyDeviceToHost));
    snprintf(out, 256, "copied");
}
static void copy_past_end(char* out) { /* broken: one float more than the block holds */
    static float big[65];
    float* d = device_floats();
    cudaCheck(cudaMemcpy(d, big, sizeof big, cudaMemcpyHostToDevice));
    snprintf(out, 256, "copied");
}
static void memset_host(char* out) { /* broken: a device memset of host memory */
    cudaCheck(cudaMemsetAsync(g_host, 0, sizeof g_host, (cudaStream_t)0));
    snprintf(out, 256, "set");
}
static void gemm_host_matrix(char* out) { /* broken: cuBLAS given a host matrix */
    float *a = device_floats(), *c = device_floats(), one = 1.0f, zero = 0.0f;
    cublasHandle_t h;
    cublasCheck(cublasCreate(&h));
    cublasCheck(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, &one, a, 8, g_host, 8, &zero, c, 8));
    snprintf(out, 256, "multiplied");
}
static void copy_dead_stream(char* out) { /* broken: a copy on a destroyed stream */
    float* d = device_floats();
    cudaStream_t st;
    cudaCheck(cudaStreamCreate(&st));
    cudaCheck(cudaStreamDestroy(st));
    cudaCheck(cudaMemcpyAsync(d, g_host, sizeof g_host, cudaMemcpyHostToDevice, st));
    snprintf(out, 256, "copied");
}

/* A case that must fail with one line holding fragment. */
static void expect_error(const char* what, void (*body)(char* out), const char* fragment) {
    Child c = run_child("SAPO_EMU_SEED", NULL, body);
    EXPECT(c.status == 1, "%s: status %d, out \"%s\", err %s", what, c.status, c.out, c.err);
    EXPECT_MSG(c.err, fragment);
}

int main(void) {
    /* order: in order both races pass unseen; seed 1 (the default) shows both, every run */
    const int all = N_BLOCKS * (N_BLOCKS + 1) / 2;
    char in_order[64];
    snprintf(in_order, sizeof in_order, "blocks=%d lanes=64", all);
    Child c = run_child("SAPO_EMU_SEED", "0", order_races);
    EXPECT(c.status == 0 && !strcmp(c.out, in_order), "SAPO_EMU_SEED=0: %s (status %d) %s", c.out, c.status, c.err);
    Child d = run_child("SAPO_EMU_SEED", NULL, order_races);
    int blocks = 0, lanes = 0;
    EXPECT(d.status == 0 && sscanf(d.out, "blocks=%d lanes=%d", &blocks, &lanes) == 2, "default seed: %s %s", d.out,
           d.err);
    EXPECT(blocks != all, "default seed: the last block ran last (total %d): the block order is not shuffled", blocks);
    EXPECT(lanes < 64, "default seed: every lane saw its neighbour's write: the lane order is not shuffled");
    c = run_child("SAPO_EMU_SEED", "1", order_races);
    EXPECT(c.status == 0 && !strcmp(c.out, d.out), "SAPO_EMU_SEED=1 (%s) is not the default (%s)", c.out, d.out);
    Child again = run_child("SAPO_EMU_SEED", "1", order_races);
    EXPECT(!strcmp(again.out, c.out), "SAPO_EMU_SEED=1 twice: %s vs %s", c.out, again.out);
    c = run_child("SAPO_EMU_SEED", "7", order_races);
    EXPECT(c.status == 0 && strcmp(c.out, in_order), "SAPO_EMU_SEED=7 ran in order: %s", c.out);
    c = run_child("SAPO_EMU_SEED", "x", order_races);
    EXPECT(c.status == 1, "SAPO_EMU_SEED=x: status %d", c.status);
    EXPECT_MSG(c.err, "SAPO_EMU_SEED=x is not a number");

    /* shared memory: NaN wherever a block reads what it never wrote, at any seed */
    c = run_child("SAPO_EMU_SEED", NULL, shared_nans);
    EXPECT(c.status == 0 && !strcmp(c.out, "192 32 32 96"),
           "shared NaNs (block 0 only, uninitialised sum, no barrier, dynamic): %s, want 192 32 32 96 (%s)", c.out,
           c.err);

    /* shuffle masks */
    expect_error("shuffle outside the mask", shuffle_outside, ", outside the mask 0x0000ffff");
    expect_error("shuffle outside its own mask", shuffle_not_own, "outside its own mask 0x0000ffff");
    expect_error("shuffle of an exited lane", shuffle_exited, ", which has exited");
    c = run_child("SAPO_EMU_SEED", NULL, shuffle_halves);
    EXPECT(c.status == 0 && !strcmp(c.out, "120 120 376"), "half-warp masks: %s (status %d) %s", c.out, c.status,
           c.err);
    c = run_child("SAPO_EMU_SEED", NULL, shuffle_width);
    EXPECT(c.status == 0 && !strcmp(c.out, "0 15 15"), "width 16: %s (status %d) %s", c.out, c.status, c.err);

    /* copies */
    c = run_child("SAPO_EMU_SEED", NULL, copy_right);
    EXPECT(c.status == 0 && !strcmp(c.out, "63"), "right copies: %s (status %d) %s", c.out, c.status, c.err);
    expect_error("upload into host memory", copy_to_host_as_h2d, "cudaMemcpyAsync(HostToDevice): the destination");
    expect_error("download with swapped pointers", copy_swapped, "is device memory, not host memory");
    expect_error("copy past the block", copy_past_end, "runs past the end of its cudaMalloc'd block");
    expect_error("memset of host memory", memset_host, "cudaMemsetAsync: the destination");
    expect_error("cuBLAS with a host matrix", gemm_host_matrix, "cublasSgemm: the B (x)");
    expect_error("copy on a destroyed stream", copy_dead_stream, "never created or is already destroyed");
    return test_finish("test_cuda_emu_checks");
}
