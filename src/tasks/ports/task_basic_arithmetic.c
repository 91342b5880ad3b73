/* reasoning_gym 0.1.25 `basic_arithmetic`: evaluate an integer expression where "/" means
 * Python's floor division //. Generator (allow_parentheses): a recursive split of the terms
 * into parts, optionally parenthesised (and negated), whose divisions are steered towards
 * exact ones by picking divisors of the dividend (or of a gcd) from the package's
 * sqrt-ordered divisor list; the text is then joined per `whitespace`, "/ 0" is patched to
 * "/ 1", and the answer is the Python value of the text. Without parentheses: a left-to-right
 * chain whose "/" picks a divisor of the running result, while the TEXT keeps the original
 * constant (a quirk of the package, reproduced). Values exceed 64 bits (6 terms of 4 digits),
 * so the arithmetic is BigInt. Verifier: the package's default scorer.
 * Limits of the port (configs the presets never reach): max_digits <= 18 (randint over
 * int64), max_terms <= 200 (recursion depth), divisor lists of numbers below 2^127. An item
 * on which the package raises (ZeroDivisionError in eval, IndexError from choice) is an
 * error here too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "tasks/infra/task.h"
#include "tasks/infra/task_common.h"
#include "tasks/infra/taskcfg.h"
#include "tasks/infra/textbuf.h"
#include "tasks/ports/divisors.h"
#include "tasks/pyemu/bigint.h"
#include "tasks/pyemu/pyexpr.h"
#include "tasks/pyemu/pyrandom.h"

#define NAME "basic_arithmetic"
#define MAX_DIGITS_SUPPORTED 18
#define MAX_TERMS_SUPPORTED 200

enum { WS_NO_SPACE, WS_SINGLE, WS_RANDOM };

typedef struct {
    int64_t min_terms, max_terms, min_digits, max_digits;
    char ops[64]; /* the operators list, one char each, in order (duplicates kept) */
    size_t n_ops;
    int allow_parentheses, allow_negation;
    int format_simple; /* format_style == "simple"; anything else is "natural" */
    int whitespace;
} BasicConfig;

/* Python truthiness of a JSON value given for a bool field (the package only tests it). */
static int json_truthy(const cJSON* v, int* out) {
    if (cJSON_IsBool(v)) *out = cJSON_IsTrue(v);
    else if (cJSON_IsNumber(v)) *out = v->valuedouble != 0;
    else if (cJSON_IsNull(v)) *out = 0;
    else if (cJSON_IsString(v)) *out = v->valuestring[0] != '\0';
    else if (cJSON_IsArray(v) || cJSON_IsObject(v)) *out = v->child != NULL;
    else return -1;
    return 0;
}

static int basic_config(const cJSON* cfg, BasicConfig* c, char* err, size_t errlen) {
    static const char* const keys[] = {"min_terms", "max_terms", "min_digits", "max_digits", "operators",
                                       "allow_parentheses", "allow_negation", "format_style", "whitespace", NULL};
    if (taskcfg_check_keys(cfg, NAME, keys, err, errlen)) return -1;
    if (taskcfg_int(cfg, NAME, "min_terms", 2, &c->min_terms, err, errlen) ||
        taskcfg_int(cfg, NAME, "max_terms", 6, &c->max_terms, err, errlen) ||
        taskcfg_int(cfg, NAME, "min_digits", 1, &c->min_digits, err, errlen) ||
        taskcfg_int(cfg, NAME, "max_digits", 4, &c->max_digits, err, errlen))
        return -1;
    /* operators: a list of strings; a plain string also works in Python (its characters). */
    const cJSON* ops = taskcfg_item(cfg, "operators");
    c->n_ops = 0;
    if (!ops) {
        memcpy(c->ops, "+-*/", 4);
        c->n_ops = 4;
    } else if (cJSON_IsString(ops) || cJSON_IsArray(ops)) {
        const char* text = cJSON_IsString(ops) ? ops->valuestring : NULL;
        size_t n = text ? strlen(text) : (size_t)cJSON_GetArraySize(ops);
        if (n > sizeof c->ops) return set_error(err, errlen, NAME ": config key 'operators' has too many entries");
        for (size_t i = 0; i < n; i++) {
            char op;
            if (text) {
                op = text[i];
            } else {
                const cJSON* o = cJSON_GetArrayItem(ops, (int)i);
                if (!cJSON_IsString(o) || strlen(o->valuestring) != 1)
                    return set_error(err, errlen, NAME ": config key 'operators' entries must be \"+\", \"-\", \"*\" or \"/\"");
                op = o->valuestring[0];
            }
            if (!strchr("+-*/", op) || op == '\0')
                return set_error(err, errlen, NAME ": unsupported operator '%c' (expected + - * /)", op);
            c->ops[c->n_ops++] = op;
        }
    } else {
        return set_error(err, errlen, NAME ": config key 'operators' must be a list of operator strings");
    }
    const cJSON* v;
    c->allow_parentheses = c->allow_negation = 1;
    if ((v = taskcfg_item(cfg, "allow_parentheses")) && json_truthy(v, &c->allow_parentheses))
        return set_error(err, errlen, NAME ": config key 'allow_parentheses' must be true or false");
    if ((v = taskcfg_item(cfg, "allow_negation")) && json_truthy(v, &c->allow_negation))
        return set_error(err, errlen, NAME ": config key 'allow_negation' must be true or false");
    c->format_simple = 1;
    if ((v = taskcfg_item(cfg, "format_style"))) {
        if (!cJSON_IsString(v)) return set_error(err, errlen, NAME ": config key 'format_style' must be a string");
        c->format_simple = !strcmp(v->valuestring, "simple");
    }
    c->whitespace = WS_SINGLE;
    if ((v = taskcfg_item(cfg, "whitespace"))) {
        if (!cJSON_IsString(v)) return set_error(err, errlen, NAME ": config key 'whitespace' must be a string");
        c->whitespace = !strcmp(v->valuestring, "no_space") ? WS_NO_SPACE
                        : !strcmp(v->valuestring, "single") ? WS_SINGLE
                                                            : WS_RANDOM;
    }
    /* The package's validate(). */
    if (c->min_terms <= 0) return set_error(err, errlen, NAME ": min_terms must be positive");
    if (c->max_terms < c->min_terms) return set_error(err, errlen, NAME ": max_terms must be >= min_terms");
    if (c->min_digits <= 0) return set_error(err, errlen, NAME ": min_digits must be positive");
    if (c->max_digits < c->min_digits) return set_error(err, errlen, NAME ": max_digits must be >= min_digits");
    if (c->n_ops == 0) return set_error(err, errlen, NAME ": must provide at least one operator");
    /* The port's own limits. */
    if (c->max_digits > MAX_DIGITS_SUPPORTED)
        return set_error(err, errlen, NAME ": max_digits %lld is beyond this port's limit of %d", (long long)c->max_digits,
                         MAX_DIGITS_SUPPORTED);
    if (c->max_terms > MAX_TERMS_SUPPORTED)
        return set_error(err, errlen, NAME ": max_terms %lld is beyond this port's limit of %d", (long long)c->max_terms,
                         MAX_TERMS_SUPPORTED);
    return 0;
}

/* ---- a list of expression parts (heap strings) ---------------------------------------------- */

typedef struct {
    char** s;
    size_t n, cap;
} Parts;

static void parts_push_own(Parts* p, char* s) {
    if (p->n == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 16;
        char** q = realloc(p->s, p->cap * sizeof(char*));
        if (!q) sapo_die("out of memory");
        p->s = q;
    }
    p->s[p->n++] = s;
}

static void parts_push(Parts* p, const char* s) {
    char* c = strdup(s);
    if (!c) sapo_die("out of memory");
    parts_push_own(p, c);
}

static void parts_push_int(Parts* p, const BigInt* v) { parts_push_own(p, bigint_to_string(v)); }

static void parts_push_i64(Parts* p, int64_t v) {
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)v);
    parts_push(p, buf);
}

/* Moves every part of src to the end of dst. */
static void parts_extend(Parts* dst, Parts* src) {
    for (size_t i = 0; i < src->n; i++) parts_push_own(dst, src->s[i]);
    free(src->s);
    src->s = NULL;
    src->n = src->cap = 0;
}

static void parts_free(Parts* p) {
    for (size_t i = 0; i < p->n; i++) free(p->s[i]);
    free(p->s);
    p->s = NULL;
    p->n = p->cap = 0;
}

static const char* parts_last(const Parts* p) { return p->n ? p->s[p->n - 1] : ""; }

static char* parts_join(const Parts* p, const char* sep) {
    TextBuf b = {0};
    textbuf_append(&b, "");
    for (size_t i = 0; i < p->n; i++) {
        if (i) textbuf_append(&b, sep);
        textbuf_append(&b, p->s[i]);
    }
    return textbuf_take(&b);
}

/* ---- Python's eval of the integer expression, "/" read as "//" -------------------------- */

static void int_init(void* v) { bigint_init(v); }
static void int_free(void* v) { bigint_free(v); }
static void int_literal(void* v, const char* text, size_t len, void* ctx) { bigint_set_digits(v, text, len); }
static void int_negate(void* v, void* ctx) { bigint_neg(v, v); }

static const char* int_binary(char op, void* acc, const void* rhs, void* ctx) {
    if (op == '+') bigint_add(acc, acc, rhs);
    else if (op == '-') bigint_sub(acc, acc, rhs);
    else if (op == '*') bigint_mul(acc, acc, rhs);
    else if (bigint_divmod_floor(acc, NULL, acc, rhs)) /* the text's "/" is Python's "//" */
        return "ZeroDivisionError: integer division or modulo by zero";
    return NULL;
}

static const PyExprOps INT_OPS = {sizeof(BigInt), int_init, int_free, 0, int_literal, int_negate, int_binary};

/* The package's eval_floordiv(text). Returns 0, or -1 with the reason in err. */
static int eval_floordiv(const char* text, BigInt* out, char* err, size_t errlen) {
    const char* why;
    if (pyexpr_eval(text, &INT_OPS, NULL, out, &why) == 0) return 0;
    return set_error(err, errlen, NAME ": evaluating '%s': %s (the package raises here too)", text, why);
}

/* ---- the generator ------------------------------------------------------------------------- */

typedef struct {
    PyRandom rng;
    const BasicConfig* c;
    int64_t top; /* 10**num_digits - 1 */
    char* err;
    size_t errlen;
} Gen;

/* rng.choice(find_common_divisors(a, b)): the list holds, for each divisor d of
 * g = gcd(|a|, |b|) with d*d <= g in ascending order, d and then g // d (once when equal). */
static int choose_common_divisor(Gen* g, const BigInt* a, const BigInt* b, BigInt* out) {
    BigInt gb;
    bigint_init(&gb);
    bigint_gcd(&gb, a, b);
    unsigned __int128 n;
    int fits = bigint_abs_u128(&gb, &n) == 0;
    bigint_free(&gb);
    if (fits && n == 0) return set_error(g->err, g->errlen, NAME ": choice from an empty divisor list (IndexError)");
    unsigned __int128* ds;
    size_t nd;
    if (!fits || divisors_all(n, &ds, &nd))
        return set_error(g->err, g->errlen, NAME ": divisor list of a number >= 2^127 is beyond this port");
    size_t k = 0;
    while (k < nd && ds[k] <= n / ds[k]) k++;
    size_t len = 2 * k - (ds[k - 1] == n / ds[k - 1] ? 1 : 0);
    size_t j = pyrandom_choice_index(&g->rng, len);
    bigint_set_u128(out, (j & 1) ? n / ds[j / 2] : ds[j / 2]);
    free(ds);
    return 0;
}

/* The package's add_terms(remaining), appending to out. */
static int add_terms(Gen* g, int64_t remaining, Parts* out) {
    const BasicConfig* c = g->c;
    int64_t num_left = pyrandom_randint(&g->rng, 1, remaining);
    int64_t num_right = remaining - num_left;
    Parts left = {0};
    int rc = -1;
    BigInt dividend, rv, tmp;
    bigint_init(&dividend);
    bigint_init(&rv);
    bigint_init(&tmp);

    if (num_left > 1 && pyrandom_random(&g->rng) > 0.5 && c->allow_parentheses) {
        if (pyrandom_random(&g->rng) > 0.5 && c->allow_negation) parts_push(&left, "-(");
        else parts_push(&left, "(");
        if (add_terms(g, num_left, &left)) goto done;
        parts_push(&left, ")");
    } else {
        char no_div[64];
        size_t n_no_div = 0;
        for (size_t i = 0; i < c->n_ops; i++)
            if (c->ops[i] != '/') no_div[n_no_div++] = c->ops[i];
        for (int64_t i = 0; i < num_left; i++) {
            parts_push_i64(&left, pyrandom_randint(&g->rng, -g->top, g->top));
            if (i + 1 < num_left) {
                if (!n_no_div) {
                    set_error(g->err, g->errlen, NAME ": choice from an empty operator list (IndexError)");
                    goto done;
                }
                char op[2] = {no_div[pyrandom_choice_index(&g->rng, n_no_div)], 0};
                parts_push(&left, op);
            }
        }
    }
    if (num_right == 0) {
        parts_extend(out, &left);
        rc = 0;
        goto done;
    }
    char op[2] = {c->ops[pyrandom_choice_index(&g->rng, c->n_ops)], 0};
    if (op[0] != '/') {
        parts_push(&left, op);
        if (add_terms(g, num_right, &left)) goto done;
    } else {
        /* A parenthesised left part divides as a whole; otherwise only its last number does. */
        if (!strcmp(parts_last(&left), ")")) {
            char* text = parts_join(&left, "");
            int bad = eval_floordiv(text, &dividend, g->err, g->errlen);
            free(text);
            if (bad) goto done;
        } else if (eval_floordiv(parts_last(&left), &dividend, g->err, g->errlen)) {
            goto done;
        }
        parts_push(&left, op);
        if (num_right > 1) {
            Parts right = {0};
            if (add_terms(g, num_right - 1, &right)) {
                parts_free(&right);
                goto done;
            }
            if (!strcmp(parts_last(&right), ")")) {
                char* text = parts_join(&right, "");
                int bad = eval_floordiv(text, &rv, g->err, g->errlen);
                free(text);
                if (bad) {
                    parts_free(&right);
                    goto done;
                }
                if (bigint_is_zero(&rv)) {
                    bigint_set_i64(&tmp, 1);
                } else {
                    if (choose_common_divisor(g, &dividend, &rv, &tmp)) {
                        parts_free(&right);
                        goto done;
                    }
                    bigint_sub(&tmp, &tmp, &rv); /* correction = target - right_value */
                }
                free(right.s[--right.n]);
                parts_push(&right, "+");
                parts_push_int(&right, &tmp);
                parts_push(&right, ")");
            } else {
                if (!bigint_is_zero(&dividend)) {
                    bigint_set_i64(&rv, 0);
                    if (choose_common_divisor(g, &dividend, &rv, &tmp)) {
                        parts_free(&right);
                        goto done;
                    }
                } else {
                    bigint_set_i64(&tmp, pyrandom_randint(&g->rng, 1, g->top));
                }
                parts_push_int(&left, &tmp);
                parts_push(&left, "+");
            }
            parts_extend(&left, &right);
        } else {
            if (!bigint_is_zero(&dividend)) {
                bigint_set_i64(&rv, 0);
                if (choose_common_divisor(g, &dividend, &rv, &tmp)) goto done;
            } else {
                bigint_set_i64(&tmp, pyrandom_randint(&g->rng, 1, g->top));
            }
            parts_push_int(&left, &tmp);
        }
    }
    parts_extend(out, &left);
    rc = 0;
done:
    parts_free(&left);
    bigint_free(&dividend);
    bigint_free(&rv);
    bigint_free(&tmp);
    return rc;
}

/* Python's str.replace(old, new) for same-length old/new, in place. */
static void replace_same_len(char* s, const char* old, const char* rep) {
    size_t n = strlen(old);
    for (char* p = strstr(s, old); p; p = strstr(p + n, old)) memcpy(p, rep, n);
}

static int complex_task(Gen* g, int64_t num_terms, char** expression, BigInt* result) {
    Parts parts = {0};
    if (add_terms(g, num_terms, &parts)) {
        parts_free(&parts);
        return -1;
    }
    char* expr;
    if (g->c->whitespace == WS_NO_SPACE) {
        expr = parts_join(&parts, "");
    } else if (g->c->whitespace == WS_SINGLE) {
        expr = parts_join(&parts, " ");
    } else {
        TextBuf b = {0};
        textbuf_append(&b, "");
        for (size_t i = 0; i < parts.n; i++) {
            if (pyrandom_random(&g->rng) < 0.15) textbuf_append(&b, " ");
            textbuf_append(&b, parts.s[i]);
        }
        char* raw = textbuf_take(&b);
        /* .strip(): only spaces can surround it here. */
        size_t start = 0, end = strlen(raw);
        while (raw[start] == ' ') start++;
        while (end > start && raw[end - 1] == ' ') end--;
        memmove(raw, raw + start, end - start);
        raw[end - start] = '\0';
        expr = raw;
    }
    parts_free(&parts);
    replace_same_len(expr, "/ 0", "/ 1");
    if (eval_floordiv(expr, result, g->err, g->errlen)) {
        free(expr);
        return -1;
    }
    *expression = expr;
    return 0;
}

/* rng.choice([d for d in range(2, bound) if result % d == 0]) into *out; 0 when the list is
 * empty, 1 when chosen, -1 on error. */
static int choose_range_divisor(Gen* g, const BigInt* result, int64_t bound, int64_t* out) {
    if (bound <= 2) return 0;
    if (bound <= 2000000) {
        size_t count = 0;
        for (int64_t d = 2; d < bound; d++) count += bigint_abs_mod_small(result, (uint32_t)d) == 0;
        if (!count) return 0;
        size_t j = pyrandom_choice_index(&g->rng, count);
        for (int64_t d = 2; d < bound; d++) {
            if (bigint_abs_mod_small(result, (uint32_t)d) == 0 && j-- == 0) {
                *out = d;
                return 1;
            }
        }
        return 0; /* not reached */
    }
    unsigned __int128 n, *ds;
    size_t nd;
    if (bigint_abs_u128(result, &n) || divisors_all(n, &ds, &nd))
        return set_error(g->err, g->errlen, NAME ": divisor list of a number >= 2^127 is beyond this port");
    size_t lo = 0, hi = 0;
    while (lo < nd && ds[lo] < 2) lo++;
    hi = lo;
    while (hi < nd && ds[hi] < (unsigned __int128)bound) hi++;
    int found = 0;
    if (hi > lo) {
        *out = (int64_t)ds[lo + pyrandom_choice_index(&g->rng, hi - lo)];
        found = 1;
    }
    free(ds);
    return found;
}

static int simple_task(Gen* g, int64_t num_terms, char** expression, BigInt* result) {
    const BasicConfig* c = g->c;
    int64_t* k = mallocCheck((size_t)num_terms * sizeof(int64_t));
    char* ops = mallocCheck((size_t)num_terms);
    for (int64_t i = 0; i < num_terms; i++) k[i] = pyrandom_randint(&g->rng, 0, g->top + 1);
    for (int64_t i = 0; i + 1 < num_terms; i++) ops[i] = c->ops[pyrandom_choice_index(&g->rng, c->n_ops)];
    TextBuf b = {0};
    textbuf_printf(&b, "%lld", (long long)k[0]);
    bigint_set_i64(result, k[0]);
    BigInt v;
    bigint_init(&v);
    int rc = 0;
    for (int64_t i = 0; i + 1 < num_terms && rc == 0; i++) {
        int64_t cst = k[i + 1];
        textbuf_printf(&b, " %c %lld", ops[i], (long long)cst); /* the text keeps the drawn constant */
        if (ops[i] == '/') {
            /* range(2, min(abs(result), 10**num_digits)) */
            BigInt bound_b;
            bigint_init(&bound_b);
            bigint_abs(&bound_b, result);
            int64_t bound = g->top + 1, absr;
            if (bigint_get_i64(&bound_b, &absr) == 0 && absr < bound) bound = absr;
            bigint_free(&bound_b);
            int64_t d = 0;
            int got = choose_range_divisor(g, result, bound, &d);
            if (got < 0) {
                rc = -1;
            } else if (got) {
                bigint_set_i64(&v, d);
                bigint_divmod_floor(result, NULL, result, &v);
            } else {
                bigint_set_i64(&v, pyrandom_randint(&g->rng, 1, g->top));
                bigint_mul(result, result, &v);
            }
        } else {
            bigint_set_i64(&v, cst);
            if (ops[i] == '+') bigint_add(result, result, &v);
            else if (ops[i] == '-') bigint_sub(result, result, &v);
            else bigint_mul(result, result, &v);
        }
    }
    bigint_free(&v);
    free(k);
    free(ops);
    if (rc) {
        textbuf_free(&b);
        return -1;
    }
    *expression = textbuf_take(&b);
    return 0;
}

static cJSON* pair_array(int64_t a, int64_t b) {
    cJSON* arr = cJSON_CreateArray();
    cJSON_AddItemToArray(arr, cJSON_CreateNumber((double)a));
    cJSON_AddItemToArray(arr, cJSON_CreateNumber((double)b));
    return arr;
}

static int basic_generate(const cJSON* config, int64_t seed, int64_t index, TaskItem* out, char* err, size_t errlen) {
    BasicConfig c;
    if (basic_config(config, &c, err, errlen)) return -1;
    Gen g;
    g.c = &c;
    g.err = err;
    g.errlen = errlen;
    pyrandom_seed(&g.rng, seed + index);
    int64_t num_terms = pyrandom_randint(&g.rng, c.min_terms, c.max_terms);
    int64_t num_digits = pyrandom_randint(&g.rng, c.min_digits, c.max_digits);
    g.top = 1;
    for (int64_t i = 0; i < num_digits; i++) g.top *= 10;
    g.top -= 1;

    char* expression = NULL;
    BigInt result;
    bigint_init(&result);
    int rc = c.allow_parentheses ? complex_task(&g, num_terms, &expression, &result)
                                 : simple_task(&g, num_terms, &expression, &result);
    if (rc) {
        bigint_free(&result);
        return -1;
    }
    TextBuf q = {0};
    if (c.format_simple) {
        textbuf_printf(&q, "Calculate %s.", expression);
    } else {
        static const char* const templates[4][2] = {{"What is ", "?"}, {"Solve ", "."}, {"Compute ", "."},
                                                    {"Evaluate: ", "."}};
        size_t t = pyrandom_choice_index(&g.rng, 4);
        textbuf_printf(&q, "%s%s%s", templates[t][0], expression, templates[t][1]);
    }
    out->question = textbuf_take(&q);
    out->answer = bigint_to_string(&result);
    bigint_free(&result);

    cJSON* m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "source_dataset", NAME);
    cJSON_AddNumberToObject(m, "source_index", (double)index);
    cJSON_AddStringToObject(m, "expression", expression);
    cJSON_AddNumberToObject(m, "num_terms", (double)num_terms);
    cJSON_AddNumberToObject(m, "num_digits", (double)num_digits);
    cJSON* diff = cJSON_AddObjectToObject(m, "difficulty");
    cJSON_AddItemToObject(diff, "num_terms", pair_array(c.min_terms, c.max_terms));
    cJSON_AddItemToObject(diff, "num_digits", pair_array(c.min_digits, c.max_digits));
    out->metadata = m;
    free(expression);
    return 0;
}

const TaskSpec task_basic_arithmetic = {
    .name = NAME,
    .generate = basic_generate,
    .score = task_default_score_answer,
    .preset_paper = "{\"min_terms\": 2, \"max_terms\": 6, \"min_digits\": 1, \"max_digits\": 4, "
                    "\"operators\": [\"+\", \"-\", \"*\", \"/\"], \"allow_parentheses\": true, "
                    "\"allow_negation\": true, \"format_style\": \"natural\", \"whitespace\": \"single\"}",
    /* Two or three one-digit terms, no division, no negated groups. */
    .preset_small = "{\"min_terms\": 2, \"max_terms\": 3, \"min_digits\": 1, \"max_digits\": 1, "
                    "\"operators\": [\"+\", \"-\", \"*\"], \"allow_parentheses\": true, "
                    "\"allow_negation\": false, \"format_style\": \"simple\", \"whitespace\": \"single\"}",
    /* "Calculate a + b." / "a - b" with 0 <= a, b <= 10 (the package's chain mode). */
    .preset_tiny = "{\"min_terms\": 2, \"max_terms\": 2, \"min_digits\": 1, \"max_digits\": 1, "
                   "\"operators\": [\"+\", \"-\"], \"allow_parentheses\": false, "
                   "\"allow_negation\": false, \"format_style\": \"simple\", \"whitespace\": \"single\"}",
};
