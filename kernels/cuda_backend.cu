/* The CUDA backend of the policy model (MODEL_BACKEND_CUDA): the host-side orchestration of
 * cuda_layers, step for step the twin of src/model/cpu_backend.c. setup makes one device
 * allocation for the parameters, gradients, both Adam moments, every activation, the scratch
 * and the KV cache (the CPU state's sizes), one stream and one cuBLAS handle bound to it.
 * upload/download copy the Model's four host buffers to and from the device; forward,
 * prefill and decode return their results (log-probs, logits) to the host, where the
 * trainer and the sampler use them. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_backend.h"
#include "cuda_layers.cuh"

extern "C" {
#include "model/gpt.h"
}

/* ---- which GPU ---------------------------------------------------------------------------- */
static int g_local_rank = -1;

extern "C" void cuda_set_local_rank(int local_rank, int local_size) {
    (void)local_size; /* ranks beyond the device count share GPUs round-robin */
    g_local_rank = local_rank;
}

static int local_rank_from_env(void) {
    const char* names[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID", "PMI_LOCAL_RANK",
                           "PALS_LOCAL_RANKID"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char* v = getenv(names[i]);
        if (v && *v) {
            char* end;
            long r = strtol(v, &end, 10);
            if (!*end && r >= 0 && r < 1 << 20) return (int)r;
        }
    }
    return -1;
}

static int device_count(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError(); /* no driver or no device: not an error to carry forward */
        n = 0;
    }
    return n;
}

extern "C" int cuda_backend_available(void) {
    static int cached = -1;
    if (cached < 0) cached = device_count() > 0;
    return cached;
}

extern "C" int cuda_device_for_this_rank(void) {
    if (!cuda_backend_available()) return -1;
    int n = device_count();
    if (n < 1) return -1;
    int r = g_local_rank >= 0 ? g_local_rank : local_rank_from_env();
    return (r < 0 ? 0 : r) % n;
}

/* ---- state -------------------------------------------------------------------------------- */
typedef struct {
    CudaCtx ctx;
    int device;
    int tf32;
    void* block; /* the one device allocation */
    size_t block_bytes;
    float *params, *grads, *mom1, *mom2; /* device twins of the Model's host buffers */
    GPTParams p, g;
    /* forward activations, capacity max_batch x n_ctx rows; per-layer arrays are (L, ...) */
    int *inputs, *targets;
    int *tok_start, *tok_rows; /* rows of each input token, for the embedding gradient */
    int* ints;                 /* prefill lens, or decode slots | tokens | pos */
    float *encoded, *ln1, *ln1_mean, *ln1_rstd, *qkv, *atty, *att, *residual2, *ln2, *ln2_mean, *ln2_rstd;
    float *fch, *fch_gelu, *fch_tanh, *residual3, *lnf, *lnf_mean, *lnf_rstd, *logits, *probs;
    float *logprobs, *dlogprobs;
    /* backward scratch */
    float *dresidual, *dC, *dC2, *d3C, *d4C, *d4C2, *datt, *dlogits;
    AttnScratch attn;
    /* KV cache (L, slots, n_ctx, C) each, and the decode scratch (slots, ...) */
    float *kcache, *vcache;
    float *x, *xn, *q3, *y, *h4, *h4g, *h4t, *tmp, *mean, *rstd, *gen_logits;
    /* host scratch */
    int *h_tok_start, *h_tok_rows, *h_ints;
    int B, T; /* shape of the last forward */
} CudaState;

static void* host_alloc(size_t bytes) {
    void* p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "%s:%d: out of host memory (%zu bytes)\n", __FILE__, __LINE__, bytes);
        exit(EXIT_FAILURE);
    }
    return p;
}

static void die(const char* what) {
    fprintf(stderr, "cuda backend: %s\n", what);
    exit(EXIT_FAILURE);
}

/* Carves named buffers out of one allocation: add() them all, then place(). */
typedef struct {
    void** ptr[96];
    size_t bytes[96];
    int n;
} Carver;

static void carve_add(Carver* c, void** ptr, size_t bytes) {
    if (c->n == 96) die("too many device buffers (raise the Carver's capacity)");
    c->ptr[c->n] = ptr;
    c->bytes[c->n] = (bytes + 255) / 256 * 256; /* 256-byte aligned, as cudaMalloc itself */
    c->n++;
}
#define CARVE(c, field, count) carve_add((c), (void**)&(field), (size_t)(count) * sizeof *(field))

static void point_params(GPTParams* p, float* memory, const size_t* sizes) {
    float** ptrs[GPT_NUM_TENSORS] = {&p->wte, &p->wpe, &p->ln1w, &p->ln1b, &p->qkvw, &p->qkvb,
                                     &p->attprojw, &p->attprojb, &p->ln2w, &p->ln2b, &p->fcw,
                                     &p->fcb, &p->fcprojw, &p->fcprojb, &p->lnfw, &p->lnfb};
    for (int i = 0; i < GPT_NUM_TENSORS; i++) {
        *ptrs[i] = memory;
        memory += sizes[i];
    }
}

static void cuda_setup(Model* m) {
    CudaState* s = (CudaState*)calloc(1, sizeof *s);
    if (!s) die("out of host memory");
    const GPTConfig* c = &m->cfg;
    size_t B = m->max_batch, T = c->n_ctx, C = c->d_model, L = c->n_layer, NH = c->n_head, V = c->vocab;
    size_t BT = B * T, P = m->num_params;
    s->device = cuda_device_for_this_rank();
    if (s->device < 0) die("no CUDA device is visible (model.backend = cuda needs one)");
    cudaCheck(cudaSetDevice(s->device));
    cudaCheck(cudaStreamCreate(&s->ctx.stream));
    cublasCheck(cublasCreate(&s->ctx.blas));
    cublasCheck(cublasSetStream(s->ctx.blas, s->ctx.stream));
    const char* tf32 = getenv("SAPO_CUDA_TF32");
    s->tf32 = tf32 && *tf32 && strcmp(tf32, "0") != 0;
    cublasCheck(cublasSetMathMode(s->ctx.blas, s->tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));

    Carver cv;
    cv.n = 0;
    CARVE(&cv, s->params, P);
    CARVE(&cv, s->grads, P);
    CARVE(&cv, s->mom1, P);
    CARVE(&cv, s->mom2, P);
    CARVE(&cv, s->inputs, BT);
    CARVE(&cv, s->targets, BT);
    CARVE(&cv, s->tok_start, V + 1);
    CARVE(&cv, s->tok_rows, BT);
    CARVE(&cv, s->ints, 3 * B);
    CARVE(&cv, s->encoded, BT * C);
    CARVE(&cv, s->ln1, L * BT * C);
    CARVE(&cv, s->ln1_mean, L * BT);
    CARVE(&cv, s->ln1_rstd, L * BT);
    CARVE(&cv, s->qkv, L * BT * 3 * C);
    CARVE(&cv, s->atty, L * BT * C);
    CARVE(&cv, s->att, L * B * NH * T * T);
    CARVE(&cv, s->residual2, L * BT * C);
    CARVE(&cv, s->ln2, L * BT * C);
    CARVE(&cv, s->ln2_mean, L * BT);
    CARVE(&cv, s->ln2_rstd, L * BT);
    CARVE(&cv, s->fch, L * BT * 4 * C);
    CARVE(&cv, s->fch_gelu, L * BT * 4 * C);
    CARVE(&cv, s->fch_tanh, L * BT * 4 * C);
    CARVE(&cv, s->residual3, L * BT * C);
    CARVE(&cv, s->lnf, BT * C);
    CARVE(&cv, s->lnf_mean, BT);
    CARVE(&cv, s->lnf_rstd, BT);
    CARVE(&cv, s->logits, BT * V);
    CARVE(&cv, s->probs, BT * V);
    CARVE(&cv, s->logprobs, BT);
    CARVE(&cv, s->dlogprobs, BT);
    CARVE(&cv, s->dresidual, BT * C);
    CARVE(&cv, s->dC, BT * C);
    CARVE(&cv, s->dC2, BT * C);
    CARVE(&cv, s->d3C, BT * 3 * C);
    CARVE(&cv, s->d4C, BT * 4 * C);
    CARVE(&cv, s->d4C2, BT * 4 * C);
    CARVE(&cv, s->datt, B * NH * T * T);
    CARVE(&cv, s->dlogits, BT * V);
    CARVE(&cv, s->attn.q, BT * C);
    CARVE(&cv, s->attn.k, BT * C);
    CARVE(&cv, s->attn.v, BT * C);
    CARVE(&cv, s->attn.y, BT * C);
    CARVE(&cv, s->attn.dq, BT * C);
    CARVE(&cv, s->attn.dk, BT * C);
    CARVE(&cv, s->attn.dv, BT * C);
    CARVE(&cv, s->kcache, L * BT * C);
    CARVE(&cv, s->vcache, L * BT * C);
    CARVE(&cv, s->x, B * C);
    CARVE(&cv, s->xn, B * C);
    CARVE(&cv, s->q3, B * 3 * C);
    CARVE(&cv, s->y, B * C);
    CARVE(&cv, s->h4, B * 4 * C);
    CARVE(&cv, s->h4g, B * 4 * C);
    CARVE(&cv, s->h4t, B * 4 * C);
    CARVE(&cv, s->tmp, B * C);
    CARVE(&cv, s->mean, B);
    CARVE(&cv, s->rstd, B);
    CARVE(&cv, s->gen_logits, B * V);
    float* ones = NULL;
    CARVE(&cv, ones, BT);
    CARVE(&cv, s->ctx.partials, (size_t)CUDA_COLSUM_MAX_CHUNKS * 2 * C);
    CARVE(&cv, s->ctx.sumsq, CUDA_SUMSQ_BLOCKS + 1);
    size_t total = 0;
    for (int i = 0; i < cv.n; i++) total += cv.bytes[i];
    cudaError_t err = cudaMalloc(&s->block, total);
    if (err != cudaSuccess) {
        fprintf(stderr, "cuda backend: cannot allocate %.1f MiB on device %d for the model (max_batch %d, n_ctx %d): %s\n",
                total / 1048576.0, s->device, m->max_batch, c->n_ctx, cudaGetErrorString(err));
        exit(EXIT_FAILURE);
    }
    s->block_bytes = total;
    char* at = (char*)s->block;
    for (int i = 0; i < cv.n; i++) {
        *cv.ptr[i] = at;
        at += cv.bytes[i];
    }
    s->ctx.ones = ones;
    cuda_fill(&s->ctx, ones, 1.0f, BT);
    point_params(&s->p, s->params, m->tensor_sizes);
    point_params(&s->g, s->grads, m->tensor_sizes);
    s->h_tok_start = (int*)host_alloc((V + 1) * sizeof(int));
    s->h_tok_rows = (int*)host_alloc(BT * sizeof(int));
    s->h_ints = (int*)host_alloc(3 * B * sizeof(int));
    m->state = s;
}

static void cuda_teardown(Model* m) {
    CudaState* s = (CudaState*)m->state;
    if (!s) return;
    cudaCheck(cudaStreamSynchronize(s->ctx.stream));
    cudaCheck(cudaFree(s->block));
    cublasCheck(cublasDestroy(s->ctx.blas));
    cudaCheck(cudaStreamDestroy(s->ctx.stream));
    free(s->h_tok_start);
    free(s->h_tok_rows);
    free(s->h_ints);
    free(s);
    m->state = NULL;
}

static void to_device(CudaState* s, void* dst, const void* src, size_t bytes) {
    cudaCheck(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s->ctx.stream));
}
static void to_host(CudaState* s, void* dst, const void* src, size_t bytes) {
    cudaCheck(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s->ctx.stream));
}
static void stream_sync(CudaState* s) { cudaCheck(cudaStreamSynchronize(s->ctx.stream)); }

static void cuda_upload(Model* m) {
    CudaState* s = (CudaState*)m->state;
    size_t bytes = m->num_params * sizeof(float);
    to_device(s, s->params, m->params_memory, bytes);
    to_device(s, s->grads, m->grads_memory, bytes);
    to_device(s, s->mom1, m->m_memory, bytes);
    to_device(s, s->mom2, m->v_memory, bytes);
    stream_sync(s);
}

/* Parameters and moments for checkpoints; the gradients too, for parity tests. */
static void cuda_download(Model* m) {
    CudaState* s = (CudaState*)m->state;
    size_t bytes = m->num_params * sizeof(float);
    to_host(s, m->params_memory, s->params, bytes);
    to_host(s, m->grads_memory, s->grads, bytes);
    to_host(s, m->m_memory, s->mom1, bytes);
    to_host(s, m->v_memory, s->mom2, bytes);
    stream_sync(s);
}

static void cuda_get_logits(Model* m, float* out) {
    CudaState* s = (CudaState*)m->state;
    to_host(s, out, s->logits, (size_t)s->B * s->T * m->cfg.vocab * sizeof(float));
    stream_sync(s);
}

static void check_tokens(const int* t, size_t n, int V, const char* what) {
    for (size_t i = 0; i < n; i++) {
        if (t[i] < 0 || t[i] >= V) {
            fprintf(stderr, "cuda backend: %s[%zu] = %d: expected a token in 0..%d\n", what, i, t[i], V - 1);
            exit(EXIT_FAILURE);
        }
    }
}

/* Embedding and every transformer block for the inputs already on the device (B, T);
 * leaves the final residual stream in residual3 of the last layer. */
static void forward_blocks(Model* m, int B, int T) {
    CudaState* s = (CudaState*)m->state;
    const CudaCtx* x = &s->ctx;
    const GPTConfig* c = &m->cfg;
    const GPTParams* p = &s->p;
    int C = c->d_model, NH = c->n_head, N = B * T;
    size_t NC = (size_t)N * C;
    cuda_encoder_forward(x, s->encoded, s->inputs, NULL, p->wte, p->wpe, N, T, C);
    for (int l = 0; l < c->n_layer; l++) {
        const float* residual = l == 0 ? s->encoded : s->residual3 + (l - 1) * NC;
        float* ln1 = s->ln1 + l * NC;
        float* qkv = s->qkv + l * NC * 3;
        float* atty = s->atty + l * NC;
        float* att = s->att + (size_t)l * B * NH * T * T;
        float* res2 = s->residual2 + l * NC;
        float* ln2 = s->ln2 + l * NC;
        float* fch = s->fch + l * NC * 4;
        float* fchg = s->fch_gelu + l * NC * 4;
        float* res3 = s->residual3 + l * NC;
        cuda_layernorm_forward(x, ln1, s->ln1_mean + l * N, s->ln1_rstd + l * N, residual, p->ln1w + l * C,
                               p->ln1b + l * C, N, C);
        cuda_matmul_forward(x, qkv, ln1, p->qkvw + (size_t)l * 3 * C * C, p->qkvb + l * 3 * C, N, C, 3 * C);
        cuda_attention_forward(x, atty, att, qkv, &s->attn, B, T, C, NH);
        cuda_matmul_forward(x, res2, atty, p->attprojw + (size_t)l * C * C, p->attprojb + l * C, N, C, C);
        cuda_residual_forward(x, res2, res2, residual, NC);
        cuda_layernorm_forward(x, ln2, s->ln2_mean + l * N, s->ln2_rstd + l * N, res2, p->ln2w + l * C,
                               p->ln2b + l * C, N, C);
        cuda_matmul_forward(x, fch, ln2, p->fcw + (size_t)l * 4 * C * C, p->fcb + l * 4 * C, N, C, 4 * C);
        cuda_gelu_forward(x, fchg, s->fch_tanh + l * NC * 4, fch, NC * 4);
        cuda_matmul_forward(x, res3, fchg, p->fcprojw + (size_t)l * 4 * C * C, p->fcprojb + l * C, N, 4 * C, C);
        cuda_residual_forward(x, res3, res3, res2, NC);
    }
}

/* The rows of each token, in increasing row order (a counting sort): the embedding
 * gradient then sums them in the CPU's order, with no atomics. */
static void upload_token_rows(Model* m, const int* inputs, int N) {
    CudaState* s = (CudaState*)m->state;
    int V = m->cfg.vocab;
    int* start = s->h_tok_start;
    memset(start, 0, (V + 1) * sizeof(int));
    for (int n = 0; n < N; n++) start[inputs[n] + 1]++;
    for (int v = 0; v < V; v++) start[v + 1] += start[v];
    int* fill = s->h_tok_rows;
    int* cursor = (int*)host_alloc((size_t)V * sizeof(int));
    memcpy(cursor, start, V * sizeof(int));
    for (int n = 0; n < N; n++) fill[cursor[inputs[n]]++] = n;
    free(cursor);
    to_device(s, s->tok_start, start, (V + 1) * sizeof(int));
    to_device(s, s->tok_rows, fill, (size_t)N * sizeof(int));
}

static void cuda_forward(Model* m, const int* inputs, const int* targets, int B, int T, float* logprobs) {
    CudaState* s = (CudaState*)m->state;
    const CudaCtx* x = &s->ctx;
    const GPTConfig* c = &m->cfg;
    int C = c->d_model, V = c->vocab, N = B * T;
    check_tokens(inputs, N, V, "forward inputs");
    check_tokens(targets, N, V, "forward targets");
    to_device(s, s->inputs, inputs, (size_t)N * sizeof(int));
    to_device(s, s->targets, targets, (size_t)N * sizeof(int));
    upload_token_rows(m, inputs, N);
    forward_blocks(m, B, T);
    const float* last = s->residual3 + (size_t)(c->n_layer - 1) * N * C;
    cuda_layernorm_forward(x, s->lnf, s->lnf_mean, s->lnf_rstd, last, s->p.lnfw, s->p.lnfb, N, C);
    cuda_matmul_forward(x, s->logits, s->lnf, s->p.wte, NULL, N, C, V);
    cuda_logprob_forward(x, s->logprobs, s->probs, s->logits, s->targets, N, V, TOK_PAD);
    to_host(s, logprobs, s->logprobs, (size_t)N * sizeof(float));
    stream_sync(s);
    s->B = B;
    s->T = T;
}

static void zero(CudaState* s, float* p, size_t n) { cudaCheck(cudaMemsetAsync(p, 0, n * sizeof(float), s->ctx.stream)); }

static void cuda_backward(Model* m, const float* dlogprobs) {
    CudaState* s = (CudaState*)m->state;
    const CudaCtx* x = &s->ctx;
    const GPTConfig* c = &m->cfg;
    const GPTParams* p = &s->p;
    const GPTParams* g = &s->g;
    int B = s->B, T = s->T, C = c->d_model, NH = c->n_head, V = c->vocab, L = c->n_layer, N = B * T;
    size_t NC = (size_t)N * C;

    to_device(s, s->dlogprobs, dlogprobs, (size_t)N * sizeof(float));
    cuda_logprob_backward(x, s->dlogits, s->dlogprobs, s->probs, s->targets, N, V, TOK_PAD);
    zero(s, s->dC, NC);
    cuda_matmul_backward(x, s->dC, g->wte, NULL, s->dlogits, s->lnf, p->wte, N, C, V);
    zero(s, s->dresidual, NC);
    cuda_layernorm_backward(x, s->dresidual, g->lnfw, g->lnfb, s->dC, s->residual3 + (L - 1) * NC, p->lnfw, s->lnf_mean,
                            s->lnf_rstd, N, C);

    for (int l = L - 1; l >= 0; l--) {
        const float* residual = l == 0 ? s->encoded : s->residual3 + (l - 1) * NC;
        /* dresidual holds d(residual3); the skip path carries it to residual2 unchanged. */
        zero(s, s->d4C, NC * 4);
        cuda_matmul_backward(x, s->d4C, g->fcprojw + (size_t)l * 4 * C * C, g->fcprojb + l * C, s->dresidual,
                             s->fch_gelu + l * NC * 4, p->fcprojw + (size_t)l * 4 * C * C, N, 4 * C, C);
        zero(s, s->d4C2, NC * 4);
        cuda_gelu_backward(x, s->d4C2, s->fch + l * NC * 4, s->fch_tanh + l * NC * 4, s->d4C, NC * 4);
        zero(s, s->dC, NC);
        cuda_matmul_backward(x, s->dC, g->fcw + (size_t)l * 4 * C * C, g->fcb + l * 4 * C, s->d4C2, s->ln2 + l * NC,
                             p->fcw + (size_t)l * 4 * C * C, N, C, 4 * C);
        cuda_layernorm_backward(x, s->dresidual, g->ln2w + l * C, g->ln2b + l * C, s->dC, s->residual2 + l * NC,
                                p->ln2w + l * C, s->ln2_mean + l * N, s->ln2_rstd + l * N, N, C);
        /* dresidual now holds d(residual2) */
        zero(s, s->dC2, NC);
        cuda_matmul_backward(x, s->dC2, g->attprojw + (size_t)l * C * C, g->attprojb + l * C, s->dresidual,
                             s->atty + l * NC, p->attprojw + (size_t)l * C * C, N, C, C);
        zero(s, s->d3C, NC * 3);
        cuda_attention_backward(x, s->d3C, s->datt, s->dC2, s->qkv + l * NC * 3, s->att + (size_t)l * B * NH * T * T,
                                &s->attn, B, T, C, NH);
        zero(s, s->dC, NC);
        cuda_matmul_backward(x, s->dC, g->qkvw + (size_t)l * 3 * C * C, g->qkvb + l * 3 * C, s->d3C, s->ln1 + l * NC,
                             p->qkvw + (size_t)l * 3 * C * C, N, C, 3 * C);
        cuda_layernorm_backward(x, s->dresidual, g->ln1w + l * C, g->ln1b + l * C, s->dC, residual, p->ln1w + l * C,
                                s->ln1_mean + l * N, s->ln1_rstd + l * N, N, C);
    }
    cuda_encoder_backward_wte(x, g->wte, s->dresidual, s->tok_start, s->tok_rows, V, C);
    cuda_encoder_backward_wpe(x, g->wpe, s->dresidual, B, T, C);
    /* no sync: the next forward, grad_norm or download waits on the stream */
}

static void cuda_zero_grad(Model* m) {
    CudaState* s = (CudaState*)m->state;
    zero(s, s->grads, m->num_params);
}

static float cuda_grad_norm(Model* m) {
    CudaState* s = (CudaState*)m->state;
    double sum = 0.0;
    cuda_sumsq(&s->ctx, s->grads, m->num_params);
    to_host(s, &sum, s->ctx.sumsq + CUDA_SUMSQ_BLOCKS, sizeof sum);
    stream_sync(s);
    return (float)sqrt(sum);
}

/* The step's scalars are computed here exactly as cpu_adamw computes them. */
static void cuda_adamw_step(Model* m, const AdamWConfig* hp, float grad_scale) {
    CudaState* s = (CudaState*)m->state;
    m->step++;
    float bc1 = 1.0f - powf(hp->beta1, (float)m->step);
    float bc2 = 1.0f - powf(hp->beta2, (float)m->step);
    float bc2_sqrt = sqrtf(bc2);
    float step_size = hp->lr / bc1;
    float decay = 1.0f - hp->lr * hp->weight_decay;
    cuda_adamw(&s->ctx, s->params, s->grads, s->mom1, s->mom2, m->num_params, hp->beta1, hp->beta2, hp->eps, grad_scale,
               step_size, decay, bc2_sqrt);
}

static void cuda_prefill(Model* m, const int* tokens, const int* lens, int B, int T, float* logits) {
    CudaState* s = (CudaState*)m->state;
    const CudaCtx* x = &s->ctx;
    const GPTConfig* c = &m->cfg;
    int C = c->d_model, V = c->vocab, N = B * T;
    size_t NC = (size_t)N * C, slot_stride = (size_t)c->n_ctx * C, layer_stride = (size_t)m->max_batch * slot_stride;
    if (B > m->max_batch || T > c->n_ctx) die("prefill larger than the model's slots or context");
    check_tokens(tokens, N, V, "prefill tokens");
    for (int b = 0; b < B; b++)
        if (lens[b] < 1 || lens[b] > T) die("prefill: a prompt length outside 1..T");
    to_device(s, s->inputs, tokens, (size_t)N * sizeof(int));
    to_device(s, s->ints, lens, (size_t)B * sizeof(int));
    forward_blocks(m, B, T);
    for (int l = 0; l < c->n_layer; l++)
        cuda_kv_store_prefill(x, s->kcache + l * layer_stride, s->vcache + l * layer_stride, s->qkv + l * NC * 3, B, T,
                              C, slot_stride);
    cuda_gather_last(x, s->tmp, s->residual3 + (size_t)(c->n_layer - 1) * NC, s->ints, B, T, C);
    cuda_layernorm_forward(x, s->xn, s->mean, s->rstd, s->tmp, s->p.lnfw, s->p.lnfb, B, C);
    cuda_matmul_forward(x, s->gen_logits, s->xn, s->p.wte, NULL, B, C, V);
    to_host(s, logits, s->gen_logits, (size_t)B * V * sizeof(float));
    stream_sync(s);
}

static void cuda_decode(Model* m, const int* slots, const int* tokens, const int* pos, int n, float* logits) {
    CudaState* s = (CudaState*)m->state;
    const CudaCtx* x = &s->ctx;
    const GPTConfig* c = &m->cfg;
    const GPTParams* p = &s->p;
    int C = c->d_model, NH = c->n_head, V = c->vocab;
    size_t slot_stride = (size_t)c->n_ctx * C, layer_stride = (size_t)m->max_batch * slot_stride;
    if (n < 1 || n > m->max_batch) die("decode: row count outside 1..max_batch");
    for (int i = 0; i < n; i++) {
        if (slots[i] < 0 || slots[i] >= m->max_batch || pos[i] < 0 || pos[i] >= c->n_ctx || tokens[i] < 0 ||
            tokens[i] >= V) {
            fprintf(stderr, "cuda backend: decode row %d: slot %d, position %d, token %d out of range\n", i, slots[i],
                    pos[i], tokens[i]);
            exit(EXIT_FAILURE);
        }
    }
    /* one copy: slots | tokens | pos */
    memcpy(s->h_ints, slots, n * sizeof(int));
    memcpy(s->h_ints + n, tokens, n * sizeof(int));
    memcpy(s->h_ints + 2 * n, pos, n * sizeof(int));
    to_device(s, s->ints, s->h_ints, 3 * (size_t)n * sizeof(int));
    const int *d_slots = s->ints, *d_tokens = s->ints + n, *d_pos = s->ints + 2 * n;
    cuda_encoder_forward(x, s->x, d_tokens, d_pos, p->wte, p->wpe, n, c->n_ctx, C);
    size_t nC = (size_t)n * C;
    for (int l = 0; l < c->n_layer; l++) {
        float* kc = s->kcache + l * layer_stride;
        float* vc = s->vcache + l * layer_stride;
        cuda_layernorm_forward(x, s->xn, s->mean, s->rstd, s->x, p->ln1w + l * C, p->ln1b + l * C, n, C);
        cuda_matmul_forward(x, s->q3, s->xn, p->qkvw + (size_t)l * 3 * C * C, p->qkvb + l * 3 * C, n, C, 3 * C);
        cuda_kv_store_decode(x, kc, vc, s->q3, d_slots, d_pos, n, C, slot_stride);
        cuda_decode_attention(x, s->y, s->q3, kc, vc, d_slots, d_pos, n, C, NH, slot_stride, c->n_ctx);
        cuda_matmul_forward(x, s->tmp, s->y, p->attprojw + (size_t)l * C * C, p->attprojb + l * C, n, C, C);
        cuda_residual_forward(x, s->x, s->x, s->tmp, nC);
        cuda_layernorm_forward(x, s->xn, s->mean, s->rstd, s->x, p->ln2w + l * C, p->ln2b + l * C, n, C);
        cuda_matmul_forward(x, s->h4, s->xn, p->fcw + (size_t)l * 4 * C * C, p->fcb + l * 4 * C, n, C, 4 * C);
        cuda_gelu_forward(x, s->h4g, s->h4t, s->h4, nC * 4);
        cuda_matmul_forward(x, s->tmp, s->h4g, p->fcprojw + (size_t)l * 4 * C * C, p->fcprojb + l * C, n, 4 * C, C);
        cuda_residual_forward(x, s->x, s->x, s->tmp, nC);
    }
    cuda_layernorm_forward(x, s->xn, s->mean, s->rstd, s->x, p->lnfw, p->lnfb, n, C);
    cuda_matmul_forward(x, s->gen_logits, s->xn, p->wte, NULL, n, C, V);
    to_host(s, logits, s->gen_logits, (size_t)n * V * sizeof(float));
    stream_sync(s);
}

/* In the order of ModelBackend's fields (gpt.h). */
extern "C" const ModelBackend MODEL_BACKEND_CUDA = {
    "cuda",          cuda_setup,   cuda_teardown,  cuda_upload,     cuda_download, cuda_get_logits, cuda_forward,
    cuda_backward,   cuda_zero_grad, cuda_grad_norm, cuda_adamw_step, cuda_prefill,  cuda_decode,
};
