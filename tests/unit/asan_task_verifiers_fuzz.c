/* Fuzz / mutation test, built with ASan + UBSan: every registered verifier, every generator's
 * config handling, the answer extractor and task_reward must never crash, read out of bounds
 * or hit undefined behaviour, whatever the bytes. Inputs: random bytes; real entries and their
 * answers truncated and mutated; entries whose metadata has values of the wrong type, missing
 * keys, or is not an object at all; completions full of tag fragments, with embedded NULs.
 * Every string is handed over in a buffer of exactly its size, so an over-read is caught.
 * Scores must also be finite and within [0, 1] (what the package's scorers return).
 * SAPO_FUZZ_SCALE (default 1) multiplies the iteration counts. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "tasks/infra/answer.h"
#include "tasks/infra/registry.h"
#include "tasks/infra/task_common.h"

static uint64_t rng_state = 0x5A9017u;

static uint64_t rnd(void) { /* splitmix64 */
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static size_t rnd_below(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

static long n_calls = 0, n_fail = 0;

/* Pieces that steer random text towards what parsers look for. */
static const char* const PIECES[] = {
    "<answer>", "</answer>", "<answer", "/answer>", " ", "\n", "\t", "0", "1", "9", "-", "+", ".", "/", "\\",
    "frac", "dfrac", "{", "}", "$", "[", "]", "(", ")", ",", "e", "E", "inf", "nan", "True", "False", "None",
    "Monday", "Sunday", "P", "Q", "R", "S", "∧", "∨", "¬", "→", "↔", "T", "F", "x", "0x", "0b", "1e999",
    "99999999999999999999999", "-0", "\xc2\xa0", "\xe3\x80\x80", "\xff", "\xc3", "\x80", "é", "😀", "1/0", "0/0",
    "[[", "]]", "], [", "'", "\"", "__import__('os')", "lambda", "*", "**", "%", "=", "?", "days", "Yes", "No",
};
#define N_PIECES (sizeof PIECES / sizeof PIECES[0])

/* Random text of up to max_len bytes (NUL-free), biased towards PIECES. */
static char* random_text(size_t max_len, size_t* out_len) {
    size_t cap = max_len + 8, n = 0;
    char* s = malloc(cap + 1);
    size_t target = rnd_below(max_len + 1);
    while (n < target) {
        if (rnd_below(3) == 0) {
            s[n++] = (char)(1 + rnd_below(255));
        } else {
            const char* p = PIECES[rnd_below(N_PIECES)];
            size_t k = strlen(p);
            if (n + k > cap) break;
            memcpy(s + n, p, k);
            n += k;
        }
    }
    s[n] = '\0';
    if (out_len) *out_len = n;
    return s;
}

/* s with a few random edits (flip, insert, delete, truncate, duplicate); NUL-free. */
static char* mutate(const char* src) {
    size_t n = strlen(src), cap = 2 * n + 64;
    char* s = malloc(cap + 1);
    memcpy(s, src, n + 1);
    int edits = 1 + (int)rnd_below(4);
    for (int e = 0; e < edits; e++) {
        switch (rnd_below(6)) {
        case 0: if (n) s[rnd_below(n)] = (char)(1 + rnd_below(255)); break;
        case 1: if (n + 1 <= cap) { size_t at = rnd_below(n + 1); memmove(s + at + 1, s + at, n - at + 1); s[at] = (char)(1 + rnd_below(255)); n++; } break;
        case 2: if (n) { size_t at = rnd_below(n); memmove(s + at, s + at + 1, n - at); n--; } break;
        case 3: n = rnd_below(n + 1); s[n] = '\0'; break;
        case 4: if (2 * n <= cap) { memcpy(s + n, s, n); n *= 2; s[n] = '\0'; } break;
        default: {
            const char* p = PIECES[rnd_below(N_PIECES)];
            size_t k = strlen(p), at = rnd_below(n + 1);
            if (n + k <= cap) { memmove(s + at + k, s + at, n - at + 1); memcpy(s + at, p, k); n += k; }
        }
        }
    }
    return s;
}

/* Calls the verifier on a copy of answer in a buffer of exactly its size, unterminated
 * (the verifier gets the length), and one time in four with a byte turned into U+0000. */
static void check_score(const TaskSpec* spec, const char* answer, const cJSON* entry, const char* what) {
    char* exact = NULL;
    size_t n = 0;
    if (answer) {
        n = strlen(answer);
        exact = malloc(n ? n : 1);
        memcpy(exact, answer, n);
        if (n && rnd_below(4) == 0) exact[rnd_below(n)] = '\0';
    }
    double r = spec->score(exact, n, entry);
    n_calls++;
    if (!isfinite(r) || r < 0.0 || r > 1.0) {
        if (n_fail++ < 10) fprintf(stderr, "FAIL %s %s: score %.17g outside [0, 1] for answer '%.80s'\n", spec->name, what, r, answer ? answer : "(None)");
    }
    free(exact);
}

static cJSON* random_json(int depth) {
    switch (rnd_below(depth > 0 ? 16 : 12)) {
    case 0: return cJSON_CreateNull();
    case 1: return cJSON_CreateBool(rnd_below(2));
    case 2: return cJSON_CreateNumber(0);
    case 3: return cJSON_CreateNumber(-1);
    case 4: return cJSON_CreateNumber((double)rnd_below(100));
    case 5: return cJSON_CreateNumber(2.5);
    case 6: return cJSON_CreateNumber(rnd_below(2) ? 1e300 : -1e300);
    case 7: return cJSON_CreateNumber(9007199254740993.0);
    case 8: return cJSON_CreateString("");
    case 9: { char* t = random_text(40, NULL); cJSON* v = cJSON_CreateString(t); free(t); return v; }
    case 10: return cJSON_CreateArray();
    case 11: return cJSON_CreateObject();
    case 12: case 13: {
        cJSON* a = cJSON_CreateArray();
        for (size_t i = 0, k = rnd_below(6); i < k; i++) cJSON_AddItemToArray(a, random_json(depth - 1));
        return a;
    }
    default: {
        cJSON* o = cJSON_CreateObject();
        static const char* const KEYS[] = {"task", "answer", "n", "premises", "variables", "style", "x"};
        for (size_t i = 0, k = rnd_below(4); i < k; i++) cJSON_AddItemToObject(o, KEYS[rnd_below(7)], random_json(depth - 1));
        return o;
    }
    }
}

typedef struct {
    cJSON* parent;
    cJSON* child;
} Edge;

static void collect(cJSON* node, Edge* out, size_t* n, size_t cap) {
    for (cJSON* c = node->child; c && *n < cap; c = c->next) {
        out[(*n)++] = (Edge){node, c};
        if (cJSON_IsArray(c) || cJSON_IsObject(c)) collect(c, out, n, cap);
    }
}

/* Deletes or replaces one random node somewhere under root (never root itself). */
static void mutate_tree(cJSON* root) {
    Edge edges[4096];
    size_t n = 0;
    collect(root, edges, &n, 4096);
    if (!n) return;
    Edge e = edges[rnd_below(n)];
    if (rnd_below(3) == 0) {
        cJSON_Delete(cJSON_DetachItemViaPointer(e.parent, e.child));
    } else {
        cJSON* v = random_json(2);
        if (e.child->string) {
            v->string = strdup(e.child->string);
            v->type &= ~cJSON_StringIsConst;
        }
        cJSON_ReplaceItemViaPointer(e.parent, e.child, v);
    }
}

static void set_key(cJSON* obj, const char* key, cJSON* v) {
    if (cJSON_GetObjectItemCaseSensitive(obj, key)) cJSON_ReplaceItemInObjectCaseSensitive(obj, key, v);
    else cJSON_AddItemToObject(obj, key, v);
}

/* A damaged copy of a real entry. */
static cJSON* damaged_entry(const cJSON* entry) {
    cJSON* e = cJSON_Duplicate(entry, 1);
    int k = 1 + (int)rnd_below(3);
    for (int i = 0; i < k; i++) {
        switch (rnd_below(8)) {
        case 0: cJSON_DeleteItemFromObjectCaseSensitive(e, "metadata"); break;
        case 1: set_key(e, "metadata", random_json(2)); break;
        case 2: cJSON_DeleteItemFromObjectCaseSensitive(e, "answer"); break;
        case 3: set_key(e, "answer", random_json(1)); break;
        case 4: cJSON_DeleteItemFromObjectCaseSensitive(e, "question"); break;
        default: {
            cJSON* md = cJSON_GetObjectItemCaseSensitive(e, "metadata");
            if (cJSON_IsObject(md) || cJSON_IsArray(md)) mutate_tree(md);
        }
        }
    }
    return e;
}

/* The answer a plausible policy would give: the oracle, the package's example answer, or a
 * stored field, so mutations start near what the verifier parses deeply. */
static const char* seed_answer(const cJSON* entry) {
    const char* a = task_entry_answer(entry, NULL);
    if (a) return a;
    const cJSON* md = task_entry_metadata(entry);
    const cJSON* ex = md ? cJSON_GetObjectItemCaseSensitive(md, "example_answer") : NULL;
    return cJSON_IsString(ex) ? ex->valuestring : "";
}

static void fuzz_extractor(long iters) {
    for (long it = 0; it < iters; it++) {
        size_t n;
        char* t = random_text(200, &n);
        /* Embedded NULs: replace a few bytes, then hand over exactly n bytes, unterminated. */
        if (n && rnd_below(4) == 0) t[rnd_below(n)] = '\0';
        char* exact = malloc(n ? n : 1);
        memcpy(exact, t, n);
        size_t out_len = 0;
        char* a = answer_extract_n(exact, n, &out_len);
        /* With embedded NULs an answer may hold NUL bytes; it must fit and be terminated. */
        if (a && (out_len > n || a[out_len] != '\0') && n_fail++ < 10)
            fprintf(stderr, "FAIL extractor: answer of %zu bytes from a completion of %zu\n", out_len, n);
        free(a);
        free(exact);
        if (!memchr(t, '\0', n)) {
            char* b = answer_extract(t);
            free(b);
        }
        free(t);
        n_calls++;
    }
}

static void fuzz_generator_config(const TaskSpec* spec, const cJSON* paper, long iters) {
    char err[256];
    for (long it = 0; it < iters; it++) {
        cJSON* cfg = cJSON_Duplicate(paper, 1);
        int k = 1 + (int)rnd_below(2);
        for (int i = 0; i < k; i++) {
            size_t n = (size_t)cJSON_GetArraySize(cfg);
            if (!n) break;
            cJSON* victim = cJSON_GetArrayItem(cfg, (int)rnd_below(n));
            cJSON* v;
            /* Small values only: a huge size is a resource question, not a memory-safety one. */
            switch (rnd_below(9)) {
            case 0: v = cJSON_CreateNumber(-1); break;
            case 1: v = cJSON_CreateNumber(0); break;
            case 2: v = cJSON_CreateNumber(1); break;
            case 3: v = cJSON_CreateNumber(2.5); break;
            case 4: v = cJSON_CreateString("x"); break;
            case 5: v = cJSON_CreateNull(); break;
            case 6: v = cJSON_CreateArray(); break;
            case 7: v = cJSON_CreateBool(1); break;
            default: {
                v = cJSON_CreateArray();
                cJSON_AddItemToArray(v, cJSON_CreateString(rnd_below(2) ? "+" : "bogus"));
                cJSON_AddItemToArray(v, cJSON_CreateNumber(3));
            }
            }
            cJSON_ReplaceItemInObjectCaseSensitive(cfg, victim->string, v);
        }
        TaskItem item = {0};
        int64_t seed = (int64_t)rnd_below(1000) - 500;
        if (spec->generate(cfg, seed, (int64_t)rnd_below(50), &item, err, sizeof err) == 0) {
            cJSON* entry = cJSON_CreateObject();
            cJSON_AddItemToObject(entry, "answer", item.answer ? cJSON_CreateString(item.answer) : cJSON_CreateNull());
            cJSON_AddItemToObject(entry, "metadata", item.metadata ? item.metadata : cJSON_CreateObject());
            item.metadata = NULL;
            check_score(spec, item.answer, entry, "odd-config entry");
            cJSON_Delete(entry);
        }
        task_item_free(&item);
        cJSON_Delete(cfg);
        n_calls++;
    }
}

int main(void) {
    const char* scale_env = getenv("SAPO_FUZZ_SCALE");
    double scale = scale_env ? atof(scale_env) : 1.0;
    if (!(scale > 0)) scale = 1.0;
    clock_t t0 = clock();

    fuzz_extractor((long)(60000 * scale));
    printf("extractor: %ld calls\n", n_calls);

    char err[256];
    for (int t = 0; t < task_count(); t++) {
        const TaskSpec* spec = task_at(t);
        long calls0 = n_calls;
        for (int p = 0; p < task_preset_count(); p++) {
            cJSON* cfg = task_config_build(spec, task_preset_name(p), NULL, err, sizeof err);
            if (!cfg) {
                fprintf(stderr, "FAIL %s: %s\n", spec->name, err);
                n_fail++;
                continue;
            }
            long n_entries = (long)(150 * scale);
            for (long i = 0; i < n_entries; i++) {
                cJSON* entry = task_generate_entry(spec, cfg, 1000 + p, i, err, sizeof err);
                if (!entry) {
                    fprintf(stderr, "FAIL %s: %s\n", spec->name, err);
                    n_fail++;
                    break;
                }
                const char* oracle = seed_answer(entry);
                check_score(spec, NULL, entry, "None");
                check_score(spec, "", entry, "empty");
                check_score(spec, oracle, entry, "oracle");
                for (int k = 0; k < 20; k++) {
                    char* m = mutate(oracle);
                    check_score(spec, m, entry, "mutated oracle");
                    free(m);
                    char* r = random_text(120, NULL);
                    check_score(spec, r, entry, "random bytes");
                    free(r);
                }
                const char* q = task_entry_question(entry, NULL);
                if (q) check_score(spec, q, entry, "question");
                for (int k = 0; k < 8; k++) {
                    cJSON* bad = damaged_entry(entry);
                    char* m = rnd_below(2) ? mutate(oracle) : strdup(oracle);
                    check_score(spec, m, bad, "damaged entry");
                    check_score(spec, NULL, bad, "damaged entry, None");
                    char* comp = random_text(60, NULL);
                    size_t cl = strlen(comp), ml = strlen(m);
                    char* completion = malloc(cl + ml + 20);
                    snprintf(completion, cl + ml + 20, "%s<answer>%s</answer>", comp, m);
                    task_reward(spec, completion, bad);
                    task_reward(spec, completion, entry);
                    n_calls += 2;
                    free(completion);
                    free(comp);
                    free(m);
                    cJSON_Delete(bad);
                }
                /* Entries that are not shaped like entries at all. */
                cJSON* odd = random_json(3);
                if (cJSON_IsObject(odd)) check_score(spec, oracle, odd, "random object as entry");
                cJSON_Delete(odd);
                cJSON_Delete(entry);
            }
            if (p == 0) fuzz_generator_config(spec, cfg, (long)(1500 * scale));
            cJSON_Delete(cfg);
        }
        printf("%-24s %ld calls\n", spec->name, n_calls - calls0);
    }
    printf("total %ld calls in %.1f s, %ld failures (%d tasks)\n", n_calls, (double)(clock() - t0) / CLOCKS_PER_SEC,
           n_fail, task_count());
    return n_fail ? 1 : 0;
}
