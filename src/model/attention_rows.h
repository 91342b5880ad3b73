/* One query's attention over a run of keys, in vector loops (AVX2 + FMA where the build has
 * them, plain loops otherwise): what a decode step does per row and head, where the keys are
 * few and an sgemm call would spend more on packing than on the products. Keys and values are
 * addressed as base + j * stride (hs floats each, contiguous). The sums run in an order of
 * their own, so results differ from sgemm's and from det_attention.h's in the last bits (not
 * used in the deterministic mode). */
#ifndef SAPO_MODEL_ATTENTION_ROWS_H
#define SAPO_MODEL_ATTENTION_ROWS_H

/* out[j] = scale * dot(q, k_j) for j < n. */
void att_scores(float* out, const float* q, const float* k, long stride, int n, int hs, float scale);

/* y[d] += sum_{j < n} w[j] v_j[d] for d < hs. */
void att_weighted_add(float* y, const float* w, const float* v, long stride, int n, int hs);

/* dst (n, hs), contiguous = the n keys (or values) at src + j * stride. */
void att_gather_rows(float* dst, const float* src, long stride, int n, int hs);

#endif
