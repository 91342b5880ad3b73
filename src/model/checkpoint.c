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
 *  72  ...      zero padding to 128 bytes
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
    if (version != CHECKPOINT_VERSION)
        return set_error(err, errlen, "checkpoint %s: unsupported version %u (this build reads version %d)", path,
                         version, CHECKPOINT_VERSION);
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
    size_t sizes[GPT_NUM_TENSORS], P = 0;
    gpt_tensor_sizes(&info->cfg, sizes);
    for (int i = 0; i < GPT_NUM_TENSORS; i++) P += sizes[i];
    uint64_t want_payload = (info->has_optimizer ? 3u : 1u) * (uint64_t)P * sizeof(float);
    if (*n_params != P || *payload != want_payload)
        return set_error(err, errlen, "checkpoint %s: corrupted header: %llu parameters / %llu payload bytes do not fit its shape",
                         path, (unsigned long long)*n_params, (unsigned long long)*payload);
    return 0;
}

static int same_shape(const GPTConfig* a, const GPTConfig* b) {
    return a->n_layer == b->n_layer && a->n_head == b->n_head && a->d_model == b->d_model && a->n_ctx == b->n_ctx &&
           a->vocab == b->vocab;
}

/* The one reader of checkpoint files: the header, the shape against `expected` (NULL: any),
 * then (read_body) the payload, its length exact and its checksum right. The
 * payload goes into a new buffer when `keep` is given (the loader), else through a small
 * scratch buffer (checkpoint_verify: no model needed). */
static int checkpoint_read(const char* path, const GPTConfig* expected, int read_body, CheckpointInfo* info,
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
                         "checkpoint %s: shape mismatch: file has n_layer=%d n_head=%d d_model=%d n_ctx=%d, "
                         "the model wants n_layer=%d n_head=%d d_model=%d n_ctx=%d",
                         path, info->cfg.n_layer, info->cfg.n_head, info->cfg.d_model, info->cfg.n_ctx,
                         expected->n_layer, expected->n_head, expected->d_model, expected->n_ctx);
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

int checkpoint_verify(const char* path, const GPTConfig* expected, int body, CheckpointInfo* info, char* err,
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
