/* Drives the arithmetic under the basic_arithmetic / decimal_arithmetic ports for
 * test_arith_kernels.py (the ports themselves go through tool_task_check):
 *   tool_arith_check ops
 *       reads JSON arrays on stdin, one per line, and prints {"r": TEXT} or {"error": WHY}:
 *         ["int", OP, A, B]       OP in + - * // % gcd on Python int texts
 *         ["dec", OP, A, B, PREC] OP in + - * / on Decimal(A), Decimal(B); str() of it
 *         ["parse", S]            str(Decimal(S)), or the error
 *         ["divisors", N]         all divisors of N ascending, comma-separated */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tasks/ports/divisors.h"
#include "tasks/pyemu/bigint.h"
#include "tasks/pyemu/pydecimal.h"

static void print_json(cJSON* o) {
    char* text = cJSON_PrintUnformatted(o);
    puts(text);
    free(text);
    cJSON_Delete(o);
}

static void reply(const char* key, const char* text) {
    cJSON* o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, key, text);
    print_json(o);
}

static void reply_own(char* text) {
    reply("r", text);
    free(text);
}

static const char* arg(const cJSON* a, int i) {
    const cJSON* v = cJSON_GetArrayItem(a, i);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static void op_int(const cJSON* a) {
    const char* op = arg(a, 1);
    BigInt x, y, r;
    bigint_init(&x);
    bigint_init(&y);
    bigint_init(&r);
    const char* texts[2] = {arg(a, 2), arg(a, 3)};
    BigInt* vals[2] = {&x, &y};
    for (int k = 0; k < 2; k++) {
        const char* t = texts[k];
        int neg = *t == '-';
        bigint_set_digits(vals[k], t + neg, strlen(t + neg));
        if (neg) bigint_neg(vals[k], vals[k]);
    }
    int bad = 0;
    if (!strcmp(op, "+")) bigint_add(&r, &x, &y);
    else if (!strcmp(op, "-")) bigint_sub(&r, &x, &y);
    else if (!strcmp(op, "*")) bigint_mul(&r, &x, &y);
    else if (!strcmp(op, "//")) bad = bigint_divmod_floor(&r, NULL, &x, &y);
    else if (!strcmp(op, "%")) bad = bigint_divmod_floor(NULL, &r, &x, &y);
    else if (!strcmp(op, "gcd")) bigint_gcd(&r, &x, &y);
    else bad = 1;
    if (bad) reply("error", "ZeroDivisionError");
    else reply_own(bigint_to_string(&r));
    bigint_free(&x);
    bigint_free(&y);
    bigint_free(&r);
}

static void op_dec(const cJSON* a) {
    const char* op = arg(a, 1);
    PyDec x, y, r;
    pydec_init(&x);
    pydec_init(&y);
    pydec_init(&r);
    const cJSON* p = cJSON_GetArrayItem(a, 4);
    PyDecContext ctx = {cJSON_IsNumber(p) ? (int64_t)p->valuedouble : 28};
    if (pydec_parse(&x, arg(a, 2), strlen(arg(a, 2))) || pydec_parse(&y, arg(a, 3), strlen(arg(a, 3))) ||
        x.kind != PYDEC_FINITE || y.kind != PYDEC_FINITE) {
        reply("error", "operand");
    } else {
        PyDecStatus st = !strcmp(op, "+")   ? pydec_add(&r, &x, &y, &ctx)
                         : !strcmp(op, "-") ? pydec_sub(&r, &x, &y, &ctx)
                         : !strcmp(op, "*") ? pydec_mul(&r, &x, &y, &ctx)
                                            : pydec_div(&r, &x, &y, &ctx);
        if (st == PYDEC_OK) reply_own(pydec_to_string(&r));
        else reply("error", st == PYDEC_DIVZERO ? "DivisionByZero" : st == PYDEC_OVERFLOW ? "Overflow" : "InvalidOperation");
    }
    pydec_free(&x);
    pydec_free(&y);
    pydec_free(&r);
}

static void op_parse(const cJSON* a) {
    PyDec x;
    pydec_init(&x);
    const char* s = arg(a, 1);
    if (pydec_parse(&x, s, strlen(s))) reply("error", "InvalidOperation");
    else reply_own(pydec_to_string(&x));
    pydec_free(&x);
}

static void op_divisors(const cJSON* a) {
    BigInt n;
    bigint_init(&n);
    const char* t = arg(a, 1);
    bigint_set_digits(&n, t, strlen(t));
    unsigned __int128 v, *ds;
    size_t nd;
    if (bigint_abs_u128(&n, &v) || divisors_all(v, &ds, &nd)) {
        reply("error", "range");
    } else {
        char* out = NULL;
        size_t len = 0;
        FILE* f = open_memstream(&out, &len);
        BigInt d;
        bigint_init(&d);
        for (size_t i = 0; i < nd; i++) {
            bigint_set_u128(&d, ds[i]);
            char* s = bigint_to_string(&d);
            fprintf(f, i ? ",%s" : "%s", s);
            free(s);
        }
        fclose(f);
        bigint_free(&d);
        reply("r", out);
        free(out);
        free(ds);
    }
    bigint_free(&n);
}

static int cmd_ops(void) {
    char* line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, stdin) > 0) {
        cJSON* a = cJSON_Parse(line);
        const char* kind = arg(a, 0);
        if (!cJSON_IsArray(a)) reply("error", "bad request");
        else if (!strcmp(kind, "int")) op_int(a);
        else if (!strcmp(kind, "dec")) op_dec(a);
        else if (!strcmp(kind, "parse")) op_parse(a);
        else if (!strcmp(kind, "divisors")) op_divisors(a);
        else reply("error", "bad request");
        cJSON_Delete(a);
        fflush(stdout);
    }
    free(line);
    return 0;
}

int main(int argc, char** argv) {
    if (argc == 2 && !strcmp(argv[1], "ops")) return cmd_ops();
    fprintf(stderr, "usage: tool_arith_check ops\n");
    return 2;
}
