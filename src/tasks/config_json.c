/* Task config objects read from JSON (see config_json.h). */
#include "tasks/config_json.h"

#include <math.h>
#include <string.h>

#include "core/check.h"

int config_json_int(const cJSON* config, const char* task, const char* key, int64_t def, int64_t* out,
                    char* err, size_t errlen) {
    *out = def;
    if (!config) return 0;
    const cJSON* v = cJSON_GetObjectItemCaseSensitive(config, key);
    if (!v || cJSON_IsNull(v)) return 0;
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || fabs(v->valuedouble) > 9.0e15) {
        return set_error(err, errlen, "%s config key '%s': expected an integer", task, key);
    }
    *out = (int64_t)v->valuedouble;
    return 0;
}

int config_json_check_keys(const cJSON* config, const char* task, const char* const* allowed, char* err,
                           size_t errlen) {
    if (!config || cJSON_IsNull(config)) return 0;
    if (!cJSON_IsObject(config)) return set_error(err, errlen, "%s config: expected a JSON object", task);
    for (const cJSON* it = config->child; it; it = it->next) {
        if (!it->string) continue;
        int ok = !strcmp(it->string, "seed") || !strcmp(it->string, "size");
        for (const char* const* a = allowed; !ok && *a; a++) ok = !strcmp(it->string, *a);
        if (!ok) return set_error(err, errlen, "%s config: unknown key '%s'", task, it->string);
    }
    return 0;
}
