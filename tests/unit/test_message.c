/* Swarm message codec (versions 2 and 3): round trips (0, 1, many groups; empty strings; a
 * None answer; UTF-8 and arbitrary non-NUL bytes; every limit reached exactly; log-probs on
 * all, some or none of the completions, bit for bit, -0.0 and subnormals included; token
 * ids and token log-probs of BPE groups, alone and mixed with byte-level groups), the byte
 * layout of both versions checked against records packed by hand (a message without a
 * tokenizer must stay version 2, byte for byte), deep copies and truncation, encoder
 * refusals (non-finite or positive log-probs, ids outside [0, vocab), token fields without
 * a tokenizer among them), and every decoder rejection with its message (bad magic, version
 * 1 and others, flags, checksum, truncation at every offset, lying lengths and counts, a
 * log-prob count that is neither 0 nor the text length or that runs past the end, NaN /
 * +-inf / positive log-probs, ids outside [0, vocab), a vocab that disagrees with the
 * tokenizer, a token log-prob count other than 0 or n_tokens, a version 3 record without a
 * tokenizer, embedded NUL, trailing bytes, payload length that disagrees with the
 * buffer). */
#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "message_layout.h"
#include "swarm/net/message.h"
#include "../test_assert.h"

/* ---- building and comparing messages --------------------------------------------------- */

static char* xstrdup(const char* s) {
    size_t n = strlen(s);
    char* d = malloc(n + 1);
    memcpy(d, s, n + 1);
    return d;
}

/* Group i of a test message: distinct content per group and completion. */
static void make_group(RolloutGroup* g, int i, int n_completions) {
    char buf[256];
    g->task_id = i % 9;
    g->seed = (int64_t)i * 1000003 - 42;
    g->index = i;
    snprintf(buf, sizeof buf, "{\"size\": %d, \"min\": 1}", i);
    g->config_json = xstrdup(buf);
    snprintf(buf, sizeof buf, "Question %d: what is %d + %d?", i, i, 2 * i);
    g->question = xstrdup(buf);
    if (i % 3 == 2) {
        g->answer = NULL;
    } else {
        snprintf(buf, sizeof buf, "%d", 3 * i);
        g->answer = xstrdup(buf);
    }
    snprintf(buf, sizeof buf, "{\"idx\": %d}", i);
    g->metadata_json = xstrdup(buf);
    g->n_completions = n_completions;
    g->completions = n_completions ? calloc((size_t)n_completions, sizeof(char*)) : NULL;
    for (int c = 0; c < n_completions; c++) {
        snprintf(buf, sizeof buf, "<answer>%d</answer> try %d", 3 * i + c, c);
        g->completions[c] = xstrdup(buf);
    }
}

/* The bits of a float, and a float from bits (log-probs are compared bit for bit). */
static uint32_t fbits(float f) {
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}
static float bitsf(uint32_t b) {
    float f;
    memcpy(&f, &b, 4);
    return f;
}

/* Gives completion c of g log-probs when bit c % 32 of mask is set (others NULL): valid
 * values, with -0.0 / +0.0, the smallest negative subnormal and -FLT_MAX among them. */
static void give_logprobs(RolloutGroup* g, uint32_t mask) {
    g->logprobs = calloc((size_t)(g->n_completions ? g->n_completions : 1), sizeof(float*));
    for (int c = 0; c < g->n_completions; c++) {
        if (!(mask >> (c % 32) & 1)) continue;
        size_t n = strlen(g->completions[c]);
        float* lp = malloc((n ? n : 1) * sizeof(float));
        for (size_t k = 0; k < n; k++) {
            if (k == 0) lp[k] = c % 2 ? 0.0f : -0.0f;
            else if (k == 1) lp[k] = -FLT_TRUE_MIN;
            else if (k == 2) lp[k] = -FLT_MAX;
            else lp[k] = -(float)((c * 31 + (int)k * 7) % 1000) / 97.0f;
        }
        g->logprobs[c] = lp;
    }
}

/* The log-probs a completion effectively ships: none for a NULL entry or an empty text. */
static const float* shipped(const RolloutGroup* g, int c) {
    return g->logprobs && g->logprobs[c] && g->completions[c][0] ? g->logprobs[c] : NULL;
}

/* Gives g the token fields of a BPE sender: completion c carries no ids when c % 5 == 3,
 * else 3 + (5c + index) % 9 of them, 0 and vocab - 1 among them; token log-probs when bit
 * c % 32 of lp_mask is set, with -0.0 / +0.0, -FLT_TRUE_MIN and -FLT_MAX among them. The
 * 0-id completions still get (empty) arrays, which must ship as none. */
static void give_tokens(RolloutGroup* g, uint64_t tokenizer, int32_t vocab, uint32_t lp_mask) {
    size_t nc = (size_t)(g->n_completions ? g->n_completions : 1);
    g->tokenizer = tokenizer;
    g->vocab = vocab;
    g->n_tokens = calloc(nc, sizeof(int32_t));
    g->token_ids = calloc(nc, sizeof(int32_t*));
    g->token_logprobs = calloc(nc, sizeof(float*));
    for (int c = 0; c < g->n_completions; c++) {
        int32_t n = c % 5 == 3 ? 0 : 3 + (int32_t)((5 * c + g->index) % 9);
        g->n_tokens[c] = n;
        g->token_ids[c] = malloc((size_t)(n ? n : 1) * sizeof(int32_t));
        for (int32_t k = 0; k < n; k++)
            g->token_ids[c][k] = k == 0 ? 0 : k == 1 ? vocab - 1 : (int32_t)(((int64_t)c * 131 + k * 17) % vocab);
        if (!(lp_mask >> (c % 32) & 1)) continue;
        float* lp = malloc((size_t)(n ? n : 1) * sizeof(float));
        for (int32_t k = 0; k < n; k++) {
            if (k == 0) lp[k] = c % 2 ? 0.0f : -0.0f;
            else if (k == 1) lp[k] = -FLT_TRUE_MIN;
            else if (k == 2) lp[k] = -FLT_MAX;
            else lp[k] = -(float)((c * 37 + (int)k * 11) % 1000) / 89.0f;
        }
        g->token_logprobs[c] = lp;
    }
}

/* The ids a completion effectively ships (0 for a NULL n_tokens), and its token log-probs:
 * none for a NULL entry or no ids. */
static int32_t shipped_n_tokens(const RolloutGroup* g, int c) { return g->tokenizer && g->n_tokens ? g->n_tokens[c] : 0; }
static const float* shipped_token_lps(const RolloutGroup* g, int c) {
    return g->token_logprobs && shipped_n_tokens(g, c) > 0 ? g->token_logprobs[c] : NULL;
}

static SwarmMessage make_message(int sender, int round, int n_groups, int n_completions) {
    SwarmMessage m = {.sender = sender, .round = round, .n_groups = n_groups};
    m.groups = n_groups ? calloc((size_t)n_groups, sizeof(RolloutGroup)) : NULL;
    for (int i = 0; i < n_groups; i++) make_group(&m.groups[i], i, n_completions);
    return m;
}

static int same_string(const char* a, const char* b) { return (!a && !b) || (a && b && strcmp(a, b) == 0); }

static int same_group(const RolloutGroup* a, const RolloutGroup* b) {
    if (a->task_id != b->task_id || a->seed != b->seed || a->index != b->index) return 0;
    if (!same_string(a->config_json, b->config_json) || !same_string(a->question, b->question)) return 0;
    if (!same_string(a->answer, b->answer) || !same_string(a->metadata_json, b->metadata_json)) return 0;
    if (a->n_completions != b->n_completions) return 0;
    for (int c = 0; c < a->n_completions; c++) {
        if (!same_string(a->completions[c], b->completions[c])) return 0;
        const float *la = shipped(a, c), *lb = shipped(b, c);
        if (!la != !lb) return 0;
        for (size_t k = 0; la && k < strlen(a->completions[c]); k++)
            if (fbits(la[k]) != fbits(lb[k])) return 0;
    }
    if (a->tokenizer != b->tokenizer || a->vocab != b->vocab) return 0;
    for (int c = 0; c < a->n_completions; c++) {
        int32_t n = shipped_n_tokens(a, c);
        if (n != shipped_n_tokens(b, c)) return 0;
        for (int32_t k = 0; k < n; k++)
            if (a->token_ids[c][k] != b->token_ids[c][k]) return 0;
        const float *la = shipped_token_lps(a, c), *lb = shipped_token_lps(b, c);
        if (!la != !lb) return 0;
        for (int32_t k = 0; la && k < n; k++)
            if (fbits(la[k]) != fbits(lb[k])) return 0;
    }
    return 1;
}

/* A decoded group's logprobs: NULL when no completion ships any, else NULL entries exactly
 * where none was shipped. */
static int decoded_logprobs_shape(const RolloutGroup* orig, const RolloutGroup* back) {
    int any = 0;
    for (int c = 0; c < orig->n_completions; c++) any |= shipped(orig, c) != NULL;
    if (!any) return back->logprobs == NULL;
    if (!back->logprobs) return 0;
    for (int c = 0; c < orig->n_completions; c++)
        if ((shipped(orig, c) == NULL) != (back->logprobs[c] == NULL)) return 0;
    return 1;
}

/* A decoded group's token fields: none without a tokenizer or completions; else n_tokens
 * and token_ids arrays, token_ids[c] NULL exactly where there are no ids, and
 * token_logprobs NULL when none is shipped, else NULL entries exactly where none was. */
static int decoded_tokens_shape(const RolloutGroup* orig, const RolloutGroup* back) {
    if (!orig->tokenizer || orig->n_completions == 0)
        return !back->n_tokens && !back->token_ids && !back->token_logprobs && back->vocab == orig->vocab;
    if (!back->n_tokens || !back->token_ids) return 0;
    int any = 0;
    for (int c = 0; c < orig->n_completions; c++) {
        if ((back->token_ids[c] == NULL) != (back->n_tokens[c] == 0)) return 0;
        any |= shipped_token_lps(orig, c) != NULL;
    }
    if (!any) return back->token_logprobs == NULL;
    if (!back->token_logprobs) return 0;
    for (int c = 0; c < orig->n_completions; c++)
        if ((shipped_token_lps(orig, c) == NULL) != (back->token_logprobs[c] == NULL)) return 0;
    return 1;
}

static int same_message(const SwarmMessage* a, const SwarmMessage* b) {
    if (a->sender != b->sender || a->round != b->round || a->n_groups != b->n_groups) return 0;
    for (int i = 0; i < a->n_groups; i++)
        if (!same_group(&a->groups[i], &b->groups[i])) return 0;
    return 1;
}

static int is_empty(const SwarmMessage* m) { return m->n_groups == 0 && m->groups == NULL && m->sender == 0 && m->round == 0; }

/* Encodes, decodes, compares, re-encodes and compares the bytes. */
static void check_round_trip(const char* name, const SwarmMessage* m) {
    uint8_t* buf = NULL;
    size_t len = 0;
    char err[256] = "";
    if (message_encode(m, &buf, &len, err, sizeof err)) {
        EXPECT(0, "%s: encode failed: %s", name, err);
        return;
    }
    SwarmMessage back;
    if (message_decode(buf, len, &back, err, sizeof err)) {
        EXPECT(0, "%s: decode of %zu bytes failed: %s", name, len, err);
        free(buf);
        return;
    }
    EXPECT(same_message(m, &back), "%s: decoded message differs from the original", name);
    for (int i = 0; i < m->n_groups && i < back.n_groups; i++) {
        EXPECT(decoded_logprobs_shape(&m->groups[i], &back.groups[i]),
               "%s: group %d: decoded logprobs array or its NULL entries do not match what was shipped", name, i);
        EXPECT(decoded_tokens_shape(&m->groups[i], &back.groups[i]),
               "%s: group %d: decoded token arrays or their NULL entries do not match what was shipped", name, i);
    }
    int any_tokenizer = 0;
    for (int i = 0; i < m->n_groups; i++) any_tokenizer |= m->groups[i].tokenizer != 0;
    EXPECT(buf[4] == (any_tokenizer ? 3 : 2) && buf[5] == 0, "%s: version %u, expected %d", name, buf[4] | buf[5] << 8,
           any_tokenizer ? 3 : 2);
    uint8_t* again = NULL;
    size_t again_len = 0;
    EXPECT(message_encode(&back, &again, &again_len, err, sizeof err) == 0, "%s: re-encode failed: %s", name, err);
    EXPECT(again_len == len && memcmp(again, buf, len) == 0, "%s: re-encoding gives other bytes (%zu vs %zu)", name,
           again_len, len);
    /* Deep copies of the decoded groups (what the pool keeps) encode to the same bytes. */
    SwarmMessage copies = {.sender = back.sender, .round = back.round, .n_groups = back.n_groups};
    copies.groups = back.n_groups ? calloc((size_t)back.n_groups, sizeof(RolloutGroup)) : NULL;
    for (int i = 0; i < back.n_groups; i++) rollout_group_copy(&copies.groups[i], &back.groups[i]);
    uint8_t* copied = NULL;
    size_t copied_len = 0;
    EXPECT(message_encode(&copies, &copied, &copied_len, err, sizeof err) == 0, "%s: copies do not encode: %s", name, err);
    EXPECT(copied_len == len && memcmp(copied, buf, len) == 0, "%s: copies encode to other bytes", name);
    for (int i = 0; i < back.n_groups && i < m->n_groups; i++)
        EXPECT(decoded_tokens_shape(&m->groups[i], &copies.groups[i]), "%s: group %d: the copy has another shape", name, i);
    free(copied);
    message_free(&copies);
    Field f[8];
    EXPECT(layout_fields(buf, len, f, 8) >= 1, "%s: record does not follow the documented layout", name);
    free(again);
    free(buf);
    message_free(&back);
}

/* ---- round trips ----------------------------------------------------------------------- */

static void test_round_trips(void) {
    SwarmMessage m = make_message(0, 0, 0, 0);
    check_round_trip("0 groups", &m);
    message_free(&m);

    m = make_message(3, 17, 1, 1);
    check_round_trip("1 group", &m);
    message_free(&m);

    m = make_message(INT32_MAX, INT32_MAX, 40, 8);
    check_round_trip("40 groups x 8 completions", &m);
    /* Log-probs: on every completion, on some (NULL entries), an array of NULLs, none. */
    for (int i = 0; i < 40; i++)
        if (i % 4) give_logprobs(&m.groups[i], i % 4 == 1 ? 0xFFu : i % 4 == 2 ? 0xB5u : 0u);
    check_round_trip("40 groups x 8 completions with log-probs (all, some, NULL entries only, none)", &m);
    message_free(&m);

    /* -0.0 and +0.0 keep their bits; so do subnormals and -FLT_MAX. */
    m = make_message(0, 0, 1, 2);
    give_logprobs(&m.groups[0], 3u);
    EXPECT(fbits(m.groups[0].logprobs[0][0]) == 0x80000000u && fbits(m.groups[0].logprobs[1][0]) == 0,
           "test set-up: -0.0 / +0.0 not where expected");
    check_round_trip("log-probs -0.0, +0.0, -FLT_TRUE_MIN, -FLT_MAX", &m);
    message_free(&m);

    /* Empty strings everywhere, no completions, a None answer, extreme scalars. */
    RolloutGroup g = {.task_id = INT32_MIN, .seed = INT64_MIN, .index = INT64_MAX};
    g.config_json = xstrdup("");
    g.question = xstrdup("");
    g.metadata_json = xstrdup("");
    SwarmMessage e = {.sender = 1, .round = 2, .n_groups = 1, .groups = &g};
    check_round_trip("empty strings, None answer", &e);
    g.answer = xstrdup("");
    check_round_trip("empty answer (present)", &e);
    g.n_completions = 3;
    g.completions = calloc(3, sizeof(char*));
    for (int c = 0; c < 3; c++) g.completions[c] = xstrdup("");
    check_round_trip("empty completions", &e);
    /* Empty completions with (zero-length) log-prob arrays: n_logprobs 0, decoded as none. */
    give_logprobs(&g, 0x7u);
    for (int c = 0; c < 3; c++) EXPECT(g.logprobs[c] != NULL, "test set-up: empty completion %d without an array", c);
    check_round_trip("empty completions with log-prob arrays", &e);
    rollout_group_free(&g);

    /* UTF-8 and every non-NUL byte value (a byte-level model may emit invalid UTF-8). */
    make_group(&g, 4, 2); /* answer present, so the copy test covers it */
    free(g.question);
    g.question = xstrdup("Ordena: \xC3\xA9t\xC3\xA9, \xE2\x88\x80x \xE2\x88\x88 \xE2\x84\x9D, \xF0\x9F\xA7\xA0 \xE4\xB8\xAD\xE6\x96\x87");
    char all[256];
    for (int b = 1; b < 256; b++) all[b - 1] = (char)b;
    all[255] = '\0';
    free(g.completions[1]);
    g.completions[1] = xstrdup(all);
    e.groups = &g;
    check_round_trip("UTF-8 and bytes 1..255", &e);
    give_logprobs(&g, 2u);
    check_round_trip("UTF-8 and bytes 1..255 with log-probs on the 255-byte completion", &e);

    /* Deep copy: equal content, no shared pointers. */
    RolloutGroup copy;
    rollout_group_copy(&copy, &g);
    EXPECT(same_group(&copy, &g), "rollout_group_copy: content differs");
    EXPECT(copy.question != g.question && copy.completions != g.completions &&
               copy.completions[0] != g.completions[0] && copy.answer != g.answer && copy.logprobs != g.logprobs &&
               copy.logprobs[1] != g.logprobs[1] && copy.logprobs[0] == NULL,
           "rollout_group_copy: shares a pointer with the source");
    rollout_group_free(&g);
    EXPECT(copy.question[0] == 'O', "copy does not survive freeing the source");
    rollout_group_free(&copy);
    EXPECT(copy.question == NULL && copy.n_completions == 0, "rollout_group_free leaves fields behind");
}

static void test_limits(void) {
    /* MESSAGE_MAX_GROUPS groups. */
    SwarmMessage m = make_message(1, 1, MESSAGE_MAX_GROUPS, 1);
    check_round_trip("MESSAGE_MAX_GROUPS groups", &m);
    message_free(&m);
    /* MESSAGE_MAX_COMPLETIONS completions, and strings of exactly MESSAGE_MAX_STRING bytes. */
    m = make_message(1, 1, 2, MESSAGE_MAX_COMPLETIONS);
    char* big = malloc(MESSAGE_MAX_STRING + 1);
    memset(big, 'x', MESSAGE_MAX_STRING);
    big[MESSAGE_MAX_STRING] = '\0';
    free(m.groups[1].question);
    m.groups[1].question = xstrdup(big);
    free(m.groups[1].completions[7]);
    m.groups[1].completions[7] = xstrdup(big);
    give_logprobs(&m.groups[1], 0x80000081u); /* completions 0, 7 (the big one), 31, 39, ... */
    check_round_trip("MESSAGE_MAX_COMPLETIONS completions, strings of MESSAGE_MAX_STRING, with log-probs", &m);

    /* A log-prob that is not finite and <= 0: the encoder refuses, naming it. */
    {
        static const struct {
            uint32_t bits;
            const char* want;
        } bad[] = {
            {0x7FC00000u, "group 1 logprobs 7: value NaN (0x7FC00000) at index 5 is not a finite log-probability <= 0"},
            {0xFFC00001u, "group 1 logprobs 7: value NaN (0xFFC00001) at index 5 is not"},
            {0x7F800000u, "group 1 logprobs 7: value +inf at index 5 is not a finite log-probability <= 0"},
            {0xFF800000u, "group 1 logprobs 7: value -inf at index 5 is not a finite log-probability <= 0"},
            {0x3F000000u, "group 1 logprobs 7: value 0.5 (0x3F000000) at index 5 is not a finite log-probability <= 0"},
            {0x00000001u, "group 1 logprobs 7: value 1.40129846e-45 (0x00000001) at index 5 is not"},
        };
        char err[256];
        uint8_t* buf = (uint8_t*)1;
        size_t len = 1;
        float keep = m.groups[1].logprobs[7][5];
        for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
            m.groups[1].logprobs[7][5] = bitsf(bad[k].bits);
            err[0] = '\0';
            EXPECT(message_encode(&m, &buf, &len, err, sizeof err) == -1 && buf == NULL && len == 0,
                   "log-prob 0x%08X encoded", bad[k].bits);
            EXPECT_MSG(err, bad[k].want);
        }
        m.groups[1].logprobs[7][5] = keep;
    }

    /* One byte over each limit: the encoder refuses with a reason. */
    char err[256] = "";
    uint8_t* buf = (uint8_t*)1;
    size_t len = 1;
    char* over = malloc(MESSAGE_MAX_STRING + 2);
    memset(over, 'y', MESSAGE_MAX_STRING + 1);
    over[MESSAGE_MAX_STRING + 1] = '\0';
    char* keep = m.groups[1].completions[7];
    m.groups[1].completions[7] = over;
    EXPECT(message_encode(&m, &buf, &len, err, sizeof err) == -1 && buf == NULL && len == 0,
           "string over MESSAGE_MAX_STRING encoded");
    EXPECT_MSG(err, "group 1 completion 7: 1048577 bytes exceeds the limit of 1048576");
    m.groups[1].completions[7] = keep;
    free(over);

    m.groups[0].n_completions = MESSAGE_MAX_COMPLETIONS + 1;
    EXPECT(message_encode(&m, &buf, &len, err, sizeof err) == -1, "n_completions over the limit encoded");
    EXPECT_MSG(err, "group 0: n_completions 1025 outside [0, 1024]");
    m.groups[0].n_completions = MESSAGE_MAX_COMPLETIONS;

    char* q = m.groups[1].question;
    m.groups[1].question = NULL;
    EXPECT(message_encode(&m, &buf, &len, err, sizeof err) == -1, "NULL question encoded");
    EXPECT_MSG(err, "group 1 question: NULL");
    m.groups[1].question = q;

    m.sender = -1;
    EXPECT(message_encode(&m, &buf, &len, err, sizeof err) == -1, "negative sender encoded");
    EXPECT_MSG(err, "sender -1 is negative");
    m.sender = 1;
    message_free(&m);

    m = make_message(1, 1, 0, 0);
    m.n_groups = MESSAGE_MAX_GROUPS + 1;
    EXPECT(message_encode(&m, &buf, &len, err, sizeof err) == -1, "n_groups over the limit encoded");
    EXPECT_MSG(err, "n_groups 4097 outside [0, 4096]");
    m.n_groups = 0;

    /* 64 one-MiB questions pass MESSAGE_MAX_BYTES. */
    RolloutGroup* gs = calloc(64, sizeof *gs);
    for (int i = 0; i < 64; i++) gs[i] = (RolloutGroup){.config_json = "{}", .question = big, .metadata_json = "{}"};
    SwarmMessage huge = {.sender = 0, .round = 0, .n_groups = 64, .groups = gs};
    EXPECT(message_encode(&huge, &buf, &len, err, sizeof err) == -1, "message over MESSAGE_MAX_BYTES encoded");
    EXPECT_MSG(err, "passes MESSAGE_MAX_BYTES");
    free(gs);
    free(big);
}

/* Token fields: round trips of BPE groups, alone and next to byte-level ones, deep copies,
 * truncation, limits reached exactly, and the encoder's refusals. */
static void test_token_round_trips(void) {
    SwarmMessage m = make_message(0, 3, 1, 5);
    give_tokens(&m.groups[0], 0x9E3779B97F4A7C15ull, 151936, 0xFFu);
    check_round_trip("v3: 1 BPE group, ids and token log-probs on every completion", &m);
    EXPECT(fbits(m.groups[0].token_logprobs[0][0]) == 0x80000000u, "test set-up: -0.0 not where expected");
    {
        uint8_t* buf = NULL;
        size_t len = 0;
        char err[256] = "";
        SwarmMessage back;
        EXPECT(message_encode(&m, &buf, &len, err, sizeof err) == 0 && message_decode(buf, len, &back, err, sizeof err) == 0,
               "v3 round trip: %s", err);
        float** tlp = back.n_groups == 1 ? back.groups[0].token_logprobs : NULL;
        EXPECT(tlp && fbits(tlp[0][0]) == 0x80000000u && fbits(tlp[1][0]) == 0 && fbits(tlp[0][1]) == 0x80000001u,
               "v3: -0.0 / +0.0 / -FLT_TRUE_MIN token log-probs do not come back bit for bit");
        message_free(&back);
        free(buf);
    }
    give_logprobs(&m.groups[0], 0x5u);
    check_round_trip("v3: 1 BPE group with byte log-probs too", &m);
    message_free(&m);

    /* Mixed: BPE groups (three tokenizers, vocab 1 among them) between byte-level ones,
     * byte and token log-probs on all, some or none of the completions. */
    m = make_message(7, 8, 8, 6);
    give_tokens(&m.groups[0], 1, 50257, 0xFFu);
    give_logprobs(&m.groups[1], 0xFFu);
    give_tokens(&m.groups[2], 0xFFFFFFFFFFFFFFFFull, 1, 0x15u);
    give_logprobs(&m.groups[2], 0x2Au);
    give_tokens(&m.groups[4], 0x8000000000000000ull, 128256, 0u);
    give_tokens(&m.groups[6], 1, 50257, 0x20u);
    check_round_trip("v3: mixed BPE and byte-level groups", &m);
    message_free(&m);

    /* A BPE group with no completions; one whose n_tokens is NULL (no ids anywhere); one
     * whose arrays hold only NULL entries. */
    m = make_message(1, 1, 3, 2);
    for (int c = 0; c < 2; c++) free(m.groups[0].completions[c]);
    free(m.groups[0].completions);
    m.groups[0].completions = NULL;
    m.groups[0].n_completions = 0;
    m.groups[0].tokenizer = 42, m.groups[0].vocab = 7;
    m.groups[1].tokenizer = 43, m.groups[1].vocab = 1;
    m.groups[2].tokenizer = 44, m.groups[2].vocab = 2;
    m.groups[2].n_tokens = calloc(2, sizeof(int32_t));
    m.groups[2].token_ids = calloc(2, sizeof(int32_t*));
    m.groups[2].token_logprobs = calloc(2, sizeof(float*));
    check_round_trip("v3: BPE groups with no completions, NULL n_tokens, NULL entries", &m);
    message_free(&m);

    /* Deep copy and truncation of a BPE group. */
    RolloutGroup g;
    make_group(&g, 5, 6);
    give_tokens(&g, 99, 1000, 0x2Fu);
    RolloutGroup copy;
    rollout_group_copy(&copy, &g);
    EXPECT(same_group(&copy, &g), "rollout_group_copy: token content differs");
    EXPECT(copy.n_tokens != g.n_tokens && copy.token_ids != g.token_ids && copy.token_logprobs != g.token_logprobs &&
               copy.token_ids[0] != g.token_ids[0] && copy.token_logprobs[0] != g.token_logprobs[0] &&
               copy.token_logprobs[4] == NULL && copy.token_ids[3] != NULL,
           "rollout_group_copy: shares a token pointer with the source, or loses its NULL entries");
    rollout_group_free(&g);
    EXPECT(copy.token_ids[1][1] == 999 && copy.tokenizer == 99 && copy.vocab == 1000,
           "copy does not survive freeing the source");
    rollout_group_truncate(&copy, 8);
    EXPECT(copy.n_completions == 6, "rollout_group_truncate past the end changed the group");
    rollout_group_truncate(&copy, 2);
    EXPECT(copy.n_completions == 2 && copy.n_tokens[2] == 0 && !copy.token_ids[2] && !copy.token_logprobs[5] &&
               !copy.completions[3] && copy.token_ids[1][1] == 999,
           "rollout_group_truncate: the dropped completions are not cleared, or the kept ones lost");
    SwarmMessage tm = {.sender = 0, .round = 0, .n_groups = 1, .groups = &copy};
    check_round_trip("v3: truncated BPE group", &tm);
    rollout_group_truncate(&copy, -1);
    EXPECT(copy.n_completions == 0, "rollout_group_truncate(-1) keeps completions");
    rollout_group_free(&copy);
    EXPECT(copy.tokenizer == 0 && copy.n_tokens == NULL && copy.token_ids == NULL,
           "rollout_group_free leaves token fields behind");

    /* Limits reached exactly: MESSAGE_MAX_VOCAB with its last id, MESSAGE_MAX_TOKENS ids
     * with log-probs. */
    m = make_message(1, 1, 1, 2);
    give_tokens(&m.groups[0], 5, (int32_t)MESSAGE_MAX_VOCAB, 0x3u);
    free(m.groups[0].token_ids[1]);
    free(m.groups[0].token_logprobs[1]);
    m.groups[0].n_tokens[1] = (int32_t)MESSAGE_MAX_TOKENS;
    m.groups[0].token_ids[1] = malloc(MESSAGE_MAX_TOKENS * sizeof(int32_t));
    m.groups[0].token_logprobs[1] = malloc(MESSAGE_MAX_TOKENS * sizeof(float));
    for (uint32_t k = 0; k < MESSAGE_MAX_TOKENS; k++) {
        m.groups[0].token_ids[1][k] = (int32_t)((k * 2654435761u) % MESSAGE_MAX_VOCAB);
        m.groups[0].token_logprobs[1][k] = -(float)(k % 1013) / 7.0f;
    }
    m.groups[0].token_ids[1][0] = (int32_t)MESSAGE_MAX_VOCAB - 1;
    check_round_trip("v3: vocab MESSAGE_MAX_VOCAB, MESSAGE_MAX_TOKENS ids with log-probs", &m);
    message_free(&m);
}

/* The encoder refuses token fields that break RolloutGroup's rules, naming the group. */
static void expect_refusal(const char* name, const SwarmMessage* m, const char* fragment) {
    uint8_t* buf = (uint8_t*)1;
    size_t len = 1;
    char err[256] = "";
    int rc = message_encode(m, &buf, &len, err, sizeof err);
    EXPECT(rc == -1 && buf == NULL && len == 0, "%s: encoded", name);
    if (rc == 0) free(buf);
    EXPECT(strstr(err, fragment) != NULL, "%s: message \"%s\" lacks \"%s\"", name, err, fragment);
}

static void test_token_refusals(void) {
    SwarmMessage m = make_message(1, 1, 2, 3);
    RolloutGroup* g = &m.groups[1];
    give_tokens(g, 0xABCDull, 500, 0x7u);
    check_round_trip("refusals: the message refused below, unchanged", &m);

    m.groups[0].vocab = 5;
    expect_refusal("vocab without a tokenizer", &m, "group 0: vocab 5 without a tokenizer");
    m.groups[0].vocab = 0;
    int32_t stray = 0;
    m.groups[0].n_tokens = &stray;
    expect_refusal("n_tokens without a tokenizer", &m, "group 0: token fields without a tokenizer");
    m.groups[0].n_tokens = NULL;

    g->vocab = 0;
    expect_refusal("vocab 0 with a tokenizer", &m, "group 1: vocab 0 outside [1, 16777216] with tokenizer 0x000000000000ABCD");
    g->vocab = -3;
    expect_refusal("negative vocab", &m, "group 1: vocab -3 outside [1, 16777216]");
    g->vocab = (int32_t)MESSAGE_MAX_VOCAB + 1;
    expect_refusal("vocab over the limit", &m, "group 1: vocab 16777217 outside [1, 16777216]");
    g->vocab = 500;

    int32_t keep = g->token_ids[1][2];
    g->token_ids[1][2] = 500;
    expect_refusal("id == vocab", &m, "group 1 token_ids 1: id 500 at index 2 is outside [0, 500)");
    g->token_ids[1][2] = -1;
    expect_refusal("negative id", &m, "group 1 token_ids 1: id -1 at index 2 is outside [0, 500)");
    g->token_ids[1][2] = INT32_MIN;
    expect_refusal("id INT32_MIN", &m, "id -2147483648 at index 2 is outside [0, 500)");
    g->token_ids[1][2] = keep;

    int32_t nt = g->n_tokens[2];
    g->n_tokens[2] = -1;
    expect_refusal("negative n_tokens", &m, "group 1 completion 2: n_tokens -1 outside [0, 1048576]");
    g->n_tokens[2] = (int32_t)MESSAGE_MAX_TOKENS + 1;
    expect_refusal("n_tokens over the limit", &m, "group 1 completion 2: n_tokens 1048577 outside [0, 1048576]");
    g->n_tokens[2] = nt;
    int32_t* ids = g->token_ids[2];
    g->token_ids[2] = NULL;
    char want[96];
    snprintf(want, sizeof want, "group 1 completion 2: %d tokens but no ids", nt);
    expect_refusal("ids NULL with n_tokens > 0", &m, want);
    g->token_ids[2] = ids;

    static const struct {
        uint32_t bits;
        const char* want;
    } bad[] = {
        {0x7FC00000u, "group 1 token_logprobs 1: value NaN (0x7FC00000) at index 2 is not a finite log-probability <= 0"},
        {0x7F800000u, "group 1 token_logprobs 1: value +inf at index 2 is not a finite log-probability <= 0"},
        {0xFF800000u, "group 1 token_logprobs 1: value -inf at index 2 is not"},
        {0x3F000000u, "group 1 token_logprobs 1: value 0.5 (0x3F000000) at index 2 is not"},
        {0x00000001u, "group 1 token_logprobs 1: value 1.40129846e-45 (0x00000001) at index 2 is not"},
    };
    float keep_lp = g->token_logprobs[1][2];
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        char name[48];
        snprintf(name, sizeof name, "token log-prob 0x%08X", bad[k].bits);
        g->token_logprobs[1][2] = bitsf(bad[k].bits);
        expect_refusal(name, &m, bad[k].want);
    }
    g->token_logprobs[1][2] = keep_lp;
    check_round_trip("refusals: the message refused above, restored", &m);
    message_free(&m);
}

/* The exact bytes of a small record, packed by hand from the documented layout. */
static void test_layout(void) {
    RolloutGroup g = {.task_id = 7, .seed = -2, .index = 0x0102030405060708ll, .config_json = "{}",
                      .question = "Q?", .answer = NULL, .metadata_json = "", .n_completions = 2};
    char* comp[2] = {"ab", "xyz"};
    float lp1[3] = {-0.0f, -0.5f, -FLT_TRUE_MIN};
    float* lps[2] = {NULL, lp1};
    g.completions = comp;
    g.logprobs = lps;
    SwarmMessage m = {.sender = 5, .round = 0x01020304, .n_groups = 1, .groups = &g};
    uint8_t want[128];
    size_t n = 0;
    memcpy(want, "SAPO", 4);
    want[4] = 2, want[5] = 0, want[6] = 0, want[7] = 0;
    layout_put_u32(want + 8, 5);
    layout_put_u32(want + 12, 0x01020304);
    n = 32;
    layout_put_u32(want + n, 1), n += 4;
    layout_put_u32(want + n, 7), n += 4;
    layout_put_u64(want + n, (uint64_t)-2), n += 8;
    layout_put_u64(want + n, 0x0102030405060708ull), n += 8;
    layout_put_u32(want + n, 2), n += 4;
    memcpy(want + n, "{}", 2), n += 2;
    layout_put_u32(want + n, 2), n += 4;
    memcpy(want + n, "Q?", 2), n += 2;
    want[n++] = 0; /* answer absent */
    layout_put_u32(want + n, 0), n += 4;
    layout_put_u32(want + n, 2), n += 4; /* n_completions */
    layout_put_u32(want + n, 2), n += 4;
    memcpy(want + n, "ab", 2), n += 2;
    layout_put_u32(want + n, 0), n += 4; /* no log-probs */
    layout_put_u32(want + n, 3), n += 4;
    memcpy(want + n, "xyz", 3), n += 3;
    layout_put_u32(want + n, 3), n += 4; /* 3 log-probs: -0.0, -0.5, -2^-149 */
    layout_put_u32(want + n, 0x80000000u), n += 4;
    layout_put_u32(want + n, 0xBF000000u), n += 4;
    layout_put_u32(want + n, 0x80000001u), n += 4;
    layout_put_u64(want + 16, n - 32);
    layout_put_u64(want + 24, layout_checksum(want, n));

    uint8_t* buf = NULL;
    size_t len = 0;
    char err[256] = "";
    EXPECT(message_encode(&m, &buf, &len, err, sizeof err) == 0, "encode: %s", err);
    EXPECT(len == n, "layout: %zu bytes, hand-packed record has %zu", len, n);
    for (size_t i = 0; i < n && i < len; i++) {
        if (buf[i] != want[i]) {
            EXPECT(0, "layout: byte %zu is 0x%02X, hand-packed 0x%02X", i, buf[i], want[i]);
            break;
        }
    }
    SwarmMessage back;
    EXPECT(message_decode(want, n, &back, err, sizeof err) == 0, "hand-packed record rejected: %s", err);
    EXPECT(back.n_groups == 1 && back.groups[0].seed == -2 && back.groups[0].answer == NULL &&
               strcmp(back.groups[0].completions[0], "ab") == 0 && back.round == 0x01020304,
           "hand-packed record decodes to other values");
    const float* const* blp = (const float* const*)back.groups[0].logprobs;
    EXPECT(blp && !blp[0] && blp[1] && fbits(blp[1][0]) == 0x80000000u && fbits(blp[1][1]) == 0xBF000000u &&
               fbits(blp[1][2]) == 0x80000001u,
           "hand-packed log-probs decode to other bits");
    const RolloutGroup* bg = &back.groups[0];
    EXPECT(bg->tokenizer == 0 && bg->vocab == 0 && !bg->n_tokens && !bg->token_ids && !bg->token_logprobs,
           "a version 2 record decodes with token fields");
    message_free(&back);
    free(buf);
}

/* The exact bytes of a version 3 record packed by hand: a byte-level group (tokenizer 0,
 * vocab 0, no token fields) next to a BPE one whose completions carry ids with token
 * log-probs (-0.0 among them), ids without, and no ids at all. */
static void test_layout_v3(void) {
    char* comp0[1] = {"hi"};
    RolloutGroup g[2] = {{.task_id = 1, .seed = 3, .index = 4, .config_json = "{}", .question = "A", .answer = "b",
                          .metadata_json = "{}", .n_completions = 1, .completions = comp0}};
    char* comp1[3] = {"ab", "z", ""};
    int32_t ids0[3] = {0, 299, 7}, ids1[1] = {5};
    float tlp0[3] = {-0.0f, -1.0f, -FLT_TRUE_MIN};
    int32_t n_tokens[3] = {3, 1, 0};
    int32_t* ids[3] = {ids0, ids1, NULL};
    float* tlps[3] = {tlp0, NULL, NULL};
    g[1] = (RolloutGroup){.task_id = 2, .seed = -1, .index = 9, .config_json = "{}", .question = "Q", .answer = NULL,
                          .metadata_json = "", .n_completions = 3, .completions = comp1, .tokenizer = 0x0123456789ABCDEFull,
                          .vocab = 300, .n_tokens = n_tokens, .token_ids = ids, .token_logprobs = tlps};
    SwarmMessage m = {.sender = 1, .round = 2, .n_groups = 2, .groups = g};
    uint8_t want[256];
    size_t n = 0;
    memcpy(want, "SAPO", 4);
    want[4] = 3, want[5] = 0, want[6] = 0, want[7] = 0;
    layout_put_u32(want + 8, 1);
    layout_put_u32(want + 12, 2);
    n = 32;
    layout_put_u32(want + n, 2), n += 4;
    /* group 0: byte-level */
    layout_put_u32(want + n, 1), n += 4;
    layout_put_u64(want + n, 3), n += 8;
    layout_put_u64(want + n, 4), n += 8;
    layout_put_u32(want + n, 2), n += 4;
    memcpy(want + n, "{}", 2), n += 2;
    layout_put_u32(want + n, 1), n += 4;
    want[n++] = 'A';
    want[n++] = 1; /* answer present */
    layout_put_u32(want + n, 1), n += 4;
    want[n++] = 'b';
    layout_put_u32(want + n, 2), n += 4;
    memcpy(want + n, "{}", 2), n += 2;
    layout_put_u64(want + n, 0), n += 8; /* tokenizer 0 */
    layout_put_u32(want + n, 0), n += 4; /* vocab 0 */
    layout_put_u32(want + n, 1), n += 4; /* n_completions */
    layout_put_u32(want + n, 2), n += 4;
    memcpy(want + n, "hi", 2), n += 2;
    layout_put_u32(want + n, 0), n += 4; /* no log-probs, and no token fields */
    /* group 1: BPE */
    layout_put_u32(want + n, 2), n += 4;
    layout_put_u64(want + n, (uint64_t)-1), n += 8;
    layout_put_u64(want + n, 9), n += 8;
    layout_put_u32(want + n, 2), n += 4;
    memcpy(want + n, "{}", 2), n += 2;
    layout_put_u32(want + n, 1), n += 4;
    want[n++] = 'Q';
    want[n++] = 0; /* answer absent */
    layout_put_u32(want + n, 0), n += 4;
    layout_put_u64(want + n, 0x0123456789ABCDEFull), n += 8;
    layout_put_u32(want + n, 300), n += 4;
    layout_put_u32(want + n, 3), n += 4; /* n_completions */
    layout_put_u32(want + n, 2), n += 4; /* "ab", 3 ids with log-probs */
    memcpy(want + n, "ab", 2), n += 2;
    layout_put_u32(want + n, 0), n += 4;
    layout_put_u32(want + n, 3), n += 4;
    layout_put_u32(want + n, 0), n += 4;
    layout_put_u32(want + n, 299), n += 4;
    layout_put_u32(want + n, 7), n += 4;
    layout_put_u32(want + n, 3), n += 4;
    layout_put_u32(want + n, 0x80000000u), n += 4;
    layout_put_u32(want + n, 0xBF800000u), n += 4;
    layout_put_u32(want + n, 0x80000001u), n += 4;
    layout_put_u32(want + n, 1), n += 4; /* "z", 1 id, no token log-probs */
    want[n++] = 'z';
    layout_put_u32(want + n, 0), n += 4;
    layout_put_u32(want + n, 1), n += 4;
    layout_put_u32(want + n, 5), n += 4;
    layout_put_u32(want + n, 0), n += 4;
    layout_put_u32(want + n, 0), n += 4; /* "", no ids */
    layout_put_u32(want + n, 0), n += 4;
    layout_put_u32(want + n, 0), n += 4;
    layout_put_u32(want + n, 0), n += 4;
    layout_put_u64(want + 16, n - 32);
    layout_put_u64(want + 24, layout_checksum(want, n));

    uint8_t* buf = NULL;
    size_t len = 0;
    char err[256] = "";
    EXPECT(message_encode(&m, &buf, &len, err, sizeof err) == 0, "v3 encode: %s", err);
    EXPECT(len == n, "v3 layout: %zu bytes, hand-packed record has %zu", len, n);
    for (size_t i = 0; i < n && i < len; i++) {
        if (buf[i] != want[i]) {
            EXPECT(0, "v3 layout: byte %zu is 0x%02X, hand-packed 0x%02X", i, buf[i], want[i]);
            break;
        }
    }
    Field f[64];
    EXPECT(layout_fields(want, n, f, 64) > 0, "v3 hand-packed record does not follow the test's layout walker");
    SwarmMessage back;
    EXPECT(message_decode(want, n, &back, err, sizeof err) == 0, "v3 hand-packed record rejected: %s", err);
    if (back.n_groups == 2) {
        const RolloutGroup *b0 = &back.groups[0], *b1 = &back.groups[1];
        EXPECT(b0->tokenizer == 0 && b0->vocab == 0 && !b0->n_tokens && !b0->token_ids && !b0->token_logprobs,
               "v3: the byte-level group decodes with token fields");
        EXPECT(b1->tokenizer == 0x0123456789ABCDEFull && b1->vocab == 300 && b1->n_tokens && b1->token_ids &&
                   b1->n_tokens[0] == 3 && b1->n_tokens[1] == 1 && b1->n_tokens[2] == 0 && b1->token_ids[0][1] == 299 &&
                   b1->token_ids[1][0] == 5 && b1->token_ids[2] == NULL,
               "v3: the BPE group decodes to other ids");
        EXPECT(b1->token_logprobs && b1->token_logprobs[0] && !b1->token_logprobs[1] && !b1->token_logprobs[2] &&
                   fbits(b1->token_logprobs[0][0]) == 0x80000000u && fbits(b1->token_logprobs[0][2]) == 0x80000001u,
               "v3: token log-probs decode to other bits (-0.0 must stay -0.0)");
        EXPECT(b1->logprobs == NULL, "v3: byte log-probs appeared");
    } else {
        EXPECT(0, "v3 hand-packed record decodes to %d groups", back.n_groups);
    }
    message_free(&back);
    free(buf);

    /* Without its tokenizer the same message is version 2 again: the version 3 record less
     * tokenizer and vocab (12 bytes a group) and the BPE group's token fields (two counts
     * a completion, 4 ids and 3 log-probs). */
    g[1].tokenizer = 0, g[1].vocab = 0, g[1].n_tokens = NULL, g[1].token_ids = NULL, g[1].token_logprobs = NULL;
    EXPECT(message_encode(&m, &buf, &len, err, sizeof err) == 0 && buf[4] == 2 && len == n - 12 * 2 - 8 * 3 - 4 * (4 + 3),
           "a message without a tokenizer is not version 2 less the token fields");
    free(buf);
}

/* ---- rejections ------------------------------------------------------------------------ */

/* A reference record for the rejection tests: 3 groups x 4 completions. */
static uint8_t* ref_buf;
static size_t ref_len;
static Field ref_fields[256];
static int ref_n_fields;

static void make_reference(void) {
    SwarmMessage m = make_message(2, 9, 3, 4);
    give_logprobs(&m.groups[0], 0xFu); /* every completion */
    give_logprobs(&m.groups[1], 0x5u); /* completions 0 and 2 */
    char err[256];                     /* group 2: none */
    if (message_encode(&m, &ref_buf, &ref_len, err, sizeof err)) {
        printf("cannot encode the reference message: %s\n", err);
        exit(1);
    }
    message_free(&m);
    ref_n_fields = layout_fields(ref_buf, ref_len, ref_fields, 256);
    if (ref_n_fields < 0 || ref_n_fields > 256) {
        printf("reference record does not follow the layout\n");
        exit(1);
    }
}

static const Field* find_field(FieldKind kind, int group, int item) {
    for (int i = 0; i < ref_n_fields; i++)
        if (ref_fields[i].kind == kind && ref_fields[i].group == group && ref_fields[i].item == item) return &ref_fields[i];
    printf("no field %d group %d item %d in the reference\n", kind, group, item);
    exit(1);
}

/* Decodes buf expecting a rejection whose message contains fragment; checks the message is
 * one line and *msg stays empty. */
static void expect_reject(const char* name, const uint8_t* buf, size_t len, const char* fragment) {
    SwarmMessage m = {.sender = 99, .n_groups = 5, .groups = (RolloutGroup*)&m};
    char err[256] = "";
    int rc = message_decode(buf, len, &m, err, sizeof err);
    EXPECT(rc == -1, "%s: accepted", name);
    if (rc == 0) {
        message_free(&m);
        return;
    }
    if (getenv("MESSAGE_TEST_VERBOSE")) printf("%-34s %s\n", name, err);
    EXPECT(is_empty(&m), "%s: *msg not left empty", name);
    EXPECT(err[0] && !strchr(err, '\n'), "%s: message empty or not one line: '%s'", name, err);
    if (fragment) EXPECT(strstr(err, fragment) != NULL, "%s: message \"%s\" lacks \"%s\"", name, err, fragment);
}

/* Decodes buf expecting success, and a re-encoding to the very same bytes. */
static void expect_accept(const char* name, const uint8_t* buf, size_t len) {
    SwarmMessage m;
    char err[256] = "";
    if (message_decode(buf, len, &m, err, sizeof err)) {
        EXPECT(0, "%s: rejected: %s", name, err);
        return;
    }
    uint8_t* again = NULL;
    size_t again_len = 0;
    EXPECT(message_encode(&m, &again, &again_len, err, sizeof err) == 0, "%s: re-encode failed: %s", name, err);
    EXPECT(again_len == len && memcmp(again, buf, len) == 0, "%s: re-encoding gives other bytes", name);
    free(again);
    message_free(&m);
}

static uint8_t* copy_ref(size_t extra) {
    uint8_t* b = malloc(ref_len + extra);
    memcpy(b, ref_buf, ref_len);
    return b;
}

static void test_header_rejections(void) {
    uint8_t* b = copy_ref(0);
    b[0] ^= 0x20;
    expect_reject("bad magic", b, ref_len, "bad magic 0x4F504173, expected 0x4F504153");
    memcpy(b, ref_buf, ref_len);
    b[4] = 1;
    expect_reject("version 1", b, ref_len, "unsupported version 1, expected 2 or 3");
    b[4] = 4;
    expect_reject("version 4", b, ref_len, "unsupported version 4, expected 2 or 3");
    b[4] = 0;
    expect_reject("version 0", b, ref_len, "unsupported version 0, expected 2 or 3");
    b[4] = 2, b[5] = 2;
    expect_reject("version 514", b, ref_len, "unsupported version 514, expected 2 or 3");
    /* Version 3 is read, so relabelling this version 2 record only trips the checksum; and
     * resealed, the parser reads tokenizer and vocab where they are not. */
    b[4] = 3, b[5] = 0;
    expect_reject("version 3 label on a version 2 record", b, ref_len, "bad checksum");
    message_seal(b, ref_len);
    expect_reject("version 3 label on a version 2 record, resealed", b, ref_len, NULL);
    memcpy(b, ref_buf, ref_len);
    b[7] = 0x80;
    expect_reject("flags", b, ref_len, "unknown flags 0x8000, version 2 defines none");
    memcpy(b, ref_buf, ref_len);
    b[ref_len - 1] ^= 1;
    expect_reject("payload byte flipped", b, ref_len, "bad checksum");
    memcpy(b, ref_buf, ref_len);
    b[8] ^= 1; /* sender: covered by the checksum too */
    expect_reject("sender flipped", b, ref_len, "bad checksum");
    memcpy(b, ref_buf, ref_len);
    b[30] ^= 1;
    expect_reject("checksum field flipped", b, ref_len, "bad checksum");

    char want[128];
    memcpy(b, ref_buf, ref_len);
    layout_put_u64(b + 16, ref_len - 32 + 1);
    snprintf(want, sizeof want, "payload length %zu disagrees with the %zu bytes after the 32-byte header",
             ref_len - 31, ref_len - 32);
    expect_reject("payload length + 1", b, ref_len, want);
    layout_put_u64(b + 16, UINT64_MAX);
    expect_reject("payload length 2^64-1", b, ref_len, "payload length 18446744073709551615 disagrees");
    memcpy(b, ref_buf, ref_len);
    snprintf(want, sizeof want, "payload length %zu disagrees with the %zu bytes", ref_len - 32, ref_len - 33);
    expect_reject("buffer one byte short", b, ref_len - 1, want);

    layout_put_u32(b + 8, (uint32_t)-3);
    message_seal(b, ref_len);
    expect_reject("negative sender", b, ref_len, "sender -3 is negative");
    memcpy(b, ref_buf, ref_len);
    layout_put_u32(b + 12, 0x80000000u);
    message_seal(b, ref_len);
    expect_reject("negative round", b, ref_len, "round -2147483648 is negative");
    free(b);

    expect_reject("empty buffer", NULL, 0, "truncated header: 0 bytes, the header needs 32");
    uint8_t* huge = calloc(MESSAGE_MAX_BYTES + 1, 1);
    expect_reject("over MESSAGE_MAX_BYTES", huge, MESSAGE_MAX_BYTES + 1, "67108865 bytes exceeds the limit of 67108864");
    free(huge);
}

/* How the decoder names a field: "n_groups at byte 32", "group 1 completion 2 at byte 400". */
static void field_where(const Field* f, char* out, size_t n) {
    static const char* names[] = {"n_groups", "task_id", "seed", "index", "config_json", "question",
                                  "answer presence byte", "answer", "metadata_json", "n_completions", "completion",
                                  "logprobs", "tokenizer", "vocab", "token_ids", "token_logprobs"};
    if (f->group < 0) snprintf(out, n, "%s at byte %zu:", names[f->kind], f->at);
    else if (f->item >= 0) snprintf(out, n, "group %d %s %d at byte %zu:", f->group, names[f->kind], f->item, f->at);
    else snprintf(out, n, "group %d %s at byte %zu:", f->group, names[f->kind], f->at);
}

/* Every prefix of a reference record rec (its fields listed in fields) is rejected: as is (the
 * payload length disagrees), and resealed, where the parser itself must find the
 * truncation and name a real field, at its real offset, that starts at or before the cut. */
static void test_truncations(const char* which, const uint8_t* rec, size_t rec_len, const Field* fields,
                             int n_fields) {
    uint8_t* b = malloc(rec_len);
    char name[80];
    int resealed = 0;
    for (size_t cut = 0; cut < rec_len; cut++) {
        snprintf(name, sizeof name, "%s truncated to %zu", which, cut);
        memcpy(b, rec, rec_len);
        expect_reject(name, b, cut, cut < 32 ? "truncated header" : "disagrees with the");
        if (cut < 32) continue;
        message_seal(b, cut);
        snprintf(name, sizeof name, "%s truncated to %zu, resealed", which, cut);
        expect_reject(name, b, cut, NULL);
        SwarmMessage m;
        char err[256] = "", where[96] = "";
        message_decode(b, cut, &m, err, sizeof err);
        const char* at = strstr(err, " at byte ");
        size_t off = at ? strtoull(at + 9, NULL, 10) : (size_t)-1;
        const Field* f = NULL;
        for (int i = 0; i < n_fields; i++)
            if (fields[i].at == off) f = &fields[i];
        if (f) field_where(f, where, sizeof where);
        int ok = f && off <= cut && strncmp(err, where, strlen(where)) == 0 &&
                 (strstr(err, "truncated") || strstr(err, "bytes left") || strstr(err, "needs at least"));
        EXPECT(ok, "%s: \"%s\" does not name a field at or before the cut as truncated", name, err);
        resealed += ok;
    }
    printf("truncations of the %s: %zu prefixes rejected; %d resealed prefixes rejected naming the cut field\n", which,
           rec_len, resealed);
    free(b);
}

static void test_field_rejections(void) {
    char want[200], name[64];
    uint8_t* b = copy_ref(4096); /* room for trailing bytes and appended log-probs */

    /* The last string's length too large. Its n_logprobs (0) follows it, so one byte more
     * takes that count's first byte, a NUL; five more run past the end. */
    const Field* last = find_field(FIELD_COMPLETION, 2, 3);
    EXPECT(find_field(FIELD_N_LOGPROBS, 2, 3)->value == 0, "reference: the last completion carries log-probs");
    layout_put_u32(b + last->at, last->value + 1);
    expect_reject("last length + 1, not resealed", b, ref_len, "bad checksum");
    message_seal(b, ref_len);
    snprintf(want, sizeof want, "group 2 completion 3 at byte %zu: NUL byte at offset %u of the %u-byte string",
             last->at, last->value, last->value + 1);
    expect_reject("last length + 1", b, ref_len, want);
    layout_put_u32(b + last->at, last->value + 5);
    message_seal(b, ref_len);
    snprintf(want, sizeof want, "group 2 completion 3 at byte %zu: length %u exceeds the %u bytes left", last->at,
             last->value + 5, last->value + 4);
    expect_reject("last length + 5", b, ref_len, want);
    layout_put_u32(b + last->at, UINT32_MAX);
    message_seal(b, ref_len);
    snprintf(want, sizeof want, "group 2 completion 3 at byte %zu: length 4294967295 exceeds the %u bytes left",
             last->at, last->value + 4);
    expect_reject("last length 2^32-1", b, ref_len, want);

    /* The question of group 2 (answer absent) one byte too long swallows the presence
     * byte 0, which the decoder finds as an embedded NUL. */
    memcpy(b, ref_buf, ref_len);
    const Field* mid = find_field(FIELD_QUESTION, 2, -1);
    layout_put_u32(b + mid->at, mid->value + 1);
    message_seal(b, ref_len);
    snprintf(want, sizeof want, "group 2 question at byte %zu: NUL byte at offset %u", mid->at, mid->value);
    expect_reject("question length + 1", b, ref_len, want);
    /* One too short: the presence byte is read from the text's last character '?'. */
    layout_put_u32(b + mid->at, mid->value - 1);
    message_seal(b, ref_len);
    snprintf(want, sizeof want, "group 2 answer presence byte at byte %zu: value 63", mid->at + 4 + mid->value - 1);
    expect_reject("question length - 1", b, ref_len, want);

    /* Group count: over the limit, and more groups than the bytes can hold. */
    memcpy(b, ref_buf, ref_len);
    layout_put_u32(b + 32, MESSAGE_MAX_GROUPS + 1);
    message_seal(b, ref_len);
    expect_reject("n_groups over the limit", b, ref_len, "n_groups at byte 32: count 4097 exceeds the limit of 4096");
    layout_put_u32(b + 32, 4000);
    message_seal(b, ref_len);
    snprintf(want, sizeof want, "n_groups at byte 32: count 4000 needs at least %d bytes, only %zu left", 4000 * 37,
             ref_len - 36);
    expect_reject("n_groups over the bytes", b, ref_len, want);
    layout_put_u32(b + 32, 4);
    message_seal(b, ref_len);
    expect_reject("n_groups + 1", b, ref_len, "group 3 ");

    /* Completion count. */
    memcpy(b, ref_buf, ref_len);
    const Field* nc = find_field(FIELD_N_COMPLETIONS, 1, -1);
    layout_put_u32(b + nc->at, MESSAGE_MAX_COMPLETIONS + 1);
    message_seal(b, ref_len);
    snprintf(want, sizeof want, "group 1 n_completions at byte %zu: count 1025 exceeds the limit of 1024", nc->at);
    expect_reject("n_completions over the limit", b, ref_len, want);
    layout_put_u32(b + nc->at, 1000);
    message_seal(b, ref_len);
    snprintf(want, sizeof want, "group 1 n_completions at byte %zu: count 1000 needs at least 8000 bytes", nc->at);
    expect_reject("n_completions over the bytes", b, ref_len, want);

    /* String length over MESSAGE_MAX_STRING, in a record that really has the bytes. */
    {
        size_t big_len = ref_len + MESSAGE_MAX_STRING + 1;
        uint8_t* big = malloc(big_len);
        const Field* lf = find_field(FIELD_COMPLETION, 2, 3);
        memcpy(big, ref_buf, lf->at);
        layout_put_u32(big + lf->at, MESSAGE_MAX_STRING + 1);
        memset(big + lf->at + 4, 'z', big_len - lf->at - 4);
        message_seal(big, big_len);
        snprintf(want, sizeof want, "group 2 completion 3 at byte %zu: length 1048577 exceeds the limit of 1048576",
                 lf->at);
        expect_reject("string over MESSAGE_MAX_STRING", big, big_len, want);
        free(big);
    }

    /* An embedded NUL in a question and in a completion. */
    memcpy(b, ref_buf, ref_len);
    const Field* q = find_field(FIELD_QUESTION, 0, -1);
    b[q->at + 4 + 3] = 0;
    message_seal(b, ref_len);
    snprintf(want, sizeof want, "group 0 question at byte %zu: NUL byte at offset 3 of the %u-byte string", q->at, q->value);
    expect_reject("NUL in question", b, ref_len, want);
    memcpy(b, ref_buf, ref_len);
    const Field* c = find_field(FIELD_COMPLETION, 1, 2);
    b[c->at + 4] = 0;
    message_seal(b, ref_len);
    snprintf(want, sizeof want, "group 1 completion 2 at byte %zu: NUL byte at offset 0", c->at);
    expect_reject("NUL in completion", b, ref_len, want);

    /* Answer presence byte other than 0 or 1. */
    memcpy(b, ref_buf, ref_len);
    const Field* p = find_field(FIELD_PRESENCE, 2, -1);
    b[p->at] = 2;
    message_seal(b, ref_len);
    snprintf(want, sizeof want, "group 2 answer presence byte at byte %zu: value 2, expected 0 (None) or 1", p->at);
    expect_reject("presence byte 2", b, ref_len, want);

    /* A log-prob count that is neither 0 nor the text length: one less, one more, and a
     * count on a completion that shipped none (its text follows, so the bytes are there). */
    memcpy(b, ref_buf, ref_len);
    const Field* nl = find_field(FIELD_N_LOGPROBS, 1, 0);
    const Field* tl = find_field(FIELD_COMPLETION, 1, 0);
    EXPECT(nl->value == tl->value && nl->value > 5, "reference: group 1 completion 0 lacks its log-probs");
    layout_put_u32(b + nl->at, nl->value - 1);
    message_seal(b, ref_len);
    snprintf(want, sizeof want, "group 1 logprobs 0 at byte %zu: count %u is neither 0 nor the completion's %u bytes",
             nl->at, nl->value - 1, tl->value);
    expect_reject("n_logprobs - 1", b, ref_len, want);
    layout_put_u32(b + nl->at, nl->value + 1);
    message_seal(b, ref_len);
    snprintf(want, sizeof want, "group 1 logprobs 0 at byte %zu: count %u is neither 0 nor the completion's %u bytes",
             nl->at, nl->value + 1, tl->value);
    expect_reject("n_logprobs + 1", b, ref_len, want);
    layout_put_u32(b + nl->at, UINT32_MAX);
    message_seal(b, ref_len);
    snprintf(want, sizeof want, "group 1 logprobs 0 at byte %zu: count 4294967295 is neither 0 nor", nl->at);
    expect_reject("n_logprobs 2^32-1", b, ref_len, want);
    memcpy(b, ref_buf, ref_len);
    nl = find_field(FIELD_N_LOGPROBS, 1, 1);
    EXPECT(nl->value == 0, "reference: group 1 completion 1 carries log-probs");
    layout_put_u32(b + nl->at, 1);
    message_seal(b, ref_len);
    snprintf(want, sizeof want, "group 1 logprobs 1 at byte %zu: count 1 is neither 0 nor the completion's %u bytes",
             nl->at, find_field(FIELD_COMPLETION, 1, 1)->value);
    expect_reject("n_logprobs 1 on a completion without", b, ref_len, want);

    /* The count equal to the text length but more than the bytes left: the last completion
     * ships none, so its count is the record's last 4 bytes. */
    memcpy(b, ref_buf, ref_len);
    nl = find_field(FIELD_N_LOGPROBS, 2, 3);
    EXPECT(nl->at + 4 == ref_len, "reference: the last n_logprobs is not the last field");
    layout_put_u32(b + nl->at, last->value);
    message_seal(b, ref_len);
    snprintf(want, sizeof want, "group 2 logprobs 3 at byte %zu: count %u needs at least %u bytes, only 0 left",
             nl->at, last->value, 4 * last->value);
    expect_reject("n_logprobs past the end", b, ref_len, want);
    /* ... and with all but one of those bytes present. */
    memset(b + ref_len, 0, 4 * last->value);
    message_seal(b, ref_len + 4 * last->value - 1);
    snprintf(want, sizeof want, "group 2 logprobs 3 at byte %zu: count %u needs at least %u bytes, only %u left",
             nl->at, last->value, 4 * last->value, 4 * last->value - 1);
    expect_reject("n_logprobs one byte past the end", b, ref_len + 4 * last->value - 1, want);
    /* With every byte present (log-probs 0.0) it is a valid record. */
    message_seal(b, ref_len + 4 * last->value);
    expect_accept("n_logprobs on the last completion, bytes appended", b, ref_len + 4 * last->value);

    /* Log-probs that are not finite and <= 0, at index 4 of group 1 completion 2. */
    {
        static const struct {
            uint32_t bits;
            const char* why;
        } bad[] = {
            {0x7FC00000u, "value NaN (0x7FC00000) at index 4 is not a finite log-probability <= 0"},
            {0xFFFFFFFFu, "value NaN (0xFFFFFFFF) at index 4 is not a finite log-probability <= 0"},
            {0x7F800001u, "value NaN (0x7F800001) at index 4 is not a finite log-probability <= 0"},
            {0x7F800000u, "value +inf at index 4 is not a finite log-probability <= 0"},
            {0xFF800000u, "value -inf at index 4 is not a finite log-probability <= 0"},
            {0x3F000000u, "value 0.5 (0x3F000000) at index 4 is not a finite log-probability <= 0"},
            {0x7F7FFFFFu, "value 3.40282347e+38 (0x7F7FFFFF) at index 4 is not a finite log-probability <= 0"},
            {0x00000001u, "value 1.40129846e-45 (0x00000001) at index 4 is not a finite log-probability <= 0"},
        };
        nl = find_field(FIELD_N_LOGPROBS, 1, 2);
        EXPECT(nl->value > 4, "reference: group 1 completion 2 lacks its log-probs");
        for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
            memcpy(b, ref_buf, ref_len);
            layout_put_u32(b + nl->at + 4 + 4 * 4, bad[k].bits);
            message_seal(b, ref_len);
            snprintf(want, sizeof want, "group 1 logprobs 2 at byte %zu: %s", nl->at, bad[k].why);
            snprintf(name, sizeof name, "log-prob 0x%08X", bad[k].bits);
            expect_reject(name, b, ref_len, want);
        }
        /* The same place holding -0.0, +0.0, a negative subnormal or -inf's neighbour
         * -FLT_MAX is valid, and comes back bit for bit. */
        static const uint32_t good[] = {0x80000000u, 0x00000000u, 0x80000001u, 0xFF7FFFFFu};
        for (size_t k = 0; k < sizeof good / sizeof *good; k++) {
            memcpy(b, ref_buf, ref_len);
            layout_put_u32(b + nl->at + 4 + 4 * 4, good[k]);
            message_seal(b, ref_len);
            snprintf(name, sizeof name, "log-prob 0x%08X", good[k]);
            expect_accept(name, b, ref_len);
        }
    }

    /* Trailing bytes, resealed so only the parser can notice. */
    memcpy(b, ref_buf, ref_len);
    memset(b + ref_len, 'T', 3);
    message_seal(b, ref_len + 3);
    snprintf(want, sizeof want, "3 trailing bytes after the last group at byte %zu", ref_len);
    expect_reject("3 trailing bytes", b, ref_len + 3, want);
    b[ref_len] = 0;
    message_seal(b, ref_len + 1);
    expect_reject("1 trailing NUL", b, ref_len + 1, "1 trailing bytes");
    free(b);
}

/* A version 3 reference: 3 groups x 5 completions. Group 0 is BPE (vocab 1000), token
 * log-probs on every completion with ids and byte log-probs on completions 0 and 1; group 1
 * is byte-level with byte log-probs on 0 and 2; group 2 is BPE (vocab 50) with token
 * log-probs on completions 0 and 2 only, so the record ends with its last completion's
 * n_token_logprobs = 0. Completion 3 of each BPE group has no ids. */
#define REF3_TOKENIZER0 0x9E3779B97F4A7C15ull
#define REF3_TOKENIZER2 0x0BADC0DEull
static uint8_t* ref3_buf;
static size_t ref3_len;
static Field ref3_fields[512];
static int ref3_n_fields;

static void make_reference_v3(void) {
    SwarmMessage m = make_message(4, 11, 3, 5);
    give_tokens(&m.groups[0], REF3_TOKENIZER0, 1000, 0x1Fu);
    give_logprobs(&m.groups[0], 0x3u);
    give_logprobs(&m.groups[1], 0x5u);
    give_tokens(&m.groups[2], REF3_TOKENIZER2, 50, 0x5u);
    char err[256];
    if (message_encode(&m, &ref3_buf, &ref3_len, err, sizeof err)) {
        printf("cannot encode the version 3 reference message: %s\n", err);
        exit(1);
    }
    message_free(&m);
    ref3_n_fields = layout_fields(ref3_buf, ref3_len, ref3_fields, 512);
    if (ref3_buf[4] != 3 || ref3_n_fields < 0 || ref3_n_fields > 512) {
        printf("version 3 reference record does not follow the layout\n");
        exit(1);
    }
}

static const Field* find3(FieldKind kind, int group, int item) {
    for (int i = 0; i < ref3_n_fields; i++)
        if (ref3_fields[i].kind == kind && ref3_fields[i].group == group && ref3_fields[i].item == item)
            return &ref3_fields[i];
    printf("no field %d group %d item %d in the version 3 reference\n", kind, group, item);
    exit(1);
}

/* b := the version 3 reference with the u32 at `at` set to v, resealed. */
static void ref3_with_u32(uint8_t* b, size_t at, uint32_t v) {
    memcpy(b, ref3_buf, ref3_len);
    layout_put_u32(b + at, v);
    message_seal(b, ref3_len);
}

static void test_token_rejections(void) {
    char want[256], name[64];
    uint8_t* b = malloc(ref3_len + 4096); /* room for trailing bytes and appended log-probs */
    expect_accept("version 3 reference", ref3_buf, ref3_len);

    /* Ids outside [0, vocab): group 0 completion 1 holds 8 ids, vocab 1000. */
    const Field* nt = find3(FIELD_N_TOKENS, 0, 1);
    EXPECT(nt->value == 8, "reference: group 0 completion 1 has %u ids, expected 8", nt->value);
    static const struct {
        uint32_t bits;
        const char* shown;
    } bad_ids[] = {{1000, "1000"}, {1001, "1001"}, {0xFFFFFFFFu, "-1"}, {0x80000000u, "-2147483648"},
                   {0x7FFFFFFFu, "2147483647"}};
    for (size_t k = 0; k < sizeof bad_ids / sizeof *bad_ids; k++) {
        ref3_with_u32(b, nt->at + 4 + 4 * 2, bad_ids[k].bits);
        snprintf(want, sizeof want, "group 0 token_ids 1 at byte %zu: id %s at index 2 is outside [0, 1000)", nt->at,
                 bad_ids[k].shown);
        snprintf(name, sizeof name, "id %s", bad_ids[k].shown);
        expect_reject(name, b, ref3_len, want);
    }
    ref3_with_u32(b, nt->at + 4 + 4 * 2, 999);
    expect_accept("id vocab - 1", b, ref3_len);
    ref3_with_u32(b, nt->at + 4 + 4 * 2, 0);
    expect_accept("id 0", b, ref3_len);

    /* vocab and tokenizer that disagree. */
    const Field* v0 = find3(FIELD_VOCAB, 0, -1);
    const Field* v1 = find3(FIELD_VOCAB, 1, -1);
    EXPECT(v0->value == 1000 && v1->value == 0, "reference: vocabs %u and %u, expected 1000 and 0", v0->value, v1->value);
    ref3_with_u32(b, v0->at, 0);
    snprintf(want, sizeof want,
             "group 0 vocab at byte %zu: vocab 0 with tokenizer 0x9E3779B97F4A7C15, which needs vocab >= 1", v0->at);
    expect_reject("vocab 0 with a tokenizer", b, ref3_len, want);
    ref3_with_u32(b, v0->at, MESSAGE_MAX_VOCAB + 1);
    snprintf(want, sizeof want, "group 0 vocab at byte %zu: vocab 16777217 exceeds the limit of 16777216", v0->at);
    expect_reject("vocab over the limit", b, ref3_len, want);
    ref3_with_u32(b, v0->at, 999); /* completion 0's id 1 is the old vocab - 1 */
    snprintf(want, sizeof want, "group 0 token_ids 0 at byte %zu: id 999 at index 1 is outside [0, 999)",
             find3(FIELD_N_TOKENS, 0, 0)->at);
    expect_reject("vocab below an id", b, ref3_len, want);
    ref3_with_u32(b, v1->at, 7);
    snprintf(want, sizeof want, "group 1 vocab at byte %zu: vocab 7 without a tokenizer (a byte-level group has vocab 0)",
             v1->at);
    expect_reject("vocab without a tokenizer", b, ref3_len, want);
    memcpy(b, ref3_buf, ref3_len);
    layout_put_u64(b + find3(FIELD_TOKENIZER, 0, -1)->at, 0);
    message_seal(b, ref3_len);
    snprintf(want, sizeof want, "group 0 vocab at byte %zu: vocab 1000 without a tokenizer", v0->at);
    expect_reject("tokenizer 0 with vocab 1000", b, ref3_len, want);
    memcpy(b, ref3_buf, ref3_len);
    layout_put_u64(b + find3(FIELD_TOKENIZER, 1, -1)->at, 5);
    message_seal(b, ref3_len);
    snprintf(want, sizeof want, "group 1 vocab at byte %zu: vocab 0 with tokenizer 0x0000000000000005", v1->at);
    expect_reject("tokenizer on a byte-level group", b, ref3_len, want);

    /* n_tokens over the limit, and past the end: the last completion's 7 ids are followed
     * by its n_token_logprobs = 0 and nothing else. */
    ref3_with_u32(b, nt->at, MESSAGE_MAX_TOKENS + 1);
    snprintf(want, sizeof want, "group 0 token_ids 1 at byte %zu: count 1048577 exceeds the limit of 1048576", nt->at);
    expect_reject("n_tokens over the limit", b, ref3_len, want);
    ref3_with_u32(b, nt->at, UINT32_MAX);
    snprintf(want, sizeof want, "group 0 token_ids 1 at byte %zu: count 4294967295 exceeds the limit", nt->at);
    expect_reject("n_tokens 2^32-1", b, ref3_len, want);
    const Field* last_nt = find3(FIELD_N_TOKENS, 2, 4);
    const Field* last_ntl = find3(FIELD_N_TOKEN_LOGPROBS, 2, 4);
    EXPECT(last_nt->value == 7 && last_ntl->value == 0 && last_ntl->at + 4 == ref3_len,
           "reference: the last completion has %u ids and %u token log-probs, expected 7 and 0 at the end",
           last_nt->value, last_ntl->value);
    ref3_with_u32(b, last_nt->at, 1007);
    snprintf(want, sizeof want, "group 2 token_ids 4 at byte %zu: count 1007 needs at least 4028 bytes, only 32 left",
             last_nt->at);
    expect_reject("n_tokens past the end", b, ref3_len, want);
    ref3_with_u32(b, last_nt->at, 8); /* the next id is its n_token_logprobs 0, then a truncated count */
    snprintf(want, sizeof want, "group 2 token_logprobs 4 at byte %zu: truncated: needs 4 bytes, 0 left", ref3_len);
    expect_reject("n_tokens + 1 at the end", b, ref3_len, want);

    /* n_token_logprobs neither 0 nor n_tokens. */
    const Field* ntl = find3(FIELD_N_TOKEN_LOGPROBS, 0, 1);
    EXPECT(ntl->value == 8, "reference: group 0 completion 1 has %u token log-probs, expected 8", ntl->value);
    static const uint32_t bad_counts[] = {7, 9, 1, UINT32_MAX};
    for (size_t k = 0; k < sizeof bad_counts / sizeof *bad_counts; k++) {
        ref3_with_u32(b, ntl->at, bad_counts[k]);
        snprintf(want, sizeof want,
                 "group 0 token_logprobs 1 at byte %zu: count %u is neither 0 nor the completion's 8 tokens", ntl->at,
                 bad_counts[k]);
        snprintf(name, sizeof name, "n_token_logprobs %u", bad_counts[k]);
        expect_reject(name, b, ref3_len, want);
    }
    const Field* none = find3(FIELD_N_TOKEN_LOGPROBS, 0, 3);
    EXPECT(find3(FIELD_N_TOKENS, 0, 3)->value == 0 && none->value == 0, "reference: group 0 completion 3 has ids");
    ref3_with_u32(b, none->at, 1);
    snprintf(want, sizeof want, "group 0 token_logprobs 3 at byte %zu: count 1 is neither 0 nor the completion's 0 tokens",
             none->at);
    expect_reject("n_token_logprobs on a completion without ids", b, ref3_len, want);
    ref3_with_u32(b, last_ntl->at, 7);
    snprintf(want, sizeof want, "group 2 token_logprobs 4 at byte %zu: count 7 needs at least 28 bytes, only 0 left",
             last_ntl->at);
    expect_reject("n_token_logprobs past the end", b, ref3_len, want);
    memset(b + ref3_len, 0, 28);
    message_seal(b, ref3_len + 27);
    snprintf(want, sizeof want, "group 2 token_logprobs 4 at byte %zu: count 7 needs at least 28 bytes, only 27 left",
             last_ntl->at);
    expect_reject("n_token_logprobs one byte past the end", b, ref3_len + 27, want);
    message_seal(b, ref3_len + 28);
    expect_accept("n_token_logprobs on the last completion, bytes appended", b, ref3_len + 28);

    /* Token log-probs that are not finite and <= 0, at index 4 of group 0 completion 1. */
    static const struct {
        uint32_t bits;
        const char* why;
    } bad[] = {
        {0x7FC00000u, "value NaN (0x7FC00000) at index 4 is not a finite log-probability <= 0"},
        {0xFFFFFFFFu, "value NaN (0xFFFFFFFF) at index 4 is not a finite log-probability <= 0"},
        {0x7F800000u, "value +inf at index 4 is not a finite log-probability <= 0"},
        {0xFF800000u, "value -inf at index 4 is not a finite log-probability <= 0"},
        {0x3F000000u, "value 0.5 (0x3F000000) at index 4 is not a finite log-probability <= 0"},
        {0x00000001u, "value 1.40129846e-45 (0x00000001) at index 4 is not a finite log-probability <= 0"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        ref3_with_u32(b, ntl->at + 4 + 4 * 4, bad[k].bits);
        snprintf(want, sizeof want, "group 0 token_logprobs 1 at byte %zu: %s", ntl->at, bad[k].why);
        snprintf(name, sizeof name, "token log-prob 0x%08X", bad[k].bits);
        expect_reject(name, b, ref3_len, want);
    }
    static const uint32_t good[] = {0x80000000u, 0x00000000u, 0x80000001u, 0xFF7FFFFFu};
    for (size_t k = 0; k < sizeof good / sizeof *good; k++) {
        ref3_with_u32(b, ntl->at + 4 + 4 * 4, good[k]);
        snprintf(name, sizeof name, "token log-prob 0x%08X", good[k]);
        expect_accept(name, b, ref3_len);
    }

    /* Trailing bytes. */
    memcpy(b, ref3_buf, ref3_len);
    memset(b + ref3_len, 'T', 3);
    message_seal(b, ref3_len + 3);
    snprintf(want, sizeof want, "3 trailing bytes after the last group at byte %zu", ref3_len);
    expect_reject("version 3: 3 trailing bytes", b, ref3_len + 3, want);

    /* The version 3 reference labelled version 2: group 0's tokenizer is read as its
     * completion count. */
    memcpy(b, ref3_buf, ref3_len);
    b[4] = 2;
    message_seal(b, ref3_len);
    snprintf(want, sizeof want, "group 0 n_completions at byte %zu: count 2135587861 exceeds the limit of 1024",
             find3(FIELD_TOKENIZER, 0, -1)->at);
    expect_reject("version 3 record labelled 2", b, ref3_len, want);
    free(b);

    /* Version 3 without any tokenizer is version 2's record: rejected so that every record
     * that decodes re-encodes to itself. With no groups, and with the version 2 reference's
     * groups given tokenizer 0 and vocab 0. */
    SwarmMessage e = {.sender = 1, .round = 1};
    uint8_t* eb = NULL;
    size_t elen = 0;
    char err[256];
    EXPECT(message_encode(&e, &eb, &elen, err, sizeof err) == 0 && eb[4] == 2, "an empty message is not version 2");
    eb[4] = 3;
    message_seal(eb, elen);
    expect_reject("version 3, no groups", eb, elen, "version 3 record in which no group has a tokenizer");
    free(eb);
    size_t wide_len = ref_len + 12 * 3;
    uint8_t* w = malloc(wide_len);
    size_t from = 0, to = 0;
    for (int gi = 0; gi < 3; gi++) { /* copy up to each group's n_completions, then 12 zero bytes */
        size_t at = find_field(FIELD_N_COMPLETIONS, gi, -1)->at;
        memcpy(w + to, ref_buf + from, at - from);
        to += at - from, from = at;
        memset(w + to, 0, 12);
        to += 12;
    }
    memcpy(w + to, ref_buf + from, ref_len - from);
    w[4] = 3;
    message_seal(w, wide_len);
    expect_reject("version 3, byte-level groups only", w, wide_len, "version 3 record in which no group has a tokenizer");
    w[4] = 2;
    message_seal(w, wide_len);
    expect_reject("version 2 with tokenizer and vocab fields", w, wide_len, NULL);
    free(w);
}

int main(void) {
    test_round_trips();
    test_layout();
    test_limits();
    test_token_round_trips();
    test_token_refusals();
    test_layout_v3();
    make_reference();
    make_reference_v3();
    test_header_rejections();
    test_truncations("version 2 reference", ref_buf, ref_len, ref_fields, ref_n_fields);
    test_truncations("version 3 reference", ref3_buf, ref3_len, ref3_fields, ref3_n_fields);
    test_field_rejections();
    test_token_rejections();
    free(ref_buf);
    free(ref3_buf);
    return test_finish("test_message");
}
