/* Reads JSON lines {"c": COMPLETION} and prints {"a": ANSWER|null} with ANSWER what
 * answer_extract finds, so test_answer_extract.py can compare it with reasoning_gym's
 * extract_answer (the function rl-swarm calls). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "tasks/infra/answer.h"

int main(void) {
    char* line = NULL;
    size_t cap = 0;
    ssize_t n;
    long lineno = 0;
    while ((n = getline(&line, &cap, stdin)) != -1) {
        lineno++;
        cJSON* obj = cJSON_Parse(line);
        const cJSON* c = cJSON_GetObjectItemCaseSensitive(obj, "c");
        if (!cJSON_IsString(c)) {
            fprintf(stderr, "tool_answer_extract: stdin line %ld: expected {\"c\": string}\n", lineno);
            return 2;
        }
        char* a = answer_extract(c->valuestring);
        cJSON* out = cJSON_CreateObject();
        cJSON_AddItemToObject(out, "a", a ? cJSON_CreateString(a) : cJSON_CreateNull());
        char* text = cJSON_PrintUnformatted(out);
        puts(text);
        free(text);
        free(a);
        cJSON_Delete(out);
        cJSON_Delete(obj);
    }
    free(line);
    return 0;
}
