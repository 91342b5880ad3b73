/* What the emulation lets us check of the CUDA backend's error paths without a GPU
 * (unit/test_cuda_check_emu): each case runs in a child process, whose one-line error (stderr)
 * and exit status are checked.
 *  - SAPO_CUDA_SYNC (cuda_check.h): the value's parsing; with it on, every launch is followed
 *    by cudaDeviceSynchronize, and a kernel that faults is named in the error; with it off,
 *    the same fault surfaces at the next synchronising call under that call's name.
 *  - the launch limits (launch_limits.h) in the launchers themselves: cuda_det_gemm refuses
 *    M above 262,140 naming the shape; GPT decode attention allows its kernel more than
 *    48 KiB of dynamic shared memory (cudaFuncSetAttribute: the emulation refuses the launch
 *    otherwise) and refuses n_ctx above the device's opt-in maximum with one line. */
#define SAPO_CUDA_EMULATE 1
#include "../cuda_layers.cu"
#include "emu_child.h"

extern "C" {
#include "../../tests/test_assert.h"
}

SAPO_CUDA_NS_BEGIN
void cuda_die(const char* what) { /* cuda_backend.cu's, which this test does not include */
    fprintf(stderr, "cuda backend: %s\n", what);
    exit(EXIT_FAILURE);
}
SAPO_CUDA_NS_END

__global__ void sapo_test_fault_kernel(int* out, int fault) {
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        out[0] = 7;
        if (fault) emu_fault(); /* an illegal address, on a GPU */
    }
}

/* Runs body in a child with SAPO_CUDA_SYNC = sync (NULL: unset). */
static Child run_sync_child(const char* sync, void (*body)(char* out)) { return run_child("SAPO_CUDA_SYNC", sync, body); }

static int g_out[1];

/* A launch that faults, then a later synchronising call (like the backend's next copy). */
static void launch_faulting(char* out) {
    SAPO_LAUNCH(sapo_test_fault_kernel, 1, 32, 0, (cudaStream_t)0, g_out, 1);
    cudaCheck(cudaStreamSynchronize((cudaStream_t)0));
    snprintf(out, 256, "no error seen");
}

/* Two clean launches: how many device synchronisations they cost. */
static void launch_clean(char* out) {
    int before = emu_state().device_syncs;
    SAPO_LAUNCH(sapo_test_fault_kernel, 1, 32, 0, (cudaStream_t)0, g_out, 0);
    SAPO_LAUNCH(sapo_test_fault_kernel, 1, 32, 0, (cudaStream_t)0, g_out, 0);
    snprintf(out, 256, "syncs=%d value=%d", emu_state().device_syncs - before, g_out[0]);
}

static void det_gemm_rows(char* out, int M) {
    CudaCtx x;
    memset(&x, 0, sizeof x);
    x.det = 1;
    static float a[8], b[8], c[8];
    cuda_det_gemm(&x, 0, 0, M, 2, 2, 1.0f, a, 2, b, 2, 0.0f, c, 2); /* dies before reading when M is too big */
    snprintf(out, 256, "ran");
}
static void det_gemm_ok(char* out) { det_gemm_rows(out, 4); }
static void det_gemm_too_tall(char* out) { det_gemm_rows(out, 262141); }

/* One row, one head of 32, 4 keys of its own, with n_ctx positions of shared memory. */
static void decode_with(char* out, int n_ctx) {
    CudaCtx x;
    memset(&x, 0, sizeof x);
    const int C = 32, NH = 1, n = 1;
    static float y[32], q3[96], krow[4 * 32], vrow[4 * 32];
    for (int i = 0; i < 96; i++) q3[i] = 0.01f * (float)i;
    for (int i = 0; i < 4 * 32; i++) {
        krow[i] = 0.02f * (float)(i % 7);
        vrow[i] = (float)(i / 32); /* key t's values are t */
    }
    static int rows[1] = {0}, prefix[1] = {0}, prefix_len[1] = {0}, pos[1] = {3};
    cuda_decode_attention(&x, y, q3, NULL, NULL, krow, vrow, rows, prefix, prefix_len, pos, n, C, NH, 0, 4 * 32,
                          n_ctx);
    snprintf(out, 256, "y0=%.4f", y[0]);
}
static void decode_small(char* out) { decode_with(out, 1024); }
static void decode_large(char* out) { decode_with(out, 16384); }   /* 64 KiB: needs the opt-in */
static void decode_too_large(char* out) { decode_with(out, 60000); } /* 240,000 bytes: above 227 KiB */

int main(void) {
    EXPECT(!cuda_sync_mode_parse(NULL) && !cuda_sync_mode_parse("") && !cuda_sync_mode_parse("0"),
           "SAPO_CUDA_SYNC unset, empty or 0 is not off");
    EXPECT(cuda_sync_mode_parse("1") && cuda_sync_mode_parse("yes"), "SAPO_CUDA_SYNC=1 is not on");

    Child c = run_sync_child("1", launch_clean);
    EXPECT(c.status == 0 && !strcmp(c.out, "syncs=2 value=7"), "SAPO_CUDA_SYNC=1, two launches: %s (status %d) %s",
           c.out, c.status, c.err);
    c = run_sync_child(NULL, launch_clean);
    EXPECT(c.status == 0 && !strcmp(c.out, "syncs=0 value=7"), "SAPO_CUDA_SYNC unset, two launches: %s (status %d) %s",
           c.out, c.status, c.err);

    c = run_sync_child("1", launch_faulting);
    EXPECT(c.status == 1, "SAPO_CUDA_SYNC=1, a faulting kernel: status %d, out \"%s\"", c.status, c.out);
    EXPECT_MSG(c.err, "kernel sapo_test_fault_kernel");
    EXPECT_MSG(c.err, "SAPO_CUDA_SYNC=1");
    EXPECT_MSG(c.err, "illegal memory access");
    c = run_sync_child("0", launch_faulting);
    EXPECT(c.status == 1, "SAPO_CUDA_SYNC=0, a faulting kernel: status %d", c.status);
    EXPECT(strstr(c.err, "cudaStreamSynchronize") && !strstr(c.err, "sapo_test_fault_kernel"),
           "SAPO_CUDA_SYNC=0: the fault should surface at the next sync, not under the kernel: %s", c.err);

    c = run_sync_child(NULL, det_gemm_ok);
    EXPECT(c.status == 0 && !strcmp(c.out, "ran"), "det gemm M=4: status %d %s", c.status, c.err);
    c = run_sync_child(NULL, det_gemm_too_tall);
    EXPECT(c.status == 1, "det gemm M=262141: status %d, out \"%s\"", c.status, c.out);
    EXPECT_MSG(c.err, "M=262141 N=2 K=2");
    EXPECT_MSG(c.err, "grid.y");

    c = run_sync_child(NULL, decode_small);
    EXPECT(c.status == 0 && c.out[0] == 'y', "decode n_ctx 1024: status %d %s", c.status, c.err);
    Child big = run_sync_child(NULL, decode_large);
    EXPECT(big.status == 0 && !strcmp(big.out, c.out), "decode n_ctx 16384 (64 KiB): status %d, %s vs %s; %s",
           big.status, big.out, c.out, big.err);
    c = run_sync_child(NULL, decode_too_large);
    EXPECT(c.status == 1, "decode n_ctx 60000: status %d, out \"%s\"", c.status, c.out);
    EXPECT_MSG(c.err, "n_ctx=60000");
    EXPECT_MSG(c.err, "opt-in maximum");
    return test_finish("test_cuda_check_emu");
}
