/* reasoning_gym "arc_1d": a 1-D ARC puzzle (one of 70 sub-generators), num_train example
 * pairs and a test input; the answer is the test output grid as space-separated digits.
 * Scored with the package's default scorer. */
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "tasks/infra/task.h"
#include "tasks/infra/task_common.h"
#include "tasks/infra/taskcfg.h"
#include "tasks/infra/textbuf.h"
#include "tasks/ports/arc_1d_generators.h"
#include "tasks/pyemu/pyrandom.h"

/* A sub-generator returns None now and then and the package simply draws again; this many
 * Nones in a row means a grid size it can never fill. */
#define ARC_MAX_ATTEMPTS 100000
/* Ours: grids beyond this are far outside any preset (and 4 bytes a cell in the prompt). */
#define ARC_MAX_SIZE 10000
#define ARC_MAX_TRAIN 1000

static void arc_grid_text(TextBuf* b, const int* grid, int size) {
    for (int i = 0; i < size; i++) textbuf_printf(b, i ? " %d" : "%d", grid[i]);
}

static cJSON* arc_grid_json(const int* grid, int size) { return cJSON_CreateIntArray(grid, size); }

static cJSON* arc_example_json(const int* in, const int* out, int size) {
    cJSON* e = cJSON_CreateObject();
    cJSON_AddItemToObject(e, "input", arc_grid_json(in, size));
    cJSON_AddItemToObject(e, "output", arc_grid_json(out, size));
    return e;
}

static int arc_generate(const cJSON* config, int64_t seed, int64_t index, TaskItem* out, char* err, size_t errlen) {
    static const char* const keys[] = {"min_size", "max_size", "num_train", NULL};
    const char* t = "arc_1d";
    int64_t min_size, max_size, num_train;
    memset(out, 0, sizeof *out);
    if (taskcfg_check_keys(config, t, keys, err, errlen) ||
        taskcfg_int(config, t, "min_size", 10, &min_size, err, errlen) ||
        taskcfg_int(config, t, "max_size", 30, &max_size, err, errlen) ||
        taskcfg_int(config, t, "num_train", 3, &num_train, err, errlen)) {
        return -1;
    }
    if (min_size < 8) return set_error(err, errlen, "%s config: min_size must be >= 8", t);
    if (max_size < min_size) return set_error(err, errlen, "%s config: max_size must be >= min_size", t);
    if (num_train <= 0) return set_error(err, errlen, "%s config: num_train must be positive", t);
    if (max_size > ARC_MAX_SIZE || num_train > ARC_MAX_TRAIN) {
        return set_error(err, errlen, "%s config: supported up to max_size %d, num_train %d", t, ARC_MAX_SIZE,
                         ARC_MAX_TRAIN);
    }

    PyRandom rng;
    pyrandom_seed(&rng, seed + index);
    const Arc1dTask* task = &ARC_1D_TASKS[pyrandom_choice_index(&rng, (size_t)ARC_1D_TASK_COUNT)];
    int size = (int)pyrandom_randint(&rng, min_size, max_size);

    /* num_train training pairs, then the test pair, each redrawn until the sub-generator
     * returns one. */
    int n_pairs = (int)num_train + 1;
    int* grids = mallocCheck((size_t)n_pairs * 2 * (size_t)size * sizeof *grids);
    for (int p = 0; p < n_pairs; p++) {
        int* in = grids + (size_t)p * 2 * size;
        int* outg = in + size;
        int rc = 0, attempts = 0;
        while (rc == 0) {
            if (++attempts > ARC_MAX_ATTEMPTS) {
                rc = set_error(err, errlen, "arc_1d %s: no example for size %d after %d draws", task->name, size,
                               ARC_MAX_ATTEMPTS);
                break;
            }
            rc = arc_1d_generate(task, &rng, size, in, outg, err, errlen);
        }
        if (rc < 0) {
            free(grids);
            return -1;
        }
    }

    TextBuf q = {0};
    textbuf_append(&q, "Find the common rule that maps an input grid to an output grid, given the examples below.\n\n");
    for (int p = 0; p < n_pairs - 1; p++) {
        const int* in = grids + (size_t)p * 2 * size;
        textbuf_printf(&q, "Example %d:\nInput:  ", p + 1);
        arc_grid_text(&q, in, size);
        textbuf_append(&q, "\nOutput: ");
        arc_grid_text(&q, in + size, size);
        textbuf_append(&q, "\n\n");
    }
    const int* test_in = grids + (size_t)(n_pairs - 1) * 2 * size;
    const int* test_out = test_in + size;
    textbuf_append(&q,
                   "Below is a test input grid. Predict the corresponding output grid by applying the rule you "
                   "found. Describe how you derived the rule and your overall reasoning process in detail before "
                   "you submit your answer. Your final answer should be just the test output grid itself.\n\n"
                   "Input:\n");
    arc_grid_text(&q, test_in, size);

    TextBuf answer = {0};
    arc_grid_text(&answer, test_out, size);

    cJSON* meta = cJSON_CreateObject();
    cJSON_AddStringToObject(meta, "source_dataset", "arc_1d");
    cJSON_AddNumberToObject(meta, "source_index", (double)index);
    cJSON_AddStringToObject(meta, "task_name", task->name);
    cJSON_AddNumberToObject(meta, "size", size);
    cJSON* train = cJSON_AddArrayToObject(meta, "train_examples");
    for (int p = 0; p < n_pairs - 1; p++) {
        const int* in = grids + (size_t)p * 2 * size;
        cJSON_AddItemToArray(train, arc_example_json(in, in + size, size));
    }
    cJSON_AddItemToObject(meta, "test_example", arc_example_json(test_in, test_out, size));
    cJSON* diff = cJSON_AddObjectToObject(meta, "difficulty");
    cJSON* range = cJSON_AddArrayToObject(diff, "size");
    cJSON_AddItemToArray(range, cJSON_CreateNumber((double)min_size));
    cJSON_AddItemToArray(range, cJSON_CreateNumber((double)max_size));

    out->question = textbuf_take(&q);
    out->answer = textbuf_take(&answer);
    out->metadata = meta;
    free(grids);
    return 0;
}

/* paper: rl-swarm's settings (the package defaults). The package requires grids of at
 * least 8 cells; small and tiny shorten the grids and the prompt (fewer examples). */
const TaskSpec task_arc_1d = {
    .name = "arc_1d",
    .generate = arc_generate,
    .score = task_default_score_answer,
    .preset_paper = "{\"min_size\": 10, \"max_size\": 30, \"num_train\": 3}",
    .preset_small = "{\"min_size\": 8, \"max_size\": 14, \"num_train\": 2}",
    .preset_tiny = "{\"min_size\": 8, \"max_size\": 10, \"num_train\": 2}",
};
