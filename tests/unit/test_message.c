/* Swarm message codec (version 2): round trips (0, 1, many groups; empty strings; a None
 * answer; UTF-8 and arbitrary non-NUL bytes; every limit reached exactly; log-probs on all,
 * some or none of the completions, bit for bit, -0.0 and subnormals included), the byte
 * layout checked against records packed by hand, encoder refusals (non-finite or positive
 * log-probs among them), and every decoder rejection with its message (bad magic, version 1
 * and others, flags, checksum, truncation at every offset, lying lengths and counts, a
 * log-prob count that is neither 0 nor the text length or that runs past the end, NaN /
 * +-inf / positive log-probs, embedded NUL, trailing bytes, payload length that disagrees
 * with the buffer). */
#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "message_layout.h"
#include "swarm/message.h"
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
    for (int i = 0; i < m->n_groups && i < back.n_groups; i++)
        EXPECT(decoded_logprobs_shape(&m->groups[i], &back.groups[i]),
               "%s: group %d: decoded logprobs array or its NULL entries do not match what was shipped", name, i);
    uint8_t* again = NULL;
    size_t again_len = 0;
    EXPECT(message_encode(&back, &again, &again_len, err, sizeof err) == 0, "%s: re-encode failed: %s", name, err);
    EXPECT(again_len == len && memcmp(again, buf, len) == 0, "%s: re-encoding gives other bytes (%zu vs %zu)", name,
           again_len, len);
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
    message_free(&back);
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
    expect_reject("version 1", b, ref_len, "unsupported version 1, expected 2");
    b[4] = 3;
    expect_reject("version 3", b, ref_len, "unsupported version 3, expected 2");
    b[4] = 0, b[5] = 2;
    expect_reject("version 512", b, ref_len, "unsupported version 512, expected 2");
    memcpy(b, ref_buf, ref_len);
    b[7] = 0x80;
    expect_reject("flags", b, ref_len, "unknown flags 0x8000");
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
                                  "logprobs"};
    if (f->group < 0) snprintf(out, n, "%s at byte %zu:", names[f->kind], f->at);
    else if (f->item >= 0) snprintf(out, n, "group %d %s %d at byte %zu:", f->group, names[f->kind], f->item, f->at);
    else snprintf(out, n, "group %d %s at byte %zu:", f->group, names[f->kind], f->at);
}

/* Every prefix is rejected: as is (the payload length disagrees), and resealed, where the
 * parser itself must find the truncation and name a real field, at its real offset, that
 * starts at or before the cut. */
static void test_truncations(void) {
    uint8_t* b = copy_ref(0);
    char name[64];
    int resealed = 0;
    for (size_t cut = 0; cut < ref_len; cut++) {
        snprintf(name, sizeof name, "truncated to %zu", cut);
        memcpy(b, ref_buf, ref_len);
        expect_reject(name, b, cut, cut < 32 ? "truncated header" : "disagrees with the");
        if (cut < 32) continue;
        message_seal(b, cut);
        snprintf(name, sizeof name, "truncated to %zu, resealed", cut);
        expect_reject(name, b, cut, NULL);
        SwarmMessage m;
        char err[256] = "", where[96] = "";
        message_decode(b, cut, &m, err, sizeof err);
        const char* at = strstr(err, " at byte ");
        size_t off = at ? strtoull(at + 9, NULL, 10) : (size_t)-1;
        const Field* f = NULL;
        for (int i = 0; i < ref_n_fields; i++)
            if (ref_fields[i].at == off) f = &ref_fields[i];
        if (f) field_where(f, where, sizeof where);
        int ok = f && off <= cut && strncmp(err, where, strlen(where)) == 0 &&
                 (strstr(err, "truncated") || strstr(err, "bytes left") || strstr(err, "needs at least"));
        EXPECT(ok, "%s: \"%s\" does not name a field at or before the cut as truncated", name, err);
        resealed += ok;
    }
    printf("truncations: %zu prefixes rejected; %d resealed prefixes rejected naming the cut field\n", ref_len,
           resealed);
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

int main(void) {
    test_round_trips();
    test_layout();
    test_limits();
    make_reference();
    test_header_rejections();
    test_truncations();
    test_field_rejections();
    free(ref_buf);
    return test_finish("test_message");
}
