/* Drives any registered task port for the per-port reference tests (test_tasks_a.py,
 * test_tasks_b.py, test_task_*_arithmetic.py), batch-wise where `sapo tasks` goes line by line:
 *   tool_task_check gen TASK CONFIG SEED START COUNT
 *       items START..START+COUNT-1 as JSON lines {"question","answer","metadata"}, or
 *       {"error": WHY} for an item the generator refuses; CONFIG is a JSON object or a
 *       preset name (paper, small, tiny).
 *   tool_task_check score TASK
 *       reads JSON lines {"entry": {...}, "answers": [string or null, ...]} on stdin and
 *       prints {"scores": [...]} per line (%.17g).
 *   tool_task_check preset TASK NAME
 *       prints the preset's JSON config. */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tasks/infra/registry.h"
#include "tasks/infra/task.h"

static const TaskSpec* find_spec(const char* name) {
    const TaskSpec* s = task_find(name);
    if (!s) {
        fprintf(stderr, "tool_task_check: unknown task '%s'\n", name);
        exit(2);
    }
    return s;
}

static void print_json(cJSON* o) {
    char* text = cJSON_PrintUnformatted(o);
    puts(text);
    free(text);
    cJSON_Delete(o);
}

static int cmd_gen(const TaskSpec* spec, const char* cfg_text, long long seed, long long start, long long count) {
    const char* preset = task_preset_config(spec, cfg_text);
    cJSON* cfg = cJSON_Parse(preset ? preset : cfg_text);
    if (!cfg) {
        fprintf(stderr, "tool_task_check: config is not JSON: %s\n", cfg_text);
        return 2;
    }
    for (long long i = start; i < start + count; i++) {
        TaskItem item = {0};
        char err[512] = "";
        cJSON* e = cJSON_CreateObject();
        if (spec->generate(cfg, seed, i, &item, err, sizeof err)) {
            cJSON_AddStringToObject(e, "error", err);
        } else {
            cJSON_AddItemToObject(e, "question", cJSON_CreateString(item.question));
            cJSON_AddItemToObject(e, "answer", item.answer ? cJSON_CreateString(item.answer) : cJSON_CreateNull());
            cJSON_AddItemToObject(e, "metadata", item.metadata);
            item.metadata = NULL;
        }
        print_json(e);
        task_item_free(&item);
    }
    cJSON_Delete(cfg);
    return 0;
}

static int cmd_score(const TaskSpec* spec) {
    char* line = NULL;
    size_t cap = 0;
    ssize_t n;
    long lineno = 0;
    while ((n = getline(&line, &cap, stdin)) > 0) {
        lineno++;
        cJSON* in = cJSON_Parse(line);
        const cJSON* entry = cJSON_GetObjectItemCaseSensitive(in, "entry");
        const cJSON* answers = cJSON_GetObjectItemCaseSensitive(in, "answers");
        if (!in || !cJSON_IsArray(answers)) {
            fprintf(stderr, "tool_task_check: stdin line %ld: expected {\"entry\": {...}, \"answers\": [...]}\n",
                    lineno);
            cJSON_Delete(in);
            free(line);
            return 2;
        }
        fputs("{\"scores\":[", stdout);
        int first = 1;
        for (const cJSON* a = answers->child; a; a = a->next) {
            const char* ans = cJSON_IsString(a) ? a->valuestring : NULL;
            printf(first ? "%.17g" : ",%.17g", spec->score(ans, ans ? strlen(ans) : 0, entry));
            first = 0;
        }
        fputs("]}\n", stdout);
        cJSON_Delete(in);
    }
    free(line);
    return 0;
}

int main(int argc, char** argv) {
    if (argc == 7 && !strcmp(argv[1], "gen"))
        return cmd_gen(find_spec(argv[2]), argv[3], atoll(argv[4]), atoll(argv[5]), atoll(argv[6]));
    if (argc == 3 && !strcmp(argv[1], "score")) return cmd_score(find_spec(argv[2]));
    if (argc == 4 && !strcmp(argv[1], "preset")) {
        const char* t = task_preset_config(find_spec(argv[2]), argv[3]);
        if (!t) {
            fprintf(stderr, "tool_task_check: no preset '%s'\n", argv[3]);
            return 2;
        }
        puts(t);
        return 0;
    }
    fprintf(stderr, "usage: tool_task_check gen TASK CONFIG SEED START COUNT | score TASK | preset TASK NAME\n");
    return 2;
}
