/* Reading a task's config object (reasoning_gym's own key names; a missing key takes the
 * package's default, as the Python dataclass does). Every error names the task and key and
 * says what was expected. */
#ifndef SAPO_TASKS_TASKCFG_H
#define SAPO_TASKS_TASKCFG_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

/* cfg may be NULL (all defaults); otherwise it must be an object whose keys are all in the
 * NULL-terminated `keys` (the dataclass rejects unknown keyword arguments). "size" is also
 * accepted and ignored: it does not change any item. "seed" is rejected: the seed is the
 * generator's argument. Returns 0 or -1 with err set. */
int taskcfg_check_keys(const cJSON* cfg, const char* task, const char* const* keys, char* err, size_t errlen);

/* An integer key: a JSON number with an integral value of magnitude <= 2^53 (beyond that a
 * double no longer holds every integer). */
int taskcfg_int(const cJSON* cfg, const char* task, const char* key, int64_t def, int64_t* out, char* err,
                size_t errlen);
/* A float key: any finite JSON number. */
int taskcfg_double(const cJSON* cfg, const char* task, const char* key, double def, double* out, char* err,
                   size_t errlen);
/* The item under key, or NULL when cfg is NULL or the key is absent. */
const cJSON* taskcfg_item(const cJSON* cfg, const char* key);

#endif
