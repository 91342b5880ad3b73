/* The Llama/Qwen2 family: pre-RMSNorm blocks, rotary positions (Hugging Face's rotate-half
 * layout, so tensors equal the files), grouped-query attention with optional q/k/v biases
 * (Qwen2), a SwiGLU MLP, an output layer that is the token embedding or its own (lm_head).
 * The shape lives in ModelShape's llama fields. Tensors are fused where HF keeps them apart,
 * so one product serves several: qkvw holds q_proj's rows, then k_proj's, then v_proj's;
 * gateupw gate_proj's rows then up_proj's (model/hf_dir.c splits them back for the files). */
#ifndef SAPO_MODEL_LLAMA_H
#define SAPO_MODEL_LLAMA_H

#include <stddef.h>

#include "model/model.h"

enum {
    LT_EMBED,   /* (V, C)            model.embed_tokens.weight */
    LT_QKVW,    /* (L, QD + 2KD, C)  q_proj | k_proj | v_proj weights; QD = NH*hd, KD = NKV*hd */
    LT_QKVB,    /* (L, QD + 2KD)     their biases (0 floats without qkv_bias) */
    LT_OW,      /* (L, C, QD)        o_proj.weight */
    LT_OB,      /* (L, C)            o_proj.bias (0 floats without o_bias) */
    LT_LN1W,    /* (L, C)            input_layernorm.weight */
    LT_LN2W,    /* (L, C)            post_attention_layernorm.weight */
    LT_GATEUPW, /* (L, 2F, C)        gate_proj | up_proj weights */
    LT_DOWNW,   /* (L, C, F)         down_proj.weight */
    LT_NORMW,   /* (C)               model.norm.weight */
    LT_LMHEAD,  /* (V, C)            lm_head.weight (0 floats when tied) */
    LLAMA_NUM_TENSORS
};

typedef struct {
    float *embed, *qkvw, *qkvb, *ow, *ob, *ln1w, *ln2w, *gateupw, *downw, *normw, *lmhead;
} LlamaParams;

extern const char* const LLAMA_TENSOR_NAMES[LLAMA_NUM_TENSORS];

/* A shape of the family as a Qwen2 or Llama config.json gives it: tied embeddings, head_dim =
 * d_model / n_head, n_ctx and the numerics left 0 (for random weights of a chosen size). */
ModelShape llama_config(int n_layer, int d_model, int n_head, int n_kv_head, int d_ff, int vocab, int qkv_bias,
                       float rope_theta, float norm_eps);
/* Points the views into a buffer laid out as the family's tensor_sizes says. */
void llama_point_params(LlamaParams* p, float* memory, const size_t* sizes);
/* The output layer: lm_head, or the embedding when tied. */
static inline const float* llama_out_weight(const ModelShape* c, const LlamaParams* p) {
    return c->tied ? p->embed : p->lmhead;
}

/* Widths: query (NH*hd), key/value (NKV*hd) and the fused q|k|v row. */
static inline int llama_qdim(const ModelShape* c) { return c->n_head * c->head_dim; }
static inline int llama_kvdim(const ModelShape* c) { return c->n_kv_head * c->head_dim; }
static inline int llama_qkvdim(const ModelShape* c) { return llama_qdim(c) + 2 * llama_kvdim(c); }

/* The RoPE table of positions [0, n_ctx): cos and sin (n_ctx, head_dim / 2) each, entry
 * (p, i) of angle p * theta^(-2i / head_dim), computed in double and rounded once, the same
 * way for every backend (the CUDA backend uploads this table). */
void llama_rope_table(const ModelShape* c, float* cos_out, float* sin_out);

#endif
