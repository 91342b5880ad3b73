/* The deterministic matrix product on the CPU (see det_matmul.h for the arithmetic it must
 * keep). op(B) is packed, NB columns at a time, into a (K, NB) panel; each MR x NR block of C
 * keeps its MR * NR accumulators in registers while k streams from 0 to K-1, so every element
 * is the single fmaf chain the header defines, whatever the blocking: the compiler vectorizes
 * the NR-wide inner loop into FMA lanes (with -march=x86-64-v3; libm's fmaf otherwise).
 * Single-threaded: one rank, one core, like the OpenBLAS path. */
#include "model/det_matmul.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define DET_SIMD 1 /* _mm256_fmadd_ps: eight fmaf at once, each rounded once like fmaf */
#endif

enum { MR = 6, NR = 16, NB = 128, KB = 256 };

/* Packing buffers, grown to the largest product seen: the (KB, NB) panel of op(B), and for K
 * beyond KB the accumulators of one column block between k blocks (a float stored and loaded
 * back is exact, so blocking k keeps each element's single chain). */
static _Thread_local float *panel, *accbuf;
static _Thread_local size_t accbuf_cap;

static float* buf_get(float** buf, size_t* cap, size_t n) {
    if (n > *cap) {
        free(*buf);
        *buf = mallocCheck(n * sizeof(float));
        *cap = n;
    }
    return *buf;
}

static inline float store(float c, float acc, float alpha, float beta) {
    float r = alpha * acc;
    return beta != 0.0f ? c + r : r;
}

/* Where a block's accumulators start (acc_in: NULL = zero) and go: to acc_out (NULL = C, the
 * last k block, through store()). Rows r of op(A) start at a[r] and step astep per k. */
typedef struct {
    const float* acc_in;
    float* acc_out;
    int ld_acc;
    float alpha, beta;
    float* c;
    int ldc;
} BlockOut;

static void kernel_full(const float* const a[MR], long astep, const float* bp, int K, const BlockOut* o) {
    float out[MR][NR];
#ifdef DET_SIMD
    __m256 acc[MR][2];
    for (int r = 0; r < MR; r++) {
        if (o->acc_in) {
            acc[r][0] = _mm256_loadu_ps(o->acc_in + (size_t)r * o->ld_acc);
            acc[r][1] = _mm256_loadu_ps(o->acc_in + (size_t)r * o->ld_acc + 8);
        } else {
            acc[r][0] = acc[r][1] = _mm256_setzero_ps();
        }
    }
    for (int k = 0; k < K; k++) {
        const float* b = bp + (size_t)k * NB;
        __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
        for (int r = 0; r < MR; r++) {
            __m256 av = _mm256_set1_ps(a[r][(long)k * astep]);
            acc[r][0] = _mm256_fmadd_ps(av, b0, acc[r][0]);
            acc[r][1] = _mm256_fmadd_ps(av, b1, acc[r][1]);
        }
    }
    for (int r = 0; r < MR; r++) {
        _mm256_storeu_ps(out[r], acc[r][0]);
        _mm256_storeu_ps(out[r] + 8, acc[r][1]);
    }
#else
    for (int r = 0; r < MR; r++)
        for (int u = 0; u < NR; u++) out[r][u] = o->acc_in ? o->acc_in[(size_t)r * o->ld_acc + u] : 0.0f;
    for (int k = 0; k < K; k++) {
        const float* b = bp + (size_t)k * NB;
        for (int r = 0; r < MR; r++) {
            float av = a[r][(long)k * astep];
            for (int u = 0; u < NR; u++) out[r][u] = fmaf(av, b[u], out[r][u]);
        }
    }
#endif
    for (int r = 0; r < MR; r++)
        for (int u = 0; u < NR; u++) {
            if (o->acc_out)
                o->acc_out[(size_t)r * o->ld_acc + u] = out[r][u];
            else
                o->c[(size_t)r * o->ldc + u] = store(o->c[(size_t)r * o->ldc + u], out[r][u], o->alpha, o->beta);
        }
}

/* Any block of mr <= MR rows and nr <= NR columns: the same chains, one at a time. */
static void kernel_edge(const float* const a[MR], long astep, int mr, const float* bp, int nr, int K,
                        const BlockOut* o) {
    for (int r = 0; r < mr; r++)
        for (int u = 0; u < nr; u++) {
            float acc = o->acc_in ? o->acc_in[(size_t)r * o->ld_acc + u] : 0.0f;
            for (int k = 0; k < K; k++) acc = fmaf(a[r][(long)k * astep], bp[(size_t)k * NB + u], acc);
            if (o->acc_out)
                o->acc_out[(size_t)r * o->ld_acc + u] = acc;
            else
                o->c[(size_t)r * o->ldc + u] = store(o->c[(size_t)r * o->ldc + u], acc, o->alpha, o->beta);
        }
}

void det_gemm(int ta, int tb, int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
              float beta, float* C, int ldc) {
    static _Thread_local size_t panel_cap;
    if (beta != 0.0f && beta != 1.0f) sapo_die("det_gemm: beta must be 0 or 1, not %g", beta);
    if (M <= 0 || N <= 0) return;
    float* bp = buf_get(&panel, &panel_cap, (size_t)KB * NB);
    float* acc = K > KB ? buf_get(&accbuf, &accbuf_cap, (size_t)M * NB) : NULL;
    /* op(A)[i][k] = A[i * lda + k] (ta = 0) or A[k * lda + i] */
    long astep = ta ? lda : 1;
    for (int j0 = 0; j0 < N; j0 += NB) {
        int nb = N - j0 < NB ? N - j0 : NB;
        for (int k0 = 0; k0 < K || k0 == 0; k0 += KB) {
            int kb = K - k0 < KB ? K - k0 : KB, last = k0 + KB >= K;
            for (int k = 0; k < kb; k++) {
                float* dst = bp + (size_t)k * NB;
                if (tb)
                    for (int u = 0; u < nb; u++) dst[u] = B[(size_t)(j0 + u) * ldb + k0 + k];
                else
                    memcpy(dst, B + (size_t)(k0 + k) * ldb + j0, (size_t)nb * sizeof(float));
            }
            for (int i0 = 0; i0 < M; i0 += MR) {
                int mr = M - i0 < MR ? M - i0 : MR;
                const float* a[MR];
                for (int r = 0; r < MR; r++) {
                    int i = i0 + (r < mr ? r : 0);
                    a[r] = (ta ? A + i : A + (size_t)i * lda) + (long)k0 * astep;
                }
                for (int u0 = 0; u0 < nb; u0 += NR) {
                    int nr = nb - u0 < NR ? nb - u0 : NR;
                    float* blk = acc ? acc + (size_t)i0 * NB + u0 : NULL;
                    BlockOut o = {.acc_in = k0 > 0 ? blk : NULL, .acc_out = last ? NULL : blk, .ld_acc = NB,
                                  .alpha = alpha, .beta = beta, .c = C + (size_t)i0 * ldc + j0 + u0, .ldc = ldc};
                    if (mr == MR && nr == NR)
                        kernel_full(a, astep, bp + u0, kb, &o);
                    else
                        kernel_edge(a, astep, mr, bp + u0, nr, kb, &o);
                }
            }
        }
    }
}

void det_colsum_add(float* dst, const float* X, int M, int N, int ldx) {
    enum { W = 64 };
    for (int j0 = 0; j0 < N; j0 += W) {
        int w = N - j0 < W ? N - j0 : W;
        float acc[W];
        for (int u = 0; u < w; u++) acc[u] = 0.0f;
        for (int i = 0; i < M; i++) {
            const float* x = X + (size_t)i * ldx + j0;
            for (int u = 0; u < w; u++) acc[u] = acc[u] + x[u];
        }
        for (int u = 0; u < w; u++) dst[j0 + u] = dst[j0 + u] + acc[u];
    }
}
