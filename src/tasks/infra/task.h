/* The interface every ReasoningGYM task port implements: a generator that reproduces
 * reasoning_gym's item for (seed, index, config) and a verifier that returns exactly what
 * the package's score_answer returns. Configs and metadata are JSON objects with the
 * package's own key names, so entries from reasoning_gym itself can be scored too. */
#ifndef SAPO_TASKS_TASK_H
#define SAPO_TASKS_TASK_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

/* One generated item, shaped like a reasoning_gym entry. */
typedef struct {
    char* question;   /* heap, UTF-8 */
    char* answer;     /* heap, UTF-8; NULL where the package stores None */
    cJSON* metadata;  /* owned object, keys as reasoning_gym emits them */
} TaskItem;

typedef struct {
    const char* name; /* reasoning_gym dataset name, e.g. "basic_arithmetic" */
    /* Item `index` of the dataset with `seed` and `config` (a JSON object with the package's
     * config keys; missing keys take the package's defaults). Uses Python's
     * random.Random(seed + index) exactly as the package does. Returns 0, or -1 with a
     * one-line reason in err (bad config value). */
    int (*generate)(const cJSON* config, int64_t seed, int64_t index, TaskItem* out, char* err, size_t errlen);
    /* score_answer(answer, entry): the answer is the `len` bytes at `answer` (U+0000 is
     * ordinary text; answer[len] need not be readable), or NULL for Python None; entry is a
     * JSON object {"question", "answer", "metadata"} as reasoning_gym emits it, whose
     * strings are read with their length (pyjson_string). Never crashes on arbitrary bytes. */
    double (*score)(const char* answer, size_t len, const cJSON* entry);
    /* Presets as JSON config objects: rl-swarm's settings, then smaller ones. */
    const char* preset_paper;
    const char* preset_small;
    const char* preset_tiny;
} TaskSpec;

void task_item_free(TaskItem* item);

#endif
