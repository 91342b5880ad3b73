/* Reading a task's config object (JSON with reasoning_gym's own key names): integer keys
 * with the package's defaults, and a check that no unknown key was given (the package's
 * config dataclasses reject unknown keyword arguments too). */
#ifndef SAPO_TASKS_CONFIG_JSON_H
#define SAPO_TASKS_CONFIG_JSON_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

/* config[key] as an integer into *out, or `def` when the key is absent or null. config may
 * be NULL (all defaults). Returns 0, or -1 with "config key 'K': ..." in err when the value
 * is not an integer. */
int config_json_int(const cJSON* config, const char* task, const char* key, int64_t def, int64_t* out,
                    char* err, size_t errlen);

/* Fails (-1, message in err) when config has a key not in the NULL-terminated list
 * `allowed`, or is not an object. "seed" and "size" are always allowed (every dataclass
 * has them; the generator takes seed and index separately). */
int config_json_check_keys(const cJSON* config, const char* task, const char* const* allowed, char* err,
                           size_t errlen);

#endif
