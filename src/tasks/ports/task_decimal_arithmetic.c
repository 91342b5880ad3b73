/* reasoning_gym 0.1.25 `decimal_arithmetic`: evaluate an expression of decimals with
 * Python's decimal module at a given precision.
 * Generator: per term a number of decimal places and a value raw/10^places written with
 * exactly that many decimals, an operator from + - * / between terms, a random recursive
 * grouping with 50% parentheses per group; the text is then parsed with Python's precedence
 * (ast), every literal becoming Decimal(str(float(literal))) -- so "2.500" enters as 2.5 and
 * "3.000" as 3.0 -- and evaluated in a context of `precision` digits, ROUND_HALF_EVEN; the
 * answer is str() of the result (scientific notation when the package's str() uses it). An
 * item on which Python raises (division by a zero group) is an error here too.
 * Verifier: the package's score_answer as rl-swarm calls it, get_score_answer_fn(name), i.e.
 * a dataset with the DEFAULT config: 1.0 when Decimal(answer) is within 10^-3 (the default
 * max_num_decimal_places, whatever config generated the entry) of Decimal(oracle), else 0.0.
 * The difference is rounded in the decimal context the package's generation leaves behind,
 * whose precision is the generating dataset's: read back from the question text (Python's
 * default 28 when the question does not name one). A dataset's own ds.score_answer with
 * another max_num_decimal_places would use 10^-that instead; at the paper preset (3) the
 * two agree.
 * Limits of the port: decimal places 0..17 (randint over int64), precision <= 10000,
 * at most 200 terms. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "tasks/infra/task.h"
#include "tasks/infra/task_common.h"
#include "tasks/infra/taskcfg.h"
#include "tasks/infra/textbuf.h"
#include "tasks/pyemu/bigint.h"
#include "tasks/pyemu/pydecimal.h"
#include "tasks/pyemu/pyexpr.h"
#include "tasks/pyemu/pyrandom.h"

#define NAME "decimal_arithmetic"
#define MAX_PLACES_SUPPORTED 17
#define MAX_PRECISION_SUPPORTED 10000
#define MAX_TERMS_SUPPORTED 200
#define DEFAULT_MAX_PLACES 3 /* the package's default max_num_decimal_places */
#define PYTHON_DEFAULT_PREC 28

static const char QUESTION_HEAD[] = "Please solve this problem to a maximum of ";
static const char QUESTION_TAIL[] =
    " significant digits, rounding up from the half. Only reply with the final value.\n";

typedef struct {
    int64_t min_places, max_places, min_terms, max_terms, precision;
} DecConfig;

static int dec_config(const cJSON* cfg, DecConfig* c, char* err, size_t errlen) {
    static const char* const keys[] = {"min_num_decimal_places", "max_num_decimal_places", "min_terms", "max_terms",
                                       "precision", NULL};
    if (taskcfg_check_keys(cfg, NAME, keys, err, errlen)) return -1;
    if (taskcfg_int(cfg, NAME, "min_num_decimal_places", 3, &c->min_places, err, errlen) ||
        taskcfg_int(cfg, NAME, "max_num_decimal_places", 3, &c->max_places, err, errlen) ||
        taskcfg_int(cfg, NAME, "min_terms", 2, &c->min_terms, err, errlen) ||
        taskcfg_int(cfg, NAME, "max_terms", 6, &c->max_terms, err, errlen) ||
        taskcfg_int(cfg, NAME, "precision", 12, &c->precision, err, errlen))
        return -1;
    /* The package's validate(). */
    if (!(c->precision > c->max_places + 1))
        return set_error(err, errlen, NAME ": precision must be 2 or more higher than max_num_decimal_places");
    /* Setting the context: Python refuses a precision below 1. */
    if (c->precision < 1) return set_error(err, errlen, NAME ": precision must be >= 1 (decimal context)");
    if (c->precision > MAX_PRECISION_SUPPORTED)
        return set_error(err, errlen, NAME ": precision %lld is beyond this port's limit of %d", (long long)c->precision,
                         MAX_PRECISION_SUPPORTED);
    return 0;
}

/* ---- operands: Decimal(str(float(literal))) ---------------------------------------------- */

/* The Decimal that Python's ast + Decimal(str(node.value)) make of a literal: an integer
 * literal exactly; a float literal through the double's shortest repr, which uses
 * exponent notation (no ".0" padding) when decpt <= -4 or decpt > 16. */
static void literal_decimal(const char* tok, size_t len, PyDec* out) {
    BigInt coef;
    bigint_init(&coef);
    if (!memchr(tok, '.', len)) {
        bigint_set_digits(&coef, tok, len);
        pydec_set(out, 0, &coef, 0);
        bigint_free(&coef);
        return;
    }
    char buf[64];
    char* text = mallocCheck(len + 1);
    memcpy(text, tok, len);
    text[len] = '\0';
    double x = strtod(text, NULL);
    free(text);
    /* Shortest round-tripping digits: the first precision whose correctly rounded form reads
     * back as the same double. */
    int p;
    for (p = 1; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*e", p - 1, x);
        if (strtod(buf, NULL) == x) break;
    }
    /* buf = d[.ddd]e±XX */
    char digits[32];
    size_t nd = 0;
    const char* q = buf;
    for (; *q && *q != 'e'; q++)
        if (*q >= '0' && *q <= '9') digits[nd++] = *q;
    long e10 = strtol(q + 1, NULL, 10);
    while (nd > 1 && digits[nd - 1] == '0') nd--;
    long decpt = e10 + 1;
    int64_t exp = (int64_t)decpt - (int64_t)nd; /* exponent of the last digit */
    bigint_set_digits(&coef, digits, nd);
    int sci = decpt <= -4 || decpt > 16;
    if (!sci && exp > -1) {
        /* Plain repr always shows a fractional digit: 10.0 is coefficient 100, exponent -1. */
        bigint_mul_pow10(&coef, &coef, (size_t)(exp + 1));
        exp = -1;
    }
    pydec_set(out, 0, &coef, exp);
    bigint_free(&coef);
}

/* ---- evaluating the expression text with Python's precedence ------------------------------ */

static void dec_value_init(void* v) { pydec_init(v); }
static void dec_value_free(void* v) { pydec_free(v); }
static void dec_literal(void* v, const char* text, size_t len, void* ctx) { literal_decimal(text, len, v); }

/* acc = acc op rhs in the context (ctx, a PyDecContext). */
static const char* dec_binary(char op, void* acc, const void* rhs, void* ctx) {
    PyDecStatus st = op == '+'   ? pydec_add(acc, acc, rhs, ctx)
                     : op == '-' ? pydec_sub(acc, acc, rhs, ctx)
                     : op == '*' ? pydec_mul(acc, acc, rhs, ctx)
                                 : pydec_div(acc, acc, rhs, ctx);
    if (st == PYDEC_OK) return NULL;
    return st == PYDEC_DIVZERO ? "decimal.DivisionByZero" : st == PYDEC_OVERFLOW ? "decimal.Overflow"
                                                                                 : "decimal.InvalidOperation";
}

/* The generated texts have no unary signs (negate NULL): every literal is positive. */
static const PyExprOps DEC_OPS = {sizeof(PyDec), dec_value_init, dec_value_free, 1, dec_literal, NULL, dec_binary};

/* ---- the generator ------------------------------------------------------------------------- */

typedef struct {
    char** operand; /* texts with exactly their number of decimals */
    char* op;       /* op[k] joins operand k and k + 1 */
} Terms;

/* build_grouped_expression over operand[lo:hi] and op[lo:hi-1]. */
static void build_grouped(PyRandom* rng, const Terms* t, int64_t lo, int64_t hi, TextBuf* out) {
    if (hi - lo == 1) {
        textbuf_append(out, t->operand[lo]);
        return;
    }
    int64_t split = pyrandom_randint(rng, 1, hi - lo - 1);
    TextBuf left = {0}, right = {0};
    textbuf_append(&left, "");
    textbuf_append(&right, "");
    build_grouped(rng, t, lo, lo + split, &left);
    build_grouped(rng, t, lo + split, hi, &right);
    int paren = pyrandom_choice_index(rng, 2) == 0; /* choice([True, False]) */
    if (paren) textbuf_append(out, "(");
    textbuf_append(out, left.data);
    textbuf_append_n(out, &t->op[lo + split - 1], 1);
    textbuf_append(out, right.data);
    if (paren) textbuf_append(out, ")");
    textbuf_free(&left);
    textbuf_free(&right);
}

static cJSON* pair_array(int64_t a, int64_t b) {
    cJSON* arr = cJSON_CreateArray();
    cJSON_AddItemToArray(arr, cJSON_CreateNumber((double)a));
    cJSON_AddItemToArray(arr, cJSON_CreateNumber((double)b));
    return arr;
}

static int dec_generate(const cJSON* config, int64_t seed, int64_t index, TaskItem* out, char* err, size_t errlen) {
    DecConfig c;
    if (dec_config(config, &c, err, errlen)) return -1;
    PyRandom rng;
    pyrandom_seed(&rng, seed + index);
    int64_t terms = pyrandom_randint(&rng, c.min_terms, c.max_terms);
    if (terms < 1)
        return set_error(err, errlen, NAME ": %lld terms drawn; the package raises ValueError on an empty expression",
                         (long long)terms);
    if (terms > MAX_TERMS_SUPPORTED)
        return set_error(err, errlen, NAME ": %lld terms is beyond this port's limit of %d", (long long)terms,
                         MAX_TERMS_SUPPORTED);
    static const char OPS[4] = {'+', '-', '*', '/'};
    Terms t;
    t.operand = callocCheck((size_t)terms, sizeof(char*));
    t.op = callocCheck((size_t)terms, 1);
    int64_t max_places = 1;
    int rc = 0;
    for (int64_t i = 0; i < terms; i++) {
        int64_t places = pyrandom_randint(&rng, c.min_places, c.max_places);
        if (places < 0 || places > MAX_PLACES_SUPPORTED) {
            rc = set_error(err, errlen,
                           places < 0 ? NAME ": %lld decimal places drawn; the package raises formatting it"
                                      : NAME ": %lld decimal places is beyond this port's limit",
                           (long long)places);
            break;
        }
        if (places > max_places) max_places = places;
        int64_t scale = 1;
        for (int64_t k = 0; k < places; k++) scale *= 10;
        int64_t raw = pyrandom_randint(&rng, 1, 10 * scale);
        char buf[48];
        if (places == 0) snprintf(buf, sizeof buf, "%lld", (long long)raw);
        else snprintf(buf, sizeof buf, "%lld.%0*lld", (long long)(raw / scale), (int)places, (long long)(raw % scale));
        t.operand[i] = strdup(buf);
        if (!t.operand[i]) sapo_die("out of memory");
        if (i < terms - 1) t.op[i] = OPS[pyrandom_choice_index(&rng, 4)];
    }
    char* expr = NULL;
    PyDec value;
    pydec_init(&value);
    if (rc == 0) {
        TextBuf e = {0};
        textbuf_append(&e, "");
        build_grouped(&rng, &t, 0, terms, &e);
        expr = textbuf_take(&e);
        PyDecContext ctx = {c.precision};
        const char* why;
        if (pyexpr_eval(expr, &DEC_OPS, &ctx, &value, &why))
            rc = set_error(err, errlen, NAME ": evaluating '%s' raises %s in the package too", expr, why);
    }
    for (int64_t i = 0; i < terms; i++) free(t.operand[i]);
    free(t.operand);
    free(t.op);
    if (rc) {
        free(expr);
        pydec_free(&value);
        return -1;
    }
    TextBuf q = {0};
    textbuf_printf(&q, "%s%lld%s%s = ?", QUESTION_HEAD, (long long)c.precision, QUESTION_TAIL, expr);
    out->question = textbuf_take(&q);
    out->answer = pydec_to_string(&value);
    pydec_free(&value);
    free(expr);

    cJSON* m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "source_dataset", NAME);
    cJSON_AddNumberToObject(m, "source_index", (double)index);
    cJSON_AddNumberToObject(m, "decimal_places", (double)max_places);
    cJSON_AddNumberToObject(m, "num_terms", (double)terms);
    cJSON* diff = cJSON_AddObjectToObject(m, "difficulty");
    cJSON_AddItemToObject(diff, "decimal_places", pair_array(c.min_places, c.max_places));
    cJSON_AddItemToObject(diff, "num_terms", pair_array(c.min_terms, c.max_terms));
    out->metadata = m;
    return 0;
}

/* ---- the verifier -------------------------------------------------------------------------- */

/* The precision named in the question, or Python's default context precision. */
static int64_t question_precision(const cJSON* entry) {
    const char* q = task_entry_question(entry, NULL); /* read up to a NUL: only its head matters */
    if (!q || strncmp(q, QUESTION_HEAD, sizeof QUESTION_HEAD - 1)) return PYTHON_DEFAULT_PREC;
    const char* p = q + sizeof QUESTION_HEAD - 1;
    int64_t v = 0;
    int n = 0;
    while (*p >= '0' && *p <= '9' && n < 7) v = v * 10 + (*p++ - '0'), n++;
    if (n == 0 || n >= 7 || strncmp(p, QUESTION_TAIL, sizeof QUESTION_TAIL - 1) || v < 1 ||
        v > MAX_PRECISION_SUPPORTED)
        return PYTHON_DEFAULT_PREC;
    return v;
}

static double dec_score(const char* answer, size_t len, const cJSON* entry) {
    size_t oracle_len = 0;
    const char* oracle = task_entry_answer(entry, &oracle_len);
    if (!answer || !oracle) return 0.0;
    const int64_t places = DEFAULT_MAX_PLACES;
    PyDecContext ctx = {question_precision(entry)};
    PyDec u, o, d;
    pydec_init(&u);
    pydec_init(&o);
    pydec_init(&d);
    double score = 0.0;
    if (pydec_parse(&u, answer, len) == 0 && pydec_parse(&o, oracle, oracle_len) == 0 &&
        u.kind == PYDEC_FINITE && o.kind == PYDEC_FINITE) {
        /* NaN and Infinity never score: NaN - x is NaN and NaN <= tol raises; sNaN raises;
         * inf - inf raises; inf - x is inf, above any tolerance. */
        if (pydec_sub(&d, &u, &o, &ctx) == PYDEC_OK) {
            score = pydec_cmp_abs_pow10(&d, -places) <= 0 ? 1.0 : 0.0;
        }
    }
    pydec_free(&u);
    pydec_free(&o);
    pydec_free(&d);
    return score;
}

const TaskSpec task_decimal_arithmetic = {
    .name = NAME,
    .generate = dec_generate,
    .score = dec_score,
    .preset_paper = "{\"min_terms\": 2, \"max_terms\": 6, \"min_num_decimal_places\": 1, "
                    "\"max_num_decimal_places\": 3, \"precision\": 5}",
    /* Two or three terms of one or two decimals, four significant digits. */
    .preset_small = "{\"min_terms\": 2, \"max_terms\": 3, \"min_num_decimal_places\": 1, "
                    "\"max_num_decimal_places\": 2, \"precision\": 4}",
    /* Two one-decimal terms, three significant digits. */
    .preset_tiny = "{\"min_terms\": 2, \"max_terms\": 2, \"min_num_decimal_places\": 1, "
                   "\"max_num_decimal_places\": 1, \"precision\": 3}",
};
