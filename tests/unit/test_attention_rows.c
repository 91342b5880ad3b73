/* The vector loops of model/attention_rows.h against sums in double, over head sizes that
 * take each path (16, 32, 64: specialised; 24, 128: the generic loop; 6: plain loops) and key
 * counts around the 8-key blocks; the queries' variants against those loops bit for bit (key
 * counts across their blocks); then a decode step's default attention (those loops)
 * against the deterministic mode's (det_attention.h) on the same cache, with grouped heads
 * and rows that share a prompt. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/attention_rows.h"
#include "model/cpu_layers.h"
#include "../test_assert.h"

static float frand(unsigned* s) {
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static float* random_floats(size_t n, unsigned* s) {
    float* x = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) x[i] = frand(s);
    return x;
}

static int close_to(double got, double want) { return fabs(got - want) <= 1e-5 * (1.0 + fabs(want)); }

static void check_loops(int hs, int n, long stride) {
    unsigned s = 7u * hs + 131u * n;
    float* q = random_floats(hs, &s);
    float* k = random_floats((size_t)(n + 1) * stride, &s);
    float* w = random_floats(n + 1, &s);
    float* out = malloc((n + 1) * sizeof(float));
    float* y = random_floats(hs, &s);
    double* y0 = malloc(hs * sizeof(double));
    for (int d = 0; d < hs; d++) y0[d] = y[d];
    out[n] = 12345.0f; /* past the keys: must stay */
    att_scores(out, q, k, stride, n, hs, 0.25f);
    int bad = 0;
    for (int j = 0; j < n; j++) {
        double want = 0.0;
        for (int d = 0; d < hs; d++) want += (double)q[d] * k[(long)j * stride + d];
        bad += !close_to(out[j], 0.25 * want);
    }
    EXPECT(bad == 0, "att_scores hs %d n %d stride %ld: %d scores off", hs, n, stride, bad);
    EXPECT(out[n] == 12345.0f, "att_scores hs %d n %d wrote past its keys", hs, n);
    att_weighted_add(y, w, k, stride, n, hs);
    bad = 0;
    for (int d = 0; d < hs; d++) {
        double want = y0[d];
        for (int j = 0; j < n; j++) want += (double)w[j] * k[(long)j * stride + d];
        bad += !close_to(y[d], want);
    }
    EXPECT(bad == 0, "att_weighted_add hs %d n %d stride %ld: %d outputs off", hs, n, stride, bad);
    free(q), free(k), free(w), free(out), free(y), free(y0);
}

/* nq queries over the same n keys: every score and every weighted sum has the bits of the
 * one-query loop's (the blocks must keep its groups of keys). */
static void check_queries(int hs, int n, long stride, int nq) {
    unsigned s = 5u * hs + 17u * n + 3u * nq;
    long ldq = 3L * hs + 1, ldo = n + 3, ldy = 2L * hs + 5;
    float* q = random_floats((size_t)nq * ldq, &s);
    float* k = random_floats((size_t)(n + 1) * stride, &s);
    float* w = random_floats((size_t)nq * ldo, &s);
    float* y = random_floats((size_t)nq * ldy, &s);
    float* y1 = malloc((size_t)nq * ldy * sizeof(float));
    float* out = calloc((size_t)nq * ldo, sizeof(float));
    float* out1 = calloc((size_t)nq * ldo, sizeof(float));
    float* acc = malloc((size_t)nq * hs * sizeof(float));
    memcpy(y1, y, (size_t)nq * ldy * sizeof(float));
    att_scores_queries(out, ldo, q, ldq, nq, k, stride, n, hs, 0.125f);
    att_weighted_add_queries(y, ldy, w, ldo, nq, k, stride, n, hs, acc);
    for (int i = 0; i < nq; i++) {
        att_scores(out1 + i * ldo, q + i * ldq, k, stride, n, hs, 0.125f);
        att_weighted_add(y1 + i * ldy, w + i * ldo, k, stride, n, hs);
    }
    EXPECT(memcmp(out, out1, (size_t)nq * ldo * sizeof(float)) == 0,
           "att_scores_queries hs %d n %d nq %d: scores differ from att_scores' bits", hs, n, nq);
    EXPECT(memcmp(y, y1, (size_t)nq * ldy * sizeof(float)) == 0,
           "att_weighted_add_queries hs %d n %d nq %d: sums differ from att_weighted_add's bits", hs, n, nq);
    free(q), free(k), free(w), free(y), free(y1), free(out), free(out1), free(acc);
}

/* Two prompts in the prefix cache; rows 0-2 read prompt 1, row 3 prompt 0, row 4 none. */
static void check_decode(int n_head, int n_kv, int hs) {
    AttnShape sh = {.n_head = n_head, .n_kv_head = n_kv, .head_dim = hs};
    int KD = n_kv * hs, QD = n_head * hs, R = QD + 2 * KD, T = 48, N = 5;
    unsigned s = 99u + hs;
    size_t prefix_slot = (size_t)T * KD, row_slot = (size_t)T * KD;
    float* kpre = random_floats(2 * prefix_slot, &s);
    float* vpre = random_floats(2 * prefix_slot, &s);
    float* krow = random_floats(N * row_slot, &s);
    float* vrow = random_floats(N * row_slot, &s);
    float* q3 = random_floats((size_t)N * R, &s);
    int rows[5] = {0, 1, 2, 3, 4}, prefix[5] = {1, 1, 1, 0, 0}, plen[5] = {37, 37, 37, 9, 0};
    int tokens[5] = {0}, pos[5] = {37 + 5, 37 + 0, 37 + 20, 9 + 3, 11};
    DecodeStep d = {.n = N, .rows = rows, .prefix = prefix, .prefix_len = plen, .tokens = tokens, .pos = pos};
    float* y_fast = calloc((size_t)N * QD, sizeof(float));
    float* y_det = calloc((size_t)N * QD, sizeof(float));
    float* scores = malloc((size_t)N * T * sizeof(float));
    decode_attention_all(y_fast, scores, q3, kpre, vpre, krow, vrow, &d, &sh, prefix_slot, row_slot, T, 0);
    decode_attention_all(y_det, scores, q3, kpre, vpre, krow, vrow, &d, &sh, prefix_slot, row_slot, T, 1);
    int bad = 0;
    for (int i = 0; i < N * QD; i++) bad += !close_to(y_fast[i], y_det[i]);
    EXPECT(bad == 0, "decode attention H%d/%d hs %d: %d of %d outputs differ from the deterministic mode's",
           n_head, n_kv, hs, bad, N * QD);
    free(kpre), free(vpre), free(krow), free(vrow), free(q3), free(y_fast), free(y_det), free(scores);
}

int main(void) {
    int sizes[] = {16, 32, 64, 24, 128, 6};
    int counts[] = {0, 1, 7, 8, 9, 16, 23, 100};
    for (int a = 0; a < 6; a++)
        for (int b = 0; b < 8; b++) {
            check_loops(sizes[a], counts[b], sizes[a]);
            check_loops(sizes[a], counts[b], 3L * sizes[a] + 4);
        }
    int long_counts[] = {0, 5, 64, 255, 256, 257, 300, 531};
    for (int a = 0; a < 6; a++)
        for (int b = 0; b < 8; b++) {
            check_queries(sizes[a], long_counts[b], sizes[a], 8);
            check_queries(sizes[a], long_counts[b], 3L * sizes[a] + 4, 3);
        }
    check_decode(4, 4, 16);
    check_decode(4, 4, 32);
    check_decode(8, 2, 64);
    check_decode(3, 1, 24);
    check_decode(2, 2, 6);
    return test_finish("test_attention_rows");
}
