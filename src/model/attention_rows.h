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

/* The same for nq queries that read the same keys (the rows of a group over their prompt):
 * out[i * ldo + j] = scale * dot(q + i * ldq, k_j). The keys are read in blocks that stay in
 * the L1 cache across the queries; each score has exactly the bits att_scores gives it. */
void att_scores_queries(float* out, long ldo, const float* q, long ldq, int nq, const float* k, long stride, int n,
                        int hs, float scale);

/* y_i[d] += sum_{j < n} w_i[j] v_j[d] for nq queries, y_i = y + i * ldy and w_i = w + i * ldw,
 * block by block of values as att_scores_queries; each y_i has exactly the bits
 * att_weighted_add gives it. acc: scratch of nq * hs floats. */
void att_weighted_add_queries(float* y, long ldy, const float* w, long ldw, int nq, const float* v, long stride, int n,
                              int hs, float* acc);

#endif
