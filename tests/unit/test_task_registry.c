/* The task registry: the nine swarm ids in their fixed order, lookups of unknown names, and
 * for every ported task: a spec under its own id, three presets that parse as JSON objects,
 * deterministic generation (the swarm regenerates a received question from (seed, index,
 * config) and compares), and reward == score of the extracted answer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tasks/infra/answer.h"
#include "tasks/infra/registry.h"
#include "tasks/infra/task_common.h"

static int fails = 0;
#define CHECK(cond, ...)                                              \
    do {                                                              \
        if (!(cond)) {                                                \
            fails++;                                                  \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);      \
            fprintf(stderr, __VA_ARGS__);                             \
            fprintf(stderr, "\n");                                    \
        }                                                             \
    } while (0)

int main(void) {
    static const char* const ORDER[TASK_N_IDS] = {
        "base_conversion", "basic_arithmetic", "arc_1d", "bf", "propositional_logic",
        "fraction_simplification", "decimal_arithmetic", "calendar_arithmetic", "binary_matrix"};
    for (int i = 0; i < TASK_N_IDS; i++) {
        CHECK(task_id(ORDER[i]) == i, "task_id(%s) = %d, expected %d", ORDER[i], task_id(ORDER[i]), i);
        CHECK(task_id_name(i) && !strcmp(task_id_name(i), ORDER[i]), "task_id_name(%d)", i);
        const TaskSpec* s = task_by_id(i);
        CHECK(!s || !strcmp(s->name, ORDER[i]), "slot %d holds %s", i, s ? s->name : "");
        CHECK(task_find(ORDER[i]) == s, "task_find(%s) != task_by_id(%d)", ORDER[i], i);
    }
    CHECK(task_id("nope") == -1 && task_id(NULL) == -1 && task_id("") == -1, "unknown names must give -1");
    CHECK(task_find("nope") == NULL && task_find("BF") == NULL, "unknown names must give NULL");
    CHECK(task_by_id(-1) == NULL && task_by_id(TASK_N_IDS) == NULL && task_id_name(TASK_N_IDS) == NULL, "range");
    CHECK(task_at(-1) == NULL && task_at(task_count()) == NULL, "task_at range");
    CHECK(task_preset_count() == 3 && task_preset_known("paper") && task_preset_known("small") &&
              task_preset_known("tiny") && !task_preset_known("large") && !task_preset_known(NULL),
          "presets");

    int prev_id = -1;
    char err[512];
    for (int t = 0; t < task_count(); t++) {
        const TaskSpec* spec = task_at(t);
        int id = task_id(spec->name);
        CHECK(id > prev_id, "task_at order: %s (id %d) after id %d", spec->name, id, prev_id);
        prev_id = id;
        CHECK(spec->generate && spec->score, "%s: generate/score missing", spec->name);
        CHECK(task_preset_config(spec, "huge") == NULL, "%s: unknown preset must give NULL", spec->name);
        cJSON* over = cJSON_Parse("{\"zz_extra_key\": 1}");
        cJSON* merged = task_config_build(spec, "paper", over, err, sizeof err);
        CHECK(merged && cJSON_GetObjectItemCaseSensitive(merged, "zz_extra_key"), "%s: overrides not laid over", spec->name);
        cJSON_Delete(merged);
        cJSON_Delete(over);
        for (int p = 0; p < task_preset_count(); p++) {
            const char* pname = task_preset_name(p);
            cJSON* cfg = task_config_build(spec, pname, NULL, err, sizeof err);
            CHECK(cfg != NULL, "%s %s: %s", spec->name, pname, err);
            if (!cfg) continue;
            int distinct = 0;
            for (int i = 0; i < 20; i++) {
                cJSON* a = task_generate_entry(spec, cfg, 77, i, err, sizeof err);
                cJSON* b = task_generate_entry(spec, cfg, 77, i, err, sizeof err);
                cJSON* c = task_generate_entry(spec, cfg, 78, i, err, sizeof err);
                CHECK(a && b && c, "%s %s item %d: %s", spec->name, pname, i, err);
                if (!a || !b || !c) {
                    cJSON_Delete(a), cJSON_Delete(b), cJSON_Delete(c);
                    break;
                }
                CHECK(cJSON_Compare(a, b, 1), "%s %s item %d: generation is not deterministic", spec->name, pname, i);
                distinct += !cJSON_Compare(a, c, 1);
                CHECK(task_entry_question(a, NULL) && task_entry_metadata(a), "%s: entry lacks question/metadata", spec->name);
                const char* oracle = task_entry_answer(a, NULL);
                if (oracle) {
                    size_t n = strlen(oracle);
                    char* comp = malloc(n + 64);
                    snprintf(comp, n + 64, "<think>x</think>\n<answer> %s\n</answer>", oracle);
                    double r = task_reward(spec, comp, a), s = spec->score(oracle, n, a);
                    CHECK(r == s, "%s: reward %.17g != score %.17g of the extracted oracle", spec->name, r, s);
                    free(comp);
                }
                CHECK(task_reward(spec, "no tags here", a) == 0.0, "%s: no answer must give reward 0", spec->name);
                cJSON_Delete(a), cJSON_Delete(b), cJSON_Delete(c);
            }
            /* Seeds 77 and 78 share 19 of 20 Random(seed + i) streams shifted by one index;
             * item i of seed 78 is item i+1 of seed 77, so equal pairs are possible but rare. */
            CHECK(distinct >= 1, "%s %s: seed 77 and 78 give identical items", spec->name, pname);
            cJSON_Delete(cfg);
        }
    }
    printf("registry: %d of %d tasks ported, %d failures\n", task_count(), TASK_N_IDS, fails);
    return fails ? 1 : 0;
}
