/* Swarm message codec (see message.h). Every multi-byte field is packed byte by byte,
 * little-endian, so the record is the same on any host. Layout of versions 2 and 3; the
 * fields marked [v3] exist in version 3 only (version 1 had no log-prob fields; it is
 * rejected as unsupported, like any version but 2 and 3):
 *
 *   header (MESSAGE_HEADER_BYTES = 32)
 *      0  u32  magic 0x4F504153 ("SAPO" as bytes)
 *      4  u16  version: 2 when no group has a tokenizer, else 3
 *      6  u16  flags (none defined in versions 2 and 3: must be 0)
 *      8  i32  sender (rank, >= 0)
 *     12  i32  round (>= 0)
 *     16  u64  payload length: bytes after the header, must equal the record length - 32
 *     24  u64  checksum: FNV-1a 64 over header bytes [0, 24) then the whole payload, so a
 *              corrupted sender or round is caught as well as a corrupted group
 *   payload
 *          u32  n_groups (<= MESSAGE_MAX_GROUPS)
 *          n_groups x group:
 *              i32     task_id
 *              i64     seed
 *              i64     index
 *              string  config_json
 *              string  question
 *              u8      answer present (0: None, 1: a string follows; anything else is an error)
 *              string  answer (only when present)
 *              string  metadata_json
 *         [v3] u64     tokenizer: the sender's tokenizer fingerprint, 0 for a byte-level
 *                      group (which then has no token fields below)
 *         [v3] u32     vocab: 0 when tokenizer is 0, else in [1, MESSAGE_MAX_VOCAB]
 *              u32     n_completions (<= MESSAGE_MAX_COMPLETIONS)
 *              n_completions x completion:
 *                  string  text
 *                  u32     n_logprobs: 0 (none shipped) or exactly the text's byte length
 *                  n_logprobs x f32  the sender's behaviour log-prob of each byte of the
 *                          text: IEEE-754 binary32 bit patterns, little-endian, each finite
 *                          and <= 0 (-0.0 and +0.0 both allowed; NaN, +-inf and anything
 *                          > 0, subnormals included, are rejected)
 *                  only when the group's tokenizer is not 0 [v3]:
 *                  u32     n_tokens (<= MESSAGE_MAX_TOKENS)
 *                  n_tokens x i32  the sampled ids, each in [0, vocab)
 *                  u32     n_token_logprobs: 0 (none shipped) or exactly n_tokens
 *                  n_token_logprobs x f32  the behaviour log-prob of each id, checked as
 *                          the byte log-probs are
 *   string = u32 byte length (<= MESSAGE_MAX_STRING) + that many bytes, no terminator and
 *            no NUL inside (the program keeps them as C strings). Bytes are not checked to
 *            be UTF-8: a byte-level model may emit any byte, and it is data, not markup.
 *   Nothing may follow the last group, and a version 3 record must have a group with a
 *   tokenizer (without one it is version 2's to carry).
 *
 * The encoding is canonical: a record that decodes re-encodes to the same bytes. Version 2
 * is what every message without a tokenizer was before version 3 existed, byte for byte,
 * so byte-level runs send and log the same bytes; one version per message (not per group)
 * keeps the header the only place a reader looks to know the layout. Log-probs travel as
 * bit patterns, never through float arithmetic, so -0.0 stays -0.0 and every
 * accepted value comes back bit for bit (and the validity test is on the bits, so it does
 * not depend on the compiler's or the FPU's floating-point modes). A completion whose
 * log-probs the sender left NULL, and an empty one, both carry n_logprobs = 0; the decoder
 * gives NULL for it, and a NULL logprobs array for a group where no completion has any;
 * token log-probs follow the same rules against n_tokens. The decoder checks every count
 * and length against the bytes left and the limits before it allocates anything, so a
 * lying field costs at most a rejection. The checksum is for corruption, not for trust: the
 * receiver still re-derives each question and its ground truth from (task, seed, index,
 * config) before it uses a group, and decides whether a tokenizer fingerprint is one it
 * can use. */
#include "swarm/net/message.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "core/fnv1a.h"

#define CHECKSUM_AT 24
#define PAYLOAD_LEN_AT 16
/* The smallest group: task_id, seed, index, three empty strings, an absent answer and no
 * completions (version 3 adds tokenizer and vocab). A group count is checked against this
 * before the groups are allocated. */
#define MIN_GROUP_BYTES (4 + 8 + 8 + 4 + 4 + 1 + 4 + 4)
#define MIN_GROUP_TOKEN_BYTES (8 + 4)
/* The smallest completion: an empty text (its u32 length) and n_logprobs = 0 (a group with
 * a tokenizer adds n_tokens = 0 and n_token_logprobs = 0). */
#define MIN_COMPLETION_BYTES (4 + 4)
#define MIN_COMPLETION_TOKEN_BYTES (4 + 4)

static void pack_u16(uint8_t* p, uint16_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static void pack_u32(uint8_t* p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void pack_u64(uint8_t* p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint16_t unpack_u16(const uint8_t* p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static uint32_t unpack_u32(const uint8_t* p) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) v |= (uint32_t)p[i] << (8 * i);
    return v;
}
static uint64_t unpack_u64(const uint8_t* p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}
/* Two's complement reinterpretation without implementation-defined conversions. */
static int32_t to_i32(uint32_t v) { return v <= INT32_MAX ? (int32_t)v : (int32_t)(v - INT32_MAX - 1) + INT32_MIN; }
static int64_t to_i64(uint64_t v) { return v <= INT64_MAX ? (int64_t)v : (int64_t)(v - INT64_MAX - 1) + INT64_MIN; }

/* Log-probs as binary32 bit patterns: a float's bits and back, no arithmetic. */
static uint32_t float_bits(float f) {
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}
static float bits_float(uint32_t b) {
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}
/* A finite log-probability <= 0: the exponent is not all ones (NaN, +-inf), and the value
 * is +0.0 or has the sign bit (-0.0, negative subnormals and normals). */
static int logprob_bits_ok(uint32_t b) { return (b & 0x7F800000u) != 0x7F800000u && (b == 0 || (b >> 31)); }
/* Names a rejected value: "+inf", "-inf", "NaN (0x7FC00000)", "0.5 (0x3F000000)". */
static void describe_bits(uint32_t b, char* out, size_t n) {
    if ((b & 0x7FFFFFFFu) == 0x7F800000u) snprintf(out, n, "%sinf", b >> 31 ? "-" : "+");
    else if ((b & 0x7F800000u) == 0x7F800000u) snprintf(out, n, "NaN (0x%08X)", b);
    else snprintf(out, n, "%.9g (0x%08X)", (double)bits_float(b), b);
}

static uint64_t record_checksum(const uint8_t* buf, size_t len) {
    uint64_t h = fnv1a_update(FNV1A_OFFSET, buf, CHECKSUM_AT);
    return fnv1a_update(h, buf + MESSAGE_HEADER_BYTES, len - MESSAGE_HEADER_BYTES);
}

int message_seal(uint8_t* buf, size_t len) {
    if (!buf || len < MESSAGE_HEADER_BYTES) return -1;
    pack_u64(buf + PAYLOAD_LEN_AT, (uint64_t)(len - MESSAGE_HEADER_BYTES));
    pack_u64(buf + CHECKSUM_AT, record_checksum(buf, len));
    return 0;
}

static char* dup_bytes(const char* s, size_t n) {
    char* d = mallocCheck(n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

void rollout_group_free(RolloutGroup* g) {
    if (!g) return;
    free(g->config_json);
    free(g->question);
    free(g->answer);
    free(g->metadata_json);
    if (g->completions)
        for (int32_t i = 0; i < g->n_completions; i++) free(g->completions[i]);
    free(g->completions);
    if (g->logprobs)
        for (int32_t i = 0; i < g->n_completions; i++) free(g->logprobs[i]);
    free(g->logprobs);
    if (g->token_ids)
        for (int32_t i = 0; i < g->n_completions; i++) free(g->token_ids[i]);
    free(g->token_ids);
    if (g->token_logprobs)
        for (int32_t i = 0; i < g->n_completions; i++) free(g->token_logprobs[i]);
    free(g->token_logprobs);
    free(g->n_tokens);
    memset(g, 0, sizeof *g);
}

void rollout_group_truncate(RolloutGroup* g, int32_t n) {
    if (n < 0) n = 0;
    while (g->n_completions > n) {
        int32_t c = --g->n_completions;
        if (g->completions) free(g->completions[c]), g->completions[c] = NULL;
        if (g->logprobs) free(g->logprobs[c]), g->logprobs[c] = NULL;
        if (g->token_ids) free(g->token_ids[c]), g->token_ids[c] = NULL;
        if (g->token_logprobs) free(g->token_logprobs[c]), g->token_logprobs[c] = NULL;
        if (g->n_tokens) g->n_tokens[c] = 0;
    }
}

void message_free(SwarmMessage* msg) {
    if (!msg) return;
    if (msg->groups)
        for (int32_t i = 0; i < msg->n_groups; i++) rollout_group_free(&msg->groups[i]);
    free(msg->groups);
    memset(msg, 0, sizeof *msg);
}

static char* dup_or_null(const char* s) { return s ? dup_bytes(s, strlen(s)) : NULL; }

/* A copy of n elements of `size` bytes, or NULL for NULL; a non-NULL empty array stays
 * non-NULL (one spare element), so a copy has the NULL entries of its source. */
static void* dup_array(const void* src, size_t n, size_t size) {
    if (!src) return NULL;
    void* d = mallocCheck((n ? n : 1) * size);
    if (n) memcpy(d, src, n * size);
    return d;
}

void rollout_group_copy(RolloutGroup* dst, const RolloutGroup* src) {
    RolloutGroup g = *src; /* the scalars */
    g.config_json = dup_or_null(src->config_json);
    g.question = dup_or_null(src->question);
    g.answer = dup_or_null(src->answer);
    g.metadata_json = dup_or_null(src->metadata_json);
    g.completions = NULL;
    g.logprobs = NULL;
    g.n_tokens = NULL;
    g.token_ids = NULL;
    g.token_logprobs = NULL;
    if (src->n_completions > 0 && src->completions) {
        g.completions = callocCheck((size_t)src->n_completions, sizeof *g.completions);
        for (int32_t i = 0; i < src->n_completions; i++) g.completions[i] = dup_or_null(src->completions[i]);
        if (src->logprobs) {
            g.logprobs = callocCheck((size_t)src->n_completions, sizeof *g.logprobs);
            for (int32_t i = 0; i < src->n_completions; i++) {
                if (!src->logprobs[i] || !src->completions[i]) continue;
                size_t n = strlen(src->completions[i]);
                g.logprobs[i] = mallocCheck((n ? n : 1) * sizeof(float));
                memcpy(g.logprobs[i], src->logprobs[i], n * sizeof(float));
            }
        }
        size_t nc = (size_t)src->n_completions;
        g.n_tokens = dup_array(src->n_tokens, nc, sizeof *g.n_tokens);
        if (src->token_ids) g.token_ids = callocCheck(nc, sizeof *g.token_ids);
        if (src->token_logprobs) g.token_logprobs = callocCheck(nc, sizeof *g.token_logprobs);
        for (size_t i = 0; i < nc; i++) {
            size_t k = src->n_tokens && src->n_tokens[i] > 0 ? (size_t)src->n_tokens[i] : 0;
            if (src->token_ids) g.token_ids[i] = dup_array(src->token_ids[i], k, sizeof **g.token_ids);
            if (src->token_logprobs) g.token_logprobs[i] = dup_array(src->token_logprobs[i], k, sizeof **g.token_logprobs);
        }
    } else {
        g.n_completions = 0;
    }
    *dst = g;
}

/* ---- encoding ------------------------------------------------------------------------ */

/* A growable output buffer that refuses to pass MESSAGE_MAX_BYTES (then `over` is set and
 * further writes are ignored), so an oversized message costs no more than the limit. */
typedef struct {
    uint8_t* buf;
    size_t len, cap;
    int over;
} Writer;

static uint8_t* writer_reserve(Writer* w, size_t n) {
    if (w->over || n > MESSAGE_MAX_BYTES - w->len) {
        w->over = 1;
        return NULL;
    }
    if (w->len + n > w->cap) {
        size_t cap = w->cap ? w->cap : 256;
        while (cap < w->len + n) cap *= 2;
        uint8_t* grown = realloc(w->buf, cap);
        if (!grown) sapo_die("out of memory growing a swarm message to %zu bytes", cap);
        w->buf = grown;
        w->cap = cap;
    }
    uint8_t* p = w->buf + w->len;
    w->len += n;
    return p;
}
static void put_u8(Writer* w, uint8_t v) {
    uint8_t* p = writer_reserve(w, 1);
    if (p) *p = v;
}
static void put_u32(Writer* w, uint32_t v) {
    uint8_t* p = writer_reserve(w, 4);
    if (p) pack_u32(p, v);
}
static void put_u64(Writer* w, uint64_t v) {
    uint8_t* p = writer_reserve(w, 8);
    if (p) pack_u64(p, v);
}
/* The caller has checked n <= MESSAGE_MAX_STRING. */
static void put_string(Writer* w, const char* s, size_t n) {
    put_u32(w, (uint32_t)n);
    uint8_t* p = writer_reserve(w, n);
    if (p && n) memcpy(p, s, n);
}

/* A string field of group gi must be present and within the limit; returns its length or
 * -1 with err set. */
static long check_field(const char* s, int32_t gi, const char* field, char* err, size_t errlen) {
    if (!s) return set_error(err, errlen, "group %d %s: NULL (only the answer may be absent)", gi, field);
    size_t n = strlen(s);
    if (n > MESSAGE_MAX_STRING)
        return set_error(err, errlen, "group %d %s: %zu bytes exceeds the limit of %u", gi, field, n,
                         MESSAGE_MAX_STRING);
    return (long)n;
}

/* Writes n log-probs as bit patterns; returns n, or the index of the first one that is not
 * a finite log-probability <= 0, described in v (the record is then abandoned). */
static size_t put_logprob_array(Writer* w, const float* lp, size_t n, char* v, size_t vlen) {
    uint8_t* p = writer_reserve(w, 4 * n);
    for (size_t i = 0; i < n; i++) {
        uint32_t b = float_bits(lp[i]);
        if (!logprob_bits_ok(b)) {
            describe_bits(b, v, vlen);
            return i;
        }
        if (p) pack_u32(p + 4 * i, b);
    }
    return n;
}

/* The token fields of group gi: without a tokenizer there must be none (a byte-level group
 * with stray arrays or a vocab would lose them silently, or make a non-canonical record). */
static int check_token_fields(const RolloutGroup* g, int32_t gi, char* err, size_t errlen) {
    if (g->tokenizer == 0) {
        if (g->vocab != 0)
            return set_error(err, errlen, "group %d: vocab %d without a tokenizer (a byte-level group has vocab 0)", gi,
                             g->vocab);
        if (g->n_tokens || g->token_ids || g->token_logprobs)
            return set_error(err, errlen, "group %d: token fields without a tokenizer", gi);
        return 0;
    }
    if (g->vocab < 1 || (uint32_t)g->vocab > MESSAGE_MAX_VOCAB)
        return set_error(err, errlen, "group %d: vocab %d outside [1, %u] with tokenizer 0x%016llX", gi, g->vocab,
                         MESSAGE_MAX_VOCAB, (unsigned long long)g->tokenizer);
    return 0;
}

/* Completion c's ids and token log-probs (the group has a tokenizer). */
static int encode_tokens(Writer* w, const RolloutGroup* g, int32_t gi, int32_t c, char* err, size_t errlen) {
    int32_t n = g->n_tokens ? g->n_tokens[c] : 0;
    if (n < 0 || (uint32_t)n > MESSAGE_MAX_TOKENS)
        return set_error(err, errlen, "group %d completion %d: n_tokens %d outside [0, %u]", gi, c, n,
                         MESSAGE_MAX_TOKENS);
    const int32_t* ids = g->token_ids ? g->token_ids[c] : NULL;
    if (n > 0 && !ids) return set_error(err, errlen, "group %d completion %d: %d tokens but no ids", gi, c, n);
    put_u32(w, (uint32_t)n);
    uint8_t* p = writer_reserve(w, 4 * (size_t)n);
    for (int32_t k = 0; k < n; k++) {
        if (ids[k] < 0 || ids[k] >= g->vocab)
            return set_error(err, errlen, "group %d token_ids %d: id %d at index %d is outside [0, %d)", gi, c, ids[k],
                             k, g->vocab);
        if (p) pack_u32(p + 4 * (size_t)k, (uint32_t)ids[k]);
    }
    const float* lp = g->token_logprobs && n ? g->token_logprobs[c] : NULL;
    put_u32(w, lp ? (uint32_t)n : 0);
    char v[48];
    size_t bad = lp ? put_logprob_array(w, lp, (size_t)n, v, sizeof v) : 0;
    if (lp && bad < (size_t)n)
        return set_error(err, errlen,
                         "group %d token_logprobs %d: value %s at index %zu is not a finite log-probability <= 0", gi, c,
                         v, bad);
    return 0;
}

static int encode_group(Writer* w, const RolloutGroup* g, int32_t gi, int version, char* err, size_t errlen) {
    if (g->n_completions < 0 || g->n_completions > MESSAGE_MAX_COMPLETIONS)
        return set_error(err, errlen, "group %d: n_completions %d outside [0, %d]", gi, g->n_completions,
                         MESSAGE_MAX_COMPLETIONS);
    if (g->n_completions > 0 && !g->completions)
        return set_error(err, errlen, "group %d: %d completions but the array is NULL", gi, g->n_completions);
    long config_n, question_n, answer_n = 0, metadata_n;
    if ((config_n = check_field(g->config_json, gi, "config_json", err, errlen)) < 0) return -1;
    if ((question_n = check_field(g->question, gi, "question", err, errlen)) < 0) return -1;
    if (g->answer && (answer_n = check_field(g->answer, gi, "answer", err, errlen)) < 0) return -1;
    if ((metadata_n = check_field(g->metadata_json, gi, "metadata_json", err, errlen)) < 0) return -1;
    if (check_token_fields(g, gi, err, errlen)) return -1;

    put_u32(w, (uint32_t)g->task_id);
    put_u64(w, (uint64_t)g->seed);
    put_u64(w, (uint64_t)g->index);
    put_string(w, g->config_json, (size_t)config_n);
    put_string(w, g->question, (size_t)question_n);
    put_u8(w, g->answer ? 1 : 0);
    if (g->answer) put_string(w, g->answer, (size_t)answer_n);
    put_string(w, g->metadata_json, (size_t)metadata_n);
    if (version == MESSAGE_VERSION_TOKENS) {
        put_u64(w, g->tokenizer);
        put_u32(w, (uint32_t)g->vocab);
    }
    put_u32(w, (uint32_t)g->n_completions);
    for (int32_t c = 0; c < g->n_completions; c++) {
        const char* s = g->completions[c];
        if (!s) return set_error(err, errlen, "group %d completion %d: NULL", gi, c);
        size_t n = strlen(s);
        if (n > MESSAGE_MAX_STRING)
            return set_error(err, errlen, "group %d completion %d: %zu bytes exceeds the limit of %u", gi, c, n,
                             MESSAGE_MAX_STRING);
        put_string(w, s, n);
        const float* lp = g->logprobs && n ? g->logprobs[c] : NULL;
        put_u32(w, lp ? (uint32_t)n : 0);
        char v[48];
        size_t bad = lp ? put_logprob_array(w, lp, n, v, sizeof v) : 0;
        if (lp && bad < n)
            return set_error(err, errlen, "group %d logprobs %d: value %s at index %zu is not a finite log-probability <= 0",
                             gi, c, v, bad);
        if (g->tokenizer && encode_tokens(w, g, gi, c, err, errlen)) return -1;
    }
    if (w->over)
        return set_error(err, errlen, "group %d: the message passes MESSAGE_MAX_BYTES (%u bytes)", gi,
                         MESSAGE_MAX_BYTES);
    return 0;
}

int message_encode(const SwarmMessage* msg, uint8_t** out, size_t* out_len, char* err, size_t errlen) {
    *out = NULL;
    *out_len = 0;
    if (msg->sender < 0) return set_error(err, errlen, "sender %d is negative", msg->sender);
    if (msg->round < 0) return set_error(err, errlen, "round %d is negative", msg->round);
    if (msg->n_groups < 0 || msg->n_groups > MESSAGE_MAX_GROUPS)
        return set_error(err, errlen, "n_groups %d outside [0, %d]", msg->n_groups, MESSAGE_MAX_GROUPS);
    if (msg->n_groups > 0 && !msg->groups)
        return set_error(err, errlen, "%d groups but the array is NULL", msg->n_groups);

    int version = MESSAGE_VERSION_BYTES;
    for (int32_t i = 0; i < msg->n_groups; i++)
        if (msg->groups[i].tokenizer) version = MESSAGE_VERSION_TOKENS;

    Writer w = {0};
    uint8_t* h = writer_reserve(&w, MESSAGE_HEADER_BYTES);
    memset(h, 0, MESSAGE_HEADER_BYTES);
    pack_u32(h, MESSAGE_MAGIC);
    pack_u16(h + 4, (uint16_t)version);
    pack_u16(h + 6, 0);
    pack_u32(h + 8, (uint32_t)msg->sender);
    pack_u32(h + 12, (uint32_t)msg->round);
    put_u32(&w, (uint32_t)msg->n_groups);
    for (int32_t i = 0; i < msg->n_groups; i++) {
        if (encode_group(&w, &msg->groups[i], i, version, err, errlen)) {
            free(w.buf);
            return -1;
        }
    }
    message_seal(w.buf, w.len);
    *out = w.buf;
    *out_len = w.len;
    return 0;
}

/* ---- decoding ------------------------------------------------------------------------ */

/* A bounds-checked cursor over the payload. `group`, `field` and `item` name what is being
 * read, so a failure says where: "group 3 completion 5 at byte 812: ...". */
typedef struct {
    const uint8_t* buf;
    size_t len, pos;
    int32_t group; /* -1 outside the groups */
    const char* field;
    int32_t item; /* completion index, -1 otherwise */
    char* err;
    size_t errlen;
} Reader;

static size_t reader_left(const Reader* r) { return r->len - r->pos; }

/* Formats "<where> at byte <pos>: <reason>" into the reader's error buffer; returns -1. */
static int reader_fail(const Reader* r, size_t at, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
static int reader_fail(const Reader* r, size_t at, const char* fmt, ...) {
    char where[96], why[256];
    if (r->group < 0) snprintf(where, sizeof where, "%s", r->field);
    else if (r->item < 0) snprintf(where, sizeof where, "group %d %s", r->group, r->field);
    else snprintf(where, sizeof where, "group %d %s %d", r->group, r->field, r->item);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return set_error(r->err, r->errlen, "%s at byte %zu: %s", where, at, why);
}

static int reader_need(const Reader* r, size_t n) {
    if (n <= reader_left(r)) return 0;
    return reader_fail(r, r->pos, "truncated: needs %zu bytes, %zu left", n, reader_left(r));
}
static int get_u8(Reader* r, uint8_t* v) {
    if (reader_need(r, 1)) return -1;
    *v = r->buf[r->pos++];
    return 0;
}
static int get_u32(Reader* r, uint32_t* v) {
    if (reader_need(r, 4)) return -1;
    *v = unpack_u32(r->buf + r->pos);
    r->pos += 4;
    return 0;
}
static int get_u64(Reader* r, uint64_t* v) {
    if (reader_need(r, 8)) return -1;
    *v = unpack_u64(r->buf + r->pos);
    r->pos += 8;
    return 0;
}
/* A count of items of at least min_bytes each, within limit, that the bytes left can hold. */
static int get_count(Reader* r, uint32_t limit, size_t min_bytes, int32_t* count) {
    size_t at = r->pos;
    uint32_t n;
    if (get_u32(r, &n)) return -1;
    if (n > limit) return reader_fail(r, at, "count %u exceeds the limit of %u", n, limit);
    if ((size_t)n * min_bytes > reader_left(r))
        return reader_fail(r, at, "count %u needs at least %zu bytes, only %zu left", n, (size_t)n * min_bytes,
                           reader_left(r));
    *count = (int32_t)n;
    return 0;
}
/* A length-prefixed string, checked before the copy is allocated. */
static int get_string(Reader* r, char** out) {
    size_t at = r->pos;
    uint32_t n;
    if (get_u32(r, &n)) return -1;
    if (n > reader_left(r)) return reader_fail(r, at, "length %u exceeds the %zu bytes left", n, reader_left(r));
    if (n > MESSAGE_MAX_STRING) return reader_fail(r, at, "length %u exceeds the limit of %u", n, MESSAGE_MAX_STRING);
    const uint8_t* s = r->buf + r->pos;
    const uint8_t* nul = memchr(s, 0, n);
    if (nul) return reader_fail(r, at, "NUL byte at offset %zu of the %u-byte string", (size_t)(nul - s), n);
    *out = dup_bytes((const char*)s, n);
    r->pos += n;
    return 0;
}

/* A log-prob count (read at byte `at`) that must be 0 or `want`, and its values, into
 * (*arr)[r->item] (*arr of n entries, allocated on first use); `unit` names what the count
 * matches ("bytes", "tokens"). Count, bytes left and every value's bits are checked before
 * anything is allocated; a count of 0 leaves the entry NULL. */
static int get_logprob_values(Reader* r, size_t want, const char* unit, float*** arr, int32_t n) {
    size_t at = r->pos;
    uint32_t count;
    if (get_u32(r, &count)) return -1;
    if (count == 0) return 0;
    if (count != want) return reader_fail(r, at, "count %u is neither 0 nor the completion's %zu %s", count, want, unit);
    if ((size_t)count * 4 > reader_left(r))
        return reader_fail(r, at, "count %u needs at least %zu bytes, only %zu left", count, (size_t)count * 4,
                           reader_left(r));
    const uint8_t* p = r->buf + r->pos;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t b = unpack_u32(p + 4 * (size_t)i);
        if (!logprob_bits_ok(b)) {
            char v[48];
            describe_bits(b, v, sizeof v);
            return reader_fail(r, at, "value %s at index %u is not a finite log-probability <= 0", v, i);
        }
    }
    if (!*arr) *arr = callocCheck((size_t)n, sizeof **arr);
    float* lp = mallocCheck((size_t)count * sizeof(float));
    for (uint32_t i = 0; i < count; i++) lp[i] = bits_float(unpack_u32(p + 4 * (size_t)i));
    (*arr)[r->item] = lp;
    r->pos += (size_t)count * 4;
    return 0;
}

/* The log-probs of completion r->item (text_len bytes) of g, which has n completions: the
 * count is checked against the text and the bytes left, and every value's bits, before
 * anything is allocated. A count of 0 leaves the entry NULL. Like the other reasons, a bad
 * value is reported at the byte offset of its field (the count), with its index:
 * "group 1 logprobs 3 at byte 812: value +inf at index 4 is not a finite log-probability
 * <= 0" (the value itself sits at 812 + 4 + 4 * 4). */
static int get_logprobs(Reader* r, size_t text_len, RolloutGroup* g, int32_t n) {
    return get_logprob_values(r, text_len, "bytes", &g->logprobs, n);
}

/* Completion r->item's ids and token log-probs (g has a tokenizer, and n_tokens and
 * token_ids arrays of n entries). Ids are reported like log-probs, at their count's offset
 * with their index: "group 0 token_ids 2 at byte 640: id 50257 at index 7 is outside
 * [0, 50257)". */
static int get_tokens(Reader* r, RolloutGroup* g, int32_t n) {
    r->field = "token_ids";
    size_t at = r->pos;
    uint32_t count;
    if (get_u32(r, &count)) return -1;
    if (count > MESSAGE_MAX_TOKENS) return reader_fail(r, at, "count %u exceeds the limit of %u", count, MESSAGE_MAX_TOKENS);
    if ((size_t)count * 4 > reader_left(r))
        return reader_fail(r, at, "count %u needs at least %zu bytes, only %zu left", count, (size_t)count * 4,
                           reader_left(r));
    const uint8_t* p = r->buf + r->pos;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t v = unpack_u32(p + 4 * (size_t)i);
        if (v >= (uint32_t)g->vocab) /* a negative id is >= 2^31 > vocab here */
            return reader_fail(r, at, "id %d at index %u is outside [0, %d)", to_i32(v), i, g->vocab);
    }
    if (count) {
        int32_t* ids = mallocCheck((size_t)count * sizeof *ids);
        for (uint32_t i = 0; i < count; i++) ids[i] = to_i32(unpack_u32(p + 4 * (size_t)i));
        g->token_ids[r->item] = ids;
    }
    g->n_tokens[r->item] = (int32_t)count;
    r->pos += (size_t)count * 4;
    r->field = "token_logprobs";
    return get_logprob_values(r, count, "tokens", &g->token_logprobs, n);
}

static int decode_group(Reader* r, RolloutGroup* g, int version) {
    uint32_t u32;
    uint64_t u64;
    uint8_t present;
    r->item = -1;
    r->field = "task_id";
    if (get_u32(r, &u32)) return -1;
    g->task_id = to_i32(u32);
    r->field = "seed";
    if (get_u64(r, &u64)) return -1;
    g->seed = to_i64(u64);
    r->field = "index";
    if (get_u64(r, &u64)) return -1;
    g->index = to_i64(u64);
    r->field = "config_json";
    if (get_string(r, &g->config_json)) return -1;
    r->field = "question";
    if (get_string(r, &g->question)) return -1;
    r->field = "answer presence byte";
    size_t at = r->pos;
    if (get_u8(r, &present)) return -1;
    if (present > 1) return reader_fail(r, at, "value %u, expected 0 (None) or 1", present);
    r->field = "answer";
    if (present && get_string(r, &g->answer)) return -1;
    r->field = "metadata_json";
    if (get_string(r, &g->metadata_json)) return -1;
    if (version == MESSAGE_VERSION_TOKENS) {
        r->field = "tokenizer";
        if (get_u64(r, &g->tokenizer)) return -1;
        r->field = "vocab";
        at = r->pos;
        if (get_u32(r, &u32)) return -1;
        if (g->tokenizer == 0 && u32 != 0)
            return reader_fail(r, at, "vocab %u without a tokenizer (a byte-level group has vocab 0)", u32);
        if (g->tokenizer != 0 && u32 == 0)
            return reader_fail(r, at, "vocab 0 with tokenizer 0x%016llX, which needs vocab >= 1",
                               (unsigned long long)g->tokenizer);
        if (u32 > MESSAGE_MAX_VOCAB) return reader_fail(r, at, "vocab %u exceeds the limit of %u", u32, MESSAGE_MAX_VOCAB);
        g->vocab = (int32_t)u32;
    }
    r->field = "n_completions";
    int32_t n = 0; /* set by get_count; initialised for -Wmaybe-uninitialized */
    size_t min_completion = MIN_COMPLETION_BYTES + (g->tokenizer ? MIN_COMPLETION_TOKEN_BYTES : 0);
    if (get_count(r, MESSAGE_MAX_COMPLETIONS, min_completion, &n)) return -1;
    g->completions = n ? callocCheck((size_t)n, sizeof *g->completions) : NULL;
    if (g->tokenizer && n) {
        g->n_tokens = callocCheck((size_t)n, sizeof *g->n_tokens);
        g->token_ids = callocCheck((size_t)n, sizeof *g->token_ids);
    }
    g->n_completions = n; /* set now so a failure below frees what was read */
    for (r->item = 0; r->item < n; r->item++) {
        r->field = "completion";
        if (get_string(r, &g->completions[r->item])) return -1;
        r->field = "logprobs";
        if (get_logprobs(r, strlen(g->completions[r->item]), g, n)) return -1;
        if (g->tokenizer && get_tokens(r, g, n)) return -1;
    }
    r->item = -1;
    return 0;
}

int message_decode(const uint8_t* buf, size_t len, SwarmMessage* msg, char* err, size_t errlen) {
    memset(msg, 0, sizeof *msg);
    if (!buf && len) return set_error(err, errlen, "no buffer for %zu bytes", len);
    if (len > MESSAGE_MAX_BYTES)
        return set_error(err, errlen, "message of %zu bytes exceeds the limit of %u", len, MESSAGE_MAX_BYTES);
    if (len < MESSAGE_HEADER_BYTES)
        return set_error(err, errlen, "truncated header: %zu bytes, the header needs %d", len, MESSAGE_HEADER_BYTES);
    uint32_t magic = unpack_u32(buf);
    if (magic != MESSAGE_MAGIC)
        return set_error(err, errlen, "bad magic 0x%08X, expected 0x%08X (\"SAPO\")", magic, MESSAGE_MAGIC);
    uint16_t version = unpack_u16(buf + 4);
    if (version != MESSAGE_VERSION_BYTES && version != MESSAGE_VERSION_TOKENS)
        return set_error(err, errlen, "unsupported version %u, expected %d or %d", version, MESSAGE_VERSION_BYTES,
                         MESSAGE_VERSION_TOKENS);
    uint16_t flags = unpack_u16(buf + 6);
    if (flags != 0) return set_error(err, errlen, "unknown flags 0x%04X, version %u defines none", flags, version);
    uint64_t payload_len = unpack_u64(buf + PAYLOAD_LEN_AT);
    if (payload_len != len - MESSAGE_HEADER_BYTES)
        return set_error(err, errlen, "payload length %llu disagrees with the %zu bytes after the %d-byte header",
                         (unsigned long long)payload_len, len - MESSAGE_HEADER_BYTES, MESSAGE_HEADER_BYTES);
    uint64_t stored = unpack_u64(buf + CHECKSUM_AT), computed = record_checksum(buf, len);
    if (stored != computed)
        return set_error(err, errlen, "bad checksum 0x%016llX, the bytes give 0x%016llX", (unsigned long long)stored,
                         (unsigned long long)computed);
    int32_t sender = to_i32(unpack_u32(buf + 8)), round = to_i32(unpack_u32(buf + 12));
    if (sender < 0) return set_error(err, errlen, "sender %d is negative", sender);
    if (round < 0) return set_error(err, errlen, "round %d is negative", round);

    Reader r = {.buf = buf, .len = len, .pos = MESSAGE_HEADER_BYTES, .group = -1, .item = -1, .err = err, .errlen = errlen};
    SwarmMessage m = {.sender = sender, .round = round};
    r.field = "n_groups";
    int32_t n = 0; /* set by get_count; initialised for -Wmaybe-uninitialized */
    size_t min_group = MIN_GROUP_BYTES + (version == MESSAGE_VERSION_TOKENS ? MIN_GROUP_TOKEN_BYTES : 0);
    if (get_count(&r, MESSAGE_MAX_GROUPS, min_group, &n)) return -1;
    m.groups = n ? callocCheck((size_t)n, sizeof *m.groups) : NULL;
    m.n_groups = n; /* zeroed groups free cleanly if a later one fails */
    for (r.group = 0; r.group < n; r.group++) {
        if (decode_group(&r, &m.groups[r.group], version)) {
            message_free(&m);
            return -1;
        }
    }
    if (r.pos != len) {
        set_error(err, errlen, "%zu trailing bytes after the last group at byte %zu", len - r.pos, r.pos);
        message_free(&m);
        return -1;
    }
    int any_tokenizer = 0;
    for (int32_t i = 0; i < n; i++) any_tokenizer |= m.groups[i].tokenizer != 0;
    if (version == MESSAGE_VERSION_TOKENS && !any_tokenizer) { /* would re-encode as version 2 */
        set_error(err, errlen, "version 3 record in which no group has a tokenizer (version 2 carries it)");
        message_free(&m);
        return -1;
    }
    *msg = m;
    return 0;
}
