/* The model as every family has it (model/family.h: the byte-level GPT of model/gpt.h,
 * Llama/Qwen2 of model/llama.h): its shape (ModelShape), parameters, gradients and each Adam
 * moment in one contiguous buffer each, packed batches, decode steps and capacity, and the
 * backend (ModelBackend, a table of functions, which also says whether it can run here and
 * where a rank computes): the CPU reference, a CUDA twin in kernels/. */
#ifndef SAPO_MODEL_MODEL_H
#define SAPO_MODEL_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "core/config_enums.h" /* BackendChoice: model.backend; ModelFamilyId: model.family */
#include "model/gpt.h" /* the byte-level GPT's tokens and its tensor views (Model.params) */

/* The shape of a model of any family (model/family.h). The byte-level GPT uses the first
 * five fields and leaves the Llama/Qwen2 ones at zero; a zeroed family is byte_gpt, so every
 * byte-level config written before families existed means what it meant. */
typedef struct {
    int n_layer;
    int n_head;
    int d_model;
    int n_ctx;   /* maximum sequence length (byte_gpt: learned positions) */
    int vocab;   /* byte_gpt: GPT_VOCAB */
    /* model.deterministic: every product, reduction, exponential and logarithm in a fixed
     * order of our own (det_matmul.h, det_math.h, det_attention.h), never BLAS or libm's
     * transcendentals, so results have the same bits on any CPU, thread count, BLAS or GPU
     * (and on the CUDA twin); generation and GRPO follow the model's setting. Not part of
     * the shape: checkpoints load either way. */
    int deterministic;
    ModelFamilyId family; /* model.family */
    /* llama family (a Hugging Face config.json; model/llama.h) */
    int n_kv_head;    /* num_key_value_heads: grouped-query attention, n_head a multiple of it */
    int head_dim;     /* channels per head (d_model / n_head unless config.json says) */
    int d_ff;         /* intermediate_size of the SwiGLU MLP */
    float rope_theta; /* RoPE base */
    float norm_eps;   /* rms_norm_eps */
    int qkv_bias;     /* q/k/v projections carry a bias (Qwen2; Llama's attention_bias) */
    int o_bias;       /* the output projection carries one (Llama's attention_bias) */
    int tied;         /* tie_word_embeddings: the output layer is the token embedding */
} ModelShape;

/* Tensors of the largest family (byte_gpt: 16). */
#define MODEL_MAX_TENSORS 16

typedef struct {
    float lr;
    float beta1, beta2, eps;
    float weight_decay; /* decoupled, applied to every tensor (torch AdamW, one group) */
} AdamWConfig;

typedef struct Model Model;

/* A packed batch: N tokens laid end to end without padding, cut into segments. A segment
 * attends causally to its own tokens and, when it has a prefix, to every token of that
 * earlier segment first: a group's prompt is one segment, and each of its completions a
 * segment whose prefix is the prompt, so the prompt is computed once for all of them.
 * Token i of segment s sits at position (prefix length) + i. A prefix has no prefix itself. */
typedef struct {
    int start;  /* first token of the segment in the batch */
    int len;    /* its tokens (>= 1) */
    int prefix; /* index of an earlier segment it continues, or -1 */
} Segment;

typedef struct {
    int n_tokens;
    const int* inputs;  /* (N) */
    const int* targets; /* (N): the token each position predicts; the model's roles.none (byte_gpt:
                           TOK_PAD; llama: -1) = none */
    int n_segments;
    const Segment* segs;
    float logit_scale;  /* log-probs of softmax(logits * logit_scale): 1 / the sampling
                           temperature, so training scores tokens as they were sampled;
                           0 means 1 */
} PackedBatch;

/* The heads of an attention: n_head query heads of head_dim channels, each reading key/value
 * head h / (n_head / n_kv_head) (grouped-query attention; n_kv_head = n_head is multi-head).
 * A token's fused projection row holds the queries (n_head * head_dim), then the keys, then
 * the values (n_kv_head * head_dim each); the output row holds the heads in order. */
typedef struct {
    int n_head, n_kv_head, head_dim;
} AttnShape;

/* One decode step for n rows. Row i feeds tokens[i] at position pos[i] into its cache row
 * rows[i] (index pos[i] - prefix_len[i] of that row) and attends to the first prefix_len[i]
 * positions of prefix cache slot prefix[i] (written by prefill; ignored when prefix_len[i]
 * is 0) and to its own cached positions. Rows of one prompt should be adjacent: the shared
 * prefix is then read once for all of them. */
typedef struct {
    int n;
    const int* rows;
    const int* prefix;
    const int* prefix_len;
    const int* tokens;
    const int* pos;
} DecodeStep;

/* What the backend allocates for, once (nothing is allocated per call). */
typedef struct {
    int max_tokens;   /* tokens of one packed forward */
    long max_att;     /* attention weights per layer of one forward: n_head * sum over
                         segments of len * (prefix length + len) */
    int max_prefixes; /* generation: shared prompt caches of n_ctx positions */
    int max_rows;     /* generation: rows decoded together */
    int row_ctx;      /* generation: cache positions of each row beyond its prompt */
} ModelCapacity;

typedef struct {
    const char* name;   /* the device: "cpu", "cuda" */
    ModelFamilyId family; /* whose numerics it runs (model/family.h; zero: byte_gpt) */
    /* Whether the backend can run in this process (CUDA: the runtime sees a device; never a
     * crash without a driver), computed once; NULL: always. */
    int (*available)(void);
    /* Where this process computes, given its rank among the ranks of its machine and their
     * number (CUDA: GPU local_rank modulo the visible devices, so ranks share GPUs round-robin;
     * without this call the rank comes from the launcher's environment). NULL: nothing to
     * place. Called before setup. */
    void (*place)(int local_rank, int local_size);
    /* The GPU this process computes on (CUDA: the device ordinal place chose, or the
     * launcher's local rank's without a place call), -1 without one; swarm/node_gpu.c hands it
     * to the NCCL transport. NULL: no device (the host). */
    int (*device)(void);
    /* Allocates activations, scratch and KV cache for m->cap. */
    void (*setup)(Model* m);
    void (*teardown)(Model* m);
    /* Host parameter/optimizer buffers were changed (init, checkpoint load): take them. */
    void (*upload)(Model* m);
    /* Bring parameters and optimizer moments back to the host buffers (for checkpoints). */
    void (*download)(Model* m);
    /* Copies the logits (N, V) of the last forward to the host (tests, parity checks). */
    void (*get_logits)(Model* m, float* out);
    /* Writes log p(target | context) for every token into logprobs (N, host); TOK_PAD
     * targets get 0. */
    void (*forward)(Model* m, const PackedBatch* pb, float* logprobs);
    /* Accumulates into the gradients d(loss)/d(params), given d(loss)/d(logprobs) (N) for
     * the batch of the last forward. */
    void (*backward)(Model* m, const float* dlogprobs);
    void (*zero_grad)(Model* m);
    float (*grad_norm)(Model* m);
    /* One AdamW step with the gradients multiplied by grad_scale; m->step advances. */
    void (*adamw)(Model* m, const AdamWConfig* hp, float grad_scale);
    /* Generation. prefill: runs the batch's segments (none with a prefix) and keeps the keys
     * and values of segment s in prefix cache slot s. */
    void (*prefill)(Model* m, const PackedBatch* pb);
    /* decode: one step (see DecodeStep); writes logits (n, V). */
    void (*decode)(Model* m, const DecodeStep* d, float* logits);
} ModelBackend;

typedef struct ModelFamily ModelFamily;

/* The tokens a family frames its sequences with: start is put before every prompt (-1: none),
 * end closes a completion (what supervised training appends, what generation stops at; -1:
 * none yet), none marks a target that carries no loss. byte_gpt: TOK_BOS, TOK_EOS, TOK_PAD;
 * llama: no start, the tokenizer's end of turn (set when its tokenizer is loaded), -1. */
typedef struct {
    int start, end, none;
} TokenRoles;

struct Model {
    ModelShape cfg;
    const ModelFamily* family; /* cfg.family's table (model/family.h) */
    int n_tensors;             /* family->n_tensors */
    TokenRoles roles;          /* family->roles, until a loader knows better */
    size_t tensor_sizes[MODEL_MAX_TENSORS];
    size_t num_params;
    float* params_memory; /* host; the CPU backend computes on these directly */
    float* grads_memory;
    float* m_memory;      /* Adam first moment */
    float* v_memory;      /* Adam second moment */
    GPTParams params, grads; /* byte_gpt's named views (the llama backends keep theirs) */
    long step;            /* AdamW steps taken */
    ModelCapacity cap;    /* what the backend allocated for */
    const ModelBackend* backend;
    void* state;          /* the backend's activations and cache */
};

/* A 64-bit digest of the parameters, brought to the host first: FNV-1a over their 64-bit
 * words (an odd trailing float alone). Equal weights, equal digests; for identity, not trust. */
uint64_t model_weights_digest(Model* m);

/* Validates the shape against its family (model/family.h); returns 0, or -1 with a reason in err. */
int gpt_config_check(const ModelShape* cfg, char* err, size_t errlen);
/* The family's tensor sizes (MODEL_MAX_TENSORS entries at most). */
void gpt_tensor_sizes(const ModelShape* cfg, size_t* sizes);

/* Every backend this build has, whether or not it can run here: cpu first; NULL after the
 * last. */
extern const ModelBackend* const MODEL_BACKENDS[];
/* The backend by its name ("cpu", "cuda") if this build has it, whether or not it can run here; else NULL. */
const ModelBackend* model_backend_built(const char* name);
/* Whether backend b (not NULL) can run in this process: its `available`, or always without one. */
int model_backend_runs(const ModelBackend* b);
/* The backend model.backend chooses: cpu, cuda (NULL when not built or no GPU is visible),
 * auto = cuda when available, else cpu. */
const ModelBackend* model_backend_for(BackendChoice choice);
/* The choice's name as model.backend writes it ("cpu", "cuda", "auto"). */
const char* model_backend_choice_name(BackendChoice choice);
/* The backend by one of those names, as model_backend_for chooses; NULL if unknown or not available. */
const ModelBackend* model_backend_find(const char* name);

/* A model with zeroed gradients and moments, parameters initialised GPT-2 style from the
 * (seed, RNG_INIT) stream. The config must pass gpt_config_check. */
Model* model_create_cap(const ModelShape* cfg, const ModelBackend* backend, const ModelCapacity* cap, uint64_t seed);
/* model_create_cap without the initialisation: parameters zero, for a caller that loads them
 * (a checkpoint, a Hugging Face directory) and uploads them itself. */
Model* model_create_empty(const ModelShape* cfg, const ModelBackend* backend, const ModelCapacity* cap);
/* The capacity of max_batch dense rows of n_ctx tokens (model_forward's padded batches,
 * max_batch prompts of one completion each), as before packing existed: tests and tools. */
ModelCapacity model_capacity_dense(const ModelShape* cfg, int max_batch);
Model* model_create(const ModelShape* cfg, const ModelBackend* backend, int max_batch, uint64_t seed);
/* The capacity to train on train_groups groups (a prompt of up to n_ctx - max_new tokens
 * and up to `completions` answers of up to max_new tokens each) in micro-batches of at most
 * micro_tokens tokens, and to generate for gen_prompts prompts and gen_rows rows at once
 * (more run in chunks). */
ModelCapacity model_capacity_for(const ModelShape* cfg, int micro_tokens, int train_groups, int completions,
                                 int max_new, int gen_prompts, int gen_rows);
/* Bytes a model of this shape and capacity allocates (parameters, gradients, both Adam
 * moments, activations, attention weights, KV caches and scratch): what a node reserves. */
double model_memory_bytes(const ModelShape* cfg, const ModelCapacity* cap);
/* Attention weights per layer of a packed batch (what cap.max_att bounds). */
long packed_att_size(const ModelShape* cfg, const PackedBatch* pb);
/* Checks a packed batch against the model: segment bounds, prefixes, positions < n_ctx,
 * tokens < vocab, capacity. Returns 0, or -1 with a reason in err. */
int packed_check(const Model* m, const PackedBatch* pb, char* err, size_t errlen);
void model_free(Model* m);
void model_init_weights(Model* m, uint64_t seed);

/* Convenience wrappers over the backend table. model_forward_packed checks the batch first. */
void model_forward_packed(Model* m, const PackedBatch* pb, float* logprobs);
/* B padded rows of T tokens, each its own segment (the unshared layout). */
void model_forward(Model* m, const int* inputs, const int* targets, int B, int T, float* logprobs);
void model_backward(Model* m, const float* dlogprobs);
void model_zero_grad(Model* m);
/* Clips the global gradient norm to max_norm (0 = no clipping) like
 * torch.nn.utils.clip_grad_norm_, then takes one AdamW step. Returns the norm before. */
float model_step(Model* m, const AdamWConfig* hp, float max_norm);

/* FLOPs of one forward pass over B*T tokens (matmuls and attention, multiply-add = 2). */
double gpt_forward_flops(const ModelShape* cfg, int B, int T);

#endif
