/* The policy model every swarm node runs: a byte-level GPT (256 byte tokens plus a few
 * special tokens), pre-LayerNorm blocks, learned positions, GELU MLP, output layer tied to
 * the token embedding. Parameters, gradients and each Adam moment live in one contiguous
 * buffer each, with named pointers into them (GPTParams). The numerics run in a backend
 * (ModelBackend, a table of functions): the CPU reference here, a CUDA twin in kernels/. */
#ifndef SAPO_MODEL_GPT_H
#define SAPO_MODEL_GPT_H

#include <stddef.h>
#include <stdint.h>

enum {
    TOK_BOS = 256,  /* starts every prompt */
    TOK_EOS = 257,  /* ends a completion */
    TOK_PAD = 258,  /* fills unused positions; never a target */
    GPT_VOCAB = 259,
};

typedef struct {
    int n_layer;
    int n_head;
    int d_model;
    int n_ctx;   /* maximum sequence length (learned positions) */
    int vocab;   /* GPT_VOCAB */
} GPTConfig;

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

typedef struct {
    float lr;
    float beta1, beta2, eps;
    float weight_decay; /* decoupled, applied to every tensor (torch AdamW, one group) */
} AdamWConfig;

typedef struct Model Model;

typedef struct {
    const char* name;
    /* Allocates activations for up to max_batch sequences of n_ctx tokens, and the KV cache. */
    void (*setup)(Model* m);
    void (*teardown)(Model* m);
    /* Host parameter/optimizer buffers were changed (init, checkpoint load): take them. */
    void (*upload)(Model* m);
    /* Bring parameters and optimizer moments back to the host buffers (for checkpoints). */
    void (*download)(Model* m);
    /* Copies the logits (B, T, V) of the last forward to the host (tests, parity checks). */
    void (*get_logits)(Model* m, float* out);
    /* inputs, targets: (B, T) tokens. Writes log p(target | prefix) for every position into
     * logprobs (B, T, host). Targets equal to TOK_PAD get logprob 0. */
    void (*forward)(Model* m, const int* inputs, const int* targets, int B, int T, float* logprobs);
    /* Accumulates into the gradients d(loss)/d(params), given d(loss)/d(logprobs) (B, T)
     * for the batch of the last forward. */
    void (*backward)(Model* m, const float* dlogprobs);
    void (*zero_grad)(Model* m);
    float (*grad_norm)(Model* m);
    /* One AdamW step with the gradients multiplied by grad_scale; m->step advances. */
    void (*adamw)(Model* m, const AdamWConfig* hp, float grad_scale);
    /* Generation. prefill: tokens (B, T) right-padded, lens[b] real tokens in row b; fills
     * KV-cache slots 0..B-1 and writes the logits of position lens[b]-1 to logits (B, V). */
    void (*prefill)(Model* m, const int* tokens, const int* lens, int B, int T, float* logits);
    /* decode: for n rows, feed token tokens[i] at position pos[i] of cache slot slots[i];
     * writes logits (n, V). */
    void (*decode)(Model* m, const int* slots, const int* tokens, const int* pos, int n, float* logits);
} ModelBackend;

struct Model {
    GPTConfig cfg;
    size_t tensor_sizes[GPT_NUM_TENSORS];
    size_t num_params;
    float* params_memory; /* host; the CPU backend computes on these directly */
    float* grads_memory;
    float* m_memory;      /* Adam first moment */
    float* v_memory;      /* Adam second moment */
    GPTParams params, grads;
    long step;            /* AdamW steps taken */
    int max_batch;        /* sequences per forward / cache slots */
    const ModelBackend* backend;
    void* state;          /* the backend's activations and cache */
};

/* Validates the shape; returns 0, or -1 with a reason in err. */
int gpt_config_check(const GPTConfig* cfg, char* err, size_t errlen);
void gpt_tensor_sizes(const GPTConfig* cfg, size_t sizes[GPT_NUM_TENSORS]);
/* Points the named views into a buffer laid out as gpt_tensor_sizes says. */
void gpt_point_params(GPTParams* p, float* memory, const size_t sizes[GPT_NUM_TENSORS]);

/* The backend by name ("cpu", "cuda"; "auto" = cuda when available, else cpu); NULL if
 * unknown or not built. */
const ModelBackend* model_backend_find(const char* name);

/* A model with zeroed gradients and moments, parameters initialised GPT-2 style from the
 * (seed, RNG_INIT) stream. The config must pass gpt_config_check. */
Model* model_create(const GPTConfig* cfg, const ModelBackend* backend, int max_batch, uint64_t seed);
void model_free(Model* m);
void model_init_weights(Model* m, uint64_t seed);

/* Convenience wrappers over the backend table. */
void model_forward(Model* m, const int* inputs, const int* targets, int B, int T, float* logprobs);
void model_backward(Model* m, const float* dlogprobs);
void model_zero_grad(Model* m);
/* Clips the global gradient norm to max_norm (0 = no clipping) like
 * torch.nn.utils.clip_grad_norm_, then takes one AdamW step. Returns the norm before. */
float model_step(Model* m, const AdamWConfig* hp, float max_norm);

/* FLOPs of one forward pass over B*T tokens (matmuls and attention, multiply-add = 2). */
double gpt_forward_flops(const GPTConfig* cfg, int B, int T);

#endif
