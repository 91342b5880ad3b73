/* A small Decimal with Python's decimal-module semantics (see pydecimal.h). The rules
 * follow the General Decimal Arithmetic specification as CPython implements it: exact
 * result, then one rounding to the context precision (ROUND_HALF_EVEN), ideal exponents for
 * exact results, signed zeros, and the exponent limits that turn into Overflow or clamping.
 * Decimal(str) uses the constructor's own limits (MAX_PREC / MAX_EMAX / MIN_EMIN of 64-bit
 * libmpdec) and fails on anything it could not hold exactly. */
#include "tasks/pyemu/pydecimal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "tasks/pyemu/pyunicode.h"

/* The constructor's context (libmpdec, 64-bit): values must fit exactly within it. */
#define CTOR_EMAX 999999999999999999LL
#define CTOR_EMIN (-999999999999999999LL)
#define CTOR_PREC 999999999999999999LL
#define CTOR_ETINY (CTOR_EMIN - (CTOR_PREC - 1))

void pydec_init(PyDec* d) {
    d->kind = PYDEC_FINITE;
    d->neg = 0;
    bigint_init(&d->coef);
    d->exp = 0;
}

void pydec_free(PyDec* d) { bigint_free(&d->coef); }

void pydec_copy(PyDec* dst, const PyDec* src) {
    if (dst == src) return;
    dst->kind = src->kind;
    dst->neg = src->neg;
    dst->exp = src->exp;
    bigint_copy(&dst->coef, &src->coef);
}

void pydec_set(PyDec* d, int neg, const BigInt* coef, int64_t exp) {
    d->kind = PYDEC_FINITE;
    bigint_abs(&d->coef, coef);
    d->neg = neg ? 1 : 0;
    d->exp = exp;
}

/* ---- Decimal(str) ------------------------------------------------------------------------ */

/* The ASCII text CPython's constructor hands to libmpdec: surrounding Unicode whitespace
 * removed, every '_' dropped, other ASCII kept, inner non-ASCII whitespace as ' ', Unicode
 * decimal digits as '0'..'9'. Returns NULL for a character it rejects (NUL, other non-ASCII). */
static char* ctor_ascii(const char* s, size_t len, size_t* out_len) {
    size_t b, e;
    pyu_strip(s, len, &b, &e);
    char* t = mallocCheck(e - b + 1);
    size_t n = 0, i = b;
    while (i < e) {
        uint32_t cp = pyu_next(s, e, &i);
        if (cp == '_') continue;
        if (cp > 0 && cp <= 127) {
            t[n++] = (char)cp;
        } else if (pyu_isspace(cp)) {
            t[n++] = ' ';
        } else {
            int dv = pyu_decimal(cp);
            if (dv < 0) {
                free(t);
                return NULL;
            }
            t[n++] = (char)('0' + dv);
        }
    }
    t[n] = '\0';
    *out_len = n;
    return t;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Case-insensitive match of a lowercase ASCII word at s. */
static int match_word(const char* s, const char* word) {
    for (; *word; s++, word++) {
        char c = *s;
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != *word) return 0;
    }
    return 1;
}

/* Saturating a*10 + d for exponent text (libmpdec saturates an out-of-range exponent). */
static int64_t sat_push_digit(int64_t a, int d) {
    const int64_t lim = INT64_MAX / 4;
    if (a > (lim - d) / 10) return lim;
    return a * 10 + d;
}

int pydec_parse(PyDec* d, const char* s, size_t len) {
    size_t n;
    char* t = ctor_ascii(s, len, &n);
    if (!t) return -1;
    const char* p = t;
    int neg = 0, rc = -1;
    if (*p == '+') p++;
    else if (*p == '-') {
        neg = 1;
        p++;
    }
    d->neg = neg;
    bigint_set_i64(&d->coef, 0);
    d->exp = 0;
    if (match_word(p, "nan") || match_word(p, "snan")) {
        /* An optional payload of digits; the constructor's precision bounds it by 10^18. */
        d->kind = match_word(p, "nan") ? PYDEC_NAN : PYDEC_SNAN;
        p += d->kind == PYDEC_NAN ? 3 : 4;
        while (is_digit(*p)) p++;
        rc = *p ? -1 : 0;
    } else if (match_word(p, "inf")) {
        d->kind = PYDEC_INF;
        p += 3;
        if (*p && match_word(p, "inity")) p += 5;
        rc = *p ? -1 : 0;
    } else {
        /* digits [ '.' digits ] with at least one digit, then [ e [sign] digits ]. */
        const char* int_start = p;
        while (is_digit(*p)) p++;
        size_t n_int = (size_t)(p - int_start), n_frac = 0;
        const char* frac_start = p;
        if (*p == '.') {
            frac_start = ++p;
            while (is_digit(*p)) p++;
            n_frac = (size_t)(p - frac_start);
        }
        int64_t e = 0;
        int ok = n_int + n_frac > 0;
        if (ok && (*p == 'e' || *p == 'E')) {
            p++;
            int eneg = 0;
            if (*p == '+' || *p == '-') eneg = *p++ == '-';
            if (!is_digit(*p)) ok = 0;
            while (is_digit(*p)) e = sat_push_digit(e, *p++ - '0');
            if (eneg) e = -e;
        }
        if (ok && !*p) {
            d->kind = PYDEC_FINITE;
            char* digits = mallocCheck(n_int + n_frac + 1);
            memcpy(digits, int_start, n_int);
            memcpy(digits + n_int, frac_start, n_frac);
            bigint_set_digits(&d->coef, digits, n_int + n_frac);
            free(digits);
            d->exp = e - (int64_t)n_frac;
            /* Exactness within the constructor's context: no overflow, nothing below Etiny,
             * and a zero's exponent must not need clamping. */
            if (bigint_is_zero(&d->coef)) {
                rc = d->exp > CTOR_EMAX || d->exp < CTOR_ETINY ? -1 : 0;
            } else {
                int64_t adj = d->exp + (int64_t)bigint_ndigits(&d->coef) - 1;
                rc = adj > CTOR_EMAX || d->exp < CTOR_ETINY ? -1 : 0;
            }
        }
    }
    free(t);
    return rc;
}

/* ---- rounding to the context ------------------------------------------------------------- */

/* Drops the k lowest digits of the coefficient, rounding half to even. */
static void round_drop(BigInt* coef, int64_t k) {
    if (k <= 0) return;
    size_t nd = bigint_ndigits(coef);
    if ((uint64_t)k > nd) {
        /* Everything dropped is below half of 10^k: rounds to zero. */
        bigint_set_i64(coef, 0);
        return;
    }
    BigInt q, r, half;
    bigint_init(&q);
    bigint_init(&r);
    bigint_init(&half);
    bigint_divmod_pow10(&q, &r, coef, (size_t)k);
    /* Compare the remainder with 5 * 10^(k-1). */
    bigint_set_i64(&half, 5);
    bigint_mul_pow10(&half, &half, (size_t)k - 1);
    int c = bigint_cmp(&r, &half);
    if (c > 0 || (c == 0 && bigint_is_odd(&q))) bigint_add_small(&q, &q, 1);
    bigint_swap(coef, &q);
    bigint_free(&q);
    bigint_free(&r);
    bigint_free(&half);
}

/* Python's _fix: round a finite value to the context and apply the exponent limits. */
static PyDecStatus pydec_fix(PyDec* d, const PyDecContext* ctx) {
    const int64_t etiny = PYDEC_EMIN - ctx->prec + 1, etop = PYDEC_EMAX - ctx->prec + 1;
    if (bigint_is_zero(&d->coef)) {
        /* Clamped (not trapped): a zero's exponent is pulled into [Etiny, Emax]. */
        if (d->exp < etiny) d->exp = etiny;
        if (d->exp > PYDEC_EMAX) d->exp = PYDEC_EMAX;
        return PYDEC_OK;
    }
    int64_t exp_min = (int64_t)bigint_ndigits(&d->coef) + d->exp - ctx->prec;
    if (exp_min > etop) return PYDEC_OVERFLOW;
    if (exp_min < etiny) exp_min = etiny; /* subnormal: fewer digits kept */
    if (d->exp < exp_min) {
        round_drop(&d->coef, exp_min - d->exp);
        d->exp = exp_min;
        if ((int64_t)bigint_ndigits(&d->coef) > ctx->prec) {
            /* Rounded 99..9 up to 10..0: one digit too many. */
            bigint_divmod_pow10(&d->coef, NULL, &d->coef, 1);
            d->exp++;
            if (d->exp > etop) return PYDEC_OVERFLOW;
        }
    }
    return PYDEC_OK;
}

/* ---- arithmetic -------------------------------------------------------------------------- */

/* r = a + (b_neg ? -|b| : |b|) with b's sign given, exact then rounded. */
static PyDecStatus add_signed(PyDec* r, const PyDec* a, const PyDec* b, int b_neg, const PyDecContext* ctx) {
    PyDec x, y, out;
    pydec_init(&x);
    pydec_init(&y);
    pydec_init(&out);
    pydec_copy(&x, a);
    pydec_copy(&y, b);
    y.neg = b_neg;
    int64_t exp = x.exp < y.exp ? x.exp : y.exp;
    int xz = bigint_is_zero(&x.coef), yz = bigint_is_zero(&y.coef);
    if (xz && yz) {
        out.neg = x.neg && y.neg;
        out.exp = exp;
    } else if (xz || yz) {
        /* 0 + v: v at the smaller exponent, but no lower than v's own exponent - prec - 1,
         * past which the extra zeros would only be rounded off again. */
        PyDec* v = xz ? &y : &x;
        int64_t floor_exp = v->exp - ctx->prec - 1;
        if (exp < floor_exp) exp = floor_exp;
        bigint_mul_pow10(&out.coef, &v->coef, (size_t)(v->exp - exp));
        out.neg = v->neg;
        out.exp = exp;
    } else {
        /* The operand with the larger exponent is `hi`. If the other lies wholly below
         * 10^lim, a digit position under both hi's last digit and its rounding digit, it
         * acts on the rounded sum exactly like 10^lim does: replace it by that, which keeps
         * the alignment shift small whatever the exponents are. */
        PyDec* hi = x.exp < y.exp ? &y : &x;
        PyDec* lo = hi == &x ? &y : &x;
        int64_t hlen = (int64_t)bigint_ndigits(&hi->coef), llen = (int64_t)bigint_ndigits(&lo->coef);
        int64_t room = hlen - ctx->prec - 2;
        int64_t lim = hi->exp + (room < -1 ? room : -1);
        if (llen + lo->exp - 1 < lim) {
            bigint_set_i64(&lo->coef, 1);
            lo->exp = lim;
        }
        bigint_mul_pow10(&hi->coef, &hi->coef, (size_t)(hi->exp - lo->exp));
        hi->exp = lo->exp;
        BigInt sa, sb;
        bigint_init(&sa);
        bigint_init(&sb);
        bigint_copy(&sa, &x.coef);
        sa.neg = x.neg && !bigint_is_zero(&sa);
        bigint_copy(&sb, &y.coef);
        sb.neg = y.neg && !bigint_is_zero(&sb);
        bigint_add(&out.coef, &sa, &sb);
        /* An exact zero sum of nonzero operands is +0 under ROUND_HALF_EVEN. */
        out.neg = out.coef.neg;
        out.coef.neg = 0;
        out.exp = lo->exp;
        bigint_free(&sa);
        bigint_free(&sb);
    }
    PyDecStatus st = pydec_fix(&out, ctx);
    if (st == PYDEC_OK) {
        out.kind = PYDEC_FINITE;
        pydec_copy(r, &out);
    }
    pydec_free(&x);
    pydec_free(&y);
    pydec_free(&out);
    return st;
}

PyDecStatus pydec_add(PyDec* r, const PyDec* a, const PyDec* b, const PyDecContext* ctx) {
    return add_signed(r, a, b, b->neg, ctx);
}

PyDecStatus pydec_sub(PyDec* r, const PyDec* a, const PyDec* b, const PyDecContext* ctx) {
    return add_signed(r, a, b, !b->neg, ctx);
}

PyDecStatus pydec_mul(PyDec* r, const PyDec* a, const PyDec* b, const PyDecContext* ctx) {
    PyDec out;
    pydec_init(&out);
    bigint_mul(&out.coef, &a->coef, &b->coef);
    out.coef.neg = 0;
    out.neg = a->neg != b->neg;
    out.exp = a->exp + b->exp;
    PyDecStatus st = pydec_fix(&out, ctx);
    if (st == PYDEC_OK) pydec_copy(r, &out);
    pydec_free(&out);
    return st;
}

PyDecStatus pydec_div(PyDec* r, const PyDec* a, const PyDec* b, const PyDecContext* ctx) {
    if (bigint_is_zero(&b->coef)) return bigint_is_zero(&a->coef) ? PYDEC_INVALID : PYDEC_DIVZERO;
    PyDec out;
    pydec_init(&out);
    out.neg = a->neg != b->neg;
    if (bigint_is_zero(&a->coef)) {
        out.exp = a->exp - b->exp;
    } else {
        /* A quotient of at least prec + 1 digits; a nonzero remainder becomes a sticky digit
         * (5 -> 6, 0 -> 1) so the final rounding sees it. An exact quotient sheds trailing
         * zeros down to the ideal exponent a.exp - b.exp. */
        int64_t shift = (int64_t)bigint_ndigits(&b->coef) - (int64_t)bigint_ndigits(&a->coef) + ctx->prec + 1;
        BigInt num, den, rem;
        bigint_init(&num);
        bigint_init(&den);
        bigint_init(&rem);
        if (shift >= 0) {
            bigint_mul_pow10(&num, &a->coef, (size_t)shift);
            bigint_abs(&den, &b->coef);
        } else {
            bigint_abs(&num, &a->coef);
            bigint_mul_pow10(&den, &b->coef, (size_t)-shift);
        }
        num.neg = den.neg = 0;
        bigint_divmod_floor(&out.coef, &rem, &num, &den);
        out.exp = a->exp - b->exp - shift;
        if (!bigint_is_zero(&rem)) {
            if (bigint_abs_mod_small(&out.coef, 5) == 0) bigint_add_small(&out.coef, &out.coef, 1);
        } else {
            const int64_t ideal = a->exp - b->exp;
            while (out.exp < ideal && bigint_abs_mod_small(&out.coef, 10) == 0) {
                bigint_divmod_pow10(&out.coef, NULL, &out.coef, 1);
                out.exp++;
            }
        }
        bigint_free(&num);
        bigint_free(&den);
        bigint_free(&rem);
    }
    PyDecStatus st = pydec_fix(&out, ctx);
    if (st == PYDEC_OK) pydec_copy(r, &out);
    pydec_free(&out);
    return st;
}

/* ---- str() and comparison ---------------------------------------------------------------- */

char* pydec_to_string(const PyDec* d) {
    const char* sign = d->neg ? "-" : "";
    if (d->kind == PYDEC_INF) {
        char* s = mallocCheck(10);
        strcpy(s, d->neg ? "-Infinity" : "Infinity");
        return s;
    }
    if (d->kind != PYDEC_FINITE) {
        char* s = mallocCheck(6);
        strcpy(s, d->kind == PYDEC_NAN ? (d->neg ? "-NaN" : "NaN") : (d->neg ? "-sNaN" : "sNaN"));
        return s;
    }
    size_t nd = bigint_ndigits(&d->coef);
    char* digits = mallocCheck(nd + 1);
    bigint_abs_digits(&d->coef, digits);
    /* Plain notation when the exponent is <= 0 and the number is not too small, else one
     * digit before the point and an exponent. */
    int64_t leftdigits = d->exp + (int64_t)nd;
    int64_t dot = (d->exp <= 0 && leftdigits > -6) ? leftdigits : 1;
    size_t cap = nd + (size_t)(dot < 0 ? -dot : 0) + (size_t)(dot > (int64_t)nd ? dot - (int64_t)nd : 0) + 32;
    char* s = mallocCheck(cap);
    size_t k = 0;
    for (const char* q = sign; *q; q++) s[k++] = *q;
    if (dot <= 0) {
        s[k++] = '0';
        s[k++] = '.';
        for (int64_t i = 0; i < -dot; i++) s[k++] = '0';
        memcpy(s + k, digits, nd);
        k += nd;
    } else if (dot >= (int64_t)nd) {
        memcpy(s + k, digits, nd);
        k += nd;
        for (int64_t i = 0; i < dot - (int64_t)nd; i++) s[k++] = '0';
    } else {
        memcpy(s + k, digits, (size_t)dot);
        k += (size_t)dot;
        s[k++] = '.';
        memcpy(s + k, digits + dot, nd - (size_t)dot);
        k += nd - (size_t)dot;
    }
    s[k] = '\0';
    if (leftdigits != dot) snprintf(s + k, cap - k, "E%+lld", (long long)(leftdigits - dot));
    free(digits);
    return s;
}

int pydec_cmp_abs_pow10(const PyDec* d, int64_t p) {
    if (bigint_is_zero(&d->coef)) return -1;
    size_t nd = bigint_ndigits(&d->coef);
    int64_t adj = d->exp + (int64_t)nd - 1;
    if (adj != p) return adj > p ? 1 : -1;
    /* Leading digit at 10^p: equal only when the coefficient is exactly 10^(nd-1). */
    BigInt pow;
    bigint_init(&pow);
    bigint_set_i64(&pow, 1);
    bigint_mul_pow10(&pow, &pow, nd - 1);
    int c = bigint_cmp_abs(&d->coef, &pow);
    bigint_free(&pow);
    return c == 0 ? 0 : 1;
}
