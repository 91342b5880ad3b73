/* Shared scoring helpers for the task ports (see task_common.h). */
#include "tasks/infra/task_common.h"

#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "tasks/infra/task.h"
#include "tasks/pyemu/pyjson.h"
#include "tasks/pyemu/pyunicode.h"

void task_item_free(TaskItem* item) {
    if (!item) return;
    free(item->question);
    free(item->answer);
    cJSON_Delete(item->metadata);
    item->question = item->answer = NULL;
    item->metadata = NULL;
}

size_t utf8_codepoints(const char* s, size_t len) {
    size_t count = 0;
    for (size_t i = 0; i < len; count++) pyu_next(s, len, &i);
    return count;
}

const char* task_find_bytes(const char* s, size_t n, const char* needle, size_t m) {
    if (m == 0 || n < m) return NULL;
    const char* end = s + (n - m);
    for (const char* p = s; p <= end; p++) {
        p = memchr(p, needle[0], (size_t)(end - p) + 1);
        if (!p) return NULL;
        if (!memcmp(p, needle, m)) return p;
    }
    return NULL;
}

/* Python's `oracle in answer`: a byte match that starts and ends on code point boundaries
 * of the answer. Every match of a valid UTF-8 oracle does; one holding surrogateescape
 * bytes can match inside a longer sequence ("\udcc3" is not in "\u00e9", though its byte
 * 0xC3 is). */
static int contains_codepoints(const char* a, size_t n, const char* o, size_t m) {
    if (m == 0) return 1;
    unsigned char* starts = NULL; /* starts[i]: a code point of the answer starts at i */
    int found = 0;
    for (const char* hit = task_find_bytes(a, n, o, m); hit && !found;) {
        size_t at = (size_t)(hit - a);
        if (!starts) {
            starts = callocCheck(n + 1, 1);
            for (size_t i = 0; i < n; pyu_next(a, n, &i)) starts[i] = 1;
            starts[n] = 1;
        }
        found = starts[at] && starts[at + m];
        hit = task_find_bytes(hit + 1, n - at - 1, o, m);
    }
    free(starts);
    return found;
}

double task_default_score(const char* answer, size_t answer_len, const char* oracle, size_t oracle_len) {
    if (!answer || !answer_len || !oracle) return 0.0;
    if (answer_len == oracle_len && !memcmp(answer, oracle, oracle_len)) return 1.0;
    if (contains_codepoints(answer, answer_len, oracle, oracle_len))
        return (double)utf8_codepoints(oracle, oracle_len) / (double)utf8_codepoints(answer, answer_len);
    return 0.0;
}

double task_default_score_answer(const char* answer, size_t len, const cJSON* entry) {
    size_t oracle_len = 0;
    const char* oracle = task_entry_answer(entry, &oracle_len);
    return task_default_score(answer, len, oracle, oracle_len);
}

const char* task_entry_answer(const cJSON* entry, size_t* len) {
    return pyjson_string(cJSON_GetObjectItemCaseSensitive(entry, "answer"), len);
}

const char* task_entry_question(const cJSON* entry, size_t* len) {
    return pyjson_string(cJSON_GetObjectItemCaseSensitive(entry, "question"), len);
}

const cJSON* task_entry_metadata(const cJSON* entry) {
    const cJSON* m = cJSON_GetObjectItemCaseSensitive(entry, "metadata");
    return cJSON_IsObject(m) ? m : NULL;
}
