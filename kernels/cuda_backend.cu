/* The CUDA backend of the policy model (MODEL_BACKEND_CUDA): the host-side orchestration of
 * cuda_layers (its layer loops are src/model/block_loop.h's, over CUDA_BLOCK_OPS), step for
 * step the twin of src/model/cpu_backend.c over packed batches
 * (PackedBatch in gpt.h: segments end to end, a completion reading its prompt's keys). setup
 * makes one device allocation, sized by m->cap, for the parameters, gradients, both Adam
 * moments, every activation, the scratch and the prompt and row KV caches, one stream and one
 * cuBLAS handle bound to it; nothing is allocated per call. Each forward builds its layout
 * (positions, the segment table, who reads each prompt, the embedding rows by token and by
 * position) on the host and sends it in one copy. upload/download copy the Model's four host
 * buffers to and from the device; forward and decode return their results (log-probs,
 * logits) to the host, where the trainer and the sampler use them. What does not depend on the
 * family is shared with the Llama/Qwen2 backend (llama_cuda_backend.cu) and declared in
 * cuda_layers.cuh: the CudaCore both states start with (device, stream, cuBLAS handle, the
 * parameter buffers) and the entries on it (upload, download, zero_grad, grad_norm, adamw),
 * the Carver, the layout buffer, the batch checks, and CUDA_BLOCK_OPS, whose matrix products,
 * residual adds and zeroing the llama loops use. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <type_traits>

#include "cuda_backend.h"
#include "cuda_layers.cuh"

extern "C" {
#include "core/host_info.h"
#include "model/model.h"
}
#include "model/adamw_scalars.h"
#include "model/block_loop.h"

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

/* ---- what both backends share (cuda_layers.cuh) --------------------------------------------- */
SAPO_CUDA_NS_BEGIN

void cuda_die(const char* what) {
    fprintf(stderr, "cuda backend: %s\n", what);
    exit(EXIT_FAILURE);
}

void* cuda_host_alloc(size_t bytes) {
    void* p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "%s:%d: out of host memory (%zu bytes)\n", __FILE__, __LINE__, bytes);
        exit(EXIT_FAILURE);
    }
    return p;
}

void cuda_core_open(CudaCore* k, int det) {
    k->device = cuda_device_for_this_rank();
    if (k->device < 0) cuda_die("no CUDA device is visible (model.backend = cuda needs one)");
    cudaCheck(cudaSetDevice(k->device));
    cudaCheck(cudaStreamCreate(&k->ctx.stream));
    cublasCheck(cublasCreate(&k->ctx.blas));
    cublasCheck(cublasSetStream(k->ctx.blas, k->ctx.stream));
    k->tf32 = host_cuda_tf32();
    cublasCheck(cublasSetMathMode(k->ctx.blas, k->tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
    k->ctx.det = det;
}

void cuda_core_close(CudaCore* k) {
    cudaCheck(cudaStreamSynchronize(k->ctx.stream));
    cudaCheck(cudaFree(k->block));
    cublasCheck(cublasDestroy(k->ctx.blas));
    cudaCheck(cudaStreamDestroy(k->ctx.stream));
}

void cuda_to_device(const CudaCore* k, void* dst, const void* src, size_t bytes) {
    cudaCheck(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, k->ctx.stream));
}
void cuda_to_host(const CudaCore* k, void* dst, const void* src, size_t bytes) {
    cudaCheck(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, k->ctx.stream));
}
void cuda_stream_sync(const CudaCore* k) { cudaCheck(cudaStreamSynchronize(k->ctx.stream)); }
void cuda_zero(const CudaCore* k, float* p, size_t n) {
    cudaCheck(cudaMemsetAsync(p, 0, n * sizeof(float), k->ctx.stream));
}

size_t align256(size_t bytes) { return (bytes + 255) / 256 * 256; }

void carve_add(Carver* c, void** ptr, size_t bytes) {
    if (c->n == 96) cuda_die("too many device buffers (raise the Carver's capacity)");
    c->ptr[c->n] = ptr;
    c->bytes[c->n] = align256(bytes);
    c->n++;
}

cudaError_t carve_place(Carver* c, CudaCore* k) {
    size_t total = 0;
    for (int i = 0; i < c->n; i++) total += c->bytes[i];
    k->block_bytes = total;
    cudaError_t err = cudaMalloc(&k->block, total);
    if (err != cudaSuccess) return err;
    char* at = (char*)k->block;
    for (int i = 0; i < c->n; i++) {
        *c->ptr[i] = at;
        at += c->bytes[i];
    }
    return cudaSuccess;
}

void* cuda_lay_put(CudaLayout* l, size_t* used, const void* src, size_t bytes) {
    memcpy(l->host + *used, src, bytes);
    void* dev = l->dev + *used;
    *used += align256(bytes);
    return dev;
}
void* cuda_lay_take(CudaLayout* l, size_t* used, size_t bytes, void** host) {
    *host = l->host + *used;
    void* dev = l->dev + *used;
    *used += align256(bytes);
    return dev;
}
void cuda_lay_send(const CudaCore* k, const CudaLayout* l, size_t used) {
    if (used > l->bytes) cuda_die("the batch layout outgrew its buffer (its size estimate is wrong)");
    cuda_to_device(k, l->dev, l->host, used);
}

/* The device would fault (or silently read garbage) where the CPU backend trusts its caller
 * (model_forward_packed runs packed_check): the same checks, here, against this state. */
void cuda_check_batch(const Model* m, const PackedBatch* pb, int no_target) {
    const ModelShape* c = &m->cfg;
    int N = pb->n_tokens, covered = 0;
    long att = 0;
    if (N < 1 || N > m->cap.max_tokens || pb->n_segments < 1) {
        fprintf(stderr, "cuda backend: a batch of %d tokens in %d segments (capacity %d tokens)\n", N, pb->n_segments,
                m->cap.max_tokens);
        exit(EXIT_FAILURE);
    }
    for (int k = 0; k < pb->n_segments; k++) {
        const Segment* g = &pb->segs[k];
        int plen = 0;
        if (g->prefix >= 0) {
            if (g->prefix >= k || pb->segs[g->prefix].prefix >= 0)
                cuda_die("a segment's prefix is not an earlier segment without a prefix");
            plen = pb->segs[g->prefix].len;
        } else if (g->prefix != -1) {
            cuda_die("a segment's prefix is neither -1 nor a segment");
        }
        if (g->len < 1 || g->start != covered || plen + g->len > c->n_ctx)
            cuda_die("the segments do not tile the batch in order within n_ctx");
        covered += g->len;
        att += (long)g->len * (plen + g->len);
    }
    if (covered != N) cuda_die("the segments do not cover the batch");
    if (att * c->n_head > m->cap.max_att) cuda_die("the batch has more attention weights than the model's capacity");
    for (int i = 0; i < N; i++) {
        int in = pb->inputs[i], tg = pb->targets[i];
        if (in < 0 || in >= c->vocab || ((tg < 0 || tg >= c->vocab) && tg != no_target)) {
            fprintf(stderr, "cuda backend: token %d: input %d / target %d outside 0..%d\n", i, in, tg, c->vocab - 1);
            exit(EXIT_FAILURE);
        }
    }
}

static CudaCore* core_of(Model* m) { return (CudaCore*)m->state; }

/* The Model's four host buffers (parameters, gradients, both moments) to their device twins
 * or back. */
static void copy_buffers(Model* m, int up) {
    CudaCore* k = core_of(m);
    size_t bytes = m->num_params * sizeof(float);
    float* host[4] = {m->params_memory, m->grads_memory, m->m_memory, m->v_memory};
    float* dev[4] = {k->params, k->grads, k->mom1, k->mom2};
    for (int i = 0; i < 4; i++) {
        if (up)
            cuda_to_device(k, dev[i], host[i], bytes);
        else
            cuda_to_host(k, host[i], dev[i], bytes);
    }
    cuda_stream_sync(k);
}
void cuda_core_upload(Model* m) { copy_buffers(m, 1); }
/* Parameters and moments for checkpoints; the gradients too, for parity tests. */
void cuda_core_download(Model* m) { copy_buffers(m, 0); }

void cuda_core_zero_grad(Model* m) { cuda_zero(core_of(m), core_of(m)->grads, m->num_params); }

float cuda_core_grad_norm(Model* m) {
    CudaCore* k = core_of(m);
    double sum = 0.0;
    if (k->ctx.det) { /* the chunks of det_math.h, added here in order as cpu_grad_norm adds them */
        double part[DET_SUMSQ_CHUNKS];
        cuda_det_sumsq(&k->ctx, k->grads, m->num_params);
        cuda_to_host(k, part, k->ctx.sumsq, sizeof part);
        cuda_stream_sync(k);
        for (int i = 0; i < DET_SUMSQ_CHUNKS; i++) sum += part[i];
        return (float)sqrt(sum);
    }
    cuda_sumsq(&k->ctx, k->grads, m->num_params);
    cuda_to_host(k, &sum, k->ctx.sumsq + CUDA_SUMSQ_BLOCKS, sizeof sum);
    cuda_stream_sync(k);
    return (float)sqrt(sum);
}

/* The step's scalars are computed here exactly as cpu_adamw computes them. */
void cuda_core_adamw(Model* m, const AdamWConfig* hp, float grad_scale) {
    CudaCore* k = core_of(m);
    m->step++;
    float step_size, decay, bc2_sqrt;
    adamw_scalars(hp, m->step, k->ctx.det, &step_size, &decay, &bc2_sqrt);
    cuda_adamw(&k->ctx, k->params, k->grads, k->mom1, k->mom2, m->num_params, hp->beta1, hp->beta2, hp->eps, grad_scale,
               step_size, decay, bc2_sqrt);
}

SAPO_CUDA_NS_END

/* ---- state -------------------------------------------------------------------------------- */
typedef struct {
    CudaCore core; /* first: the shared entries (cuda_core_*) and CUDA_BLOCK_OPS reach it from m->state */
    GPTParams p, g;
    /* The last forward's layout, packed into lay (one copy per forward; see send_layout):
     * the pointers below point into it. */
    CudaLayout lay;
    int *inputs, *targets, *pos, *seg_of; /* (N) each */
    CudaSeg* segs;                        /* (n_segs) */
    int* children;                        /* (n_segs) segments grouped by their prefix */
    int *tok_start, *tok_rows;            /* (V + 1), (N): rows of each token, for dwte */
    int *pos_start, *pos_rows;            /* (n_ctx + 1), (N): rows of each position, for dwpe */
    int* ints;                            /* decode: rows | prefix | prefix_len | tokens | pos */
    /* the blocks' activations and backward scratch, as on the CPU (block_loop.h); a.datt has
     * one layer's attention weights (cap.max_att) */
    BlockActs a;
    float *lnf, *lnf_mean, *lnf_rstd, *logits, *probs, *logprobs, *dlogprobs, *dlogits;
    /* generation's KV caches and decode scratch (block_loop.h), and its logits (max_rows, V) */
    DecodeActs gen;
    float* gen_logits;
    /* host scratch: the segment table, grown when needed */
    int* h_cursor; /* max(V, n_ctx): counting sort */
    CudaSeg* h_segs;
    int seg_cap;
    int* h_ints;
    int N;         /* tokens of the last forward */
    float logit_scale; /* its PackedBatch.logit_scale (1 when 0) */
    long att_used; /* attention weights per layer of the last forward */
} CudaState;
static_assert(std::is_standard_layout<CudaState>::value, "m->state must be interconvertible with its CudaCore");

static void point_params(GPTParams* p, float* memory, const size_t* sizes) {
    float** ptrs[GPT_NUM_TENSORS] = {&p->wte, &p->wpe, &p->ln1w, &p->ln1b, &p->qkvw, &p->qkvb,
                                     &p->attprojw, &p->attprojb, &p->ln2w, &p->ln2b, &p->fcw,
                                     &p->fcb, &p->fcprojw, &p->fcprojb, &p->lnfw, &p->lnfb};
    for (int i = 0; i < GPT_NUM_TENSORS; i++) {
        *ptrs[i] = memory;
        memory += sizes[i];
    }
}

/* The bytes of one forward's layout at most (send_layout's arrays, each 256-aligned): a
 * batch has at most one segment per token. */
static size_t layout_bytes(size_t N, size_t V, size_t T) {
    return align256(N * sizeof(CudaSeg)) + 7 * align256(N * sizeof(int)) + align256((V + 1) * sizeof(int)) +
           align256((T + 1) * sizeof(int));
}

static void cuda_setup(Model* m) {
    CudaState* s = (CudaState*)calloc(1, sizeof *s);
    if (!s) cuda_die("out of host memory");
    const ModelShape* c = &m->cfg;
    const ModelCapacity* cap = &m->cap;
    size_t N = cap->max_tokens, T = c->n_ctx, C = c->d_model, L = c->n_layer, V = c->vocab, P = m->num_params;
    size_t R = cap->max_rows, A = cap->max_att;
    size_t prefix_cache = L * cap->max_prefixes * T * C, row_cache = L * R * cap->row_ctx * C;
    cuda_core_open(&s->core, c->deterministic); /* deterministic: no cuBLAS call (the cuda_det_* kernels) */
    CudaCtx* x = &s->core.ctx;

    s->lay.bytes = layout_bytes(N, V, T);
    Carver cv;
    cv.n = 0;
    CARVE(&cv, s->core.params, P);
    CARVE(&cv, s->core.grads, P);
    CARVE(&cv, s->core.mom1, P);
    CARVE(&cv, s->core.mom2, P);
    CARVE(&cv, s->lay.dev, s->lay.bytes);
    CARVE(&cv, s->ints, 5 * R);
    CARVE(&cv, s->a.encoded, N * C);
    CARVE(&cv, s->a.ln1, L * N * C);
    CARVE(&cv, s->a.ln1_mean, L * N);
    CARVE(&cv, s->a.ln1_rstd, L * N);
    CARVE(&cv, s->a.qkv, L * N * 3 * C);
    CARVE(&cv, s->a.atty, L * N * C);
    CARVE(&cv, s->a.att, L * A);
    CARVE(&cv, s->a.residual2, L * N * C);
    CARVE(&cv, s->a.ln2, L * N * C);
    CARVE(&cv, s->a.ln2_mean, L * N);
    CARVE(&cv, s->a.ln2_rstd, L * N);
    CARVE(&cv, s->a.fch, L * N * 4 * C);
    CARVE(&cv, s->a.fch_gelu, L * N * 4 * C);
    CARVE(&cv, s->a.fch_tanh, L * N * 4 * C);
    CARVE(&cv, s->a.residual3, L * N * C);
    CARVE(&cv, s->lnf, N * C);
    CARVE(&cv, s->lnf_mean, N);
    CARVE(&cv, s->lnf_rstd, N);
    CARVE(&cv, s->logits, N * V);
    CARVE(&cv, s->probs, N * V);
    CARVE(&cv, s->logprobs, N);
    CARVE(&cv, s->dlogprobs, N);
    CARVE(&cv, s->a.dresidual, N * C);
    CARVE(&cv, s->a.dC, N * C);
    CARVE(&cv, s->a.dC2, N * C);
    CARVE(&cv, s->a.d3C, N * 3 * C);
    CARVE(&cv, s->a.d4C, N * 4 * C);
    CARVE(&cv, s->a.d4C2, N * 4 * C);
    CARVE(&cv, s->a.datt, A);
    CARVE(&cv, s->dlogits, N * V);
    CARVE(&cv, s->gen.kprefix, prefix_cache);
    CARVE(&cv, s->gen.vprefix, prefix_cache);
    CARVE(&cv, s->gen.krow, row_cache);
    CARVE(&cv, s->gen.vrow, row_cache);
    CARVE(&cv, s->gen.x, R * C);
    CARVE(&cv, s->gen.xn, R * C);
    CARVE(&cv, s->gen.q3, R * 3 * C);
    CARVE(&cv, s->gen.y, R * C);
    CARVE(&cv, s->gen.h4, R * 4 * C);
    CARVE(&cv, s->gen.h4g, R * 4 * C);
    CARVE(&cv, s->gen.h4t, R * 4 * C);
    CARVE(&cv, s->gen.tmp, R * C);
    CARVE(&cv, s->gen.mean, R);
    CARVE(&cv, s->gen.rstd, R);
    CARVE(&cv, s->gen_logits, R * V);
    float* ones = NULL;
    CARVE(&cv, ones, N); /* bias gradients sum over at most N rows */
    CARVE(&cv, x->partials, (size_t)CUDA_COLSUM_MAX_CHUNKS * 2 * C);
    CARVE(&cv, x->sumsq, CUDA_SUMSQ_BLOCKS + 1);
    if (c->deterministic) CARVE(&cv, x->det_scores, R * c->n_head * T);
    cudaError_t err = carve_place(&cv, &s->core);
    if (err != cudaSuccess) {
        fprintf(stderr,
                "cuda backend: cannot allocate %.1f MiB on device %d for the model (%d tokens, %ld attention weights, "
                "%d prompt caches, %d rows of %d): %s\n",
                s->core.block_bytes / 1048576.0, s->core.device, cap->max_tokens, cap->max_att, cap->max_prefixes,
                cap->max_rows, cap->row_ctx, cudaGetErrorString(err));
        exit(EXIT_FAILURE);
    }
    x->ones = ones;
    cuda_fill(x, ones, 1.0f, N);
    point_params(&s->p, s->core.params, m->tensor_sizes);
    point_params(&s->g, s->core.grads, m->tensor_sizes);
    s->lay.host = (char*)cuda_host_alloc(s->lay.bytes);
    s->h_cursor = (int*)cuda_host_alloc((V > T ? V : T) * sizeof(int));
    s->seg_cap = 64;
    s->h_segs = (CudaSeg*)cuda_host_alloc((size_t)s->seg_cap * sizeof(CudaSeg));
    s->h_ints = (int*)cuda_host_alloc(5 * R * sizeof(int));
    m->state = s;
}

static void cuda_teardown(Model* m) {
    CudaState* s = (CudaState*)m->state;
    if (!s) return;
    cuda_core_close(&s->core);
    free(s->lay.host);
    free(s->h_cursor);
    free(s->h_segs);
    free(s->h_ints);
    free(s);
    m->state = NULL;
}

static void cuda_get_logits(Model* m, float* out) {
    CudaState* s = (CudaState*)m->state;
    cuda_to_host(&s->core, out, s->logits, (size_t)s->N * m->cfg.vocab * sizeof(float));
    cuda_stream_sync(&s->core);
}

/* Checks the batch and sends its layout: tokens, positions (prefix length + index), the
 * segment of each token, the segment table with each segment's attention offset, the
 * children of every prompt, and the embedding rows by token and by position. */
static void send_layout(Model* m, const PackedBatch* pb) {
    CudaState* s = (CudaState*)m->state;
    const ModelShape* c = &m->cfg;
    int N = pb->n_tokens, NS = pb->n_segments, V = c->vocab, T = c->n_ctx;
    cuda_check_batch(m, pb, TOK_PAD);
    if (NS > s->seg_cap) {
        s->seg_cap = NS;
        free(s->h_segs);
        s->h_segs = (CudaSeg*)cuda_host_alloc((size_t)s->seg_cap * sizeof(CudaSeg));
    }
    CudaSeg* hs = s->h_segs;
    size_t used = 0;
    void* h;
    s->inputs = (int*)cuda_lay_put(&s->lay, &used, pb->inputs, (size_t)N * sizeof(int));
    s->targets = (int*)cuda_lay_put(&s->lay, &used, pb->targets, (size_t)N * sizeof(int));
    s->pos = (int*)cuda_lay_take(&s->lay, &used, (size_t)N * sizeof(int), &h);
    int* pos = (int*)h;
    s->seg_of = (int*)cuda_lay_take(&s->lay, &used, (size_t)N * sizeof(int), &h);
    int* seg_of = (int*)h;
    s->children = (int*)cuda_lay_take(&s->lay, &used, (size_t)NS * sizeof(int), &h);
    int* children = (int*)h;
    s->att_used = (long)cuda_segment_table(hs, children, pos, seg_of, pb->segs, NS, c->n_head);
    s->segs = (CudaSeg*)cuda_lay_put(&s->lay, &used, hs, (size_t)NS * sizeof(CudaSeg));
    s->tok_start = (int*)cuda_lay_take(&s->lay, &used, (size_t)(V + 1) * sizeof(int), &h);
    int* tok_start = (int*)h;
    s->tok_rows = (int*)cuda_lay_take(&s->lay, &used, (size_t)N * sizeof(int), &h);
    cuda_rows_by_key(tok_start, (int*)h, s->h_cursor, pb->inputs, N, V);
    s->pos_start = (int*)cuda_lay_take(&s->lay, &used, (size_t)(T + 1) * sizeof(int), &h);
    int* pos_start = (int*)h;
    s->pos_rows = (int*)cuda_lay_take(&s->lay, &used, (size_t)N * sizeof(int), &h);
    cuda_rows_by_key(pos_start, (int*)h, s->h_cursor, pos, N, T);
    cuda_lay_send(&s->core, &s->lay, used);
    s->N = N;
}

/* The blocks' layers (block_loop.h) on the device; ctx is the CudaState. */
static void op_attention_forward(void* ctx, float* out, float* att, const float* qkv, int N, int C, int NH) {
    const CudaState* s = (const CudaState*)ctx;
    cuda_attention_forward(&s->core.ctx, out, att, qkv, s->segs, s->seg_of, N, C, NH);
}
static void op_attention_backward(void* ctx, float* dqkv, float* datt, const float* dout, const float* qkv,
                                  const float* att, int N, int C, int NH) {
    const CudaState* s = (const CudaState*)ctx;
    cuda_attention_backward(&s->core.ctx, dqkv, datt, dout, qkv, att, s->segs, s->children, s->seg_of, N, C, NH);
}
static void op_zero(void* ctx, float* p, size_t n) { cuda_zero((const CudaCore*)ctx, p, n); }
static void op_prefill_kv_store(void* ctx, float* kprefix, float* vprefix, const float* qkv, int N, int C,
                                size_t prefix_slot) {
    const CudaState* s = (const CudaState*)ctx;
    cuda_kv_store_prefill(&s->core.ctx, kprefix, vprefix, qkv, s->segs, s->seg_of, N, C, prefix_slot);
}
static void op_decode_kv_store(void* ctx, float* krow, float* vrow, const float* q3, const DecodeStep* d, int C,
                               size_t row_slot) {
    cuda_kv_store_decode(&((CudaState*)ctx)->core.ctx, krow, vrow, q3, d->rows, d->prefix_len, d->pos, d->n, C,
                         row_slot);
}
static void op_decode_attention(void* ctx, float* y, const float* q3, const float* kprefix, const float* vprefix,
                                const float* krow, const float* vrow, const DecodeStep* d, int C, int NH,
                                size_t prefix_slot, size_t row_slot, int n_ctx) {
    cuda_decode_attention(&((CudaState*)ctx)->core.ctx, y, q3, kprefix, vprefix, krow, vrow, d->rows, d->prefix,
                          d->prefix_len, d->pos, d->n, C, NH, prefix_slot, row_slot, n_ctx);
}

/* In the order of BlockOps' fields. */
SAPO_CUDA_NS_BEGIN
const BlockOps CUDA_BLOCK_OPS = {
    OnState<cuda_encoder_forward>::call,  OnState<cuda_layernorm_forward>::call, OnState<cuda_layernorm_backward>::call,
    OnState<cuda_matmul_forward>::call,   OnState<cuda_matmul_backward>::call,   op_attention_forward,
    op_attention_backward,                OnState<cuda_gelu_forward>::call,      OnState<cuda_gelu_backward>::call,
    OnState<cuda_residual_forward>::call, op_zero,                               op_prefill_kv_store,
    op_decode_kv_store,                   op_decode_attention,
};
SAPO_CUDA_NS_END

/* Embedding and every transformer block for the layout already on the device; leaves the
 * final residual stream in residual3 of the last layer. */
static void forward_blocks(Model* m, int kv_only_last) {
    CudaState* s = (CudaState*)m->state;
    block_forward(&CUDA_BLOCK_OPS, s, &s->a, &s->p, s->inputs, s->pos, &m->cfg, s->N, s->att_used,
                  kv_only_last);
}

static void cuda_forward(Model* m, const PackedBatch* pb, float* logprobs) {
    CudaState* s = (CudaState*)m->state;
    const CudaCtx* x = &s->core.ctx;
    const ModelShape* c = &m->cfg;
    int C = c->d_model, V = c->vocab;
    send_layout(m, pb);
    forward_blocks(m, 0);
    int N = s->N;
    const float* last = s->a.residual3 + (size_t)(c->n_layer - 1) * N * C;
    head_forward(&CUDA_BLOCK_OPS, s, s->logits, s->lnf, s->lnf_mean, s->lnf_rstd, last, &s->p, N, C, V);
    s->logit_scale = pb->logit_scale > 0.0f ? pb->logit_scale : 1.0f;
    cuda_logprob_forward(x, s->logprobs, s->probs, s->logits, s->targets, N, V, TOK_PAD, s->logit_scale);
    cuda_to_host(&s->core, logprobs, s->logprobs, (size_t)N * sizeof(float));
    cuda_stream_sync(&s->core);
}

static void cuda_backward(Model* m, const float* dlogprobs) {
    CudaState* s = (CudaState*)m->state;
    const CudaCtx* x = &s->core.ctx;
    const ModelShape* c = &m->cfg;
    const GPTParams* p = &s->p;
    const GPTParams* g = &s->g;
    int N = s->N, C = c->d_model, V = c->vocab;

    cuda_to_device(&s->core, s->dlogprobs, dlogprobs, (size_t)N * sizeof(float));
    cuda_logprob_backward(x, s->dlogits, s->dlogprobs, s->probs, s->targets, N, V, TOK_PAD, s->logit_scale);
    head_backward(&CUDA_BLOCK_OPS, s, &s->a, p, g, s->dlogits, s->lnf, s->lnf_mean, s->lnf_rstd, c, N);
    block_backward(&CUDA_BLOCK_OPS, s, &s->a, p, g, c, N, s->att_used);
    /* the embeddings' gradients by send_layout's rows of each token and position: the CPU's
     * order of addition, without atomics */
    cuda_encoder_backward(x, g->wte, s->a.dresidual, s->tok_start, s->tok_rows, V, C);
    cuda_encoder_backward(x, g->wpe, s->a.dresidual, s->pos_start, s->pos_rows, c->n_ctx, C);
    /* no sync: the next forward, grad_norm or download waits on the stream */
}

/* The prompts' keys and values of every layer go to prompt cache slot = segment index. */
static void cuda_prefill(Model* m, const PackedBatch* pb) {
    CudaState* s = (CudaState*)m->state;
    char err[256];
    if (prefill_check(&m->cap, pb, err, sizeof err)) cuda_die(err);
    send_layout(m, pb);
    forward_blocks(m, 1);
    block_prefill_store(&CUDA_BLOCK_OPS, s, &s->a, &s->gen, &m->cfg, &m->cap, s->N);
    /* no sync: decode's copies wait on the stream */
}

/* Checks the step on the host, sends its rows in one copy and returns the logits. */
static void cuda_decode(Model* m, const DecodeStep* d, float* logits) {
    CudaState* s = (CudaState*)m->state;
    int n = d->n, V = m->cfg.vocab;
    char err[256];
    if (decode_check(&m->cfg, &m->cap, d, err, sizeof err)) cuda_die(err);
    /* rows | prefix | prefix_len | tokens | pos */
    const int* parts[5] = {d->rows, d->prefix, d->prefix_len, d->tokens, d->pos};
    for (int k = 0; k < 5; k++) memcpy(s->h_ints + (size_t)k * n, parts[k], (size_t)n * sizeof(int));
    cuda_to_device(&s->core, s->ints, s->h_ints, 5 * (size_t)n * sizeof(int));
    DecodeStep dev = {n, s->ints, s->ints + n, s->ints + 2 * n, s->ints + 3 * n, s->ints + 4 * n};
    block_decode(&CUDA_BLOCK_OPS, s, &s->gen, &s->p, &dev, &m->cfg, &m->cap, s->gen_logits);
    cuda_to_host(&s->core, logits, s->gen_logits, (size_t)n * V * sizeof(float));
    cuda_stream_sync(&s->core);
}

/* In the order of ModelBackend's fields (gpt.h). */
extern "C" const ModelBackend MODEL_BACKEND_CUDA = {
    "cuda",        MODEL_FAMILY_BYTE_GPT,  cuda_backend_available, cuda_set_local_rank, cuda_device_for_this_rank,
    cuda_setup,    cuda_teardown,
    cuda_core_upload, cuda_core_download,  cuda_get_logits,     cuda_forward,   cuda_backward,
    cuda_core_zero_grad, cuda_core_grad_norm, cuda_core_adamw,  cuda_prefill,   cuda_decode,
};
