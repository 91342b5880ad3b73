/* The table of ReasoningGYM task ports and their difficulty presets. The order of the nine
 * tasks is fixed: a task's position in it is the task id that swarm messages carry, so a
 * receiver maps an id back to the same generator and verifier. */
#ifndef SAPO_TASKS_REGISTRY_H
#define SAPO_TASKS_REGISTRY_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "tasks/infra/task.h"

/* Number of task ids (the paper's nine specialties), whether ported or not. */
#define TASK_N_IDS 9

/* Registered (ported) tasks, in task-id order. task_at(i) for 0 <= i < task_count(). */
int task_count(void);
const TaskSpec* task_at(int i);
/* The task with this reasoning_gym name, or NULL when unknown or not ported. */
const TaskSpec* task_find(const char* name);
/* The fixed swarm id (0..TASK_N_IDS-1) of one of the nine names, or -1 for any other. */
int task_id(const char* name);
/* The reasoning_gym name of an id, or NULL when out of range. */
const char* task_id_name(int id);
/* The spec registered under an id, or NULL when out of range or not ported. */
const TaskSpec* task_by_id(int id);

/* Presets: "paper" (rl-swarm's settings), "small", "tiny": task_preset_name(TASK_PRESET_TINY) is "tiny"
 * (core/config_enums.h). */
int task_preset_count(void);
const char* task_preset_name(int i);
int task_preset_known(const char* preset);
/* The preset's config as JSON text (reasoning_gym config keys), or NULL when the preset
 * name is unknown or the task defines no such preset. */
const char* task_preset_config(const TaskSpec* spec, const char* preset);
/* The preset's config parsed, with `overrides` (a JSON object, may be NULL) laid over it
 * key by key. Returns a new object, or NULL with a one-line reason in err. */
cJSON* task_config_build(const TaskSpec* spec, const char* preset, const cJSON* overrides, char* err,
                         size_t errlen);

/* Item `index` of (seed, config) as an entry object {"question", "answer", "metadata"}
 * shaped like reasoning_gym's (answer null where the package has None). Returns a new
 * object, or NULL with a one-line reason in err. */
cJSON* task_generate_entry(const TaskSpec* spec, const cJSON* config, int64_t seed, int64_t index, char* err,
                           size_t errlen);

#endif
