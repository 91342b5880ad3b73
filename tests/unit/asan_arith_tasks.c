/* basic_arithmetic / decimal_arithmetic and their arithmetic under ASan + UBSan: BigInt
 * identities (a == (a // b) * b + a % b with Python's signs, gcd, powers of ten), divisor
 * lists against trial division, Decimal(str) -> str() -> Decimal round trips, generation at
 * every preset and at edge configs, and the verifiers on hostile answers (megabyte digit
 * strings, exponents at the constructor's limits, invalid UTF-8, every byte) and on
 * entries with missing or odd fields. Scores must be 0 or 1 (decimal) / in [0, 1] (basic);
 * each oracle must score 1. Every string is passed in a buffer of exactly its size. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "tasks/infra/registry.h"
#include "tasks/ports/divisors.h"
#include "tasks/pyemu/bigint.h"
#include "tasks/pyemu/pydecimal.h"

static long n_fail = 0;

#define CHECK(cond, ...)                                       \
    do {                                                       \
        if (!(cond)) {                                         \
            if (n_fail++ < 20) {                               \
                fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
                fprintf(stderr, __VA_ARGS__);                  \
                fputc('\n', stderr);                           \
            }                                                  \
        }                                                      \
    } while (0)

static uint64_t rng_state = 0xA817u;
static uint64_t rnd(void) { /* splitmix64 */
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A heap copy of n bytes in a buffer of exactly n + 1 bytes. */
static char* exact_copy(const char* s, size_t n) {
    char* p = malloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

static void random_bigint(BigInt* a) {
    char buf[80];
    size_t n = 1 + rnd() % 60;
    for (size_t i = 0; i < n; i++) buf[i] = (char)('0' + rnd() % 10);
    bigint_set_digits(a, buf, n);
    if (rnd() & 1) bigint_neg(a, a);
}

static void test_bigint(void) {
    BigInt a, b, q, r, t, g;
    bigint_init(&a);
    bigint_init(&b);
    bigint_init(&q);
    bigint_init(&r);
    bigint_init(&t);
    bigint_init(&g);
    for (int it = 0; it < 3000; it++) {
        random_bigint(&a);
        random_bigint(&b);
        if (bigint_is_zero(&b)) continue;
        CHECK(bigint_divmod_floor(&q, &r, &a, &b) == 0, "divmod refused a nonzero divisor");
        bigint_mul(&t, &q, &b);
        bigint_add(&t, &t, &r);
        CHECK(bigint_cmp(&t, &a) == 0, "q*b + r != a");
        CHECK(bigint_cmp_abs(&r, &b) < 0, "|r| >= |b|");
        CHECK(bigint_is_zero(&r) || r.neg == b.neg, "r's sign is not b's (Python floor)");
        bigint_gcd(&g, &a, &b);
        CHECK(!bigint_is_zero(&g), "gcd zero");
        bigint_divmod_floor(NULL, &t, &a, &g);
        CHECK(bigint_is_zero(&t), "gcd does not divide a");
        size_t k = rnd() % 30;
        bigint_abs(&t, &a);
        bigint_mul_pow10(&q, &t, k);
        bigint_divmod_pow10(&r, &g, &q, k);
        CHECK(bigint_cmp(&r, &t) == 0 && bigint_is_zero(&g), "pow10 shift not inverted");
        char* s = bigint_to_string(&a);
        CHECK(strlen(s) == bigint_ndigits(&a) + (size_t)a.neg, "ndigits disagrees with str");
        free(s);
    }
    bigint_set_i64(&b, 0);
    CHECK(bigint_divmod_floor(&q, &r, &a, &b) == -1, "division by zero not refused");
    bigint_free(&a);
    bigint_free(&b);
    bigint_free(&q);
    bigint_free(&r);
    bigint_free(&t);
    bigint_free(&g);
}

static void test_divisors(void) {
    for (unsigned n = 1; n < 3000; n++) {
        unsigned __int128* d;
        size_t nd, k = 0;
        CHECK(divisors_all(n, &d, &nd) == 0, "divisors_all(%u) refused", n);
        for (unsigned i = 1; i <= n; i++) {
            if (n % i) continue;
            CHECK(k < nd && d[k] == i, "divisor %u of %u missing or out of order", i, n);
            k++;
        }
        CHECK(k == nd, "extra divisors of %u", n);
        free(d);
    }
    unsigned __int128* d;
    size_t nd;
    CHECK(divisors_all(0, &d, &nd) == -1, "0 accepted");
    CHECK(divisors_all((unsigned __int128)1 << 127, &d, &nd) == -1, "2^127 accepted");
    CHECK(divisors_all(((unsigned __int128)1 << 127) - 1, &d, &nd) == 0 && nd == 2, "2^127-1 is prime");
    free(d);
}

static void test_decimal_roundtrip(void) {
    static const char* const samples[] = {"0", "-0", "1.50", "1E+5", "-2.5E-7", "0.000001", "123456789012345678901234567890",
                                          "1e-1999999999999999997", "9e999999999999999999", "0E-6", "Infinity", "-NaN"};
    PyDec a, b;
    pydec_init(&a);
    pydec_init(&b);
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
        char* s = exact_copy(samples[i], strlen(samples[i]));
        CHECK(pydec_parse(&a, s, strlen(s)) == 0, "Decimal(%s) refused", s);
        char* t = pydec_to_string(&a);
        CHECK(pydec_parse(&b, t, strlen(t)) == 0, "str() output %s does not parse", t);
        char* u = pydec_to_string(&b);
        CHECK(!strcmp(t, u), "round trip %s -> %s -> %s", s, t, u);
        free(s);
        free(t);
        free(u);
    }
    pydec_free(&a);
    pydec_free(&b);
}

static double score_exact(const TaskSpec* spec, const char* ans, size_t n, const cJSON* entry) {
    char* a = exact_copy(ans, n);
    double s = spec->score(a, n, entry);
    free(a);
    return s;
}

/* Hostile answers for one entry; every score must be a valid one. */
static void hostile_answers(const TaskSpec* spec, const cJSON* entry, int binary) {
    const size_t big = 1 << 20;
    char* s = malloc(big + 64);
    const char* oracle = cJSON_GetObjectItemCaseSensitive(entry, "answer")->valuestring;
    /* A megabyte of digits, with and without a point and an exponent. */
    memset(s, '9', big);
    size_t variants[] = {big, big};
    for (int v = 0; v < 4; v++) {
        size_t n = variants[v & 1];
        if (v == 1) s[big / 2] = '.';
        if (v == 2) memcpy(s + big - 12, "e-999999999", 11), n = big - 1;
        if (v == 3) s[0] = '-';
        double sc = score_exact(spec, s, n, entry);
        CHECK(isfinite(sc) && sc >= 0 && sc <= 1 && (!binary || sc == 0 || sc == 1), "bad score %g", sc);
    }
    /* The oracle padded with a megabyte of zeros after its last digit. */
    size_t on = strlen(oracle);
    memcpy(s, oracle, on);
    int has_point = strchr(oracle, '.') != NULL && !strchr(oracle, 'E');
    memset(s + on, '0', big - on);
    double sc = score_exact(spec, s, has_point ? big : on, entry);
    CHECK(sc == 1.0 || !binary || !has_point, "padded oracle scored %g", sc);
    static const char* const odd[] = {"", " ", ".", "e", "1e", "-", "+", "_", "\xff", "\xc3", "\xe2\x82", "1\xa0",
                                      "١٢٣", "nan", "sNaN", "-Infinity", "1e999999999999999999",
                                      "1e1000000000000000000", "1e-1999999999999999997", "0e-1999999999999999998",
                                      "9.99999E+999999", "1E+999999", "99999999999999999999999999999999999e999999",
                                      "1e9223372036854775807", "1e-9223372036854775808", "1e99999999999999999999999"};
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
        sc = score_exact(spec, odd[i], strlen(odd[i]), entry);
        CHECK(isfinite(sc) && sc >= 0 && sc <= 1 && (!binary || sc == 0 || sc == 1), "bad score %g for %s", sc, odd[i]);
    }
    /* Every single byte and random short byte strings. */
    for (int c = 1; c < 256; c++) {
        char one[1] = {(char)c};
        sc = score_exact(spec, one, 1, entry);
        CHECK(isfinite(sc) && sc >= 0 && sc <= 1, "bad score for byte %d", c);
    }
    for (int it = 0; it < 300; it++) {
        size_t n = rnd() % 24;
        for (size_t k = 0; k < n; k++) s[k] = (char)(1 + rnd() % 255);
        sc = score_exact(spec, s, n, entry);
        CHECK(isfinite(sc) && sc >= 0 && sc <= 1, "bad score for random bytes");
    }
    CHECK(spec->score(NULL, 0, entry) == 0.0, "None scored nonzero");
    free(s);
}

static void test_task(const char* name, const char* const* configs, size_t n_configs, int binary) {
    const TaskSpec* spec = task_find(name);
    CHECK(spec != NULL, "%s not registered", name);
    if (!spec) return;
    for (size_t c = 0; c < n_configs + 3; c++) {
        const char* text = c < 3 ? task_preset_config(spec, c == 0 ? "paper" : c == 1 ? "small" : "tiny") : configs[c - 3];
        cJSON* cfg = cJSON_Parse(text);
        int produced = 0;
        for (int64_t i = 0; i < 150; i++) {
            char err[512];
            cJSON* e = task_generate_entry(spec, cfg, (int64_t)(rnd() % 1000000) - 500000, i, err, sizeof err);
            if (!e) continue; /* a refused item (the package raises there too) */
            produced++;
            const char* oracle = cJSON_GetObjectItemCaseSensitive(e, "answer")->valuestring;
            CHECK(spec->score(oracle, strlen(oracle), e) == 1.0, "%s: oracle %s does not score 1", name, oracle);
            if (i < 3) hostile_answers(spec, e, binary);
            cJSON_Delete(e);
        }
        CHECK(produced > 0, "%s config %s produced nothing", name, text);
        cJSON_Delete(cfg);
    }
    /* Entries with odd or missing fields. */
    static const char* const entries[] = {
        "{}", "{\"answer\": null}", "{\"answer\": 5}", "{\"answer\": \"1.5\"}", "{\"answer\": \"1.5\", \"question\": 7}",
        "{\"answer\": \"nan\", \"question\": \"\"}", "{\"answer\": \"x\", \"metadata\": []}",
        "{\"answer\": \"1.5\", \"question\": \"Please solve this problem to a maximum of 0 significant digits\"}",
        "{\"answer\": \"1.5\", \"question\": \"Please solve this problem to a maximum of 99999999999 significant "
        "digits, rounding up from the half. Only reply with the final value.\\n1.5 = ?\"}",
        "{\"answer\": \"1E+999999\", \"question\": \"Please solve this problem to a maximum of 1 significant digits, "
        "rounding up from the half. Only reply with the final value.\\n1 = ?\"}"};
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        cJSON* e = cJSON_Parse(entries[i]);
        static const char* const answers[] = {"1.5", "1.5001", "", "x", "1E+999999", "-1E+999999", "9.9E+999999"};
        for (size_t k = 0; k < sizeof answers / sizeof answers[0]; k++) {
            double sc = score_exact(spec, answers[k], strlen(answers[k]), e);
            CHECK(isfinite(sc) && sc >= 0 && sc <= 1, "bad score on odd entry %s", entries[i]);
        }
        cJSON_Delete(e);
    }
}

int main(void) {
    test_bigint();
    test_divisors();
    test_decimal_roundtrip();
    static const char* const basic_cfgs[] = {
        "{\"whitespace\": \"no_space\", \"format_style\": \"natural\"}",
        "{\"whitespace\": \"random\", \"operators\": \"*/\"}",
        "{\"allow_parentheses\": false, \"max_digits\": 18, \"min_digits\": 10, \"max_terms\": 4}",
        "{\"operators\": [\"/\"]}",
        "{\"min_terms\": 1, \"max_terms\": 1, \"max_digits\": 18}",
        "{\"min_terms\": 30, \"max_terms\": 40, \"max_digits\": 2}",
    };
    static const char* const dec_cfgs[] = {
        "{}",
        "{\"min_num_decimal_places\": 17, \"max_num_decimal_places\": 17, \"precision\": 40}",
        "{\"min_num_decimal_places\": 0, \"max_num_decimal_places\": 0, \"precision\": 2, \"min_terms\": 1}",
        "{\"min_terms\": 0, \"max_terms\": 2, \"min_num_decimal_places\": -2, \"max_num_decimal_places\": 1}",
        "{\"min_terms\": 40, \"max_terms\": 60, \"precision\": 300}",
    };
    test_task("basic_arithmetic", basic_cfgs, sizeof basic_cfgs / sizeof basic_cfgs[0], 0);
    test_task("decimal_arithmetic", dec_cfgs, sizeof dec_cfgs / sizeof dec_cfgs[0], 1);
    /* Configs the generators must refuse with a message, never crash on. */
    static const char* const bad_cfgs[] = {
        "[]", "{\"operators\": []}", "{\"operators\": [\"%\"]}", "{\"operators\": [1]}", "{\"operators\": \"\"}",
        "{\"max_digits\": 19}", "{\"min_terms\": 0}", "{\"max_terms\": 500}", "{\"whitespace\": 3}",
        "{\"precision\": 4, \"max_num_decimal_places\": 3}", "{\"precision\": 100000}", "{\"bogus\": 1}",
        "{\"seed\": 3}", "{\"max_num_decimal_places\": 20, \"min_num_decimal_places\": 20, \"precision\": 30}"};
    for (size_t i = 0; i < sizeof bad_cfgs / sizeof bad_cfgs[0]; i++) {
        for (int t = 0; t < 2; t++) {
            const TaskSpec* spec = task_find(t ? "decimal_arithmetic" : "basic_arithmetic");
            cJSON* cfg = cJSON_Parse(bad_cfgs[i]);
            char err[512] = "";
            cJSON* e = task_generate_entry(spec, cfg, 1, 0, err, sizeof err);
            CHECK(e != NULL || err[0], "refusal without a message for %s", bad_cfgs[i]);
            cJSON_Delete(e);
            cJSON_Delete(cfg);
        }
    }
    if (n_fail) {
        fprintf(stderr, "asan_arith_tasks: %ld checks failed\n", n_fail);
        return 1;
    }
    printf("asan_arith_tasks: all checks passed\n");
    return 0;
}
