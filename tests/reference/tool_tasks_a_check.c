/* Drives the four task ports of branch tasks-a (base_conversion, fraction_simplification,
 * calendar_arithmetic, binary_matrix) for test_tasks_a.py, before the shared registry and
 * `sapo tasks` CLI exist:
 *   tool_tasks_a_check gen TASK CONFIG SEED START COUNT
 *       prints items START..START+COUNT-1 as JSON lines {"question","answer","metadata"};
 *       CONFIG is a JSON object or a preset name (paper, small, tiny).
 *   tool_tasks_a_check score TASK
 *       reads JSON lines {"entry": {...}, "answers": [string or null, ...]} on stdin and
 *       prints one line {"scores": [...]} per input line (%.17g, exact doubles).
 *   tool_tasks_a_check preset TASK NAME
 *       prints the preset's JSON config. */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tasks/task.h"

extern const TaskSpec task_base_conversion;
extern const TaskSpec task_fraction_simplification;
extern const TaskSpec task_calendar_arithmetic;
extern const TaskSpec task_binary_matrix;

static const TaskSpec* const SPECS[] = {&task_base_conversion, &task_fraction_simplification,
                                        &task_calendar_arithmetic, &task_binary_matrix};

static const TaskSpec* find_spec(const char* name) {
    for (size_t i = 0; i < sizeof SPECS / sizeof SPECS[0]; i++)
        if (!strcmp(SPECS[i]->name, name)) return SPECS[i];
    fprintf(stderr, "tool_tasks_a_check: unknown task '%s'\n", name);
    exit(2);
}

static const char* preset_text(const TaskSpec* s, const char* name) {
    if (!strcmp(name, "paper")) return s->preset_paper;
    if (!strcmp(name, "small")) return s->preset_small;
    if (!strcmp(name, "tiny")) return s->preset_tiny;
    return NULL;
}

static int cmd_gen(const TaskSpec* spec, const char* cfg_text, long long seed, long long start, long long count) {
    const char* preset = preset_text(spec, cfg_text);
    cJSON* cfg = cJSON_Parse(preset ? preset : cfg_text);
    if (!cfg) {
        fprintf(stderr, "tool_tasks_a_check: config is not JSON: %s\n", cfg_text);
        return 2;
    }
    for (long long i = start; i < start + count; i++) {
        TaskItem item = {0};
        char err[512] = "";
        if (spec->generate(cfg, seed, i, &item, err, sizeof err)) {
            fprintf(stderr, "tool_tasks_a_check: %s item %lld: %s\n", spec->name, i, err);
            cJSON_Delete(cfg);
            return 1;
        }
        cJSON* e = cJSON_CreateObject();
        cJSON_AddItemToObject(e, "question", cJSON_CreateString(item.question));
        cJSON_AddItemToObject(e, "answer", item.answer ? cJSON_CreateString(item.answer) : cJSON_CreateNull());
        cJSON_AddItemToObject(e, "metadata", item.metadata);
        item.metadata = NULL;
        char* text = cJSON_PrintUnformatted(e);
        puts(text);
        free(text);
        cJSON_Delete(e);
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
            fprintf(stderr, "tool_tasks_a_check: stdin line %ld: expected {\"entry\": {...}, \"answers\": [...]}\n", lineno);
            cJSON_Delete(in);
            free(line);
            return 2;
        }
        fputs("{\"scores\":[", stdout);
        int first = 1;
        for (const cJSON* a = answers->child; a; a = a->next) {
            const char* ans = cJSON_IsString(a) ? a->valuestring : NULL;
            printf(first ? "%.17g" : ",%.17g", spec->score(ans, entry));
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
        const char* t = preset_text(find_spec(argv[2]), argv[3]);
        if (!t) return 2;
        puts(t);
        return 0;
    }
    fprintf(stderr,
            "usage: tool_tasks_a_check gen TASK CONFIG SEED START COUNT | score TASK | preset TASK NAME\n");
    return 2;
}
