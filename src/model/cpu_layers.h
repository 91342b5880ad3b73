/* The CPU reference layers, forward and backward, on row-major float arrays. Shapes use
 * N = rows (batch x time), C = channels. Backward functions accumulate (+=) into the
 * gradients of parameters and inputs, as the chain rule sums over uses. */
#ifndef SAPO_MODEL_CPU_LAYERS_H
#define SAPO_MODEL_CPU_LAYERS_H

/* Time and FLOPs spent in sgemm while enabled (for `sapo bench model`). */
typedef struct {
    int enabled;
    double seconds;
    double flops;
} SgemmProfile;
extern SgemmProfile cpu_sgemm_profile;

/* out (B,T,C) = wte[inp] + wpe[t] */
void encoder_forward(float* out, const int* inp, const float* wte, const float* wpe, int B, int T, int C);
void encoder_backward(float* dwte, float* dwpe, const float* dout, const int* inp, int B, int T, int C);

/* LayerNorm over C with eps 1e-5; saves mean and 1/std per row for the backward pass. */
void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* w, const float* b, int N, int C);
void layernorm_backward(float* dinp, float* dw, float* db, const float* dout, const float* inp, const float* w,
                        const float* mean, const float* rstd, int N, int C);

/* out (N, OC) = inp (N, IC) @ w^T + bias, w is (OC, IC); bias may be NULL. sgemm. */
void matmul_forward(float* out, const float* inp, const float* w, const float* bias, int N, int IC, int OC);
void matmul_backward(float* dinp, float* dw, float* dbias, const float* dout, const float* inp, const float* w,
                     int N, int IC, int OC);

/* Causal multi-head self-attention. qkv (B,T,3C) holds q,k,v; out (B,T,C); att (B,NH,T,T)
 * keeps the softmax for the backward pass. */
void attention_forward(float* out, float* att, const float* qkv, int B, int T, int C, int NH);
/* datt_scratch (T,T) is a work buffer. dqkv is accumulated. */
void attention_backward(float* dqkv, float* datt_scratch, const float* dout, const float* qkv, const float* att,
                        int B, int T, int C, int NH);

/* GELU, tanh approximation (GPT-2's). The forward keeps the tanh values (th, N floats) for
 * the backward pass. */
void gelu_forward(float* out, float* th, const float* inp, int N);
void gelu_backward(float* dinp, const float* inp, const float* th, const float* dout, int N);

void residual_forward(float* out, const float* a, const float* b, int N);

/* logprobs[i] = log softmax(logits[i])[targets[i]] for rows with targets[i] != pad (else 0);
 * probs (N, V) keeps the softmax. */
void logprob_forward(float* logprobs, float* probs, const float* logits, const int* targets, int N, int V, int pad);
/* dlogits (N, V) = dlogprobs[i] * (onehot(target) - probs). Overwrites dlogits. */
void logprob_backward(float* dlogits, const float* dlogprobs, const float* probs, const int* targets, int N, int V,
                      int pad);

#endif
