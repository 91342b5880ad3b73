/* Test-side reading of the version-2 and -3 swarm message layouts, written independently of
 * src/swarm/net/message.c: it lists where each payload field of a VALID record sits, so tests
 * can corrupt one named field (a string length, a count, a log-prob, an id) and predict the
 * decoder's answer, and it packs little-endian values and computes the FNV-1a checksum by
 * hand. Version 2 follows each completion text with u32 n_logprobs (0 or the text's byte
 * length) and that many f32 bit patterns. Version 3 (header byte 4) adds u64 tokenizer and
 * u32 vocab after each group's metadata_json, and, in a group whose tokenizer is not 0,
 * u32 n_tokens + that many i32 ids + u32 n_token_logprobs (0 or n_tokens) + that many f32
 * after each completion's log-probs. */
#ifndef SAPO_TESTS_MESSAGE_LAYOUT_H
#define SAPO_TESTS_MESSAGE_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    FIELD_N_GROUPS,
    FIELD_TASK_ID,
    FIELD_SEED,
    FIELD_INDEX,
    FIELD_CONFIG, /* string fields: the offset is that of the u32 length */
    FIELD_QUESTION,
    FIELD_PRESENCE,
    FIELD_ANSWER,
    FIELD_METADATA,
    FIELD_N_COMPLETIONS,
    FIELD_COMPLETION,
    FIELD_N_LOGPROBS, /* after each completion; its f32 values follow from at + 4 */
    FIELD_TOKENIZER,  /* v3: u64; value holds its low 32 bits, wide all 64 */
    FIELD_VOCAB,      /* v3 */
    FIELD_N_TOKENS,   /* v3, with a tokenizer: its i32 ids follow from at + 4 */
    FIELD_N_TOKEN_LOGPROBS, /* v3, with a tokenizer: its f32 values follow from at + 4 */
} FieldKind;

typedef struct {
    FieldKind kind;
    size_t at;     /* byte offset in the record */
    int group;     /* -1 for n_groups */
    int item;      /* completion index (completion, n_logprobs), -1 otherwise */
    uint32_t value; /* the u32 length / count / presence byte as stored */
    uint64_t wide;  /* the u64 of a tokenizer field, else value */
} Field;

static inline uint32_t layout_u32(const uint8_t* p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t layout_u64(const uint8_t* p) { return layout_u32(p) | (uint64_t)layout_u32(p + 4) << 32; }
static inline void layout_put_u32(uint8_t* p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline void layout_put_u64(uint8_t* p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
/* FNV-1a 64 over header bytes [0, 24) and the payload, as message.c documents. */
static inline uint64_t layout_checksum(const uint8_t* buf, size_t len) {
    uint64_t h = 0xCBF29CE484222325ull;
    for (size_t i = 0; i < len; i++) {
        if (i >= 24 && i < 32) continue;
        h ^= buf[i];
        h *= 0x100000001B3ull;
    }
    return h;
}

/* Walks a valid record from byte 32; fills up to cap fields and returns how many there
 * are (may exceed cap), or -1 if the record does not follow the layout. */
static inline int layout_fields(const uint8_t* buf, size_t len, Field* out, int cap) {
    size_t at = 32;
    int n = 0;
    if (len < 32) return -1;
    int v3 = buf[4] == 3 && buf[5] == 0;
#define LAYOUT_ADD_WIDE(k, g, it, v, w)                                                                         \
    do {                                                                                                        \
        if (n < cap) out[n] = (Field){.kind = (k), .at = at, .group = (g), .item = (it), .value = (v), .wide = (w)}; \
        n++;                                                                                                    \
    } while (0)
#define LAYOUT_ADD(k, g, it, v) LAYOUT_ADD_WIDE(k, g, it, v, v)
#define LAYOUT_STRING(k, g, it)                          \
    do {                                                 \
        if (at + 4 > len) return -1;                     \
        uint32_t sl = layout_u32(buf + at);              \
        LAYOUT_ADD(k, g, it, sl);                        \
        if (sl > len - at - 4) return -1;                \
        at += 4 + sl;                                    \
    } while (0)
    if (at + 4 > len) return -1;
    uint32_t n_groups = layout_u32(buf + at);
    LAYOUT_ADD(FIELD_N_GROUPS, -1, -1, n_groups);
    at += 4;
    for (uint32_t g = 0; g < n_groups; g++) {
        if (at + 20 > len) return -1;
        LAYOUT_ADD(FIELD_TASK_ID, (int)g, -1, layout_u32(buf + at));
        at += 4;
        LAYOUT_ADD(FIELD_SEED, (int)g, -1, layout_u32(buf + at));
        at += 8;
        LAYOUT_ADD(FIELD_INDEX, (int)g, -1, layout_u32(buf + at));
        at += 8;
        LAYOUT_STRING(FIELD_CONFIG, (int)g, -1);
        LAYOUT_STRING(FIELD_QUESTION, (int)g, -1);
        if (at + 1 > len) return -1;
        uint8_t present = buf[at];
        LAYOUT_ADD(FIELD_PRESENCE, (int)g, -1, present);
        at += 1;
        if (present) LAYOUT_STRING(FIELD_ANSWER, (int)g, -1);
        LAYOUT_STRING(FIELD_METADATA, (int)g, -1);
        uint64_t tokenizer = 0;
        if (v3) {
            if (at + 12 > len) return -1;
            tokenizer = layout_u64(buf + at);
            LAYOUT_ADD_WIDE(FIELD_TOKENIZER, (int)g, -1, (uint32_t)tokenizer, tokenizer);
            at += 8;
            LAYOUT_ADD(FIELD_VOCAB, (int)g, -1, layout_u32(buf + at));
            at += 4;
        }
        if (at + 4 > len) return -1;
        uint32_t nc = layout_u32(buf + at);
        LAYOUT_ADD(FIELD_N_COMPLETIONS, (int)g, -1, nc);
        at += 4;
        for (uint32_t c = 0; c < nc; c++) {
            size_t text_at = at;
            LAYOUT_STRING(FIELD_COMPLETION, (int)g, (int)c);
            if (at + 4 > len) return -1;
            uint32_t nl = layout_u32(buf + at);
            LAYOUT_ADD(FIELD_N_LOGPROBS, (int)g, (int)c, nl);
            if (nl != 0 && nl != layout_u32(buf + text_at)) return -1;
            if (nl > (len - at - 4) / 4) return -1;
            at += 4 + 4 * (size_t)nl;
            if (!tokenizer) continue;
            if (at + 4 > len) return -1;
            uint32_t nt = layout_u32(buf + at);
            LAYOUT_ADD(FIELD_N_TOKENS, (int)g, (int)c, nt);
            if (nt > (len - at - 4) / 4) return -1;
            at += 4 + 4 * (size_t)nt;
            if (at + 4 > len) return -1;
            uint32_t ntl = layout_u32(buf + at);
            LAYOUT_ADD(FIELD_N_TOKEN_LOGPROBS, (int)g, (int)c, ntl);
            if (ntl != 0 && ntl != nt) return -1;
            if (ntl > (len - at - 4) / 4) return -1;
            at += 4 + 4 * (size_t)ntl;
        }
    }
#undef LAYOUT_STRING
#undef LAYOUT_ADD
#undef LAYOUT_ADD_WIDE
    return at == len ? n : -1;
}

#endif
