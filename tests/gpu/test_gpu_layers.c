/* Each CUDA layer against its CPU twin, one layer at a time (the llm.c habit, per kernel):
 * every launcher of kernels/cuda_layer_table.h, forward and backward, on small random inputs
 * (rows and channels that are not multiples of a warp, several row chunks, a packed batch with
 * shared prompts), against the function of src/model/cpu_layers.c (or the loop of
 * cpu_backend.c) it twins, on the same inputs: a backward gets the CPU forward's saved values
 * and accumulates into the same random gradients. The max |gpu - cpu| of every output is
 * printed. Tolerances, default mode: the element-wise layers that repeat the CPU's float
 * expression (embedding and its gradients, GELU backward, residual, log-prob backward, AdamW,
 * the KV-cache stores behind decode attention) must give the CPU's bits; the rest (sums in
 * another order, expf/logf for exp_poly/log_det, cuBLAS for OpenBLAS) 1e-5 of the output's
 * largest magnitude, 1e-12 relative for the double sum of squares. Deterministic mode
 * (CudaCtx.det, the cuda_det_* kernels): every layer the CPU's bits, including decode
 * attention against the training forward (det_attention.h on both).
 * Built twice like test_gpu_parity.c: gpu/test_gpu_layers against the real backend (exit 77
 * without a GPU) and unit/test_gpu_layers_emu against the CPU emulation (kernels/emu). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "model/adamw_scalars.h"
#include "model/cpu_layers.h"
#include "../test_assert.h"

#if defined(SAPO_TEST_CUDA_EMULATION) || defined(SAPO_HAVE_CUDA)
#include "cuda_layer_table.h"
#ifdef SAPO_TEST_CUDA_EMULATION
extern const CudaLayerTable CUDA_LAYER_TABLE_EMU;
#define LAYERS (&CUDA_LAYER_TABLE_EMU)
#else
#include "cuda_backend.h"
#define LAYERS (&CUDA_LAYER_TABLE)
#endif

static const CudaLayerTable* T;
static CudaLayers* L;
static int g_det; /* the deterministic mode: every comparison is of bits */
static RngStream R;

enum { ROWS = 150, CH = 48, NH = 4, NCTX = 32, VOCAB = 67 }; /* 150 rows: three layernorm row chunks */

static float* host_floats(size_t n, float scale) {
    float* a = malloc(n * sizeof(float) + 1);
    for (size_t i = 0; i < n; i++) a[i] = scale * rng_normal(&R);
    return a;
}
static float* copy_of(const float* a, size_t n) {
    float* b = malloc(n * sizeof(float) + 1);
    memcpy(b, a, n * sizeof(float));
    return b;
}
/* device copy of host data */
static void* dev(const void* host, size_t bytes) {
    void* d = T->alloc(L, bytes);
    T->to_device(L, d, host, bytes);
    return d;
}
static float* back(const float* d, size_t n) {
    float* h = malloc(n * sizeof(float) + 1);
    T->to_host(L, h, d, n * sizeof(float));
    return h;
}

/* The GPU's output of a layer against the CPU's: bits (exact, or deterministic mode), else
 * max |diff| <= rel * max |cpu|. Frees gpu. */
static void check(const char* layer, const char* what, const float* cpu, float* gpu, size_t n, double rel) {
    double d = 0.0, scale = 0.0;
    long bits = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)cpu[i] - gpu[i]);
        if (!(e <= d)) d = e; /* NaN wins */
        if (fabs(cpu[i]) > scale) scale = fabs(cpu[i]);
        bits += memcmp(&cpu[i], &gpu[i], sizeof(float)) != 0;
    }
    int exact = g_det || rel == 0.0;
    double tol = rel * scale;
    if (exact)
        printf("  %-19s %-8s max |diff| %-9.3g (max |cpu| %-8.3g) bits: %ld of %zu differ\n", layer, what, d, scale, bits,
               n);
    else
        printf("  %-19s %-8s max |diff| %-9.3g (max |cpu| %-8.3g) tolerance %.3g\n", layer, what, d, scale, tol);
    if (exact)
        EXPECT(bits == 0, "%s %s: %ld of %zu values differ from the CPU's bits (max |diff| %.3g)%s", layer, what, bits, n,
               d, g_det ? " in the deterministic mode" : "");
    else
        EXPECT(d <= tol, "%s %s: max |diff| %.3g above the tolerance %.3g", layer, what, d, tol);
    EXPECT(scale > 0.0, "%s %s: all zero on the CPU, the test reaches nothing", layer, what);
    free(gpu);
}

static void test_encoder(void) {
    int N = ROWS, C = CH, inp[ROWS], pos[ROWS];
    for (int n = 0; n < N; n++) {
        inp[n] = (int)rng_below(&R, 20); /* repeated tokens and positions: sums of several rows */
        pos[n] = (int)rng_below(&R, NCTX);
    }
    float *wte = host_floats((size_t)VOCAB * C, 0.1f), *wpe = host_floats((size_t)NCTX * C, 0.1f);
    float* out = host_floats((size_t)N * C, 0.0f);
    encoder_forward(out, inp, pos, wte, wpe, N, C);
    float* d_out = T->alloc(L, sizeof(float) * N * C);
    int *d_inp = dev(inp, sizeof inp), *d_pos = dev(pos, sizeof pos);
    T->encoder_forward(L, d_out, d_inp, d_pos, dev(wte, sizeof(float) * VOCAB * C), dev(wpe, sizeof(float) * NCTX * C),
                       N, C);
    check("encoder_forward", "out", out, back(d_out, (size_t)N * C), (size_t)N * C, 0.0);

    float *dout = host_floats((size_t)N * C, 1.0f), *dwte = host_floats((size_t)VOCAB * C, 1.0f),
          *dwpe = host_floats((size_t)NCTX * C, 1.0f);
    float *d_dwte = dev(dwte, sizeof(float) * VOCAB * C), *d_dwpe = dev(dwpe, sizeof(float) * NCTX * C);
    float* d_dout = dev(dout, sizeof(float) * N * C);
    encoder_backward(dwte, dwpe, dout, inp, pos, N, C);
    int start[VOCAB + 1], rows[ROWS], cursor[VOCAB];
    cuda_rows_by_key(start, rows, cursor, inp, N, VOCAB);
    T->encoder_backward(L, d_dwte, d_dout, dev(start, sizeof start), dev(rows, sizeof rows), VOCAB, C);
    cuda_rows_by_key(start, rows, cursor, pos, N, NCTX);
    T->encoder_backward(L, d_dwpe, d_dout, dev(start, sizeof(int) * (NCTX + 1)), dev(rows, sizeof rows), NCTX, C);
    check("encoder_backward", "dwte", dwte, back(d_dwte, (size_t)VOCAB * C), (size_t)VOCAB * C, 0.0);
    check("encoder_backward", "dwpe", dwpe, back(d_dwpe, (size_t)NCTX * C), (size_t)NCTX * C, 0.0);
    free(wte), free(wpe), free(out), free(dout), free(dwte), free(dwpe);
}

static void test_layernorm(void) {
    int N = ROWS, C = CH;
    size_t NC = (size_t)N * C;
    float *inp = host_floats(NC, 1.0f), *w = host_floats(C, 1.0f), *b = host_floats(C, 1.0f);
    for (size_t i = 0; i < NC; i++) inp[i] += 0.5f; /* a mean to take out */
    float *out = host_floats(NC, 0.0f), *mean = host_floats(N, 0.0f), *rstd = host_floats(N, 0.0f);
    layernorm_forward(out, mean, rstd, inp, w, b, N, C);
    float *d_out = T->alloc(L, sizeof(float) * NC), *d_mean = T->alloc(L, sizeof(float) * N),
          *d_rstd = T->alloc(L, sizeof(float) * N);
    float *d_inp = dev(inp, sizeof(float) * NC), *d_w = dev(w, sizeof(float) * C);
    T->layernorm_forward(L, d_out, d_mean, d_rstd, d_inp, d_w, dev(b, sizeof(float) * C), N, C);
    check("layernorm_forward", "out", out, back(d_out, NC), NC, 1e-5);
    check("layernorm_forward", "mean", mean, back(d_mean, N), N, 1e-5);
    check("layernorm_forward", "rstd", rstd, back(d_rstd, N), N, 1e-5);

    float *dout = host_floats(NC, 1.0f), *dinp = host_floats(NC, 1.0f), *dw = host_floats(C, 1.0f),
          *db = host_floats(C, 1.0f);
    float *d_dinp = dev(dinp, sizeof(float) * NC), *d_dw = dev(dw, sizeof(float) * C), *d_db = dev(db, sizeof(float) * C);
    T->to_device(L, d_mean, mean, sizeof(float) * N); /* the CPU's saved statistics on both sides */
    T->to_device(L, d_rstd, rstd, sizeof(float) * N);
    layernorm_backward(dinp, dw, db, dout, inp, w, mean, rstd, N, C);
    T->layernorm_backward(L, d_dinp, d_dw, d_db, dev(dout, sizeof(float) * NC), d_inp, d_w, d_mean, d_rstd, N, C);
    check("layernorm_backward", "dinp", dinp, back(d_dinp, NC), NC, 1e-5);
    check("layernorm_backward", "dw", dw, back(d_dw, C), C, 1e-5);
    check("layernorm_backward", "db", db, back(d_db, C), C, 1e-5);
    free(inp), free(w), free(b), free(out), free(mean), free(rstd), free(dout), free(dinp), free(dw), free(db);
}

static void test_matmul(void) {
    int N = ROWS, IC = CH, OC = 72;
    float *inp = host_floats((size_t)N * IC, 1.0f), *w = host_floats((size_t)OC * IC, 0.2f), *bias = host_floats(OC, 1.0f);
    float *d_inp = dev(inp, sizeof(float) * N * IC), *d_w = dev(w, sizeof(float) * OC * IC);
    for (int with_bias = 1; with_bias >= 0; with_bias--) {
        float* out = host_floats((size_t)N * OC, 0.0f);
        float* d_out = T->alloc(L, sizeof(float) * N * OC);
        matmul_forward(out, inp, w, with_bias ? bias : NULL, N, IC, OC, g_det);
        T->matmul_forward(L, d_out, d_inp, d_w, with_bias ? dev(bias, sizeof(float) * OC) : NULL, N, IC, OC);
        check("matmul_forward", with_bias ? "out" : "out/bias", out, back(d_out, (size_t)N * OC), (size_t)N * OC, 1e-5);
        free(out);
    }
    float *dout = host_floats((size_t)N * OC, 1.0f), *dinp = host_floats((size_t)N * IC, 1.0f),
          *dw = host_floats((size_t)OC * IC, 1.0f), *dbias = host_floats(OC, 1.0f);
    float *d_dinp = dev(dinp, sizeof(float) * N * IC), *d_dw = dev(dw, sizeof(float) * OC * IC),
          *d_dbias = dev(dbias, sizeof(float) * OC);
    matmul_backward(dinp, dw, dbias, dout, inp, w, N, IC, OC, g_det);
    T->matmul_backward(L, d_dinp, d_dw, d_dbias, dev(dout, sizeof(float) * N * OC), d_inp, d_w, N, IC, OC);
    check("matmul_backward", "dinp", dinp, back(d_dinp, (size_t)N * IC), (size_t)N * IC, 1e-5);
    check("matmul_backward", "dw", dw, back(d_dw, (size_t)OC * IC), (size_t)OC * IC, 1e-5);
    check("matmul_backward", "dbias", dbias, back(d_dbias, OC), OC, 1e-5);
    free(inp), free(w), free(bias), free(dout), free(dinp), free(dw), free(dbias);
}

/* A packed batch: prompts of 5 and 7 tokens, their completions interleaved, two own segments. */
enum { NSEG = 7 };
static const int SEG_LEN[NSEG] = {5, 7, 4, 6, 9, 1, 2};
static const int SEG_PREFIX[NSEG] = {-1, -1, 0, 1, 0, 1, -1};

static int packed_segments(Segment* segs) {
    int N = 0;
    for (int k = 0; k < NSEG; k++) {
        segs[k] = (Segment){.start = N, .len = SEG_LEN[k], .prefix = SEG_PREFIX[k]};
        N += SEG_LEN[k];
    }
    return N;
}

static void test_attention(void) {
    Segment segs[NSEG];
    int N = packed_segments(segs), C = CH, pos[ROWS], seg_of[ROWS], children[NSEG];
    CudaSeg cs[NSEG];
    size_t A = (size_t)cuda_segment_table(cs, children, pos, seg_of, segs, NSEG, NH), N3 = (size_t)N * 3 * C;
    float *qkv = host_floats(N3, 1.0f), *out = host_floats((size_t)N * C, 0.0f), *att = host_floats(A, 0.0f);
    (g_det ? attention_forward_det : attention_forward)(out, att, qkv, segs, NSEG, C, NH);
    float *d_out = T->alloc(L, sizeof(float) * N * C), *d_att = T->alloc(L, sizeof(float) * A);
    float* d_qkv = dev(qkv, sizeof(float) * N3);
    CudaSeg* d_segs = dev(cs, sizeof cs);
    int* d_seg_of = dev(seg_of, sizeof(int) * N);
    T->attention_forward(L, d_out, d_att, d_qkv, d_segs, d_seg_of, N, C, NH);
    check("attention_forward", "out", out, back(d_out, (size_t)N * C), (size_t)N * C, 1e-5);
    check("attention_forward", "att", att, back(d_att, A), A, 1e-5);

    float *dout = host_floats((size_t)N * C, 1.0f), *dqkv = host_floats(N3, 1.0f), *datt = host_floats(A, 0.0f);
    float* d_dqkv = dev(dqkv, sizeof(float) * N3);
    T->to_device(L, d_att, att, sizeof(float) * A); /* the CPU's weights on both sides */
    if (g_det) {
        long seg_att[NSEG];
        det_segment_offsets(seg_att, segs, NSEG, NH);
        attention_backward_det(dqkv, datt, dout, qkv, att, segs, seg_att, NSEG, C, NH);
    } else {
        attention_backward(dqkv, datt, dout, qkv, att, segs, NSEG, C, NH);
    }
    T->attention_backward(L, d_dqkv, T->alloc(L, sizeof(float) * A), dev(dout, sizeof(float) * N * C), d_qkv, d_att,
                          d_segs, dev(children, sizeof children), d_seg_of, N, C, NH);
    check("attention_backward", "dqkv", dqkv, back(d_dqkv, N3), N3, 1e-5);
    free(qkv), free(out), free(att), free(dout), free(dqkv), free(datt);
}

/* Decode attention against the training forward: the prompt's keys stored by kv_store_prefill,
 * each completion (and the own segment, no prompt) decoded one token per step, its keys stored
 * by kv_store_decode; row t's output is the training forward's at that token. */
static void test_decode(void) {
    enum { DSEG = 4, ROW_CTX = 8 };
    const int len[DSEG] = {5, 6, 4, 3}, prefix[DSEG] = {-1, 0, 0, -1};
    Segment segs[DSEG];
    int N = 0, C = CH, C3 = 3 * CH;
    for (int k = 0; k < DSEG; k++) {
        segs[k] = (Segment){.start = N, .len = len[k], .prefix = prefix[k]};
        N += len[k];
    }
    long A = packed_att_size(&(ModelShape){.n_head = NH}, &(PackedBatch){.n_segments = DSEG, .segs = segs});
    float *qkv = host_floats((size_t)N * C3, 1.0f), *out = host_floats((size_t)N * C, 0.0f), *att = host_floats(A, 0.0f);
    (g_det ? attention_forward_det : attention_forward)(out, att, qkv, segs, DSEG, C, NH);
    float* d_qkv = dev(qkv, sizeof(float) * N * C3);
    size_t pstride = (size_t)NCTX * C, rstride = (size_t)ROW_CTX * C;
    float *kp = T->alloc(L, sizeof(float) * pstride), *vp = T->alloc(L, sizeof(float) * pstride);
    float *kr = T->alloc(L, sizeof(float) * 3 * rstride), *vr = T->alloc(L, sizeof(float) * 3 * rstride);
    CudaSeg cs[1];
    int children[1], pos[ROWS], seg_of[ROWS];
    cuda_segment_table(cs, children, pos, seg_of, segs, 1, NH); /* the prompt alone, as a prefill batch */
    T->kv_store_prefill(L, kp, vp, d_qkv, dev(cs, sizeof cs), dev(seg_of, sizeof(int) * len[0]), len[0], C, pstride);
    float* y_ref = host_floats((size_t)N * C, 0.0f);
    float* y = host_floats((size_t)N * C, 0.0f);
    int n_rows = 0;
    for (int t = 0; t < ROW_CTX; t++) { /* step t: each live row decodes its token t */
        int rows[3], plen[3], pfx[3], p[3], n = 0;
        float q3[3 * 3 * CH];
        for (int k = 1; k < DSEG; k++) {
            if (t >= len[k]) continue;
            rows[n] = k - 1;
            pfx[n] = 0;
            plen[n] = prefix[k] >= 0 ? len[prefix[k]] : 0;
            p[n] = plen[n] + t;
            memcpy(q3 + (size_t)n * C3, qkv + (size_t)(segs[k].start + t) * C3, sizeof(float) * C3);
            memcpy(y_ref + (size_t)n_rows * C, out + (size_t)(segs[k].start + t) * C, sizeof(float) * C);
            n++, n_rows++;
        }
        if (!n) break;
        float* d_q3 = dev(q3, sizeof(float) * n * C3);
        float* d_y = T->alloc(L, sizeof(float) * n * C);
        int *d_rows = dev(rows, sizeof(int) * n), *d_plen = dev(plen, sizeof(int) * n), *d_pos = dev(p, sizeof(int) * n);
        T->kv_store_decode(L, kr, vr, d_q3, d_rows, d_plen, d_pos, n, C, rstride);
        T->decode_attention(L, d_y, d_q3, kp, vp, kr, vr, d_rows, dev(pfx, sizeof(int) * n), d_plen, d_pos, n, C, NH,
                            pstride, rstride, NCTX);
        T->to_host(L, y + (size_t)(n_rows - n) * C, d_y, sizeof(float) * n * C);
    }
    check("decode_attention", "y", y_ref, copy_of(y, (size_t)n_rows * C), (size_t)n_rows * C, 1e-5);
    free(qkv), free(out), free(att), free(y_ref), free(y);
}

static void test_elementwise(void) {
    size_t n = (size_t)ROWS * CH;
    float *inp = host_floats(n, 2.0f), *out = host_floats(n, 0.0f), *th = host_floats(n, 0.0f);
    float *d_out = T->alloc(L, sizeof(float) * n), *d_th = T->alloc(L, sizeof(float) * n), *d_inp = dev(inp, sizeof(float) * n);
    gelu_forward(out, th, inp, (int)n);
    T->gelu_forward(L, d_out, d_th, d_inp, n);
    check("gelu_forward", "out", out, back(d_out, n), n, 1e-5);
    check("gelu_forward", "tanh", th, back(d_th, n), n, 1e-5);
    float *dout = host_floats(n, 1.0f), *dinp = host_floats(n, 1.0f);
    float* d_dinp = dev(dinp, sizeof(float) * n);
    T->to_device(L, d_th, th, sizeof(float) * n);
    gelu_backward(dinp, inp, th, dout, (int)n);
    T->gelu_backward(L, d_dinp, d_inp, d_th, dev(dout, sizeof(float) * n), n);
    check("gelu_backward", "dinp", dinp, back(d_dinp, n), n, 0.0);
    residual_forward(out, inp, dout, (int)n);
    T->residual_forward(L, d_out, d_inp, dev(dout, sizeof(float) * n), n);
    check("residual_forward", "out", out, back(d_out, n), n, 0.0);
    free(inp), free(out), free(th), free(dout), free(dinp);
}

static void test_logprob(void) {
    int N = ROWS, V = VOCAB, targets[ROWS];
    size_t NV = (size_t)N * V;
    float scale = 1.0f / 0.9f; /* a sampling temperature */
    for (int n = 0; n < N; n++) targets[n] = n % 7 == 3 ? TOK_PAD % V : (int)rng_below(&R, V);
    int pad = TOK_PAD % V;
    float *logits = host_floats(NV, 3.0f), *lp = host_floats(N, 0.0f), *probs = host_floats(NV, 0.0f);
    logprob_forward(lp, probs, logits, targets, N, V, pad, scale, g_det);
    float *d_lp = T->alloc(L, sizeof(float) * N), *d_probs = T->alloc(L, sizeof(float) * NV);
    int* d_targets = dev(targets, sizeof targets);
    T->logprob_forward(L, d_lp, d_probs, dev(logits, sizeof(float) * NV), d_targets, N, V, pad, scale);
    check("logprob_forward", "logprobs", lp, back(d_lp, N), N, 1e-5);
    check("logprob_forward", "probs", probs, back(d_probs, NV), NV, 1e-5);
    float *dlp = host_floats(N, 1.0f), *dlogits = host_floats(NV, 0.0f);
    float* d_dlogits = T->alloc(L, sizeof(float) * NV);
    T->to_device(L, d_probs, probs, sizeof(float) * NV);
    logprob_backward(dlogits, dlp, probs, targets, N, V, pad, scale);
    T->logprob_backward(L, d_dlogits, dev(dlp, sizeof(float) * N), d_probs, d_targets, N, V, pad, scale);
    check("logprob_backward", "dlogits", dlogits, back(d_dlogits, NV), NV, 0.0);
    free(logits), free(lp), free(probs), free(dlp), free(dlogits);
}

/* AdamW (cpu_adamw's loop) at step 3, and the gradient norm's sum of squares (cpu_grad_norm's). */
static void test_optimizer(void) {
    size_t n = 10007;
    float *p = host_floats(n, 1.0f), *g = host_floats(n, 0.1f), *m = host_floats(n, 0.01f), *v = host_floats(n, 0.01f);
    for (size_t i = 0; i < n; i++) v[i] *= v[i]; /* a second moment is >= 0 */
    float *d_p = dev(p, sizeof(float) * n), *d_g = dev(g, sizeof(float) * n), *d_m = dev(m, sizeof(float) * n),
          *d_v = dev(v, sizeof(float) * n);
    AdamWConfig hp = {.lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.1f};
    float step_size, decay, bc2_sqrt, gs = 0.5f;
    adamw_scalars(&hp, 3, g_det, &step_size, &decay, &bc2_sqrt);
    for (size_t i = 0; i < n; i++)
        adamw_update(&p[i], &m[i], &v[i], g[i], hp.beta1, hp.beta2, hp.eps, gs, step_size, decay, bc2_sqrt);
    T->adamw(L, d_p, d_g, d_m, d_v, n, hp.beta1, hp.beta2, hp.eps, gs, step_size, decay, bc2_sqrt);
    check("adamw", "params", p, back(d_p, n), n, 0.0);
    check("adamw", "m", m, back(d_m, n), n, 0.0);
    check("adamw", "v", v, back(d_v, n), n, 0.0);

    double cpu = 0.0, gpu;
    if (g_det) {
        double chunks[DET_SUMSQ_CHUNKS];
        T->det_sumsq(L, chunks, d_g, n);
        gpu = 0.0;
        for (int k = 0; k < DET_SUMSQ_CHUNKS; k++) {
            cpu += det_sumsq_chunk(g, n, k);
            gpu += chunks[k];
        }
    } else {
        for (size_t i = 0; i < n; i++) cpu += (double)g[i] * g[i];
        gpu = T->sumsq(L, d_g, n);
    }
    double d = fabs(cpu - gpu);
    printf("  %-19s %-8s |diff| %-9.3g (cpu %.17g)%s\n", "sumsq", "total", d, cpu, g_det ? " bits" : "");
    EXPECT(g_det ? memcmp(&cpu, &gpu, sizeof cpu) == 0 : d <= 1e-12 * cpu, "sum of squares: cpu %.17g gpu %.17g", cpu,
           gpu);
    free(p), free(g), free(m), free(v);
}

int main(void) {
#ifndef SAPO_TEST_CUDA_EMULATION
    if (!cuda_backend_available()) {
        printf("skipped: no CUDA device is visible (cudaGetDeviceCount gives none)\n");
        return 77;
    }
#endif
    T = LAYERS;
    for (g_det = 0; g_det <= 1; g_det++) {
        R = rng_stream(41, 0, 0, RNG_TEST);
        L = T->create(g_det, ROWS, 72, NH, NCTX);
        printf("%s mode (max |gpu - cpu| per layer output)\n", g_det ? "deterministic" : "default");
        test_encoder();
        test_layernorm();
        test_matmul();
        test_attention();
        test_decode();
        test_elementwise();
        test_logprob();
        test_optimizer();
        T->destroy(L);
    }
    return test_finish("gpu layers");
}

#else
int main(void) {
    printf("skipped: this build has no CUDA backend (configure with -DSAPO_CUDA=ON where nvcc exists)\n");
    return 77;
}
#endif
