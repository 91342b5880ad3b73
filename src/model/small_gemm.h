/* Matrix products of a few rows by a large weight matrix, the shape of a decode step (one
 * token per row, up to a few dozen rows): out (M, OC) = inp (M, IC) @ w^T + bias, w (OC, IC).
 * sgemm repacks the whole weight matrix on every call, which for a handful of rows costs more
 * than the products (measured on SmolLM2's decode: two thirds of the time); here each weight
 * row is read once and meets every input row while it sits in cache. Sums run in a fixed order
 * of our own, so results differ from sgemm's in the last bits (not used in the deterministic
 * mode, which has det_gemm). */
#ifndef SAPO_MODEL_SMALL_GEMM_H
#define SAPO_MODEL_SMALL_GEMM_H

/* Rows a call handles well; above it sgemm's packing pays for itself. */
#define SMALL_GEMM_MAX_ROWS 32

void small_gemm(float* out, const float* inp, const float* w, const float* bias, int M, int IC, int OC);

#endif
