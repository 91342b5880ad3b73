/* Robustness of the arc_1d, bf and propositional_logic ports under ASan+UBSan: verifiers
 * fed random bytes (invalid UTF-8 included), operator soup, deep nesting and malformed
 * entries must neither crash nor read out of bounds, and must return a score the package
 * could return; generators given random (valid and invalid) configs must return an item or
 * a clean error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tasks/infra/task.h"

extern const TaskSpec task_arc_1d, task_bf, task_propositional_logic;

static uint64_t rng_state = 88172645463325252ull;
static uint32_t next_u32(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}

static int failures = 0;

static void expect_score(const TaskSpec* t, const char* answer, const cJSON* entry) {
    double s = t->score(answer, answer ? strlen(answer) : 0, entry);
    int ok = s >= 0.0 && s <= 1.0;
    if (t == &task_propositional_logic) ok = s == 0.0 || s == 0.05 || s == 0.25 || s == 1.0;
    if (!ok) {
        fprintf(stderr, "FAIL %s: score %g for answer '%.60s'\n", t->name, s, answer ? answer : "(null)");
        failures++;
    }
}

static char* random_text(size_t max_len, const char* const* pieces, int n_pieces) {
    size_t n = next_u32() % (max_len + 1);
    char* s = malloc(n * 4 + 1);
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        if (pieces && next_u32() % 4) {
            const char* p = pieces[next_u32() % (uint32_t)n_pieces];
            size_t k = strlen(p);
            memcpy(s + len, p, k);
            len += k;
            i += k ? k - 1 : 0;
            if (len > n * 4 - 4) break;
        } else {
            s[len++] = (char)(1 + next_u32() % 255); /* any byte but NUL */
        }
    }
    s[len] = 0;
    return s;
}

static cJSON* entry_of(const TaskSpec* t, const char* config, int64_t index) {
    TaskItem item;
    char err[256];
    cJSON* cfg = cJSON_Parse(config);
    if (t->generate(cfg, 99, index, &item, err, sizeof err)) {
        fprintf(stderr, "FAIL %s: generate: %s\n", t->name, err);
        failures++;
        cJSON_Delete(cfg);
        return cJSON_CreateObject();
    }
    cJSON_Delete(cfg);
    cJSON* e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "question", item.question);
    if (item.answer) cJSON_AddStringToObject(e, "answer", item.answer);
    else cJSON_AddNullToObject(e, "answer");
    cJSON_AddItemToObject(e, "metadata", item.metadata);
    item.metadata = NULL;
    task_item_free(&item);
    return e;
}

static char* repeat(const char* piece, size_t times, const char* middle, const char* close) {
    size_t a = strlen(piece), m = strlen(middle), c = strlen(close);
    char* s = malloc(times * (a + c) + m + 1);
    size_t len = 0;
    for (size_t i = 0; i < times; i++, len += a) memcpy(s + len, piece, a);
    memcpy(s + len, middle, m);
    len += m;
    for (size_t i = 0; i < times; i++, len += c) memcpy(s + len, close, c);
    s[len] = 0;
    return s;
}

int main(void) {
    static const char* const logic_pieces[] = {"P", "Q", "R", "S", "x", "(", ")", "\xc2\xac", "\xe2\x88\xa7",
                                               "\xe2\x88\xa8", "\xe2\x86\x92", "\xe2\x86\x94", " ", "\xe3\x80\x80",
                                               "\xe2\x88", "\xff", "\xc2"};
    const TaskSpec* tasks[3] = {&task_arc_1d, &task_bf, &task_propositional_logic};
    long scored = 0;
    for (int ti = 0; ti < 3; ti++) {
        const TaskSpec* t = tasks[ti];
        for (int k = 0; k < 6; k++) {
            cJSON* e = entry_of(t, t->preset_paper, k);
            const cJSON* ans = cJSON_GetObjectItemCaseSensitive(e, "answer");
            expect_score(t, NULL, e);
            expect_score(t, "", e);
            if (cJSON_IsString(ans)) expect_score(t, ans->valuestring, e);
            for (int r = 0; r < 400; r++) {
                char* a = random_text(60, ti == 2 ? logic_pieces : NULL, 17);
                expect_score(t, a, e);
                free(a);
                scored++;
            }
            cJSON_Delete(e);
        }
    }
    /* deep and huge inputs for the recursive formula parser */
    cJSON* e = entry_of(&task_propositional_logic, "{}", 0);
    char* deep[] = {repeat("(", 50000, "P", ")"), repeat("\xc2\xac", 50000, "P", ""), repeat("P \xe2\x88\xa7 ", 20000, "P", ""),
                    repeat("(\xc2\xac", 30000, "P", ")"), repeat("(", 995, "P", ")"), repeat("(", 100000, "", "")};
    for (size_t i = 0; i < sizeof deep / sizeof deep[0]; i++) {
        expect_score(&task_propositional_logic, deep[i], e);
        free(deep[i]);
    }
    /* malformed entries: missing or mistyped metadata */
    const char* bad_entries[] = {"{}", "{\"metadata\": 5}", "{\"metadata\": {\"variables\": 3}}",
                                 "{\"metadata\": {\"variables\": [\"P\"], \"premises\": [1, \"P\"]}}",
                                 "{\"metadata\": {\"variables\": [\"P\"], \"premises\": [\"\"]}}", "{\"answer\": 7}"};
    for (size_t i = 0; i < sizeof bad_entries / sizeof bad_entries[0]; i++) {
        cJSON* b = cJSON_Parse(bad_entries[i]);
        for (int ti = 0; ti < 3; ti++) expect_score(tasks[ti], "P", b);
        cJSON_Delete(b);
    }
    cJSON_Delete(e);
    /* configs: defaults, presets, random values (invalid ones must fail cleanly) */
    const char* configs[] = {"{}", "{\"min_size\": 7}", "{\"difficulty\": 4}", "{\"max_vars\": 0}", "{\"bogus\": 1}",
                             "[1]", "{\"min_size\": 8.5}", "{\"num_train\": -1}", "{\"max_size\": 9, \"min_size\": 9}"};
    int generated = 0;
    for (int ti = 0; ti < 3; ti++) {
        for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++) {
            cJSON* cfg = cJSON_Parse(configs[c]);
            for (int64_t i = 0; i < 20; i++) {
                TaskItem item;
                char err[256] = "";
                if (!tasks[ti]->generate(cfg, (int64_t)next_u32(), i, &item, err, sizeof err)) {
                    task_item_free(&item);
                    generated++;
                } else if (!err[0]) {
                    fprintf(stderr, "FAIL %s: generate failed without a message\n", tasks[ti]->name);
                    failures++;
                }
            }
            cJSON_Delete(cfg);
        }
    }
    printf("scored %ld random answers, generated %d items under random configs, failures %d\n", scored, generated,
           failures);
    return failures ? 1 : 0;
}
