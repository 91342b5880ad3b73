/* reasoning_gym 0.1.25 `fraction_simplification`: reduce a fraction to lowest terms.
 * Generator: up to ten draws of a (numerator, denominator) pair, each divided by its gcd
 * and kept when both stay within [min_value, max_value]; then ordered so the numerator is
 * the smaller and multiplied by factor = randint(min_factor, max_factor). After ten
 * failures a pair is drawn and used WITHOUT reducing (the package's fallback). The style
 * (plain a/b, $a/b$, $\frac{a}{b}$, $\dfrac{a}{b}$) is styles[randint(0, len-1)].
 * Verifier (score_answer): the answer is stripped, '$' stripped, stripped again; a prefix
 * \frac{a}{b} or \dfrac{a}{b} (case-insensitive, Unicode \s and \d as Python's re) or
 * else "a/b" split at the first '/' and each side read with int(). Then 1.0 for the
 * simplified pair, 0.1 when the numerator or the denominator equals the unsimplified one,
 * 0.05 for any other readable fraction, and 0.01 for anything unreadable (None too). */
#include <stdio.h>
#include <string.h>

#include "core/check.h"
#include "tasks/infra/task.h"
#include "tasks/infra/task_common.h"
#include "tasks/infra/taskcfg.h"
#include "tasks/infra/textbuf.h"
#include "tasks/pyemu/pyrandom.h"
#include "tasks/pyemu/pyunicode.h"

#define NAME "fraction_simplification"

static const char* const STYLE_NAMES[] = {"plain", "latex_inline", "latex_frac", "latex_dfrac"};
#define N_STYLE_NAMES 4
#define MAX_STYLES 64

typedef struct {
    int64_t min_value, max_value, min_factor, max_factor;
    int styles[MAX_STYLES]; /* indexes into STYLE_NAMES, in config order */
    int n_styles;
} FracConfig;

static int frac_config(const cJSON* cfg, FracConfig* c, char* err, size_t errlen) {
    static const char* const keys[] = {"min_value", "max_value", "min_factor", "max_factor", "styles", NULL};
    if (taskcfg_check_keys(cfg, NAME, keys, err, errlen)) return -1;
    if (taskcfg_int(cfg, NAME, "min_value", 1, &c->min_value, err, errlen) ||
        taskcfg_int(cfg, NAME, "max_value", 1000, &c->max_value, err, errlen) ||
        taskcfg_int(cfg, NAME, "min_factor", 1, &c->min_factor, err, errlen) ||
        taskcfg_int(cfg, NAME, "max_factor", 100, &c->max_factor, err, errlen))
        return -1;
    if (c->min_value <= 0) return set_error(err, errlen, NAME ": min_value must be positive");
    if (c->max_value <= c->min_value) return set_error(err, errlen, NAME ": max_value must be > min_value");
    if (c->min_factor < 1) return set_error(err, errlen, NAME ": min_factor must be at least 1");
    if (c->max_factor < c->min_factor) return set_error(err, errlen, NAME ": max_factor must be >= min_factor");
    /* Products value * factor must stay exact in a double (JSON numbers) and in int64. */
    if (c->max_value > 2147483647 || c->max_factor > 2147483647)
        return set_error(err, errlen, NAME ": max_value and max_factor must be <= 2^31-1 here");
    const cJSON* st = taskcfg_item(cfg, "styles");
    if (!st) {
        c->n_styles = N_STYLE_NAMES;
        for (int i = 0; i < N_STYLE_NAMES; i++) c->styles[i] = i;
        return 0;
    }
    if (!cJSON_IsArray(st)) return set_error(err, errlen, NAME ": config key 'styles' must be a list of style names");
    c->n_styles = 0;
    for (const cJSON* s = st->child; s; s = s->next) {
        int found = -1;
        for (int i = 0; i < N_STYLE_NAMES && cJSON_IsString(s); i++)
            if (!strcmp(s->valuestring, STYLE_NAMES[i])) found = i;
        if (found < 0)
            return set_error(err, errlen, NAME ": invalid style %s (expected plain, latex_inline, latex_frac or latex_dfrac)",
                             cJSON_IsString(s) ? s->valuestring : "(not a string)");
        if (c->n_styles == MAX_STYLES) return set_error(err, errlen, NAME ": at most %d styles", MAX_STYLES);
        c->styles[c->n_styles++] = found;
    }
    /* An empty list passes the package's validation, then randint(0, -1) raises. */
    if (c->n_styles == 0) return set_error(err, errlen, NAME ": styles must not be empty");
    return 0;
}

static int64_t gcd64(int64_t a, int64_t b) {
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static void frac_format(TextBuf* b, int64_t num, int64_t den, int style) {
    switch (style) {
        case 0: textbuf_printf(b, "%lld/%lld", (long long)num, (long long)den); break;
        case 1: textbuf_printf(b, "$%lld/%lld$", (long long)num, (long long)den); break;
        case 2: textbuf_printf(b, "$\\frac{%lld}{%lld}$", (long long)num, (long long)den); break;
        default: textbuf_printf(b, "$\\dfrac{%lld}{%lld}$", (long long)num, (long long)den); break;
    }
}

static cJSON* pair_array(int64_t a, int64_t b) {
    cJSON* arr = cJSON_CreateArray();
    cJSON_AddItemToArray(arr, cJSON_CreateNumber((double)a));
    cJSON_AddItemToArray(arr, cJSON_CreateNumber((double)b));
    return arr;
}

static int frac_generate(const cJSON* config, int64_t seed, int64_t index, TaskItem* out, char* err,
                         size_t errlen) {
    FracConfig c;
    if (frac_config(config, &c, err, errlen)) return -1;
    PyRandom rng;
    pyrandom_seed(&rng, seed + index);
    int64_t sn = 0, sd = 0, factor = 0;
    int found = 0;
    for (int attempt = 0; attempt < 10 && !found; attempt++) {
        sn = pyrandom_randint(&rng, c.min_value, c.max_value);
        sd = pyrandom_randint(&rng, c.min_value, c.max_value);
        int64_t g = gcd64(sn, sd);
        sn /= g;
        sd /= g;
        if (c.min_value <= sn && sn <= c.max_value && c.min_value <= sd && sd <= c.max_value) found = 1;
    }
    if (!found) {
        sn = pyrandom_randint(&rng, c.min_value, c.max_value);
        sd = pyrandom_randint(&rng, c.min_value, c.max_value);
    }
    if (sn > sd) {
        int64_t t = sn;
        sn = sd;
        sd = t;
    }
    factor = pyrandom_randint(&rng, c.min_factor, c.max_factor);
    int64_t num = sn * factor, den = sd * factor;
    int style = c.styles[pyrandom_randint(&rng, 0, c.n_styles - 1)];

    TextBuf q = {0}, a = {0};
    textbuf_append(&q, "Simplify the fraction ");
    frac_format(&q, num, den, style);
    textbuf_append(&q, " to its lowest terms. Give only the simplified fraction as your final answer.");
    frac_format(&a, sn, sd, style);
    out->question = textbuf_take(&q);
    out->answer = textbuf_take(&a);

    cJSON* m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "source_dataset", NAME);
    cJSON_AddNumberToObject(m, "source_index", (double)index);
    cJSON_AddNumberToObject(m, "numerator", (double)num);
    cJSON_AddNumberToObject(m, "denominator", (double)den);
    cJSON_AddNumberToObject(m, "simplified_numerator", (double)sn);
    cJSON_AddNumberToObject(m, "simplified_denominator", (double)sd);
    cJSON_AddNumberToObject(m, "reduction_factor", (double)(num / sn));
    cJSON_AddStringToObject(m, "style", STYLE_NAMES[style]);
    cJSON_AddNumberToObject(m, "factor", (double)factor);
    cJSON* diff = cJSON_AddObjectToObject(m, "difficulty");
    cJSON_AddItemToObject(diff, "value", pair_array(c.min_value, c.max_value));
    cJSON_AddItemToObject(diff, "factor", pair_array(c.min_factor, c.max_factor));
    out->metadata = m;
    return 0;
}

/* ---- verifier ------------------------------------------------------------------------ */

/* Skips Python re \s* (Unicode whitespace) from s[*i]. */
static void skip_space(const char* s, size_t len, size_t* i) {
    while (*i < len) {
        size_t at = *i;
        if (!pyu_isspace(pyu_next(s, len, i))) {
            *i = at;
            return;
        }
    }
}

/* Matches \d+ (Unicode decimal digits) at s[*i] and reads it as int() does. */
static int match_digits(const char* s, size_t len, size_t* i, PyInt* v) {
    size_t start = *i, end = *i;
    while (end < len) {
        size_t at = end;
        if (pyu_decimal(pyu_next(s, len, &end)) < 0) {
            end = at;
            break;
        }
    }
    if (end == start) return -1;
    *i = end;
    /* int() of a pure run of digits fails only beyond 4300 digits; the package's bare
     * except then makes the whole extraction None. */
    return pyu_parse_int(s + start, end - start, v) ? -2 : 0;
}

static int match_char(const char* s, size_t len, size_t* i, char c) {
    if (*i < len && s[*i] == c) {
        (*i)++;
        return 1;
    }
    return 0;
}

/* ASCII-case-insensitive literal (re.IGNORECASE adds no Unicode look-alikes for the
 * letters of "frac" and "dfrac"). */
static int match_word(const char* s, size_t len, size_t* i, const char* w) {
    size_t n = strlen(w);
    if (len - *i < n) return 0;
    for (size_t k = 0; k < n; k++) {
        char c = s[*i + k];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != w[k]) return 0;
    }
    *i += n;
    return 1;
}

/* re.match(r"\\(?:frac|dfrac)\s*{\s*(\d+)\s*}\s*{\s*(\d+)\s*}", s, re.I): 1 and the two
 * groups' int() values on a match, 0 on no match, -2 when a group overflows int(). */
static int match_latex(const char* s, size_t len, PyInt* a, PyInt* b) {
    size_t i = 0;
    if (!match_char(s, len, &i, '\\')) return 0;
    if (!match_word(s, len, &i, "frac") && !match_word(s, len, &i, "dfrac")) return 0;
    PyInt* groups[2] = {a, b};
    int overflow = 0;
    for (int g = 0; g < 2; g++) {
        skip_space(s, len, &i);
        if (!match_char(s, len, &i, '{')) return 0;
        skip_space(s, len, &i);
        int r = match_digits(s, len, &i, groups[g]);
        if (r == -1) return 0;
        if (r == -2) overflow = 1;
        skip_space(s, len, &i);
        if (!match_char(s, len, &i, '}')) return 0;
    }
    return overflow ? -2 : 1; /* on overflow the regex matched but int() of a group raised */
}

/* The package's _extract_fraction: 0 with both values, -1 where it returns None. */
static int frac_extract(const char* answer, size_t len, PyInt* num, PyInt* den) {
    if (!answer) return -1; /* None.strip() raises inside the bare try */
    size_t b, e;
    pyu_strip(answer, len, &b, &e);
    while (b < e && answer[b] == '$') b++;
    while (e > b && answer[e - 1] == '$') e--;
    size_t b2, e2;
    pyu_strip(answer + b, e - b, &b2, &e2);
    const char* s = answer + b + b2;
    size_t n = e2 - b2;
    int r = match_latex(s, n, num, den);
    if (r == 1) return 0;
    if (r == -2) return -1;
    const char* slash = memchr(s, '/', n);
    if (!slash) return -1;
    size_t left = (size_t)(slash - s);
    size_t lb, le, rb, re;
    pyu_strip(s, left, &lb, &le);
    pyu_strip(slash + 1, n - left - 1, &rb, &re);
    if (pyu_parse_int(s + lb, le - lb, num)) return -1;
    if (pyu_parse_int(slash + 1 + rb, re - rb, den)) return -1;
    return 0;
}

/* metadata[key] == v as Python compares them; 0 for a value of another type, -1 when the
 * key is missing (KeyError, caught by the package's bare except). */
static int meta_equals(const cJSON* meta, const char* key, const PyInt* v) {
    const cJSON* x = cJSON_GetObjectItemCaseSensitive(meta, key);
    if (!x) return -1;
    if (cJSON_IsNumber(x)) return pyu_int_equals_double(v, x->valuedouble);
    if (cJSON_IsBool(x)) return !v->big && v->value == (cJSON_IsTrue(x) ? 1 : 0);
    return 0;
}

static double frac_score(const char* answer, size_t len, const cJSON* entry) {
    /* entry["metadata"] is read outside the package's try: a missing one raises there
     * (scored 0 here); one of another type fails inside the try, at the first lookup. */
    const cJSON* meta = cJSON_GetObjectItemCaseSensitive(entry, "metadata");
    if (!meta) return 0.0;
    PyInt num, den;
    if (frac_extract(answer, len, &num, &den)) return 0.01;
    if (!cJSON_IsObject(meta)) return 0.01;
    int r = meta_equals(meta, "simplified_numerator", &num);
    if (r < 0) return 0.01;
    if (r) {
        r = meta_equals(meta, "simplified_denominator", &den);
        if (r < 0) return 0.01;
        if (r) return 1.0;
    }
    r = meta_equals(meta, "numerator", &num);
    if (r < 0) return 0.01;
    if (r) return 0.1;
    r = meta_equals(meta, "denominator", &den);
    if (r < 0) return 0.01;
    if (r) return 0.1;
    /* A readable fraction needs a '/' or "\frac", so answer.strip() is never empty here. */
    return 0.05;
}

const TaskSpec task_fraction_simplification = {
    .name = NAME,
    .generate = frac_generate,
    .score = frac_score,
    .preset_paper = "{\"min_value\": 1, \"max_value\": 100, \"min_factor\": 2, \"max_factor\": 100, "
                    "\"styles\": [\"plain\", \"latex_frac\", \"latex_dfrac\"]}",
    .preset_small = "{\"min_value\": 1, \"max_value\": 20, \"min_factor\": 2, \"max_factor\": 10, "
                    "\"styles\": [\"plain\"]}",
    .preset_tiny = "{\"min_value\": 1, \"max_value\": 9, \"min_factor\": 2, \"max_factor\": 4, "
                   "\"styles\": [\"plain\"]}",
};
