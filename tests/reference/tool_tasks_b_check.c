/* Test tool for the arc_1d, bf and propositional_logic ports (used by test_tasks_b.py):
 *   tool_tasks_b_check gen TASK CONFIG_JSON SEED START COUNT
 *       prints items START..START+COUNT-1 as JSON lines {"question","answer","metadata"},
 *       or {"error": MESSAGE} for an item the generator refuses (e.g. one the package hangs on)
 *   tool_tasks_b_check score TASK < LINES
 *       each input line {"entry": {...}, "answers": [str|null, ...]}; prints one JSON array
 *       of scores (%.17g) per line
 *   tool_tasks_b_check preset TASK paper|small|tiny
 *       prints the preset's config JSON
 * Exit 1 with a one-line message on bad usage or input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tasks/task.h"

extern const TaskSpec task_arc_1d, task_bf, task_propositional_logic;

static const TaskSpec* find_task(const char* name) {
    const TaskSpec* all[] = {&task_arc_1d, &task_bf, &task_propositional_logic};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (!strcmp(all[i]->name, name)) return all[i];
    }
    fprintf(stderr, "tool_tasks_b_check: unknown task '%s'\n", name);
    exit(1);
}

static int cmd_gen(const TaskSpec* t, const char* config_text, long long seed, long long start, long long count) {
    cJSON* config = cJSON_Parse(config_text);
    if (!config) {
        fprintf(stderr, "tool_tasks_b_check: config is not valid JSON: %s\n", config_text);
        return 1;
    }
    for (long long i = start; i < start + count; i++) {
        TaskItem item;
        char err[256] = "";
        if (t->generate(config, seed, i, &item, err, sizeof err)) {
            cJSON* e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "error", err);
            char* s = cJSON_PrintUnformatted(e);
            puts(s);
            free(s);
            cJSON_Delete(e);
            continue;
        }
        cJSON* obj = cJSON_CreateObject();
        cJSON_AddStringToObject(obj, "question", item.question);
        if (item.answer) cJSON_AddStringToObject(obj, "answer", item.answer);
        else cJSON_AddNullToObject(obj, "answer");
        cJSON_AddItemToObject(obj, "metadata", item.metadata);
        item.metadata = NULL;
        char* s = cJSON_PrintUnformatted(obj);
        puts(s);
        free(s);
        cJSON_Delete(obj);
        task_item_free(&item);
    }
    cJSON_Delete(config);
    return 0;
}

static int cmd_score(const TaskSpec* t) {
    size_t cap = 1 << 16, len = 0;
    char* line = malloc(cap);
    int c;
    long long lineno = 0;
    for (;;) {
        len = 0;
        while ((c = getchar()) != EOF && c != '\n') {
            if (len + 1 >= cap) line = realloc(line, cap *= 2);
            line[len++] = (char)c;
        }
        if (len == 0 && c == EOF) break;
        line[len] = 0;
        lineno++;
        cJSON* obj = cJSON_Parse(line);
        const cJSON* entry = cJSON_GetObjectItemCaseSensitive(obj, "entry");
        const cJSON* answers = cJSON_GetObjectItemCaseSensitive(obj, "answers");
        if (!obj || !cJSON_IsArray(answers)) {
            fprintf(stderr, "tool_tasks_b_check: stdin line %lld: expected {\"entry\":..., \"answers\":[...]}\n",
                    lineno);
            return 1;
        }
        fputc('[', stdout);
        int first = 1;
        for (const cJSON* a = answers->child; a; a = a->next) {
            const char* answer = cJSON_IsString(a) ? a->valuestring : NULL;
            printf("%s%.17g", first ? "" : ",", t->score(answer, entry));
            first = 0;
        }
        fputs("]\n", stdout);
        cJSON_Delete(obj);
        if (c == EOF) break;
    }
    free(line);
    return 0;
}

int main(int argc, char** argv) {
    if (argc >= 7 && !strcmp(argv[1], "gen")) {
        return cmd_gen(find_task(argv[2]), argv[3], atoll(argv[4]), atoll(argv[5]), atoll(argv[6]));
    }
    if (argc >= 3 && !strcmp(argv[1], "score")) return cmd_score(find_task(argv[2]));
    if (argc >= 4 && !strcmp(argv[1], "preset")) {
        const TaskSpec* t = find_task(argv[2]);
        const char* p = !strcmp(argv[3], "paper") ? t->preset_paper
                        : !strcmp(argv[3], "small") ? t->preset_small
                        : !strcmp(argv[3], "tiny") ? t->preset_tiny : NULL;
        if (!p) {
            fprintf(stderr, "tool_tasks_b_check: unknown preset '%s'\n", argv[3]);
            return 1;
        }
        puts(p);
        return 0;
    }
    fprintf(stderr, "usage: tool_tasks_b_check gen TASK CONFIG SEED START COUNT | score TASK | preset TASK NAME\n");
    return 1;
}
