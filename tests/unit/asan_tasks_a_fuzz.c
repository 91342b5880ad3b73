/* Robustness of the tasks-a ports under ASan+UBSan: every generator over its presets and
 * many seeds, then every verifier on random bytes (invalid UTF-8 included), mutated
 * oracles, deep nesting, long inputs, NULL answers and malformed entries. Passes when
 * nothing crashes or trips a sanitizer and every score is a finite number in [0, 1]. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tasks/infra/task.h"
#include "tasks/pyemu/pyrandom.h"

extern const TaskSpec task_base_conversion;
extern const TaskSpec task_fraction_simplification;
extern const TaskSpec task_calendar_arithmetic;
extern const TaskSpec task_binary_matrix;

static const TaskSpec* const SPECS[] = {&task_base_conversion, &task_fraction_simplification,
                                        &task_calendar_arithmetic, &task_binary_matrix};

static int failures = 0;

static void check_score(const TaskSpec* s, const char* answer, const cJSON* entry) {
    double v = s->score(answer, answer ? strlen(answer) : 0, entry);
    if (!isfinite(v) || v < 0.0 || v > 1.0) {
        if (failures++ < 10)
            fprintf(stderr, "%s: score %g out of [0,1] for answer \"%.60s\"\n", s->name, v, answer ? answer : "(null)");
    }
}

static const char ALPHABET[] = "[](){}0123456789 \n\t\r\f\v,'\"\\/$-+~_#xobXOBrRuUfFTrueFalsNn.eEjJ";

static void random_text(PyRandom* r, char* buf, size_t len, int bytes) {
    for (size_t i = 0; i < len; i++) {
        char c = bytes ? (char)(1 + pyrandom_below(r, 255)) : ALPHABET[pyrandom_below(r, sizeof ALPHABET - 1)];
        buf[i] = c;
    }
    buf[len] = '\0';
}

static cJSON* entry_of(const TaskItem* it) {
    cJSON* e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "question", it->question);
    cJSON_AddStringToObject(e, "answer", it->answer);
    cJSON_AddItemToObject(e, "metadata", cJSON_Duplicate(it->metadata, 1));
    return e;
}

int main(void) {
    PyRandom r;
    pyrandom_seed(&r, 7);
    char* buf = malloc(70000);
    const char* presets[3];
    for (size_t t = 0; t < sizeof SPECS / sizeof SPECS[0]; t++) {
        const TaskSpec* s = SPECS[t];
        presets[0] = s->preset_paper;
        presets[1] = s->preset_small;
        presets[2] = s->preset_tiny;
        for (int p = 0; p < 3; p++) {
            cJSON* cfg = cJSON_Parse(presets[p]);
            if (!cfg) {
                fprintf(stderr, "%s: preset %d is not JSON\n", s->name, p);
                return 1;
            }
            for (int seed = 0; seed < 40; seed++) {
                TaskItem it = {0};
                char err[256];
                if (s->generate(cfg, seed * 1000003LL - 5, seed, &it, err, sizeof err)) {
                    fprintf(stderr, "%s: generate failed: %s\n", s->name, err);
                    return 1;
                }
                cJSON* e = entry_of(&it);
                check_score(s, it.answer, e);
                check_score(s, NULL, e);
                check_score(s, "", e);
                for (int k = 0; k < 60; k++) {
                    size_t len = (size_t)pyrandom_below(&r, 40);
                    random_text(&r, buf, len, k % 3 == 0);
                    check_score(s, buf, e);
                    /* the oracle with a few bytes changed */
                    size_t olen = strlen(it.answer);
                    memcpy(buf, it.answer, olen + 1);
                    for (int m = 0; m < 3 && olen; m++) buf[pyrandom_below(&r, olen)] = ALPHABET[pyrandom_below(&r, sizeof ALPHABET - 1)];
                    check_score(s, buf, e);
                }
                /* deep nesting, long unary chains, truncated UTF-8, 60000-byte inputs */
                memset(buf, '[', 500); buf[500] = '\0';
                check_score(s, buf, e);
                memset(buf, '(', 250); memset(buf + 250, ')', 250); buf[500] = '\0';
                check_score(s, buf, e);
                memset(buf, '-', 5000); strcpy(buf + 5000, "0");
                check_score(s, buf, e);
                strcpy(buf, "\xE2\x82"); check_score(s, buf, e);
                strcpy(buf, "\xF0\x9F\x98"); check_score(s, buf, e);
                strcpy(buf, "'\xC3"); check_score(s, buf, e);
                memset(buf, '9', 60000); buf[60000] = '\0';
                check_score(s, buf, e);
                buf[0] = '\\'; buf[1] = 'f'; buf[2] = 'r'; buf[3] = 'a'; buf[4] = 'c'; buf[5] = '{';
                check_score(s, buf, e);
                /* malformed entries */
                cJSON* bad = cJSON_CreateObject();
                check_score(s, it.answer, bad);
                check_score(s, it.answer, NULL);
                cJSON_AddNullToObject(bad, "answer");
                cJSON_AddItemToObject(bad, "metadata", cJSON_CreateArray());
                check_score(s, it.answer, bad);
                cJSON_Delete(bad);
                cJSON* odd = cJSON_Duplicate(e, 1);
                cJSON* meta = cJSON_GetObjectItemCaseSensitive(odd, "metadata");
                for (cJSON* kv = meta ? meta->child : NULL; kv; kv = kv->next) {
                    if (cJSON_IsNumber(kv)) cJSON_SetNumberValue(kv, 1e300);
                }
                if (cJSON_GetObjectItemCaseSensitive(meta, "task"))
                    cJSON_ReplaceItemInObjectCaseSensitive(meta, "task", cJSON_CreateString("count_days"));
                check_score(s, "5", odd);
                cJSON_Delete(odd);
                cJSON_Delete(e);
                task_item_free(&it);
            }
            cJSON_Delete(cfg);
        }
    }
    free(buf);
    if (failures) {
        fprintf(stderr, "asan_tasks_a_fuzz: %d scores out of range\n", failures);
        return 1;
    }
    printf("asan_tasks_a_fuzz: ok\n");
    return 0;
}
