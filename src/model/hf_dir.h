/* Hugging Face model directories of the Llama/Qwen2 family (model/llama.h): config.json into
 * a ModelShape, the safetensors weights (one file or shards) into a model's parameters, and a
 * model back out as a directory transformers 4.49 loads as the same model (config.json,
 * model.safetensors in f32, optionally the tokenizer files of another directory). Every
 * error is one line naming the file and what was wrong. */
#ifndef SAPO_MODEL_HF_DIR_H
#define SAPO_MODEL_HF_DIR_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "model/llama.h"

/* DIR/config.json (LlamaForCausalLM or Qwen2ForCausalLM) into cfg: family llama, the shape
 * fields, rope_theta, rms_norm_eps, biases, tied output, n_ctx = max_position_embeddings;
 * missing optional keys take transformers 4.49's defaults for the class. Refuses what the
 * family does not compute (mlp_bias, an activation other than silu, rope_scaling, sliding
 * windows, partial rotary). deterministic is left 0. 0, or -1 with err. */
int hf_config_read(const char* dir, ModelShape* cfg, char* err, size_t errlen);

/* The weights of DIR (model.safetensors or model.safetensors.index.json) into m, a llama
 * family model: q/k/v projections fused into qkvw (and their biases into qkvb), gate and up
 * into gateupw, F32/BF16/F16 read as f32, then uploaded to the backend. Every tensor is
 * found and its shape checked before any is read, and a tensor the model has no place for
 * is an error (a tied model ignores lm_head.weight; rotary inv_freq buffers are ignored),
 * so a bad directory leaves m untouched. 0, or -1 with err. */
int hf_load_weights(Model* m, const char* dir, char* err, size_t errlen);

/* One tensor as transformers names and shapes it, viewed in place in a llama-layout buffer
 * (parameters, gradients or moments: anything llama_point_params can point into). */
typedef struct {
    char name[96];    /* "model.layers.3.self_attn.q_proj.weight" */
    int ndim;         /* 1 or 2 */
    int64_t shape[2]; /* HF's (out, in) for a Linear weight */
    float* data;      /* numel floats, contiguous, inside the fused tensor */
} HfTensor;

/* The number of HF tensors of a model of this shape (biases and lm_head as it has them). */
int hf_tensor_count(const ModelShape* cfg);
/* Fills t (hf_tensor_count entries) with every HF tensor of p, in the order of the layers
 * (embedding, then per layer q/k/v, their biases, o_proj, the MLP and the two norms, then the
 * final norm and lm_head); returns how many. The fused tensors are split: q_proj, k_proj and
 * v_proj are consecutive row blocks of one layer's qkvw, gate_proj and up_proj of gateupw. */
int hf_tensor_views(const ModelShape* cfg, const LlamaParams* p, HfTensor* t);

/* Writes m (downloaded from its backend first) as a Hugging Face directory DIR, created if
 * needed: model.safetensors (f32, HF names and shapes, fused tensors split back), the
 * tokenizer.json, tokenizer_config.json and generation_config.json of tokenizer_src_dir
 * when it is not NULL (tokenizer.json required, the others when present; the token ids of
 * its config.json are carried over), and config.json last: Qwen2ForCausalLM when the model
 * has q/k/v biases and no output bias, else LlamaForCausalLM. Each file is written
 * atomically and config.json, what makes the directory loadable, is removed first and
 * written last, so a failed export never leaves a directory that looks complete.
 * 0, or -1 with err. */
int hf_export(Model* m, const char* dir, const char* tokenizer_src_dir, char* err, size_t errlen);

#endif
