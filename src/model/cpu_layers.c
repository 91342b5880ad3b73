/* CPU reference layers (see cpu_layers.h): plain loops for the element-wise work, OpenBLAS
 * sgemm for every matrix product, including attention's per-head products. With det (the
 * deterministic mode) the products go through det_gemm and attention through
 * det_attention.h instead, and no libm transcendental function is called. */
#include "model/cpu_layers.h"

#include <cblas.h>

#include "model/attention_rows.h"
#include "model/det_attention.h"
#include "model/det_matmul.h"
#include "model/product_profile.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"

/* Every BLAS product of the model goes through here, so that the benchmarks can see where
 * the products' time goes (model/product_profile.h). */
static void blas_product(ProductKind kind, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N, int K, float alpha,
                         const float* A, int lda, const float* B, int ldb, float beta, float* C, int ldc) {
    double t0 = product_profile_start();
    cblas_sgemm(CblasRowMajor, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    product_profile_add(kind, t0, 2.0 * M * N * K);
}

/* Attention's per-head products. */
static void sgemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N, int K, float alpha, const float* A, int lda,
                  const float* B, int ldb, float beta, float* C, int ldc) {
    blas_product(PRODUCT_ATTENTION, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

/* The model's linear layers: sgemm, or det_gemm in the deterministic mode (profiled alike). */
static void gemm(int det, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N, int K, const float* A, int lda,
                 const float* B, int ldb, float beta, float* C, int ldc) {
    if (!det) {
        blas_product(PRODUCT_LINEAR, ta, tb, M, N, K, 1.0f, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    double t0 = product_profile_start();
    det_gemm(ta == CblasTrans, tb == CblasTrans, M, N, K, 1.0f, A, lda, B, ldb, beta, C, ldc);
    product_profile_add(PRODUCT_LINEAR, t0, 2.0 * M * N * K);
}

void encoder_forward(float* out, const int* inp, const int* pos, const float* wte, const float* wpe, int N, int C) {
    for (int n = 0; n < N; n++) {
        float* o = out + (size_t)n * C;
        const float* we = wte + (size_t)inp[n] * C;
        const float* pe = wpe + (size_t)pos[n] * C;
        for (int i = 0; i < C; i++) o[i] = we[i] + pe[i];
    }
}

void encoder_backward(float* dwte, float* dwpe, const float* dout, const int* inp, const int* pos, int N, int C) {
    for (int n = 0; n < N; n++) {
        const float* d = dout + (size_t)n * C;
        float* dwe = dwte + (size_t)inp[n] * C;
        float* dpe = dwpe + (size_t)pos[n] * C;
        for (int i = 0; i < C; i++) {
            dwe[i] += d[i];
            dpe[i] += d[i];
        }
    }
}

void packed_positions(int* pos, const Segment* segs, int n_segs) {
    for (int s = 0; s < n_segs; s++) {
        int first = segs[s].prefix >= 0 ? segs[segs[s].prefix].len : 0;
        for (int i = 0; i < segs[s].len; i++) pos[segs[s].start + i] = first + i;
    }
}

void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* w, const float* b, int N, int C) {
    for (int n = 0; n < N; n++) layernorm_row(out + (size_t)n * C, &mean[n], &rstd[n], inp + (size_t)n * C, w, b, C);
}

void layernorm_backward(float* dinp, float* dw, float* db, const float* dout, const float* inp, const float* w,
                        const float* mean, const float* rstd, int N, int C) {
    for (int n = 0; n < N; n++) {
        const float* d = dout + (size_t)n * C;
        const float* x = inp + (size_t)n * C;
        layernorm_row_dinp(dinp + (size_t)n * C, d, x, w, mean[n], rstd[n], C);
        for (int i = 0; i < C; i++) layernorm_param_grad(&dw[i], &db[i], d[i], x[i], mean[n], rstd[n]);
    }
}

void matmul_forward(float* out, const float* inp, const float* w, const float* bias, int N, int IC, int OC, int det) {
    if (bias) {
        for (int n = 0; n < N; n++) memcpy(out + (size_t)n * OC, bias, (size_t)OC * sizeof(float));
    }
    gemm(det, CblasNoTrans, CblasTrans, N, OC, IC, inp, IC, w, IC, bias ? 1.0f : 0.0f, out, OC);
}

void matmul_backward(float* dinp, float* dw, float* dbias, const float* dout, const float* inp, const float* w,
                     int N, int IC, int OC, int det) {
    /* dinp (N, IC) += dout (N, OC) @ w (OC, IC) */
    gemm(det, CblasNoTrans, CblasNoTrans, N, IC, OC, dout, OC, w, IC, 1.0f, dinp, IC);
    /* dw (OC, IC) += dout^T (OC, N) @ inp (N, IC) */
    gemm(det, CblasTrans, CblasNoTrans, OC, IC, N, dout, OC, inp, IC, 1.0f, dw, IC);
    if (dbias && det) {
        det_colsum_add(dbias, dout, N, OC, OC);
    } else if (dbias) {
        for (int n = 0; n < N; n++) {
            const float* d = dout + (size_t)n * OC;
            for (int o = 0; o < OC; o++) dbias[o] += d[o];
        }
    }
}

/* Row t of a (n, ctx) score block attends to columns 0..plen + t: softmax over those, zero
 * after. */
static void causal_softmax_rows(float* a, int n, int ctx, int plen) {
    for (int t = 0; t < n; t++) {
        float* row = a + (size_t)t * ctx;
        int last = plen + t;
        softmax_inplace(row, last + 1);
        for (int j = last + 1; j < ctx; j++) row[j] = 0.0f;
    }
}

AttnShape attn_shape_mha(int C, int NH) { return (AttnShape){.n_head = NH, .n_kv_head = NH, .head_dim = C / NH}; }

/* Where head h's query, its key/value head's key and value, and its output start in a token's
 * rows: q | k | v in the fused projection (row floats each), the output heads in order. */
typedef struct {
    int row, out, hs, qd, kd, group;
} AttnLayout;

static AttnLayout attn_layout(const AttnShape* sh) {
    int hs = sh->head_dim, qd = sh->n_head * hs, kd = sh->n_kv_head * hs;
    return (AttnLayout){.row = qd + 2 * kd, .out = qd, .hs = hs, .qd = qd, .kd = kd,
                        .group = sh->n_head / sh->n_kv_head};
}
static size_t attn_k(const AttnLayout* l, int h) { return (size_t)l->qd + (size_t)(h / l->group) * l->hs; }
static size_t attn_v(const AttnLayout* l, int h) { return attn_k(l, h) + l->kd; }

void attention_forward_gqa(float* out, float* att, const float* qkv, const Segment* segs, int n_segs,
                           const AttnShape* sh) {
    AttnLayout l = attn_layout(sh);
    int hs = l.hs, R = l.row;
    float scale = 1.0f / sqrtf((float)hs);
    float* a = att;
    for (int s = 0; s < n_segs; s++) {
        const Segment* g = &segs[s];
        const Segment* p = g->prefix >= 0 ? &segs[g->prefix] : NULL;
        int n = g->len, plen = p ? p->len : 0, ctx = plen + n;
        for (int h = 0; h < sh->n_head; h++, a += (size_t)n * ctx) {
            const float* row = qkv + (size_t)g->start * R;
            const float* q = row + h * hs;
            const float* k = row + attn_k(&l, h);
            const float* v = row + attn_v(&l, h);
            float* y = out + (size_t)g->start * l.out + h * hs;
            /* scores (n, ctx) = scale * q [k_prefix; k]^T */
            if (plen) {
                const float* kp = qkv + (size_t)p->start * R + attn_k(&l, h);
                sgemm(CblasNoTrans, CblasTrans, n, plen, hs, scale, q, R, kp, R, 0.0f, a, ctx);
            }
            sgemm(CblasNoTrans, CblasTrans, n, n, hs, scale, q, R, k, R, 0.0f, a + plen, ctx);
            causal_softmax_rows(a, n, ctx, plen);
            /* y (n, hs) = att [v_prefix; v] */
            if (plen) {
                const float* vp = qkv + (size_t)p->start * R + attn_v(&l, h);
                sgemm(CblasNoTrans, CblasNoTrans, n, hs, plen, 1.0f, a, ctx, vp, R, 0.0f, y, l.out);
            }
            sgemm(CblasNoTrans, CblasNoTrans, n, hs, n, 1.0f, a + plen, ctx, v, R, plen ? 1.0f : 0.0f, y, l.out);
        }
    }
}

void attention_forward(float* out, float* att, const float* qkv, const Segment* segs, int n_segs, int C, int NH) {
    AttnShape sh = attn_shape_mha(C, NH);
    attention_forward_gqa(out, att, qkv, segs, n_segs, &sh);
}

void attention_backward_gqa(float* dqkv, float* datt, const float* dout, const float* qkv, const float* att,
                            const Segment* segs, int n_segs, const AttnShape* sh) {
    AttnLayout l = attn_layout(sh);
    int hs = l.hs, R = l.row, O = l.out;
    float scale = 1.0f / sqrtf((float)hs);
    const float* a = att;
    for (int s = 0; s < n_segs; s++) {
        const Segment* g = &segs[s];
        const Segment* p = g->prefix >= 0 ? &segs[g->prefix] : NULL;
        int n = g->len, plen = p ? p->len : 0, ctx = plen + n;
        for (int h = 0; h < sh->n_head; h++, a += (size_t)n * ctx) {
            size_t ko = attn_k(&l, h), vo = attn_v(&l, h);
            const float* q = qkv + (size_t)g->start * R + h * hs;
            const float* k = qkv + (size_t)g->start * R + ko;
            const float* v = qkv + (size_t)g->start * R + vo;
            float* dq = dqkv + (size_t)g->start * R + h * hs;
            float* dk = dqkv + (size_t)g->start * R + ko;
            float* dv = dqkv + (size_t)g->start * R + vo;
            const float* dy = dout + (size_t)g->start * O + h * hs;
            const float* kp = p ? qkv + (size_t)p->start * R + ko : NULL;
            const float* vp = p ? qkv + (size_t)p->start * R + vo : NULL;
            float* dkp = p ? dqkv + (size_t)p->start * R + ko : NULL;
            float* dvp = p ? dqkv + (size_t)p->start * R + vo : NULL;
            /* datt (n, ctx) = dy [v_prefix; v]^T;  d[v_prefix; v] += att^T dy */
            if (plen) {
                sgemm(CblasNoTrans, CblasTrans, n, plen, hs, 1.0f, dy, O, vp, R, 0.0f, datt, ctx);
                sgemm(CblasTrans, CblasNoTrans, plen, hs, n, 1.0f, a, ctx, dy, O, 1.0f, dvp, R);
            }
            sgemm(CblasNoTrans, CblasTrans, n, n, hs, 1.0f, dy, O, v, R, 0.0f, datt + plen, ctx);
            sgemm(CblasTrans, CblasNoTrans, n, hs, n, 1.0f, a + plen, ctx, dy, O, 1.0f, dv, R);
            /* softmax backward, in place: dscore = att * (datt - sum(att * datt)) */
            for (int t = 0; t < n; t++) {
                const float* arow = a + (size_t)t * ctx;
                float* drow = datt + (size_t)t * ctx;
                int last = plen + t;
                float dot = 0.0f;
                for (int j = 0; j <= last; j++) dot += arow[j] * drow[j];
                for (int j = 0; j <= last; j++) drow[j] = arow[j] * (drow[j] - dot);
                for (int j = last + 1; j < ctx; j++) drow[j] = 0.0f;
            }
            /* dq += scale dscore [k_prefix; k];  d[k_prefix; k] += scale dscore^T q */
            if (plen) {
                sgemm(CblasNoTrans, CblasNoTrans, n, hs, plen, scale, datt, ctx, kp, R, 1.0f, dq, R);
                sgemm(CblasTrans, CblasNoTrans, plen, hs, n, scale, datt, ctx, q, R, 1.0f, dkp, R);
            }
            sgemm(CblasNoTrans, CblasNoTrans, n, hs, n, scale, datt + plen, ctx, k, R, 1.0f, dq, R);
            sgemm(CblasTrans, CblasNoTrans, n, hs, n, scale, datt + plen, ctx, q, R, 1.0f, dk, R);
        }
    }
}

void attention_backward(float* dqkv, float* datt, const float* dout, const float* qkv, const float* att,
                        const Segment* segs, int n_segs, int C, int NH) {
    AttnShape sh = attn_shape_mha(C, NH);
    attention_backward_gqa(dqkv, datt, dout, qkv, att, segs, n_segs, &sh);
}

void det_segment_offsets(long* seg_att, const Segment* segs, int n_segs, int NH) {
    long at = 0;
    for (int s = 0; s < n_segs; s++) {
        int plen = segs[s].prefix >= 0 ? segs[segs[s].prefix].len : 0;
        seg_att[s] = at;
        at += (long)NH * segs[s].len * (plen + segs[s].len);
    }
}

void attention_forward_det_gqa(float* out, float* att, const float* qkv, const Segment* segs, int n_segs,
                               const AttnShape* sh) {
    AttnLayout l = attn_layout(sh);
    int hs = l.hs, R = l.row;
    float scale = 1.0f / sqrtf((float)hs);
    float* a = att;
    for (int s = 0; s < n_segs; s++) {
        const Segment* g = &segs[s];
        const Segment* p = g->prefix >= 0 ? &segs[g->prefix] : NULL;
        int n = g->len, plen = p ? p->len : 0, ctx = plen + n;
        for (int h = 0; h < sh->n_head; h++, a += (size_t)n * ctx) {
            const float* k = qkv + (size_t)g->start * R + attn_k(&l, h);
            const float* kp = p ? qkv + (size_t)p->start * R + attn_k(&l, h) : k;
            for (int t = 0; t < n; t++)
                det_attend_query(a + (size_t)t * ctx, ctx, out + (size_t)(g->start + t) * l.out + h * hs,
                                 qkv + (size_t)(g->start + t) * R + h * hs, kp, kp + l.kd, R, plen, k, k + l.kd, R,
                                 t + 1, hs, scale);
        }
    }
}

void attention_forward_det(float* out, float* att, const float* qkv, const Segment* segs, int n_segs, int C, int NH) {
    AttnShape sh = attn_shape_mha(C, NH);
    attention_forward_det_gqa(out, att, qkv, segs, n_segs, &sh);
}

/* Query pass (every score gradient and dq), then key pass: each key's dk, dv summed over its
 * own segment's queries, then over each completion reading it (a prompt's), in order; with
 * grouped heads, over the group's query heads in order. */
void attention_backward_det_gqa(float* dqkv, float* datt, const float* dout, const float* qkv, const float* att,
                                const Segment* segs, const long* seg_att, int n_segs, const AttnShape* sh) {
    AttnLayout l = attn_layout(sh);
    int hs = l.hs, R = l.row, O = l.out, NH = sh->n_head;
    float scale = 1.0f / sqrtf((float)hs);
    for (int s = 0; s < n_segs; s++) {
        const Segment* g = &segs[s];
        const Segment* p = g->prefix >= 0 ? &segs[g->prefix] : NULL;
        int n = g->len, plen = p ? p->len : 0, ctx = plen + n;
        for (int h = 0; h < NH; h++) {
            size_t blk = (size_t)seg_att[s] + (size_t)h * n * ctx;
            const float* k = qkv + (size_t)g->start * R + attn_k(&l, h);
            const float* kp = p ? qkv + (size_t)p->start * R + attn_k(&l, h) : k;
            for (int t = 0; t < n; t++)
                det_attend_query_backward(datt + blk + (size_t)t * ctx, ctx, dqkv + (size_t)(g->start + t) * R + h * hs,
                                          att + blk + (size_t)t * ctx, dout + (size_t)(g->start + t) * O + h * hs, kp,
                                          kp + l.kd, R, plen, k, k + l.kd, R, t + 1, hs, scale);
        }
    }
    for (int s = 0; s < n_segs; s++) {
        const Segment* g = &segs[s];
        int n = g->len, plen = g->prefix >= 0 ? segs[g->prefix].len : 0;
        /* readers of segment s's keys: s itself (queries t >= the key), then its completions */
        for (int r = s; r < n_segs; r++) {
            const Segment* rd = &segs[r];
            if (r != s && rd->prefix != s) continue;
            int rn = rd->len, rctx = (r == s ? plen : n) + rn;
            for (int h = 0; h < NH; h++) {
                size_t blk = (size_t)seg_att[r] + (size_t)h * rn * rctx;
                const float* q = qkv + (size_t)rd->start * R + h * hs;
                const float* dy = dout + (size_t)rd->start * O + h * hs;
                for (int j = 0; j < n; j++) {
                    float* dk = dqkv + (size_t)(g->start + j) * R + attn_k(&l, h);
                    det_attend_key_backward(dk, dk + l.kd, datt + blk, att + blk, rctx, r == s ? plen + j : j,
                                            r == s ? j : 0, rn, q, R, dy, O, hs);
                }
            }
        }
    }
}

void attention_backward_det(float* dqkv, float* datt, const float* dout, const float* qkv, const float* att,
                            const Segment* segs, const long* seg_att, int n_segs, int C, int NH) {
    AttnShape sh = attn_shape_mha(C, NH);
    attention_backward_det_gqa(dqkv, datt, dout, qkv, att, segs, seg_att, n_segs, &sh);
}

/* The weighted sums' accumulators of a decode step, kept per thread and grown to the largest
 * need seen, so that a step allocates nothing once warm. */
static float* decode_scratch(size_t n) {
    static _Thread_local float* buf;
    static _Thread_local size_t cap;
    if (n > cap) {
        free(buf);
        buf = mallocCheck(n * sizeof(float));
        cap = n;
    }
    return buf;
}

void decode_attention_rows(float* y, float* scores, const float* q3, const float* kp, const float* vp,
                           const float* krow, const float* vrow, const DecodeStep* d, int i0, int i1,
                           const AttnShape* sh, size_t row_slot, int T, int det) {
    AttnLayout l = attn_layout(sh);
    int hs = l.hs, R = l.row, KD = l.kd, O = l.out, nr = i1 - i0, plen = d->prefix_len[i0];
    float scale = 1.0f / sqrtf((float)hs);
    if (det) { /* the training forward's function, query for query (det_attention.h) */
        for (int h = 0; h < sh->n_head; h++)
            for (int i = i0; i < i1; i++) {
                int own = d->pos[i] - plen + 1;
                size_t kvh = (size_t)(h / l.group) * hs;
                const float* kr = krow + (size_t)d->rows[i] * row_slot + kvh;
                const float* vr = vrow + (size_t)d->rows[i] * row_slot + kvh;
                det_attend_query(scores, plen + own, y + (size_t)i * O + h * hs, q3 + (size_t)i * R + h * hs, kp + kvh,
                                 vp + kvh, KD, plen, kr, vr, KD, own, hs, scale);
            }
        return;
    }
    /* vector loops (attention_rows.h): per row and head the keys are a prompt's and a few
     * dozen of the row's own, too few for sgemm's packing to pay; the rows' shared prompt is
     * read block by block for all of them */
    double t0 = product_profile_start();
    long own_keys = 0;
    float* acc = decode_scratch((size_t)nr * hs);
    for (int h = 0; h < sh->n_head; h++) {
        size_t kvh = (size_t)(h / l.group) * hs;
        const float *kph = kp + kvh, *vph = vp + kvh;
        const float* q0 = q3 + (size_t)i0 * R + h * hs;
        float* y0 = y + (size_t)i0 * O + h * hs;
        att_scores_queries(scores, T, q0, R, nr, kph, KD, plen, hs, scale);
        for (int i = i0; i < i1; i++) {
            int own = d->pos[i] - plen + 1;
            float* row = scores + (size_t)(i - i0) * T;
            const float* kr = krow + (size_t)d->rows[i] * row_slot + kvh;
            att_scores(row + plen, q3 + (size_t)i * R + h * hs, kr, KD, own, hs, scale);
            softmax_inplace(row, plen + own);
            memset(y + (size_t)i * O + h * hs, 0, (size_t)hs * sizeof(float));
            own_keys += own;
        }
        att_weighted_add_queries(y0, O, scores, T, nr, vph, KD, plen, hs, acc);
        for (int i = i0; i < i1; i++) {
            int own = d->pos[i] - plen + 1;
            const float* vr = vrow + (size_t)d->rows[i] * row_slot + kvh;
            att_weighted_add(y + (size_t)i * O + h * hs, scores + (size_t)(i - i0) * T + plen, vr, KD, own, hs);
        }
    }
    product_profile_add(PRODUCT_ATTENTION, t0, 4.0 * hs * ((double)sh->n_head * nr * plen + (double)own_keys));
}

void decode_attention_all(float* y, float* scores, const float* q3, const float* kprefix, const float* vprefix,
                          const float* krow, const float* vrow, const DecodeStep* d, const AttnShape* sh,
                          size_t prefix_slot, size_t row_slot, int T, int det) {
    for (int i0 = 0; i0 < d->n;) { /* runs of adjacent rows reading the same prompt */
        int i1 = i0 + 1;
        while (i1 < d->n && d->prefix_len[i1] == d->prefix_len[i0] &&
               (d->prefix_len[i0] == 0 || d->prefix[i1] == d->prefix[i0]))
            i1++;
        size_t slot = (size_t)(d->prefix_len[i0] ? d->prefix[i0] : 0) * prefix_slot;
        decode_attention_rows(y, scores, q3, kprefix + slot, vprefix + slot, krow, vrow, d, i0, i1, sh, row_slot, T,
                              det);
        i0 = i1;
    }
}

void gelu_forward(float* out, float* th, const float* inp, int N) {
    for (int i = 0; i < N; i++) out[i] = gelu_value(inp[i], &th[i]);
}

void gelu_backward(float* dinp, const float* inp, const float* th, const float* dout, int N) {
    for (int i = 0; i < N; i++) dinp[i] += gelu_slope(inp[i], th[i]) * dout[i];
}

void residual_forward(float* out, const float* a, const float* b, int N) {
    for (int i = 0; i < N; i++) out[i] = a[i] + b[i];
}

float softmax_inplace(float* row, int n) {
    float sum, mx = softmax_row(row, n, &sum);
    return mx + logf(sum);
}

float softmax_inplace_det(float* row, int n) {
    float sum, mx = softmax_row(row, n, &sum);
    return mx + log_det(sum);
}

void logprob_forward(float* logprobs, float* probs, const float* logits, const int* targets, int N, int V, int pad,
                     float scale, int det) {
    for (int n = 0; n < N; n++) {
        const float* z = logits + (size_t)n * V;
        float* p = probs + (size_t)n * V;
        if (scale == 1.0f) memcpy(p, z, (size_t)V * sizeof(float));
        else for (int v = 0; v < V; v++) p[v] = z[v] * scale;
        float lse = det ? softmax_inplace_det(p, V) : softmax_inplace(p, V);
        logprobs[n] = targets[n] == pad ? 0.0f : z[targets[n]] * scale - lse;
    }
}

void logprob_backward(float* dlogits, const float* dlogprobs, const float* probs, const int* targets, int N, int V,
                      int pad, float scale) {
    for (int n = 0; n < N; n++) {
        float* d = dlogits + (size_t)n * V;
        float g = targets[n] == pad ? 0.0f : dlogprobs[n] * scale;
        if (g == 0.0f) {
            memset(d, 0, (size_t)V * sizeof(float));
            continue;
        }
        const float* p = probs + (size_t)n * V;
        for (int v = 0; v < V; v++) d[v] = -g * p[v];
        d[targets[n]] += g;
    }
}
