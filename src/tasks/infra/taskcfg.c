/* Task config reading (see taskcfg.h). */
#include "tasks/infra/taskcfg.h"

#include <math.h>
#include <string.h>

#include "core/check.h"

int taskcfg_check_keys(const cJSON* cfg, const char* task, const char* const* keys, char* err, size_t errlen) {
    if (!cfg) return 0;
    if (!cJSON_IsObject(cfg)) return set_error(err, errlen, "%s: config must be a JSON object", task);
    for (const cJSON* kv = cfg->child; kv; kv = kv->next) {
        const char* k = kv->string ? kv->string : "";
        if (!strcmp(k, "size")) continue;
        if (!strcmp(k, "seed"))
            return set_error(err, errlen, "%s: config key 'seed' is not allowed (the seed is given to the generator)",
                             task);
        int known = 0;
        for (const char* const* p = keys; *p && !known; p++) known = !strcmp(*p, k);
        if (!known) return set_error(err, errlen, "%s: unknown config key '%s'", task, k);
    }
    return 0;
}

const cJSON* taskcfg_item(const cJSON* cfg, const char* key) {
    return cfg ? cJSON_GetObjectItemCaseSensitive(cfg, key) : NULL;
}

int taskcfg_int(const cJSON* cfg, const char* task, const char* key, int64_t def, int64_t* out, char* err,
                size_t errlen) {
    const cJSON* v = taskcfg_item(cfg, key);
    if (!v) {
        *out = def;
        return 0;
    }
    const double limit = 9007199254740992.0; /* 2^53 */
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble != floor(v->valuedouble) ||
        fabs(v->valuedouble) > limit)
        return set_error(err, errlen, "%s: config key '%s' must be an integer of magnitude <= 2^53", task, key);
    *out = (int64_t)v->valuedouble;
    return 0;
}

int taskcfg_double(const cJSON* cfg, const char* task, const char* key, double def, double* out, char* err,
                   size_t errlen) {
    const cJSON* v = taskcfg_item(cfg, key);
    if (!v) {
        *out = def;
        return 0;
    }
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return set_error(err, errlen, "%s: config key '%s' must be a finite number", task, key);
    *out = v->valuedouble;
    return 0;
}
