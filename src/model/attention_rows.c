/* attention_rows.c (see attention_rows.h): a score is one query's dot product with a key,
 * 8 keys at a time (8 accumulators, reduced together by a horizontal-add tree); a weighted
 * sum streams the values with independent accumulators. The queries' variants run the same
 * loops block by block of keys, so that a block is read from memory once for all the rows.
 * Specialised for head sizes 16, 32 and 64 (the byte GPTs' and most Llama-family heads), any
 * multiple of 8 in the generic loop, plain loops for the rest and for builds without
 * AVX2 + FMA. */
#include "model/attention_rows.h"

#include <stddef.h>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define ATT_INLINE static inline __attribute__((always_inline))

/* The 8 lanes of each of a[0..7] summed: lane u of the result is the sum of a[u]. */
ATT_INLINE __m256 sum8x8(const __m256 a[8]) {
    __m256 s01 = _mm256_hadd_ps(a[0], a[1]), s23 = _mm256_hadd_ps(a[2], a[3]);
    __m256 s45 = _mm256_hadd_ps(a[4], a[5]), s67 = _mm256_hadd_ps(a[6], a[7]);
    __m256 s0123 = _mm256_hadd_ps(s01, s23), s4567 = _mm256_hadd_ps(s45, s67);
    __m256 lo = _mm256_permute2f128_ps(s0123, s4567, 0x20);
    __m256 hi = _mm256_permute2f128_ps(s0123, s4567, 0x31);
    return _mm256_add_ps(lo, hi);
}

ATT_INLINE float sum8(__m256 a) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

ATT_INLINE void scores_avx(float* out, const float* q, const float* k, long stride, int n, int hs, float scale) {
    int nc = hs / 8, j = 0;
    __m256 qv[16];
    for (int c = 0; c < nc; c++) qv[c] = _mm256_loadu_ps(q + 8 * c);
    __m256 sc = _mm256_set1_ps(scale);
    for (; j + 8 <= n; j += 8) {
        __m256 acc[8];
        for (int u = 0; u < 8; u++) {
            const float* kj = k + (long)(j + u) * stride;
            acc[u] = _mm256_mul_ps(qv[0], _mm256_loadu_ps(kj));
            for (int c = 1; c < nc; c++) acc[u] = _mm256_fmadd_ps(qv[c], _mm256_loadu_ps(kj + 8 * c), acc[u]);
        }
        _mm256_storeu_ps(out + j, _mm256_mul_ps(sc, sum8x8(acc)));
    }
    for (; j < n; j++) {
        const float* kj = k + (long)j * stride;
        __m256 acc = _mm256_mul_ps(qv[0], _mm256_loadu_ps(kj));
        for (int c = 1; c < nc; c++) acc = _mm256_fmadd_ps(qv[c], _mm256_loadu_ps(kj + 8 * c), acc);
        out[j] = scale * sum8(acc);
    }
}

/* Values j < n into two sets of accumulators, two keys a step (the FMA chains' latency, not
 * the loads, would bound one set): a (even j, and an odd last one), which starts from y, and b
 * (odd j). A run of values split into blocks of even length gives the bits of one call: the
 * first block starts b at zero, the others load it from b_mem, where every block but the last
 * leaves it (and a in y); the last ends with y = a + b. One call is first and last: it never
 * touches b_mem. */
ATT_INLINE void wsum_avx(float* y, float* b_mem, const float* w, const float* v, long stride, int n, int hs,
                         int first, int last) {
    int nc = hs / 8, j = 0;
    __m256 a[16], b[16];
    for (int c = 0; c < nc; c++) {
        a[c] = _mm256_loadu_ps(y + 8 * c);
        b[c] = first ? _mm256_setzero_ps() : _mm256_loadu_ps(b_mem + 8 * c);
    }
    for (; j + 2 <= n; j += 2) {
        __m256 w0 = _mm256_set1_ps(w[j]), w1 = _mm256_set1_ps(w[j + 1]);
        const float *v0 = v + (long)j * stride, *v1 = v0 + stride;
        for (int c = 0; c < nc; c++) {
            a[c] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(v0 + 8 * c), a[c]);
            b[c] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(v1 + 8 * c), b[c]);
        }
    }
    if (j < n) {
        __m256 w0 = _mm256_set1_ps(w[j]);
        const float* v0 = v + (long)j * stride;
        for (int c = 0; c < nc; c++) a[c] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(v0 + 8 * c), a[c]);
    }
    for (int c = 0; c < nc; c++) {
        if (last) {
            _mm256_storeu_ps(y + 8 * c, _mm256_add_ps(a[c], b[c]));
        } else {
            _mm256_storeu_ps(y + 8 * c, a[c]);
            _mm256_storeu_ps(b_mem + 8 * c, b[c]);
        }
    }
}

#define ATT_VECTOR(hs) ((hs) % 8 == 0 && (hs) <= 128)
#else
#define ATT_VECTOR(hs) 0
#endif

static void scores_plain(float* out, const float* q, const float* k, long stride, int n, int hs, float scale) {
    for (int j = 0; j < n; j++) {
        const float* kj = k + (long)j * stride;
        float acc = 0.0f;
        for (int d = 0; d < hs; d++) acc += q[d] * kj[d];
        out[j] = scale * acc;
    }
}

static void wsum_plain(float* y, const float* w, const float* v, long stride, int n, int hs) {
    for (int j = 0; j < n; j++) {
        const float* vj = v + (long)j * stride;
        for (int d = 0; d < hs; d++) y[d] += w[j] * vj[d];
    }
}

void att_scores(float* out, const float* q, const float* k, long stride, int n, int hs, float scale) {
#if defined(__AVX2__) && defined(__FMA__)
    switch (hs) { /* constant head sizes: the loops over a head's 8-float chunks unroll */
        case 16: scores_avx(out, q, k, stride, n, 16, scale); return;
        case 32: scores_avx(out, q, k, stride, n, 32, scale); return;
        case 64: scores_avx(out, q, k, stride, n, 64, scale); return;
        default:
            if (ATT_VECTOR(hs)) {
                scores_avx(out, q, k, stride, n, hs, scale);
                return;
            }
    }
#endif
    scores_plain(out, q, k, stride, n, hs, scale);
}

/* att_weighted_add over one block of a run (wsum_avx's first and last); the plain loops add
 * into y alone and leave b alone. */
static void wsum_block(float* y, float* b, const float* w, const float* v, long stride, int n, int hs, int first,
                       int last) {
#if defined(__AVX2__) && defined(__FMA__)
    switch (hs) { /* constant head sizes: the loops over a head's 8-float chunks unroll */
        case 16: wsum_avx(y, b, w, v, stride, n, 16, first, last); return;
        case 32: wsum_avx(y, b, w, v, stride, n, 32, first, last); return;
        case 64: wsum_avx(y, b, w, v, stride, n, 64, first, last); return;
        default:
            if (ATT_VECTOR(hs)) {
                wsum_avx(y, b, w, v, stride, n, hs, first, last);
                return;
            }
    }
#else
    (void)b, (void)first, (void)last;
#endif
    wsum_plain(y, w, v, stride, n, hs);
}

void att_weighted_add(float* y, const float* w, const float* v, long stride, int n, int hs) {
    wsum_block(y, NULL, w, v, stride, n, hs, 1, 1);
}

/* Keys per block of the queries' loops: about 16 KB of one head's keys, a multiple of 8, so
 * that the blocks keep att_scores' groups of 8 keys and att_weighted_add's pairs. */
static int keys_per_block(int hs) {
    int kb = 4096 / (hs > 0 ? hs : 1);
    kb -= kb % 8;
    return kb < 8 ? 8 : kb;
}

void att_scores_queries(float* out, long ldo, const float* q, long ldq, int nq, const float* k, long stride, int n,
                        int hs, float scale) {
    int kb = keys_per_block(hs);
    for (int j0 = 0; j0 < n; j0 += kb) {
        int m = n - j0 < kb ? n - j0 : kb;
        for (int i = 0; i < nq; i++)
            att_scores(out + i * ldo + j0, q + i * ldq, k + (long)j0 * stride, stride, m, hs, scale);
    }
}

void att_weighted_add_queries(float* y, long ldy, const float* w, long ldw, int nq, const float* v, long stride, int n,
                              int hs, float* acc) {
    int kb = keys_per_block(hs), j0 = 0;
    do { /* no values still ends each sum as att_weighted_add does */
        int m = n - j0 < kb ? n - j0 : kb;
        for (int i = 0; i < nq; i++)
            wsum_block(y + i * ldy, acc + (size_t)i * hs, w + i * ldw + j0, v + (long)j0 * stride, stride, m, hs,
                       j0 == 0, j0 + m >= n);
    } while ((j0 += kb) < n);
}
