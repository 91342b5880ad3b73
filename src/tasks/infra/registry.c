/* The task table (see registry.h): TASK_LIST below is the one list of the tasks, from which
 * the names, the specs and the ids all come. Each port defines `const TaskSpec task_<name>`
 * in its own ports/task_<name>.c; listing it here is the one line a port adds. */
#include "tasks/infra/registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "core/config_enums.h"

/* The nine tasks, one entry each, in swarm-id order: a task's id is its position, so never
 * reorder, only append. X(name): the port defines `const TaskSpec task_<name>` (its
 * reasoning_gym name) in ports/task_<name>.c. */
#define TASK_LIST(X)                                                                            \
    X(base_conversion)         /* id 0 */                                                       \
    X(basic_arithmetic)        /* id 1 */                                                       \
    X(arc_1d)                  /* id 2 */                                                       \
    X(bf)                      /* id 3 */                                                       \
    X(propositional_logic)     /* id 4 */                                                       \
    X(fraction_simplification) /* id 5 */                                                       \
    X(decimal_arithmetic)      /* id 6 */                                                       \
    X(calendar_arithmetic)     /* id 7 */                                                       \
    X(binary_matrix)           /* id 8 */

#define TASK_DECLARE(name) extern const TaskSpec task_##name;
#define TASK_NAME(name) #name,
#define TASK_SPEC(name) &task_##name,
TASK_LIST(TASK_DECLARE)
static const char* const TASK_NAMES[] = {TASK_LIST(TASK_NAME)};
static const TaskSpec* const TASK_SLOTS[] = {TASK_LIST(TASK_SPEC)};
_Static_assert(sizeof TASK_NAMES / sizeof TASK_NAMES[0] == TASK_N_IDS, "TASK_LIST and TASK_N_IDS (registry.h) disagree");

static const char* const PRESETS[] = {TASK_PRESET_VALUES(CONFIG_ENUM_NAME)}; /* tasks.preset's, in its order */
#define N_PRESETS ((int)(sizeof PRESETS / sizeof PRESETS[0]))

/* A port whose spec carries another name than its entry would send wrong ids over the wire:
 * fail loudly. */
static void registry_check(void) {
    static int checked = 0;
    if (checked) return;
    for (int i = 0; i < TASK_N_IDS; i++) {
        if (TASK_SLOTS[i] && strcmp(TASK_SLOTS[i]->name, TASK_NAMES[i]) != 0)
            sapo_die("task registry: slot %d holds '%s', expected '%s'", i, TASK_SLOTS[i]->name, TASK_NAMES[i]);
    }
    checked = 1;
}

int task_count(void) {
    registry_check();
    int n = 0;
    for (int i = 0; i < TASK_N_IDS; i++) n += TASK_SLOTS[i] != NULL;
    return n;
}

const TaskSpec* task_at(int i) {
    registry_check();
    if (i < 0) return NULL;
    for (int id = 0; id < TASK_N_IDS; id++) {
        if (!TASK_SLOTS[id]) continue;
        if (i-- == 0) return TASK_SLOTS[id];
    }
    return NULL;
}

int task_id(const char* name) {
    if (!name) return -1;
    for (int i = 0; i < TASK_N_IDS; i++)
        if (!strcmp(name, TASK_NAMES[i])) return i;
    return -1;
}

const char* task_id_name(int id) { return id >= 0 && id < TASK_N_IDS ? TASK_NAMES[id] : NULL; }

const TaskSpec* task_by_id(int id) {
    registry_check();
    return id >= 0 && id < TASK_N_IDS ? TASK_SLOTS[id] : NULL;
}

const TaskSpec* task_find(const char* name) { return task_by_id(task_id(name)); }

int task_preset_count(void) { return N_PRESETS; }

const char* task_preset_name(int i) { return i >= 0 && i < N_PRESETS ? PRESETS[i] : NULL; }

int task_preset_known(const char* preset) {
    for (int i = 0; preset && i < N_PRESETS; i++)
        if (!strcmp(preset, PRESETS[i])) return 1;
    return 0;
}

const char* task_preset_config(const TaskSpec* spec, const char* preset) {
    if (!spec || !preset) return NULL;
    if (!strcmp(preset, "paper")) return spec->preset_paper;
    if (!strcmp(preset, "small")) return spec->preset_small;
    if (!strcmp(preset, "tiny")) return spec->preset_tiny;
    return NULL;
}

cJSON* task_config_build(const TaskSpec* spec, const char* preset, const cJSON* overrides, char* err,
                         size_t errlen) {
    if (!task_preset_known(preset)) {
        set_error(err, errlen, "unknown preset '%s' (expected paper, small or tiny)", preset ? preset : "(null)");
        return NULL;
    }
    const char* text = task_preset_config(spec, preset);
    if (!text) {
        set_error(err, errlen, "task '%s' defines no '%s' preset", spec->name, preset);
        return NULL;
    }
    cJSON* cfg = cJSON_Parse(text);
    if (!cJSON_IsObject(cfg)) {
        cJSON_Delete(cfg);
        set_error(err, errlen, "task '%s': preset '%s' is not a JSON object: %s", spec->name, preset, text);
        return NULL;
    }
    if (overrides && !cJSON_IsObject(overrides)) {
        cJSON_Delete(cfg);
        set_error(err, errlen, "config overrides must be a JSON object");
        return NULL;
    }
    for (const cJSON* kv = overrides ? overrides->child : NULL; kv; kv = kv->next) {
        cJSON* copy = cJSON_Duplicate(kv, 1);
        if (!copy) sapo_die("out of memory duplicating config key '%s'", kv->string);
        if (cJSON_GetObjectItemCaseSensitive(cfg, kv->string))
            cJSON_ReplaceItemInObjectCaseSensitive(cfg, kv->string, copy);
        else
            cJSON_AddItemToObject(cfg, kv->string, copy);
    }
    return cfg;
}

cJSON* task_generate_entry(const TaskSpec* spec, const cJSON* config, int64_t seed, int64_t index, char* err,
                           size_t errlen) {
    TaskItem item = {0};
    char why[512] = "";
    if (spec->generate(config, seed, index, &item, why, sizeof why) != 0) {
        task_item_free(&item);
        set_error(err, errlen, "%s: cannot generate item %lld of seed %lld: %s", spec->name, (long long)index,
                  (long long)seed, why[0] ? why : "generator failed");
        return NULL;
    }
    cJSON* entry = cJSON_CreateObject();
    if (!entry) sapo_die("out of memory");
    cJSON_AddItemToObject(entry, "question", item.question ? cJSON_CreateString(item.question) : cJSON_CreateNull());
    cJSON_AddItemToObject(entry, "answer", item.answer ? cJSON_CreateString(item.answer) : cJSON_CreateNull());
    cJSON_AddItemToObject(entry, "metadata", item.metadata ? item.metadata : cJSON_CreateObject());
    item.metadata = NULL; /* now owned by entry */
    task_item_free(&item);
    return entry;
}
