/* reasoning_gym 0.1.25 `base_conversion`: write a value given in one base in another.
 * Generator: value = randint(min_value, max_value), source base = randint(min_base,
 * max_base), target base redrawn until it differs. Bases 2 and 16 are written with
 * Python's format(value, "b"/"x"); other bases by the package's own digit loop, which
 * writes 0 as the EMPTY string (its `reversed(digits) or [0]` never takes the fallback,
 * a reversed() iterator being always true). Verifier: the package's default scorer. */
#include <stdio.h>
#include <string.h>

#include "core/check.h"
#include "tasks/infra/task.h"
#include "tasks/infra/task_common.h"
#include "tasks/infra/taskcfg.h"
#include "tasks/infra/textbuf.h"
#include "tasks/pyemu/pyrandom.h"

#define NAME "base_conversion"

typedef struct {
    int64_t min_base, max_base, min_value, max_value;
} BaseConvConfig;

static int baseconv_config(const cJSON* cfg, BaseConvConfig* c, char* err, size_t errlen) {
    static const char* const keys[] = {"min_base", "max_base", "min_value", "max_value", NULL};
    if (taskcfg_check_keys(cfg, NAME, keys, err, errlen)) return -1;
    if (taskcfg_int(cfg, NAME, "min_base", 2, &c->min_base, err, errlen) ||
        taskcfg_int(cfg, NAME, "max_base", 16, &c->max_base, err, errlen) ||
        taskcfg_int(cfg, NAME, "min_value", 0, &c->min_value, err, errlen) ||
        taskcfg_int(cfg, NAME, "max_value", 1000, &c->max_value, err, errlen))
        return -1;
    if (c->min_base < 2 || c->min_base > 36) return set_error(err, errlen, NAME ": min_base must be between 2 and 36");
    if (c->max_base < c->min_base || c->max_base > 36)
        return set_error(err, errlen, NAME ": max_base must be between min_base and 36");
    if (c->min_value < 0) return set_error(err, errlen, NAME ": min_value must be non-negative");
    if (c->max_value <= c->min_value) return set_error(err, errlen, NAME ": max_value must be > min_value");
    /* The package accepts min_base == max_base and then loops forever drawing a different
     * target base; refuse instead of hanging. */
    if (c->max_base == c->min_base)
        return set_error(err, errlen, NAME ": max_base must exceed min_base (the package loops forever otherwise)");
    return 0;
}

/* The value written in `base` as the package writes it (see the file comment). out holds
 * at least 65 bytes. */
static void baseconv_repr(int64_t value, int64_t base, char* out) {
    char tmp[72];
    int n = 0;
    uint64_t v = (uint64_t)value;
    if (base == 2 || base == 16) {
        do {
            unsigned d = (unsigned)(v % (uint64_t)base);
            tmp[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
            v /= (uint64_t)base;
        } while (v);
    } else {
        while (v) {
            unsigned d = (unsigned)(v % (uint64_t)base);
            tmp[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
            v /= (uint64_t)base;
        }
    }
    for (int i = 0; i < n; i++) out[i] = tmp[n - 1 - i];
    out[n] = '\0';
}

static void baseconv_name(int64_t base, char* out, size_t len) {
    if (base == 2) snprintf(out, len, "binary");
    else if (base == 16) snprintf(out, len, "hexadecimal");
    else snprintf(out, len, "base-%lld", (long long)base);
}

static cJSON* pair_array(int64_t a, int64_t b) {
    cJSON* arr = cJSON_CreateArray();
    cJSON_AddItemToArray(arr, cJSON_CreateNumber((double)a));
    cJSON_AddItemToArray(arr, cJSON_CreateNumber((double)b));
    return arr;
}

static int baseconv_generate(const cJSON* config, int64_t seed, int64_t index, TaskItem* out, char* err,
                             size_t errlen) {
    BaseConvConfig c;
    if (baseconv_config(config, &c, err, errlen)) return -1;
    PyRandom rng;
    pyrandom_seed(&rng, seed + index);
    int64_t value = pyrandom_randint(&rng, c.min_value, c.max_value);
    int64_t source = pyrandom_randint(&rng, c.min_base, c.max_base);
    int64_t target = pyrandom_randint(&rng, c.min_base, c.max_base);
    while (target == source) target = pyrandom_randint(&rng, c.min_base, c.max_base);

    char source_repr[72], target_repr[72], source_name[32], target_name[32];
    baseconv_repr(value, source, source_repr);
    baseconv_repr(value, target, target_repr);
    baseconv_name(source, source_name, sizeof source_name);
    baseconv_name(target, target_name, sizeof target_name);

    TextBuf q = {0};
    textbuf_printf(&q,
                   "Your task is to convert a number between two different bases.\n\n"
                   "If the target base is > 10, use lowercase letters a-z for digits above 9.\n\n"
                   "Now, convert the %s number %s to %s\n",
                   source_name, source_repr, target_name);
    out->question = textbuf_take(&q);
    out->answer = strdup(target_repr);
    if (!out->answer) sapo_die("out of memory");

    cJSON* m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "source_dataset", NAME);
    cJSON_AddNumberToObject(m, "source_index", (double)index);
    cJSON_AddNumberToObject(m, "decimal_value", (double)value);
    cJSON_AddNumberToObject(m, "source_base", (double)source);
    cJSON_AddNumberToObject(m, "target_base", (double)target);
    cJSON_AddStringToObject(m, "source_repr", source_repr);
    cJSON_AddStringToObject(m, "target_repr", target_repr);
    cJSON* diff = cJSON_AddObjectToObject(m, "difficulty");
    cJSON_AddItemToObject(diff, "base", pair_array(c.min_base, c.max_base));
    cJSON_AddItemToObject(diff, "value", pair_array(c.min_value, c.max_value));
    out->metadata = m;
    return 0;
}

const TaskSpec task_base_conversion = {
    .name = NAME,
    .generate = baseconv_generate,
    .score = task_default_score_answer,
    .preset_paper = "{\"min_base\": 2, \"max_base\": 16, \"min_value\": 0, \"max_value\": 1000}",
    /* min_value 1: the value 0 has the empty string as oracle in most bases, which no answer
     * can score (the default scorer gives "" 0). */
    .preset_small = "{\"min_base\": 2, \"max_base\": 10, \"min_value\": 1, \"max_value\": 100}",
    .preset_tiny = "{\"min_base\": 2, \"max_base\": 4, \"min_value\": 1, \"max_value\": 15}",
};
