/* The CPU reference layers, forward and backward, on row-major float arrays. Shapes use
 * N = rows (batch x time), C = channels. Backward functions accumulate (+=) into the
 * gradients of parameters and inputs, as the chain rule sums over uses. */
#ifndef SAPO_MODEL_CPU_LAYERS_H
#define SAPO_MODEL_CPU_LAYERS_H

#include "model/model.h"

#include <stdint.h>
#include <string.h>

#include "model/det_math.h" /* exp_poly, softmax_row, layernorm_row, gelu_value: shared with the CUDA kernels */

/* out (N,C) = wte[inp[i]] + wpe[pos[i]] */
void encoder_forward(float* out, const int* inp, const int* pos, const float* wte, const float* wpe, int N, int C);
void encoder_backward(float* dwte, float* dwpe, const float* dout, const int* inp, const int* pos, int N, int C);
/* pos[i] of every token of a packed batch: its prefix's length plus its index in its segment. */
void packed_positions(int* pos, const Segment* segs, int n_segs);

/* LayerNorm over C with eps 1e-5; saves mean and 1/std per row for the backward pass. */
void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* w, const float* b, int N, int C);
void layernorm_backward(float* dinp, float* dw, float* db, const float* dout, const float* inp, const float* w,
                        const float* mean, const float* rstd, int N, int C);

/* out (N, OC) = inp (N, IC) @ w^T + bias, w is (OC, IC); bias may be NULL. sgemm, or with det
 * the deterministic det_gemm (det_matmul.h; bias first, then the product added once). */
void matmul_forward(float* out, const float* inp, const float* w, const float* bias, int N, int IC, int OC, int det);
/* With det the bias gradient is det_colsum_add's column sum added once. */
void matmul_backward(float* dinp, float* dw, float* dbias, const float* dout, const float* inp, const float* w,
                     int N, int IC, int OC, int det);

/* The byte-level GPT's: NH heads of C / NH channels, no grouping. */
AttnShape attn_shape_mha(int C, int NH);

/* Causal multi-head self-attention over a packed batch's segments (see PackedBatch in gpt.h).
 * qkv (N,3C) holds q,k,v; out (N,C). att keeps the softmax for the backward pass: for each
 * segment in order and each head, its (len, prefix len + len) weights, packed end to end
 * (packed_att_size floats in all). A completion's queries read its prompt's keys
 * and values, so the prompt is computed once per group. */
void attention_forward(float* out, float* att, const float* qkv, const Segment* segs, int n_segs, int C, int NH);
/* datt_scratch holds one segment's (len, prefix len + len) weights. dqkv is accumulated:
 * a prompt's key and value gradients sum over every completion that read them. */
void attention_backward(float* dqkv, float* datt_scratch, const float* dout, const float* qkv, const float* att,
                        const Segment* segs, int n_segs, int C, int NH);
/* The deterministic mode's attention (det_attention.h, the CUDA kernels' own functions): the
 * same outputs and layout, one query or key at a time in a fixed order. The backward pass
 * keeps every score gradient, so datt holds one layer's weights (packed_att_size floats);
 * seg_att[s] is segment s's offset in att (n_segs entries, det_segment_offsets). */
void attention_forward_det(float* out, float* att, const float* qkv, const Segment* segs, int n_segs, int C, int NH);
void attention_backward_det(float* dqkv, float* datt, const float* dout, const float* qkv, const float* att,
                            const Segment* segs, const long* seg_att, int n_segs, int C, int NH);
void det_segment_offsets(long* seg_att, const Segment* segs, int n_segs, int NH);
/* The four attentions above for any AttnShape (the functions above are these with
 * attn_shape_mha: the same arithmetic in the same order). */
void attention_forward_gqa(float* out, float* att, const float* qkv, const Segment* segs, int n_segs,
                           const AttnShape* sh);
void attention_backward_gqa(float* dqkv, float* datt, const float* dout, const float* qkv, const float* att,
                            const Segment* segs, int n_segs, const AttnShape* sh);
void attention_forward_det_gqa(float* out, float* att, const float* qkv, const Segment* segs, int n_segs,
                               const AttnShape* sh);
void attention_backward_det_gqa(float* dqkv, float* datt, const float* dout, const float* qkv, const float* att,
                                const Segment* segs, const long* seg_att, int n_segs, const AttnShape* sh);

/* Decode attention of rows [i0, i1) of d, which share one prompt cache (kp, vp: its slot, a
 * position every n_kv_head * head_dim floats, as the rows' own caches krow, vrow with row_slot
 * floats a row): y (n, n_head * head_dim) from the queries in q3 (n, fused rows). In vector
 * loops (attention_rows.h): the prompt's keys and values block by block for all the rows at
 * once, then each row's own; scores holds (i1 - i0, T).
 * det: det_attend_query, query for query. */
void decode_attention_rows(float* y, float* scores, const float* q3, const float* kp, const float* vp,
                           const float* krow, const float* vrow, const DecodeStep* d, int i0, int i1,
                           const AttnShape* sh, size_t row_slot, int T, int det);

/* decode_attention_rows over every run of adjacent rows of d that read the same prompt
 * cache (slot prefix[i] of kprefix / vprefix, prefix_slot floats a slot). */
void decode_attention_all(float* y, float* scores, const float* q3, const float* kprefix, const float* vprefix,
                          const float* krow, const float* vrow, const DecodeStep* d, const AttnShape* sh,
                          size_t prefix_slot, size_t row_slot, int T, int det);

/* GELU, tanh approximation (GPT-2's). The forward keeps the tanh values (th, N floats) for
 * the backward pass. */
void gelu_forward(float* out, float* th, const float* inp, int N);
void gelu_backward(float* dinp, const float* inp, const float* th, const float* dout, int N);

void residual_forward(float* out, const float* a, const float* b, int N);

/* row[0..n) = softmax(row[0..n)) in place; returns log(sum(exp(row))) of the input (the
 * log-partition, for log-probs): libm's logf, or with det log_det (det_math.h). */
float softmax_inplace(float* row, int n);
float softmax_inplace_det(float* row, int n);

/* logprobs[i] = log softmax(scale * logits[i])[targets[i]] for rows with targets[i] != pad
 * (else 0); probs (N, V) keeps the softmax. */
void logprob_forward(float* logprobs, float* probs, const float* logits, const int* targets, int N, int V, int pad,
                     float scale, int det);
/* dlogits (N, V) = scale * dlogprobs[i] * (onehot(target) - probs). Overwrites dlogits. */
void logprob_backward(float* dlogits, const float* dlogprobs, const float* probs, const int* targets, int N, int V,
                      int pad, float scale);

#endif
