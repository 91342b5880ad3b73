/* Malformed swarm messages never crash, leak or hit undefined behaviour: mutations of valid
 * encoded messages (bit flips, byte changes, truncations, extensions, corrupted length and
 * count fields, log-prob counts and values set to nasty numbers or bit patterns, log-probs
 * added to or removed from a completion, token ids set outside [0, vocab), tokenizer and
 * vocab fields changed, a group's token fields stripped or added, version 2 records widened
 * to version 3, spliced records, random buffers; the messages are version 2 (byte-level
 * groups only) or version 3 (BPE groups with ids, some next to byte-level ones) and carry
 * log-probs on all, some or none of their completions) go through message_decode under
 * ASan+UBSan. Most mutations are resealed (payload length and checksum recomputed) so the
 * parser, not the checksum, has to catch them. A decode that succeeds must re-encode to
 * the very same bytes (the encoding is canonical), and so must deep copies of its groups,
 * which are then truncated and freed; a rejection must give one line whose reason is one of
 * the known classes. Deterministic seed; prints counts per class. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "message_layout.h"
#include "swarm/net/message.h"

static uint64_t rng_state = 0x3c6ef372fe94f82bULL;
static uint64_t rng_next(void) { /* splitmix64 */
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
static size_t rng_below(size_t n) { return n ? (size_t)(rng_next() % n) : 0; }

/* Text of random length from a small alphabet that includes UTF-8 and high bytes, no NUL. */
static char* random_text(size_t max_len) {
    static const char* pieces[] = {"a", "7", " ", "<answer>", "</answer>", "{\"k\": 1}", "\xC3\xA9", "\xF0\x9F\xA7\xA0",
                                   "\xff", "\x01", "\n", "\"", "\\", "None"};
    size_t target = rng_below(max_len + 1), n = 0;
    char* s = malloc(max_len + 16);
    while (n < target) {
        const char* p = pieces[rng_below(sizeof pieces / sizeof *pieces)];
        size_t k = strlen(p);
        memcpy(s + n, p, k);
        n += k;
    }
    s[n] = '\0';
    return s;
}

static float bits_float(uint32_t b) {
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

/* A valid log-prob: mostly ordinary negative values, with -0.0, +0.0, negative subnormals
 * and -FLT_MAX among them. */
static float random_logprob(void) {
    switch (rng_below(8)) {
    case 0: return bits_float(0x80000000u);
    case 1: return 0.0f;
    case 2: return bits_float(0x80000000u | (uint32_t)(1 + rng_below(0x007FFFFF))); /* subnormal */
    case 3: return bits_float(0xFF7FFFFFu);
    default: return bits_float(0x80000000u | (uint32_t)rng_below(0x7F800000u)); /* any finite negative */
    }
}

/* A vocabulary size: edge cases and ordinary ones. */
static int32_t random_vocab(void) {
    static const int32_t vocabs[] = {1, 2, 50, 256, 50257, 151936, (int32_t)MESSAGE_MAX_VOCAB};
    return rng_below(3) ? vocabs[rng_below(sizeof vocabs / sizeof *vocabs)] : 1 + (int32_t)rng_below(1000);
}
/* An id in [0, vocab), often one of the ends. */
static int32_t random_id(int32_t vocab) {
    switch (rng_below(4)) {
    case 0: return 0;
    case 1: return vocab - 1;
    default: return (int32_t)rng_below((size_t)vocab);
    }
}
static uint64_t random_tokenizer(void) { return rng_below(4) ? rng_next() | 1 : 1 + rng_below(3); }

/* Token fields of a BPE sender on g: up to 11 ids a completion, token log-probs on about
 * two thirds of those with ids. */
static void give_tokens(RolloutGroup* g) {
    size_t nc = (size_t)(g->n_completions ? g->n_completions : 1);
    g->tokenizer = random_tokenizer();
    g->vocab = random_vocab();
    if (rng_below(8) == 0) return; /* n_tokens NULL: no ids anywhere */
    g->n_tokens = calloc(nc, sizeof(int32_t));
    g->token_ids = calloc(nc, sizeof(int32_t*));
    g->token_logprobs = rng_below(4) ? calloc(nc, sizeof(float*)) : NULL;
    for (int c = 0; c < g->n_completions; c++) {
        int32_t n = (int32_t)rng_below(12);
        g->n_tokens[c] = n;
        g->token_ids[c] = malloc((size_t)(n ? n : 1) * sizeof(int32_t));
        for (int32_t k = 0; k < n; k++) g->token_ids[c][k] = random_id(g->vocab);
        if (!g->token_logprobs || rng_below(3) == 0) continue;
        g->token_logprobs[c] = malloc((size_t)(n ? n : 1) * sizeof(float));
        for (int32_t k = 0; k < n; k++) g->token_logprobs[c][k] = random_logprob();
    }
}

static SwarmMessage random_message(void) {
    SwarmMessage m = {.sender = (int32_t)rng_below(64), .round = (int32_t)rng_below(1000)};
    int bpe = rng_below(2); /* half the messages may hold BPE groups (then version 3) */
    m.n_groups = (int32_t)rng_below(6);
    m.groups = m.n_groups ? calloc((size_t)m.n_groups, sizeof *m.groups) : NULL;
    for (int i = 0; i < m.n_groups; i++) {
        RolloutGroup* g = &m.groups[i];
        g->task_id = (int32_t)rng_next();
        g->seed = (int64_t)rng_next();
        g->index = (int64_t)rng_below(100000);
        g->config_json = random_text(24);
        g->question = random_text(48);
        g->answer = rng_below(4) ? random_text(8) : NULL;
        g->metadata_json = random_text(24);
        g->n_completions = (int32_t)rng_below(7);
        g->completions = g->n_completions ? calloc((size_t)g->n_completions, sizeof(char*)) : NULL;
        for (int c = 0; c < g->n_completions; c++) g->completions[c] = random_text(32);
        if (bpe && rng_below(3)) give_tokens(g);
        if (rng_below(3) == 0) continue; /* no log-probs at all */
        g->logprobs = calloc((size_t)(g->n_completions ? g->n_completions : 1), sizeof(float*));
        for (int c = 0; c < g->n_completions; c++) {
            if (rng_below(3) == 0) continue; /* none for this one */
            size_t n = strlen(g->completions[c]);
            g->logprobs[c] = malloc((n ? n : 1) * sizeof(float));
            for (size_t k = 0; k < n; k++) g->logprobs[c][k] = random_logprob();
        }
    }
    return m;
}

/* Rejection classes, recognised by the wording of message.c's reasons. */
static const struct {
    const char* name;
    const char* fragment;
    const char* also; /* a second fragment the reason must hold, or NULL */
} CLASSES[] = {
    {.name = "bad magic", .fragment = "bad magic"},
    {.name = "version", .fragment = "unsupported version"},
    {.name = "flags", .fragment = "unknown flags"},
    {.name = "header truncated", .fragment = "truncated header"},
    {.name = "payload length", .fragment = "payload length"},
    {.name = "checksum", .fragment = "bad checksum"},
    {.name = "negative sender/round", .fragment = "is negative"},
    {.name = "truncated field", .fragment = "truncated: needs"},
    {.name = "length past end", .fragment = "bytes left"},
    {.name = "token log-probs past end", .fragment = "token_logprobs", .also = "needs at least"},
    {.name = "log-probs past end", .fragment = "logprobs", .also = "needs at least"},
    {.name = "token ids past end", .fragment = "token_ids", .also = "needs at least"},
    {.name = "count past end", .fragment = "needs at least"},
    {.name = "over a limit", .fragment = "exceeds the limit"},
    {.name = "embedded NUL", .fragment = "NUL byte"},
    {.name = "presence byte", .fragment = "expected 0 (None) or 1"},
    {.name = "token log-prob count", .fragment = "is neither 0 nor the completion's", .also = "tokens"},
    {.name = "log-prob count", .fragment = "is neither 0 nor the completion's"},
    {.name = "token log-prob value", .fragment = "token_logprobs", .also = "is not a finite log-probability <= 0"},
    {.name = "log-prob value", .fragment = "is not a finite log-probability <= 0"},
    {.name = "token id", .fragment = "is outside [0, "},
    {.name = "vocab vs tokenizer", .fragment = "vocab", .also = "tokenizer"},
    {.name = "version 3, no tokenizer", .fragment = "no group has a tokenizer"},
    {.name = "trailing bytes", .fragment = "trailing bytes"},
};
enum { N_CLASSES = sizeof CLASSES / sizeof *CLASSES };

static long accepted, accepted_v3, rejected_by[N_CLASSES], failures;

static void fail(const char* what, long iter, const char* detail) {
    if (failures < 20) printf("FAIL iteration %ld (%s): %s\n", iter, what, detail);
    failures++;
}

static void decode_one(const uint8_t* buf, size_t len, const char* what, long iter) {
    SwarmMessage m;
    char err[512] = "";
    if (message_decode(buf, len, &m, err, sizeof err) == 0) {
        accepted++;
        uint8_t* again = NULL;
        size_t again_len = 0;
        char err2[512] = "";
        accepted_v3 += buf[4] == 3;
        if (message_encode(&m, &again, &again_len, err2, sizeof err2)) fail(what, iter, err2);
        else if (again_len != len || memcmp(again, buf, len) != 0) fail(what, iter, "re-encoding gives other bytes");
        else {
            SwarmMessage back;
            if (message_decode(again, again_len, &back, err2, sizeof err2)) fail(what, iter, err2);
            message_free(&back);
        }
        free(again);
        /* Deep copies (what the pool keeps) encode to the same bytes; truncated, they still
         * encode, and free without a leak. */
        SwarmMessage copies = {.sender = m.sender, .round = m.round, .n_groups = m.n_groups};
        copies.groups = m.n_groups ? calloc((size_t)m.n_groups, sizeof *copies.groups) : NULL;
        for (int i = 0; i < m.n_groups; i++) rollout_group_copy(&copies.groups[i], &m.groups[i]);
        if (message_encode(&copies, &again, &again_len, err2, sizeof err2)) fail(what, iter, err2);
        else if (again_len != len || memcmp(again, buf, len) != 0) fail(what, iter, "copies encode to other bytes");
        free(again);
        for (int i = 0; i < m.n_groups; i++)
            rollout_group_truncate(&copies.groups[i], (int32_t)rng_below((size_t)copies.groups[i].n_completions + 1));
        if (message_encode(&copies, &again, &again_len, err2, sizeof err2)) fail(what, iter, err2);
        free(again);
        message_free(&copies);
        message_free(&m);
        return;
    }
    if (m.n_groups != 0 || m.groups != NULL) fail(what, iter, "*msg not left empty after a rejection");
    if (!err[0] || strchr(err, '\n')) fail(what, iter, "message empty or not one line");
    for (int c = 0; c < N_CLASSES; c++) {
        if (strstr(err, CLASSES[c].fragment) && (!CLASSES[c].also || strstr(err, CLASSES[c].also))) {
            rejected_by[c]++;
            return;
        }
    }
    fail(what, iter, err);
}

/* A buffer with room to grow; mutations work on it in place. */
typedef struct {
    uint8_t* b;
    size_t len, cap;
} Buf;

static void buf_reserve(Buf* x, size_t n) {
    if (n > x->cap) {
        x->cap = n * 2;
        x->b = realloc(x->b, x->cap);
    }
}

static void random_bytes(uint8_t* p, size_t n) {
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)rng_next();
}

/* The fields of x of one kind with at least min_count values (x must follow the layout). */
static int kind_fields(const Buf* x, FieldKind kind, uint32_t min_count, Field* out, int cap) {
    Field f[1024];
    int n = layout_fields(x->b, x->len, f, 1024), k = 0;
    for (int i = 0; i < n && i < 1024; i++)
        if (f[i].kind == kind && f[i].value >= min_count && k < cap) out[k++] = f[i];
    return k;
}
/* The n_logprobs and n_token_logprobs fields of x with at least min_count values. */
static int logprob_fields(const Buf* x, uint32_t min_count, Field* out, int cap) {
    int k = kind_fields(x, FIELD_N_LOGPROBS, min_count, out, cap);
    return k + kind_fields(x, FIELD_N_TOKEN_LOGPROBS, min_count, out + k, cap - k);
}

static void buf_insert(Buf* x, size_t at, const uint8_t* src, size_t n) {
    buf_reserve(x, x->len + n);
    memmove(x->b + at + n, x->b + at, x->len - at);
    if (src) memcpy(x->b + at, src, n);
    else memset(x->b + at, 0, n);
    x->len += n;
}
static void buf_delete(Buf* x, size_t at, size_t n) {
    memmove(x->b + at, x->b + at + n, x->len - at - n);
    x->len -= n;
}

/* Token-field mutations that keep the layout (the result is valid, or rejected only for
 * what it means): widen a version 2 record to version 3 with byte-level groups (rejected:
 * no tokenizer), give a byte-level group of a version 3 record a tokenizer and ids, or
 * strip a group's (perhaps the last BPE group's: rejected). Edits run from the end of the
 * record backwards, so the offsets found first stay right. */
static const char* mutate_tokens(Buf* x) {
    Field f[1024];
    int n = layout_fields(x->b, x->len, f, 1024);
    if (n <= 0 || n > 1024) return "token structure (layout lost)";
    if (x->b[4] == 2) {
        for (int i = n - 1; i >= 0; i--)
            if (f[i].kind == FIELD_N_COMPLETIONS) buf_insert(x, f[i].at, NULL, 12);
        x->b[4] = 3;
        return "widened to version 3";
    }
    int groups[256], ng = 0;
    for (int i = 0; i < n; i++)
        if (f[i].kind == FIELD_TOKENIZER && ng < 256) groups[ng++] = i;
    if (ng == 0) return "token structure (no groups)";
    const Field* tok = &f[groups[rng_below((size_t)ng)]];
    int g = tok->group;
    if (tok->wide) { /* strip: drop each completion's token fields, then zero tokenizer and vocab */
        for (int i = n - 1; i >= 0; i--) {
            if (f[i].group != g || f[i].kind != FIELD_N_TOKENS) continue;
            size_t k = 4 + 4 * (size_t)f[i].value;
            k += 4 + 4 * (size_t)layout_u32(x->b + f[i].at + k); /* n_token_logprobs and its values */
            buf_delete(x, f[i].at, k);
        }
        memset(x->b + tok->at, 0, 12);
        return "tokenizer stripped";
    }
    /* add: ids (and maybe token log-probs) after each completion's byte log-probs */
    int32_t vocab = random_vocab();
    for (int i = n - 1; i >= 0; i--) {
        if (f[i].group != g || f[i].kind != FIELD_N_LOGPROBS) continue;
        uint32_t nt = (uint32_t)rng_below(6), ntl = rng_below(2) ? nt : 0;
        uint8_t add[4 + 4 * 5 + 4 + 4 * 5];
        size_t k = 0;
        layout_put_u32(add + k, nt), k += 4;
        for (uint32_t j = 0; j < nt; j++) layout_put_u32(add + k, (uint32_t)random_id(vocab)), k += 4;
        layout_put_u32(add + k, ntl), k += 4;
        for (uint32_t j = 0; j < ntl; j++) {
            float v = random_logprob();
            uint32_t b;
            memcpy(&b, &v, 4);
            layout_put_u32(add + k, b), k += 4;
        }
        buf_insert(x, f[i].at + 4 + 4 * (size_t)f[i].value, add, k);
    }
    layout_put_u64(x->b + tok->at, random_tokenizer());
    layout_put_u32(x->b + tok->at + 8, (uint32_t)vocab);
    return "tokenizer added";
}

/* One structural mutation of x (a valid record on entry, maybe not after). */
static const char* mutate(Buf* x) {
    switch (rng_below(12)) {
    case 9: { /* one id set to a nasty value, valid ones among them */
        Field f[256];
        int n = kind_fields(x, FIELD_N_TOKENS, 1, f, 256);
        if (n <= 0) return "token id (none)";
        const Field* pick = &f[rng_below((size_t)n)];
        Field v[256];
        int nv = kind_fields(x, FIELD_VOCAB, 0, v, 256);
        uint32_t vocab = 1;
        for (int i = 0; i < nv; i++)
            if (v[i].group == pick->group) vocab = v[i].value;
        const uint32_t nasty[] = {0, vocab - 1, vocab, vocab + 1, 0xFFFFFFFFu, 0x80000000u, 0x7FFFFFFFu, MESSAGE_MAX_VOCAB};
        uint32_t id = rng_below(4) ? nasty[rng_below(sizeof nasty / sizeof *nasty)] : (uint32_t)rng_next();
        layout_put_u32(x->b + pick->at + 4 + 4 * rng_below(pick->value), id);
        return "token id";
    }
    case 10: { /* tokenizer or vocab set to a nasty value */
        Field f[256];
        int n = kind_fields(x, FIELD_TOKENIZER, 0, f, 256);
        if (n <= 0) return "tokenizer/vocab (none)";
        const Field* pick = &f[rng_below((size_t)n)];
        if (rng_below(2)) {
            static const uint64_t nasty[] = {0, 1, UINT64_MAX, 0x8000000000000000ull};
            layout_put_u64(x->b + pick->at, rng_below(2) ? nasty[rng_below(4)] : rng_next());
            return "tokenizer";
        }
        uint32_t vocab = layout_u32(x->b + pick->at + 8);
        const uint32_t nasty[] = {0, 1, vocab - 1, vocab + 1, MESSAGE_MAX_VOCAB, MESSAGE_MAX_VOCAB + 1, 0xFFFFFFFFu};
        layout_put_u32(x->b + pick->at + 8, nasty[rng_below(sizeof nasty / sizeof *nasty)]);
        return "vocab";
    }
    case 11: return mutate_tokens(x);
    case 7: { /* one log-prob set to a nasty value: bad ones and valid edge cases */
        Field f[256];
        int n = logprob_fields(x, 1, f, 256);
        if (n <= 0) return "log-prob value (none)";
        const Field* pick = &f[rng_below((size_t)n)];
        static const uint32_t nasty[] = {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFFFFFFFFu, 0x7F800000u,
                                         0xFF800000u, 0x3F800000u, 0x00000001u, 0x7F7FFFFFu, 0x00800000u,
                                         0x80000000u, 0x00000000u, 0x80000001u, 0xFF7FFFFFu, 0xBF800000u};
        uint32_t v = rng_below(4) ? nasty[rng_below(sizeof nasty / sizeof *nasty)] : (uint32_t)rng_next();
        layout_put_u32(x->b + pick->at + 4 + 4 * rng_below(pick->value), v);
        return "log-prob value";
    }
    case 8: { /* log-probs added to a completion that had none, or removed: still valid */
        Field f[256];
        int n = logprob_fields(x, 0, f, 256);
        if (n <= 0) return "log-prob toggle (none)";
        const Field* pick = &f[rng_below((size_t)n)];
        size_t at = pick->at;
        if (pick->value) { /* drop them */
            size_t k = 4 * (size_t)pick->value;
            memmove(x->b + at + 4, x->b + at + 4 + k, x->len - at - 4 - k);
            x->len -= k;
            layout_put_u32(x->b + at, 0);
            return "log-probs removed";
        }
        /* The count to match is the text's length (byte log-probs) or the ids' (token
         * log-probs): find it by walking the fields again. */
        Field g[1024];
        int m = layout_fields(x->b, x->len, g, 1024);
        FieldKind len_kind = pick->kind == FIELD_N_LOGPROBS ? FIELD_COMPLETION : FIELD_N_TOKENS;
        uint32_t text_len = 0;
        for (int i = 0; i < m && i < 1024; i++)
            if (g[i].kind == len_kind && g[i].group == pick->group && g[i].item == pick->item) text_len = g[i].value;
        if (!text_len) return "log-prob toggle (nothing to match)";
        size_t k = 4 * (size_t)text_len;
        buf_reserve(x, x->len + k);
        memmove(x->b + at + 4 + k, x->b + at + 4, x->len - at - 4);
        for (size_t i = 0; i < text_len; i++) {
            float v = random_logprob();
            uint32_t b;
            memcpy(&b, &v, 4);
            layout_put_u32(x->b + at + 4 + 4 * i, b);
        }
        layout_put_u32(x->b + at, text_len);
        x->len += k;
        return "log-probs added";
    }
    case 0: { /* bit flip */
        size_t at = rng_below(x->len);
        x->b[at] ^= (uint8_t)(1u << rng_below(8));
        return "bit flip";
    }
    case 1: /* byte change, with a bias towards 0, 1 and 0xff */
        x->b[rng_below(x->len)] = (uint8_t)(rng_below(4) ? rng_next() : (rng_below(3) == 0 ? 0 : rng_below(2) ? 1 : 0xff));
        return "byte change";
    case 2: /* truncation */
        x->len = rng_below(x->len);
        return "truncation";
    case 3: { /* extension: random bytes or a copy of a span */
        size_t n = 1 + rng_below(40);
        buf_reserve(x, x->len + n);
        if (rng_below(2) || x->len < n) random_bytes(x->b + x->len, n);
        else memcpy(x->b + x->len, x->b + rng_below(x->len - n + 1), n);
        x->len += n;
        return "extension";
    }
    case 4: { /* delete or duplicate a span in the middle */
        if (x->len <= 33) return "span (too short)";
        size_t at = 32 + rng_below(x->len - 32), n = 1 + rng_below(16);
        if (at + n > x->len) n = x->len - at;
        if (rng_below(2)) {
            memmove(x->b + at, x->b + at + n, x->len - at - n);
            x->len -= n;
            return "span deleted";
        }
        buf_reserve(x, x->len + n);
        memmove(x->b + at + n, x->b + at, x->len - at);
        x->len += n;
        return "span duplicated";
    }
    default: { /* a length, count or presence field set to a nasty value */
        Field f[1024];
        int n = layout_fields(x->b, x->len, f, 1024);
        if (n <= 0) return "field (layout lost)";
        const Field* pick = &f[rng_below((size_t)(n < 1024 ? n : 1024))];
        if (pick->kind == FIELD_PRESENCE) {
            x->b[pick->at] = (uint8_t)rng_below(4);
            return "presence field";
        }
        static const uint32_t nasty[] = {0, 1, 0xFFFFFFFFu, 0x7FFFFFFFu, 0x80000000u, MESSAGE_MAX_GROUPS,
                                         MESSAGE_MAX_GROUPS + 1, MESSAGE_MAX_COMPLETIONS + 1, MESSAGE_MAX_STRING,
                                         MESSAGE_MAX_STRING + 1, MESSAGE_MAX_TOKENS + 1, MESSAGE_MAX_VOCAB + 1, 0x40000000u};
        uint32_t v;
        switch (rng_below(4)) {
        case 0: v = pick->value + 1; break;
        case 1: v = pick->value - 1; break;
        case 2: v = nasty[rng_below(sizeof nasty / sizeof *nasty)]; break;
        default: v = (uint32_t)rng_below(64);
        }
        layout_put_u32(x->b + pick->at, v);
        return "length/count field";
    }
    }
}

int main(void) {
    enum { ITERATIONS = 400000, RANDOM_EVERY = 16 };
    Buf x = {0};
    long by_kind_resealed = 0, unsealed = 0, random_buffers = 0;
    SwarmMessage base = random_message();
    uint8_t* enc = NULL;
    size_t enc_len = 0;
    char err[512];
    for (long it = 0; it < ITERATIONS; it++) {
        if (it % 64 == 0) { /* a fresh valid message now and then */
            message_free(&base);
            free(enc);
            base = random_message();
            if (message_encode(&base, &enc, &enc_len, err, sizeof err)) {
                printf("FAIL: a valid random message does not encode: %s\n", err);
                return 1;
            }
            decode_one(enc, enc_len, "unmutated", it);
        }
        if (it % RANDOM_EVERY == 0) { /* random bytes, half of them behind a valid header */
            size_t n = rng_below(300);
            buf_reserve(&x, n + MESSAGE_HEADER_BYTES);
            random_bytes(x.b, n + MESSAGE_HEADER_BYTES);
            x.len = n;
            if (rng_below(2)) {
                x.len = n + MESSAGE_HEADER_BYTES;
                memcpy(x.b, enc, 8); /* magic, version, flags */
                if (rng_below(2)) layout_put_u32(x.b + 32, (uint32_t)rng_below(4)); /* small n_groups */
                message_seal(x.b, x.len);
            }
            random_buffers++;
            decode_one(x.b, x.len, "random buffer", it);
            continue;
        }
        buf_reserve(&x, enc_len);
        memcpy(x.b, enc, enc_len);
        x.len = enc_len;
        const char* what = "";
        int n_mut = 1 + (int)rng_below(rng_below(4) ? 1 : 4);
        for (int k = 0; k < n_mut && x.len > 0; k++) what = mutate(&x);
        /* Reseal most of them so the checksum does not hide the parser. Sealing only
         * rewrites bytes 16..31, so magic/version/flags mutations still show. */
        if (x.len >= MESSAGE_HEADER_BYTES && rng_below(8)) {
            message_seal(x.b, x.len);
            by_kind_resealed++;
        } else {
            unsealed++;
        }
        decode_one(x.b, x.len, what, it);
    }
    message_free(&base);
    free(enc);
    free(x.b);

    long rejected = 0;
    for (int c = 0; c < N_CLASSES; c++) rejected += rejected_by[c];
    printf("asan_message_fuzz: %d iterations (%ld resealed mutations, %ld unsealed, %ld random buffers) + "
           "unmutated originals: %ld accepted (re-encoded byte for byte; %ld of them version 3), %ld rejected\n",
           ITERATIONS, by_kind_resealed, unsealed, random_buffers, accepted, accepted_v3, rejected);
    for (int c = 0; c < N_CLASSES; c++) printf("  rejected %-32s %ld\n", CLASSES[c].name, rejected_by[c]);
    printf("  failures %ld\n", failures);
    /* Every class a decoder can reach from these mutations must have been reached, so a
     * check that silently stopped firing shows up here. */
    if (accepted_v3 == 0 || accepted_v3 == accepted) {
        printf("FAIL: %ld of %ld accepted records are version 3; both versions must be covered\n", accepted_v3, accepted);
        failures++;
    }
    for (int c = 0; c < N_CLASSES; c++) {
        if (rejected_by[c] == 0) {
            printf("FAIL: no rejection of class '%s' in the whole run\n", CLASSES[c].name);
            failures++;
        }
    }
    return failures ? 1 : 0;
}
