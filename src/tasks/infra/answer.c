/* Answer extraction exactly as rl-swarm / genrl (reasoning_gym.utils.extract_answer) and the
 * reward built on it; see answer.h for the matched semantics. */
#include "tasks/infra/answer.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "tasks/infra/task_common.h"

static const char OPEN_TAG[] = "<answer>";
static const char CLOSE_TAG[] = "</answer>";
#define OPEN_LEN (sizeof OPEN_TAG - 1)
#define CLOSE_LEN (sizeof CLOSE_TAG - 1)

/* Python's str.isspace() (the same set re's \s matches for str patterns). */
static int py_isspace(uint32_t c) {
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
           c == 0x3000;
}

/* Decodes the valid UTF-8 sequence at s (at most n bytes); returns its length or 0. */
static size_t utf8_decode(const unsigned char* s, size_t n, uint32_t* cp) {
    unsigned c = s[0];
    size_t len;
    uint32_t min;
    if (c < 0x80) { *cp = c; return 1; }
    if (c >= 0xC2 && c <= 0xDF) { len = 2; min = 0x80; }
    else if (c >= 0xE0 && c <= 0xEF) { len = 3; min = 0x800; }
    else if (c >= 0xF0 && c <= 0xF4) { len = 4; min = 0x10000; }
    else return 0;
    if (len > n) return 0;
    uint32_t v = c & (0x7Fu >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        v = (v << 6) | (s[i] & 0x3Fu);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    *cp = v;
    return len;
}

/* Length of the whitespace code point starting at s, or 0. */
static size_t space_at(const unsigned char* s, size_t n) {
    uint32_t cp;
    size_t len = utf8_decode(s, n, &cp);
    return len && py_isspace(cp) ? len : 0;
}

/* Length of the whitespace code point ending at s + n, or 0: a valid sequence of 1..4
 * bytes that ends exactly at the end. */
static size_t space_before(const unsigned char* s, size_t n) {
    for (size_t len = 1; len <= 4 && len <= n; len++) {
        uint32_t cp;
        if (utf8_decode(s + n - len, len, &cp) == len) return py_isspace(cp) ? len : 0;
    }
    return 0;
}

char* answer_extract_n(const char* completion, size_t len, size_t* out_len) {
    if (!completion) return NULL;
    const char* best = NULL;
    size_t best_len = 0;
    size_t pos = 0;
    for (;;) {
        const char* open = task_find_bytes(completion + pos, len - pos, OPEN_TAG, OPEN_LEN);
        if (!open) break;
        size_t body = (size_t)(open - completion) + OPEN_LEN;
        const char* close = task_find_bytes(completion + body, len - body, CLOSE_TAG, CLOSE_LEN);
        /* No closing tag after this opening one: none after any later opening either. */
        if (!close) break;
        best = completion + body;
        best_len = (size_t)(close - best);
        pos = (size_t)(close - completion) + CLOSE_LEN;
    }
    if (!best) return NULL;
    const unsigned char* s = (const unsigned char*)best;
    size_t a = 0, b = best_len, k;
    while (a < b && (k = space_at(s + a, b - a))) a += k;
    while (b > a && (k = space_before(s + a, b - a))) b -= k;
    char* out = mallocCheck(b - a + 1);
    memcpy(out, best + a, b - a);
    out[b - a] = '\0';
    if (out_len) *out_len = b - a;
    return out;
}

char* answer_extract(const char* completion) {
    return completion ? answer_extract_n(completion, strlen(completion), NULL) : NULL;
}

double task_reward_n(const TaskSpec* spec, const char* completion, size_t len, const cJSON* entry) {
    size_t n;
    char* answer = answer_extract_n(completion, len, &n);
    if (!answer) return 0.0;
    double r = spec->score(answer, n, entry);
    free(answer);
    return r;
}

double task_reward(const TaskSpec* spec, const char* completion, const cJSON* entry) {
    return completion ? task_reward_n(spec, completion, strlen(completion), entry) : 0.0;
}
