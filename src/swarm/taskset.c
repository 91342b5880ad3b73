/* Task sets, questions and prompts (see taskset.h). */
#include "swarm/taskset.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "tasks/infra/registry.h"

static int add_slot(TaskSet* ts, const TaskSpec* spec, const char* preset, char* err, size_t errlen) {
    if (ts->n >= (int)(sizeof ts->slots / sizeof ts->slots[0]))
        return set_error(err, errlen, "tasks.names lists too many tasks");
    for (int i = 0; i < ts->n; i++)
        if (ts->slots[i].spec == spec) return set_error(err, errlen, "tasks.names lists %s twice", spec->name);
    char why[256];
    cJSON* config = task_config_build(spec, preset, NULL, why, sizeof why);
    if (!config) return set_error(err, errlen, "tasks.preset = '%s' for %s: %s", preset, spec->name, why);
    TaskSlot* s = &ts->slots[ts->n++];
    s->task_id = task_id(spec->name);
    s->spec = spec;
    s->config = config;
    s->config_json = cJSON_PrintUnformatted(config);
    return 0;
}

int taskset_build(TaskSet* ts, const char* names, TaskPreset preset_choice, char* err, size_t errlen) {
    memset(ts, 0, sizeof *ts);
    const char* preset = task_preset_name((int)preset_choice);
    if (!preset) return set_error(err, errlen, "tasks.preset = %d: unknown preset", (int)preset_choice);
    if (!strcmp(names, "all")) {
        for (int i = 0; i < task_count(); i++)
            if (add_slot(ts, task_at(i), preset, err, errlen)) return -1;
    } else {
        char* copy = strdup(names);
        char* save = NULL;
        for (char* tok = strtok_r(copy, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
            const TaskSpec* spec = task_find(tok);
            if (!spec) {
                set_error(err, errlen, "tasks.names: unknown or unported task '%s'", tok);
                free(copy);
                taskset_free(ts);
                return -1;
            }
            if (add_slot(ts, spec, preset, err, errlen)) {
                free(copy);
                taskset_free(ts);
                return -1;
            }
        }
        free(copy);
    }
    if (ts->n == 0) return set_error(err, errlen, "tasks.names = '%s' selects no task", names);
    return 0;
}

void taskset_free(TaskSet* ts) {
    for (int i = 0; i < ts->n; i++) {
        cJSON_Delete(ts->slots[i].config);
        free(ts->slots[i].config_json);
    }
    ts->n = 0;
}

const TaskSlot* taskset_find(const TaskSet* ts, int task_id) {
    for (int i = 0; i < ts->n; i++)
        if (ts->slots[i].task_id == task_id) return &ts->slots[i];
    return NULL;
}

int question_draw(const TaskSet* ts, RngStream* rng, Question* q, char* err, size_t errlen) {
    memset(q, 0, sizeof *q);
    q->slot = &ts->slots[rng_below(rng, (uint64_t)ts->n)];
    q->index = 0;
    /* The package itself raises on a few items (decimal_arithmetic dividing by an exact
     * zero, say); the port refuses the same ones, and the node simply draws another seed. */
    for (int tries = 0; tries < 100 && !q->entry; tries++) {
        q->seed = (int64_t)(rng_u64(rng) >> 16);
        q->entry = task_generate_entry(q->slot->spec, q->slot->config, q->seed, q->index, err, errlen);
    }
    if (!q->entry) return -1;
    q->prompt = question_prompt(question_text(q));
    return 0;
}

const char* question_text(const Question* q) { return cJSON_GetObjectItem(q->entry, "question")->valuestring; }

const char* question_answer(const Question* q) {
    const cJSON* a = cJSON_GetObjectItem(q->entry, "answer");
    return cJSON_IsString(a) ? a->valuestring : NULL;
}

char* question_metadata_json(const Question* q) {
    return cJSON_PrintUnformatted(cJSON_GetObjectItem(q->entry, "metadata"));
}

void question_free(Question* q) {
    cJSON_Delete(q->entry);
    free(q->prompt);
    memset(q, 0, sizeof *q);
}

char* question_prompt(const char* question) {
    size_t n = strlen(question) + 2;
    char* p = mallocCheck(n);
    snprintf(p, n, "%s\n", question);
    return p;
}

char* answer_demonstration(const char* answer) {
    size_t n = strlen(answer) + 20;
    char* p = mallocCheck(n);
    snprintf(p, n, "<answer>%s</answer>", answer);
    return p;
}

size_t prompt_room(int n_ctx, int max_new_tokens) {
    return n_ctx - max_new_tokens - 1 > 0 ? (size_t)(n_ctx - max_new_tokens - 1) : 0;
}

const char* prompt_tail(const char* prompt, int n_ctx, int max_new_tokens) {
    size_t keep = prompt_room(n_ctx, max_new_tokens), len = strlen(prompt);
    return len > keep ? prompt + (len - keep) : prompt;
}
