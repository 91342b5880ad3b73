/* Verification of received groups (see group_verify.h). */
#include "swarm/group_verify.h"

#include <cjson/cJSON.h>
#include <string.h>

#include "core/check.h"
#include "tasks/infra/answer.h"
#include "tasks/infra/registry.h"

static int same_text(const char* a, const char* b) {
    if (!a || !b) return a == b;
    return !strcmp(a, b);
}

GroupVerdict group_verify(const RolloutGroup* g, int max_completions, float* rewards, char* why, size_t whylen) {
    if (g->n_completions < 1 || g->n_completions > max_completions) {
        set_error(why, whylen, "group of %d completions (expected 1..%d)", g->n_completions, max_completions);
        return GROUP_BAD_SIZE;
    }
    const TaskSpec* spec = task_by_id(g->task_id);
    if (!spec) {
        set_error(why, whylen, "task id %d is not ported here", g->task_id);
        return GROUP_UNKNOWN_TASK;
    }
    cJSON* config = cJSON_Parse(g->config_json ? g->config_json : "");
    if (!cJSON_IsObject(config)) {
        cJSON_Delete(config);
        set_error(why, whylen, "%s: generator config is not a JSON object", spec->name);
        return GROUP_BAD_CONFIG;
    }
    /* Only the known presets: a config a peer made up could ask the generator for an
     * arbitrarily large item (a huge matrix, say) and stall the receiver. */
    char err[256];
    int known = 0;
    for (int p = 0; p < task_preset_count() && !known; p++) {
        cJSON* preset = task_config_build(spec, task_preset_name(p), NULL, err, sizeof err);
        known = preset && cJSON_Compare(preset, config, 1);
        cJSON_Delete(preset);
    }
    if (!known) {
        cJSON_Delete(config);
        set_error(why, whylen, "%s: generator config is not one of the presets", spec->name);
        return GROUP_BAD_CONFIG;
    }
    cJSON* entry = task_generate_entry(spec, config, g->seed, g->index, err, sizeof err);
    cJSON_Delete(config);
    if (!entry) {
        set_error(why, whylen, "%s: the generator refuses the config: %s", spec->name, err);
        return GROUP_BAD_CONFIG;
    }
    const cJSON* q = cJSON_GetObjectItem(entry, "question");
    const cJSON* a = cJSON_GetObjectItem(entry, "answer");
    cJSON* meta = cJSON_Parse(g->metadata_json ? g->metadata_json : "");
    int same = cJSON_IsString(q) && same_text(q->valuestring, g->question) &&
               same_text(cJSON_IsString(a) ? a->valuestring : NULL, g->answer) && meta &&
               cJSON_Compare(meta, cJSON_GetObjectItem(entry, "metadata"), 1);
    cJSON_Delete(meta);
    if (!same) {
        cJSON_Delete(entry);
        set_error(why, whylen, "%s seed %lld: question, answer or metadata differ from the regenerated item",
                  spec->name, (long long)g->seed);
        return GROUP_MISMATCH;
    }
    for (int i = 0; i < g->n_completions; i++) rewards[i] = (float)task_reward(spec, g->completions[i], entry);
    cJSON_Delete(entry);
    return GROUP_OK;
}
