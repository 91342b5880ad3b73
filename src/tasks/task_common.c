/* Shared scoring helpers for the task ports (see task_common.h). */
#include "tasks/task_common.h"

#include <stdlib.h>
#include <string.h>

#include "tasks/task.h"

void task_item_free(TaskItem* item) {
    if (!item) return;
    free(item->question);
    free(item->answer);
    cJSON_Delete(item->metadata);
    item->question = item->answer = NULL;
    item->metadata = NULL;
}

/* Length of the valid UTF-8 sequence starting at s (1..4), or 0 when it is not valid. */
static int utf8_sequence_length(const unsigned char* s) {
    unsigned c = s[0];
    int n;
    unsigned min;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) { n = 2; min = 0x80; }
    else if (c >= 0xE0 && c <= 0xEF) { n = 3; min = 0x800; }
    else if (c >= 0xF0 && c <= 0xF4) { n = 4; min = 0x10000; }
    else return 0;
    unsigned cp = c & (0x7F >> n);
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return n;
}

size_t utf8_codepoints(const char* str) {
    const unsigned char* s = (const unsigned char*)str;
    size_t count = 0;
    while (*s) {
        int n = utf8_sequence_length(s);
        s += n ? n : 1;
        count++;
    }
    return count;
}

double task_default_score(const char* answer, const char* oracle) {
    if (!answer || !*answer || !oracle) return 0.0;
    if (!strcmp(answer, oracle)) return 1.0;
    if (strstr(answer, oracle)) return (double)utf8_codepoints(oracle) / (double)utf8_codepoints(answer);
    return 0.0;
}

const char* task_entry_answer(const cJSON* entry) {
    const cJSON* a = cJSON_GetObjectItemCaseSensitive(entry, "answer");
    return cJSON_IsString(a) ? a->valuestring : NULL;
}

const char* task_entry_question(const cJSON* entry) {
    const cJSON* q = cJSON_GetObjectItemCaseSensitive(entry, "question");
    return cJSON_IsString(q) ? q->valuestring : NULL;
}

const cJSON* task_entry_metadata(const cJSON* entry) {
    const cJSON* m = cJSON_GetObjectItemCaseSensitive(entry, "metadata");
    return cJSON_IsObject(m) ? m : NULL;
}
