/* Checkpoint files (see checkpoint.h). Layout, all little-endian:
 *   0  char[8]  magic "SAPOGPT1"
 *   8  u32      version
 *  12  u32      n_layer, n_head, d_model, n_ctx, vocab (5 x u32)
 *  32  u32      flags (bit 0: Adam moments follow the parameters)
 *  36  u32      reserved (0)
 *  40  u64      step
 *  48  u64      number of parameters P
 *  56  u64      payload bytes (4P, or 12P with moments)
 *  64  u64      FNV-1a 64 checksum of the payload
 *  72  ...      version 1 (byte_gpt): zero padding to 128 bytes; version 2 (any other family):
 *               u32 family, n_kv_head, head_dim, d_ff; f32 rope_theta, norm_eps; u32 flags
 *               (bit 0 qkv_bias, bit 1 o_bias, bit 2 tied), then zero padding to 128 bytes
 * 128  f32[P]   parameters, then f32[P] first moments, f32[P] second moments */
#include "model/checkpoint.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "core/fnv1a.h"
#include "io/atomic_file.h"
#include "model/family.h"

#define HEADER_BYTES 128

static void put_u32(unsigned char* p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void put_u64(unsigned char* p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t get_u32(const unsigned char* p) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) v |= (uint32_t)p[i] << (8 * i);
    return v;
}
static uint64_t get_u64(const unsigned char* p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static uint32_t float_bits(float x) {
    uint32_t v;
    memcpy(&v, &x, 4);
    return v;
}
static float bits_float(uint32_t v) {
    float x;
    memcpy(&x, &v, 4);
    return x;
}

static int host_is_little_endian(void) {
    uint16_t x = 1;
    return *(unsigned char*)&x == 1;
}

int checkpoint_save(Model* m, const char* path, int with_optimizer, char* err, size_t errlen) {
    if (!host_is_little_endian()) return set_error(err, errlen, "checkpoint %s: big-endian hosts are not supported", path);
    m->backend->download(m);
    size_t P = m->num_params;
    const float* parts[3] = {m->params_memory, m->m_memory, m->v_memory};
    int n_parts = with_optimizer ? 3 : 1;
    uint64_t sum = FNV1A_OFFSET;
    for (int i = 0; i < n_parts; i++) sum = fnv1a_update(sum, parts[i], P * sizeof(float));

    unsigned char h[HEADER_BYTES] = {0};
    memcpy(h, CHECKPOINT_MAGIC, 8);
    put_u32(h + 8, CHECKPOINT_VERSION);
    put_u32(h + 12, (uint32_t)m->cfg.n_layer);
    put_u32(h + 16, (uint32_t)m->cfg.n_head);
    put_u32(h + 20, (uint32_t)m->cfg.d_model);
    put_u32(h + 24, (uint32_t)m->cfg.n_ctx);
    put_u32(h + 28, (uint32_t)m->cfg.vocab);
    put_u32(h + 32, with_optimizer ? 1u : 0u);
    put_u64(h + 40, (uint64_t)m->step);
    put_u64(h + 48, (uint64_t)P);
    put_u64(h + 56, (uint64_t)(n_parts * P * sizeof(float)));
    put_u64(h + 64, sum);
    if (m->cfg.family != MODEL_FAMILY_BYTE_GPT) { /* byte_gpt files stay version 1, byte for byte */
        const ModelShape* c = &m->cfg;
        put_u32(h + 8, CHECKPOINT_VERSION_FAMILY);
        put_u32(h + 72, (uint32_t)c->family);
        put_u32(h + 76, (uint32_t)c->n_kv_head);
        put_u32(h + 80, (uint32_t)c->head_dim);
        put_u32(h + 84, (uint32_t)c->d_ff);
        put_u32(h + 88, float_bits(c->rope_theta));
        put_u32(h + 92, float_bits(c->norm_eps));
        put_u32(h + 96, (c->qkv_bias ? 1u : 0u) | (c->o_bias ? 2u : 0u) | (c->tied ? 4u : 0u));
    }

    FILE* f = atomic_file_begin(path, err, errlen);
    if (!f) return -1;
    int ok = fwrite(h, 1, HEADER_BYTES, f) == HEADER_BYTES;
    for (int i = 0; ok && i < n_parts; i++) ok = fwrite(parts[i], sizeof(float), P, f) == P;
    if (atomic_file_commit(f, path, err, errlen)) return -1; /* a failed fwrite fails the commit too */
    return 0;
}

/* Reads the header and checks what can be checked without the payload. */
static int read_header(FILE* f, const char* path, CheckpointInfo* info, uint64_t* n_params, uint64_t* payload,
                       uint64_t* checksum, char* err, size_t errlen) {
    unsigned char h[HEADER_BYTES];
    size_t got = fread(h, 1, HEADER_BYTES, f);
    if (got < 8 || memcmp(h, CHECKPOINT_MAGIC, 8) != 0)
        return set_error(err, errlen, "checkpoint %s: not a sapo checkpoint (bad magic; expected \"%s\")", path,
                         CHECKPOINT_MAGIC);
    if (got < HEADER_BYTES)
        return set_error(err, errlen, "checkpoint %s: truncated header (%zu of %d bytes)", path, got, HEADER_BYTES);
    uint32_t version = get_u32(h + 8);
    if (version != CHECKPOINT_VERSION && version != CHECKPOINT_VERSION_FAMILY)
        return set_error(err, errlen, "checkpoint %s: unsupported version %u (this build reads versions %d and %d)",
                         path, version, CHECKPOINT_VERSION, CHECKPOINT_VERSION_FAMILY);
    memset(&info->cfg, 0, sizeof info->cfg);
    if (version == CHECKPOINT_VERSION_FAMILY) {
        uint32_t fam = get_u32(h + 72), flags = get_u32(h + 96);
        if (fam == MODEL_FAMILY_BYTE_GPT || !model_family((ModelFamilyId)fam))
            return set_error(err, errlen, "checkpoint %s: corrupted header: model family %u", path, fam);
        info->cfg.family = (ModelFamilyId)fam;
        info->cfg.n_kv_head = (int)get_u32(h + 76);
        info->cfg.head_dim = (int)get_u32(h + 80);
        info->cfg.d_ff = (int)get_u32(h + 84);
        info->cfg.rope_theta = bits_float(get_u32(h + 88));
        info->cfg.norm_eps = bits_float(get_u32(h + 92));
        info->cfg.qkv_bias = flags & 1u;
        info->cfg.o_bias = (flags >> 1) & 1u;
        info->cfg.tied = (flags >> 2) & 1u;
    }
    info->cfg.n_layer = (int)get_u32(h + 12);
    info->cfg.n_head = (int)get_u32(h + 16);
    info->cfg.d_model = (int)get_u32(h + 20);
    info->cfg.n_ctx = (int)get_u32(h + 24);
    info->cfg.vocab = (int)get_u32(h + 28);
    info->has_optimizer = get_u32(h + 32) & 1u;
    info->step = (long)get_u64(h + 40);
    *n_params = get_u64(h + 48);
    *payload = get_u64(h + 56);
    *checksum = get_u64(h + 64);
    char why[160];
    if (gpt_config_check(&info->cfg, why, sizeof why))
        return set_error(err, errlen, "checkpoint %s: corrupted header: %s", path, why);
    size_t sizes[MODEL_MAX_TENSORS], P = 0;
    const ModelFamily* fam = model_family(info->cfg.family);
    fam->tensor_sizes(&info->cfg, sizes);
    for (int i = 0; i < fam->n_tensors; i++) P += sizes[i];
    uint64_t want_payload = (info->has_optimizer ? 3u : 1u) * (uint64_t)P * sizeof(float);
    if (*n_params != P || *payload != want_payload)
        return set_error(err, errlen, "checkpoint %s: corrupted header: %llu parameters / %llu payload bytes do not fit its shape",
                         path, (unsigned long long)*n_params, (unsigned long long)*payload);
    return 0;
}

/* Nothing for the byte-level GPT (its messages as before families); else the family's name. */
static const char* family_note(const ModelShape* c) {
    return c->family == MODEL_FAMILY_BYTE_GPT ? "" : c->family == MODEL_FAMILY_LLAMA ? " (llama family)" : " (?)";
}

static int same_shape(const ModelShape* a, const ModelShape* b) {
    return a->n_layer == b->n_layer && a->n_head == b->n_head && a->d_model == b->d_model && a->n_ctx == b->n_ctx &&
           a->vocab == b->vocab && a->family == b->family && a->n_kv_head == b->n_kv_head &&
           a->head_dim == b->head_dim && a->d_ff == b->d_ff && a->rope_theta == b->rope_theta &&
           a->norm_eps == b->norm_eps && a->qkv_bias == b->qkv_bias && a->o_bias == b->o_bias && a->tied == b->tied;
}

/* The one reader of checkpoint files: the header, the shape against `expected` (NULL: any),
 * then (read_body) the payload, its length exact and its checksum right. The
 * payload goes into a new buffer when `keep` is given (the loader), else through a small
 * scratch buffer (checkpoint_verify: no model needed). */
static int checkpoint_read(const char* path, const ModelShape* expected, int read_body, CheckpointInfo* info,
                           uint64_t* n_params, float** keep, char* err, size_t errlen) {
    FILE* f = fopen(path, "rb");
    if (!f) return set_error(err, errlen, "checkpoint %s: cannot open: %s", path, strerror(errno));
    uint64_t P, payload, sum;
    if (read_header(f, path, info, &P, &payload, &sum, err, errlen)) {
        fclose(f);
        return -1;
    }
    if (n_params) *n_params = P;
    if (expected && !same_shape(&info->cfg, expected)) {
        fclose(f);
        return set_error(err, errlen,
                         "checkpoint %s: shape mismatch: file has n_layer=%d n_head=%d d_model=%d n_ctx=%d%s, "
                         "the model wants n_layer=%d n_head=%d d_model=%d n_ctx=%d%s",
                         path, info->cfg.n_layer, info->cfg.n_head, info->cfg.d_model, info->cfg.n_ctx,
                         family_note(&info->cfg), expected->n_layer, expected->n_head, expected->d_model,
                         expected->n_ctx, family_note(expected));
    }
    if (!read_body) {
        fclose(f);
        return 0;
    }
    enum { CHUNK = 1 << 20 };
    unsigned char* buf = mallocCheck(keep ? (size_t)payload : payload < CHUNK ? (size_t)payload : CHUNK);
    uint64_t got = 0, hash = FNV1A_OFFSET;
    while (got < payload) {
        size_t want = payload - got < CHUNK ? (size_t)(payload - got) : CHUNK;
        unsigned char* dst = keep ? buf + got : buf;
        size_t n = fread(dst, 1, want, f);
        hash = fnv1a_update(hash, dst, n);
        got += n;
        if (n < want) break;
    }
    int extra = fgetc(f) != EOF;
    fclose(f);
    int rc = 0;
    if (got != payload)
        rc = set_error(err, errlen, "checkpoint %s: truncated: payload has %llu of %llu bytes", path,
                       (unsigned long long)got, (unsigned long long)payload);
    else if (extra)
        rc = set_error(err, errlen, "checkpoint %s: corrupted: bytes after the %llu-byte payload", path,
                       (unsigned long long)payload);
    else if (hash != sum)
        rc = set_error(err, errlen, "checkpoint %s: checksum mismatch (the file is corrupted)", path);
    if (rc || !keep) {
        free(buf);
        return rc;
    }
    *keep = (float*)buf;
    return 0;
}

int checkpoint_read_info(const char* path, CheckpointInfo* info, char* err, size_t errlen) {
    return checkpoint_read(path, NULL, 0, info, NULL, NULL, err, errlen);
}

int checkpoint_verify(const char* path, const ModelShape* expected, int body, CheckpointInfo* info, char* err,
                      size_t errlen) {
    CheckpointInfo local;
    return checkpoint_read(path, expected, body, info ? info : &local, NULL, NULL, err, errlen);
}

int checkpoint_load(Model* m, const char* path, int want_optimizer, char* err, size_t errlen) {
    CheckpointInfo info;
    uint64_t P;
    float* buf = NULL; /* read into scratch first: a bad file must leave the model untouched */
    if (checkpoint_read(path, &m->cfg, 1, &info, &P, &buf, err, errlen)) return -1;
    memcpy(m->params_memory, buf, P * sizeof(float));
    if (want_optimizer && info.has_optimizer) {
        memcpy(m->m_memory, buf + P, P * sizeof(float));
        memcpy(m->v_memory, buf + 2 * P, P * sizeof(float));
        m->step = info.step;
    } else {
        memset(m->m_memory, 0, P * sizeof(float));
        memset(m->v_memory, 0, P * sizeof(float));
        m->step = 0;
    }
    free(buf);
    m->backend->upload(m);
    m->backend->zero_grad(m);
    return 0;
}
