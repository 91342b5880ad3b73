/* The byte-level GPT's own (model/model.h holds what every family shares): its 256 byte
 * tokens and the special tokens after them, and the named views of its 16 tensors into one
 * buffer (GPTParams): pre-LayerNorm blocks, learned positions, GELU MLP, output layer tied to
 * the token embedding. */
#ifndef SAPO_MODEL_GPT_H
#define SAPO_MODEL_GPT_H

#include <stddef.h>

enum {
    TOK_BOS = 256,  /* starts every prompt */
    TOK_EOS = 257,  /* ends a completion */
    TOK_PAD = 258,  /* fills unused positions; never a target */
    GPT_VOCAB = 259,
};

#define GPT_NUM_TENSORS 16
/* Named views into one buffer; shapes with L = n_layer, C = d_model, T = n_ctx, V = vocab. */
typedef struct {
    float* wte;      /* (V, C) token embedding, also the output layer */
    float* wpe;      /* (T, C) learned positions */
    float* ln1w;     /* (L, C) */
    float* ln1b;     /* (L, C) */
    float* qkvw;     /* (L, 3C, C) */
    float* qkvb;     /* (L, 3C) */
    float* attprojw; /* (L, C, C) */
    float* attprojb; /* (L, C) */
    float* ln2w;     /* (L, C) */
    float* ln2b;     /* (L, C) */
    float* fcw;      /* (L, 4C, C) */
    float* fcb;      /* (L, 4C) */
    float* fcprojw;  /* (L, C, 4C) */
    float* fcprojb;  /* (L, C) */
    float* lnfw;     /* (C) */
    float* lnfb;     /* (C) */
} GPTParams;

extern const char* const GPT_TENSOR_NAMES[GPT_NUM_TENSORS];

/* Points the named views into a buffer laid out as gpt_tensor_sizes says. */
void gpt_point_params(GPTParams* p, float* memory, const size_t sizes[GPT_NUM_TENSORS]);

#endif
