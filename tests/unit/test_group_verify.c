/* Received groups are trusted for nothing: an honest group passes and is re-scored by the
 * receiver's verifier; a lying answer, a made-up config, an unknown task or a bad size is
 * rejected with its own verdict; so is a group whose question and answer are right but whose
 * metadata (what verifiers may read) was changed, extended, dropped or is not JSON. */
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "swarm/group_verify.h"
#include "swarm/taskset.h"
#include "tasks/infra/registry.h"
#include "../test_assert.h"

int main(void) {
    TaskSet ts;
    char err[512];
    EXPECT(taskset_build(&ts, "fraction_simplification", TASK_PRESET_TINY, err, sizeof err) == 0, "taskset: %s", err);
    RngStream rng = rng_stream(3, 0, 0, RNG_QUESTIONS);
    Question q;
    EXPECT(question_draw(&ts, &rng, &q, err, sizeof err) == 0, "question: %s", err);
    const char* answer = cJSON_GetObjectItem(q.entry, "answer")->valuestring;
    char right[128], wrong[] = "<answer>99/100</answer>";
    snprintf(right, sizeof right, "<answer>%s</answer>", answer);
    char* completions[3] = {right, wrong, "no tags at all"};
    char* meta = cJSON_PrintUnformatted(cJSON_GetObjectItem(q.entry, "metadata"));
    RolloutGroup g = {.task_id = q.slot->task_id, .seed = q.seed, .index = q.index, .config_json = q.slot->config_json,
                      .question = cJSON_GetObjectItem(q.entry, "question")->valuestring, .answer = (char*)answer,
                      .metadata_json = meta, .n_completions = 3, .completions = completions};
    float rewards[8];
    char why[256] = "";
    EXPECT(group_verify(&g, 8, rewards, why, sizeof why) == GROUP_OK, "honest group rejected: %s", why);
    EXPECT(rewards[0] == 1.0f && rewards[1] < 1.0f && rewards[2] == 0.0f, "receiver's rewards %g %g %g", rewards[0],
           rewards[1], rewards[2]);

    RolloutGroup lie = g;
    lie.answer = "1/2";
    EXPECT(group_verify(&lie, 8, rewards, why, sizeof why) == GROUP_MISMATCH, "a lying answer passed");
    EXPECT_MSG(why, "differ from the regenerated item");
    RolloutGroup other_question = g;
    other_question.question = "What is 1 + 1?";
    EXPECT(group_verify(&other_question, 8, rewards, why, sizeof why) == GROUP_MISMATCH, "a swapped question passed");
    /* the metadata alone differs: one value changed, one key added, none at all, not JSON */
    cJSON* forged_meta = cJSON_Duplicate(cJSON_GetObjectItem(q.entry, "metadata"), 1);
    cJSON* factor = cJSON_GetObjectItem(forged_meta, "reduction_factor");
    EXPECT(cJSON_IsNumber(factor), "fraction_simplification metadata has no reduction_factor");
    if (cJSON_IsNumber(factor)) cJSON_SetNumberValue(factor, factor->valuedouble + 1);
    char* changed = cJSON_PrintUnformatted(forged_meta);
    cJSON_AddBoolToObject(forged_meta, "forged", 1);
    char* extended = cJSON_PrintUnformatted(forged_meta);
    cJSON_Delete(forged_meta);
    char* const metas[] = {changed, extended, NULL, "{\"source_dataset\": "};
    const char* what[] = {"a changed metadata value", "an extra metadata key", "no metadata", "metadata that is not JSON"};
    for (int m = 0; m < 4; m++) {
        RolloutGroup forged = g;
        forged.metadata_json = metas[m];
        EXPECT(group_verify(&forged, 8, rewards, why, sizeof why) == GROUP_MISMATCH, "a group with %s passed", what[m]);
        EXPECT_MSG(why, "metadata differ");
    }
    free(changed);
    free(extended);
    why[0] = 0;
    EXPECT(group_verify(&g, 8, rewards, why, sizeof why) == GROUP_OK, "the untouched group is now rejected: %s", why);
    RolloutGroup made_up = g;
    made_up.config_json = "{\"min_value\": 1, \"max_value\": 1000000000, \"min_factor\": 2, \"max_factor\": 4, \"styles\": [\"plain\"]}";
    EXPECT(group_verify(&made_up, 8, rewards, why, sizeof why) == GROUP_BAD_CONFIG, "a made-up config passed");
    EXPECT_MSG(why, "not one of the presets");
    RolloutGroup garbage_config = g;
    garbage_config.config_json = "not json";
    EXPECT(group_verify(&garbage_config, 8, rewards, why, sizeof why) == GROUP_BAD_CONFIG, "a non-JSON config passed");
    RolloutGroup unknown = g;
    unknown.task_id = 77;
    EXPECT(group_verify(&unknown, 8, rewards, why, sizeof why) == GROUP_UNKNOWN_TASK, "an unknown task passed");
    RolloutGroup empty = g;
    empty.n_completions = 0;
    EXPECT(group_verify(&empty, 8, rewards, why, sizeof why) == GROUP_BAD_SIZE, "an empty group passed");
    EXPECT(group_verify(&g, 2, rewards, why, sizeof why) == GROUP_BAD_SIZE, "a group over the limit passed");

    free(meta);
    question_free(&q);
    taskset_free(&ts);
    return test_finish("group verify");
}
