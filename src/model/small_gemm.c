/* Few-row matrix products (see small_gemm.h): each weight row meets up to eight input rows at
 * once, eight lanes at a time (GCC vector extensions: SSE or AVX as -march allows), so each
 * weight vector loaded serves eight products and a decode step of eight completions streams
 * the weights from memory once, fetched ahead of the products. With more than eight rows, the
 * weights go in blocks that stay in cache while every group of eight rows passes over them.
 * Every row's sum runs in the same order whatever the number of rows (lanes over k, then the
 * lanes in order, then the tail), so a row's result does not depend on its neighbours.
 * Multiply-adds may be fused here (the build otherwise forbids contraction): this path serves
 * only the default numerics, never the deterministic mode. */
#include "model/small_gemm.h"

#include <string.h>

typedef float v8sf __attribute__((vector_size(32)));

#define SMALL_GEMM_FAST __attribute__((optimize("fp-contract=fast")))
#define ROWS_PER_PASS 8
/* Weight rows per block when more than ROWS_PER_PASS rows share it: ~32 KB of weights. */
#define BLOCK_BYTES (32 * 1024)
/* How far ahead of the products the weights are fetched: 2 KB (measured on a Zen 3 core:
 * 8 rows x SmolLM2's matrices went from ~4.4 to ~6 GB/s of weights; 0.5 to 1 KB helped less) */
#define PREFETCH_FLOATS (2048 / (int)sizeof(float))

static inline v8sf load8(const float* p) {
    v8sf v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline float hsum(v8sf v) {
    float s = 0.0f;
    for (int i = 0; i < 8; i++) s += v[i];
    return s;
}

/* out[r * OC] = b + dot(x + r * IC, w) for r < R (R = 1..8). Inlined with R a constant, so
 * the unused accumulators vanish. */
SMALL_GEMM_FAST __attribute__((always_inline)) static inline void dots(float* out, int OC, const float* x, int IC,
                                                                        const float* w, int R, float b) {
    v8sf a[ROWS_PER_PASS] = {{0}};
    int k = 0;
    for (; k + 8 <= IC; k += 8) {
        /* the weights stream from memory once: ask for them early, so that the loads overlap
         * the products instead of following them (a prefetch past the end is harmless) */
        __builtin_prefetch(w + k + PREFETCH_FLOATS);
        v8sf wv = load8(w + k);
        for (int r = 0; r < R; r++) a[r] += load8(x + (size_t)r * IC + k) * wv;
    }
    for (int r = 0; r < R; r++) {
        float s = hsum(a[r]);
        for (int t = k; t < IC; t++) s += x[(size_t)r * IC + t] * w[t];
        out[(size_t)r * OC] = b + s;
    }
}

/* Rows [0, R) of x against weight rows [o0, o1). */
SMALL_GEMM_FAST __attribute__((always_inline)) static inline void rows_by_block(float* out, const float* x,
                                                                                 const float* w, const float* bias,
                                                                                 int R, int IC, int OC, int o0,
                                                                                 int o1) {
    for (int o = o0; o < o1; o++) dots(out + o, OC, x, IC, w + (size_t)o * IC, R, bias ? bias[o] : 0.0f);
}

SMALL_GEMM_FAST static void group_by_block(float* out, const float* x, const float* w, const float* bias, int R,
                                           int IC, int OC, int o0, int o1) {
    switch (R) { /* a constant R for each copy of the loop */
    case 1: rows_by_block(out, x, w, bias, 1, IC, OC, o0, o1); break;
    case 2: rows_by_block(out, x, w, bias, 2, IC, OC, o0, o1); break;
    case 3: rows_by_block(out, x, w, bias, 3, IC, OC, o0, o1); break;
    case 4: rows_by_block(out, x, w, bias, 4, IC, OC, o0, o1); break;
    case 5: rows_by_block(out, x, w, bias, 5, IC, OC, o0, o1); break;
    case 6: rows_by_block(out, x, w, bias, 6, IC, OC, o0, o1); break;
    case 7: rows_by_block(out, x, w, bias, 7, IC, OC, o0, o1); break;
    default: rows_by_block(out, x, w, bias, 8, IC, OC, o0, o1); break;
    }
}

void small_gemm(float* out, const float* inp, const float* w, const float* bias, int M, int IC, int OC) {
    int block = M <= ROWS_PER_PASS ? OC : (int)(BLOCK_BYTES / ((size_t)IC * sizeof(float)));
    if (block < 1) block = 1;
    for (int o0 = 0; o0 < OC; o0 += block) {
        int o1 = OC - o0 < block ? OC : o0 + block;
        for (int m0 = 0; m0 < M; m0 += ROWS_PER_PASS) {
            int R = M - m0 < ROWS_PER_PASS ? M - m0 : ROWS_PER_PASS;
            group_by_block(out + (size_t)m0 * OC, inp + (size_t)m0 * IC, w, bias, R, IC, OC, o0, o1);
        }
    }
}
