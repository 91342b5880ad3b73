/* Arbitrary-precision integers in base 10^9 (see bigint.h). Each operation computes into a
 * fresh temporary and then moves it into the result, so results may alias operands. */
#include "tasks/pyemu/bigint.h"

#include <stdlib.h>
#include <string.h>

#include "core/check.h"

static const uint32_t POW10[10] = {1u, 10u, 100u, 1000u, 10000u, 100000u, 1000000u, 10000000u, 100000000u,
                                   1000000000u};

static void reserve(BigInt* a, size_t n) {
    if (n <= a->cap) return;
    size_t cap = a->cap ? a->cap : 4;
    while (cap < n) cap *= 2;
    uint32_t* p = realloc(a->limb, cap * sizeof(uint32_t));
    if (!p) sapo_die("out of memory growing a big integer to %zu limbs", cap);
    a->limb = p;
    a->cap = cap;
}

static void trim(BigInt* a) {
    while (a->len && a->limb[a->len - 1] == 0) a->len--;
    if (!a->len) a->neg = 0;
}

void bigint_init(BigInt* a) {
    a->limb = NULL;
    a->len = a->cap = 0;
    a->neg = 0;
}

void bigint_free(BigInt* a) {
    free(a->limb);
    bigint_init(a);
}

void bigint_swap(BigInt* a, BigInt* b) {
    BigInt t = *a;
    *a = *b;
    *b = t;
}

void bigint_copy(BigInt* dst, const BigInt* src) {
    if (dst == src) return;
    reserve(dst, src->len);
    if (src->len) memcpy(dst->limb, src->limb, src->len * sizeof(uint32_t));
    dst->len = src->len;
    dst->neg = src->neg;
}

/* Moves tmp into r (freeing what r held). */
static void take(BigInt* r, BigInt* tmp) {
    bigint_free(r);
    *r = *tmp;
    bigint_init(tmp);
}

void bigint_set_u128(BigInt* a, unsigned __int128 v) {
    a->len = 0;
    a->neg = 0;
    reserve(a, 5);
    while (v) {
        a->limb[a->len++] = (uint32_t)(v % BIGINT_BASE);
        v /= BIGINT_BASE;
    }
}

void bigint_set_i64(BigInt* a, int64_t v) {
    uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    bigint_set_u128(a, mag);
    a->neg = v < 0;
}

int bigint_abs_u128(const BigInt* a, unsigned __int128* out) {
    if (a->len > 5) return -1;
    unsigned __int128 v = 0;
    for (size_t i = a->len; i-- > 0;) {
        unsigned __int128 max = ~(unsigned __int128)0;
        if (v > (max - a->limb[i]) / BIGINT_BASE) return -1;
        v = v * BIGINT_BASE + a->limb[i];
    }
    *out = v;
    return 0;
}

int bigint_get_i64(const BigInt* a, int64_t* out) {
    unsigned __int128 v;
    if (bigint_abs_u128(a, &v)) return -1;
    if (a->neg) {
        if (v > (unsigned __int128)INT64_MAX + 1) return -1;
        *out = (int64_t)(0 - (uint64_t)v);
    } else {
        if (v > (unsigned __int128)INT64_MAX) return -1;
        *out = (int64_t)v;
    }
    return 0;
}

void bigint_set_digits(BigInt* a, const char* digits, size_t n) {
    a->len = 0;
    a->neg = 0;
    reserve(a, n / 9 + 1);
    /* Nine digits per limb, from the least significant end. */
    size_t end = n;
    while (end > 0) {
        size_t start = end >= 9 ? end - 9 : 0;
        uint32_t v = 0;
        for (size_t i = start; i < end; i++) v = v * 10u + (uint32_t)(digits[i] - '0');
        a->limb[a->len++] = v;
        end = start;
    }
    trim(a);
}

size_t bigint_ndigits(const BigInt* a) {
    if (!a->len) return 1;
    uint32_t top = a->limb[a->len - 1];
    size_t d = 1;
    while (d < 10 && top >= POW10[d]) d++;
    return (a->len - 1) * 9 + d;
}

void bigint_abs_digits(const BigInt* a, char* out) {
    if (!a->len) {
        strcpy(out, "0");
        return;
    }
    size_t n = bigint_ndigits(a), pos = n;
    out[n] = '\0';
    for (size_t i = 0; i < a->len; i++) {
        uint32_t v = a->limb[i];
        int k = i + 1 < a->len ? 9 : (int)(n - 9 * (a->len - 1));
        for (int j = 0; j < k; j++) {
            out[--pos] = (char)('0' + v % 10u);
            v /= 10u;
        }
    }
}

char* bigint_to_string(const BigInt* a) {
    size_t n = bigint_ndigits(a);
    char* s = mallocCheck(n + 2);
    s[0] = '-';
    bigint_abs_digits(a, s + (a->neg ? 1 : 0));
    return s;
}

int bigint_is_zero(const BigInt* a) { return a->len == 0; }

int bigint_is_odd(const BigInt* a) { return a->len && (a->limb[0] & 1u); }

static int mag_cmp(const uint32_t* a, size_t an, const uint32_t* b, size_t bn) {
    if (an != bn) return an < bn ? -1 : 1;
    for (size_t i = an; i-- > 0;)
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    return 0;
}

int bigint_cmp_abs(const BigInt* a, const BigInt* b) { return mag_cmp(a->limb, a->len, b->limb, b->len); }

int bigint_cmp(const BigInt* a, const BigInt* b) {
    if (a->neg != b->neg) return a->neg ? -1 : 1;
    int c = bigint_cmp_abs(a, b);
    return a->neg ? -c : c;
}

void bigint_neg(BigInt* r, const BigInt* a) {
    bigint_copy(r, a);
    if (r->len) r->neg = !r->neg;
}

void bigint_abs(BigInt* r, const BigInt* a) {
    bigint_copy(r, a);
    r->neg = 0;
}

/* r = |a| + |b| (r fresh). */
static void mag_add(BigInt* r, const BigInt* a, const BigInt* b) {
    size_t n = a->len > b->len ? a->len : b->len;
    reserve(r, n + 1);
    uint32_t carry = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t s = carry + (i < a->len ? a->limb[i] : 0) + (i < b->len ? b->limb[i] : 0);
        carry = s >= BIGINT_BASE;
        r->limb[i] = carry ? s - BIGINT_BASE : s;
    }
    r->limb[n] = carry;
    r->len = n + 1;
    r->neg = 0;
    trim(r);
}

/* r = |a| - |b| for |a| >= |b| (r fresh). */
static void mag_sub(BigInt* r, const BigInt* a, const BigInt* b) {
    reserve(r, a->len);
    int64_t borrow = 0;
    for (size_t i = 0; i < a->len; i++) {
        int64_t d = (int64_t)a->limb[i] - borrow - (i < b->len ? (int64_t)b->limb[i] : 0);
        borrow = d < 0;
        r->limb[i] = (uint32_t)(d < 0 ? d + BIGINT_BASE : d);
    }
    r->len = a->len;
    r->neg = 0;
    trim(r);
}

/* r = a + (b_neg ? -|b| : |b|) with the sign of a, b given explicitly. */
static void signed_add(BigInt* r, const BigInt* a, const BigInt* b, int b_neg) {
    BigInt t;
    bigint_init(&t);
    if (a->neg == b_neg) {
        mag_add(&t, a, b);
        t.neg = t.len ? a->neg : 0;
    } else if (bigint_cmp_abs(a, b) >= 0) {
        mag_sub(&t, a, b);
        t.neg = t.len ? a->neg : 0;
    } else {
        mag_sub(&t, b, a);
        t.neg = t.len ? b_neg : 0;
    }
    take(r, &t);
}

void bigint_add(BigInt* r, const BigInt* a, const BigInt* b) { signed_add(r, a, b, b->neg); }

void bigint_sub(BigInt* r, const BigInt* a, const BigInt* b) { signed_add(r, a, b, b->len ? !b->neg : 0); }

void bigint_add_small(BigInt* r, const BigInt* a, uint32_t v) {
    BigInt b;
    bigint_init(&b);
    bigint_set_i64(&b, (int64_t)v);
    bigint_add(r, a, &b);
    bigint_free(&b);
}

void bigint_mul(BigInt* r, const BigInt* a, const BigInt* b) {
    BigInt t;
    bigint_init(&t);
    if (a->len && b->len) {
        size_t n = a->len + b->len;
        reserve(&t, n);
        memset(t.limb, 0, n * sizeof(uint32_t));
        for (size_t i = 0; i < a->len; i++) {
            uint64_t carry = 0;
            for (size_t j = 0; j < b->len; j++) {
                uint64_t cur = t.limb[i + j] + (uint64_t)a->limb[i] * b->limb[j] + carry;
                t.limb[i + j] = (uint32_t)(cur % BIGINT_BASE);
                carry = cur / BIGINT_BASE;
            }
            for (size_t k = i + b->len; carry; k++) {
                uint64_t cur = t.limb[k] + carry;
                t.limb[k] = (uint32_t)(cur % BIGINT_BASE);
                carry = cur / BIGINT_BASE;
            }
        }
        t.len = n;
        t.neg = a->neg != b->neg;
        trim(&t);
    }
    take(r, &t);
}

/* r = |b| * m for m < BIGINT_BASE (r fresh). */
static void mag_mul_small(BigInt* r, const BigInt* b, uint32_t m) {
    reserve(r, b->len + 1);
    uint64_t carry = 0;
    for (size_t i = 0; i < b->len; i++) {
        uint64_t cur = (uint64_t)b->limb[i] * m + carry;
        r->limb[i] = (uint32_t)(cur % BIGINT_BASE);
        carry = cur / BIGINT_BASE;
    }
    r->limb[b->len] = (uint32_t)carry;
    r->len = b->len + 1;
    r->neg = 0;
    trim(r);
}

/* Limb i of a magnitude, 0 past its length. */
static uint32_t limb_at(const BigInt* a, size_t i) { return i < a->len ? a->limb[i] : 0; }

/* Truncating division of magnitudes: q = |a| / |b|, m = |a| % |b|, b nonzero (q, m fresh).
 * Schoolbook long division one base-10^9 limb at a time. Each quotient limb is estimated
 * from the top three limbs of the running remainder over the top two of the divisor (off by
 * at most a unit or two) and then corrected by exact comparison, so the result never rests
 * on the estimate. */
static void mag_divmod(BigInt* q, BigInt* m, const BigInt* a, const BigInt* b) {
    BigInt bm, prod, t;
    bigint_init(&bm);
    bigint_init(&prod);
    bigint_init(&t);
    bigint_abs(&bm, b);
    q->len = 0;
    q->neg = 0;
    m->len = 0;
    m->neg = 0;
    reserve(q, a->len + 1);
    if (a->len) memset(q->limb, 0, a->len * sizeof(uint32_t));
    const size_t bn = bm.len;
    if (bn == 1) {
        uint64_t rem = 0, d = bm.limb[0];
        for (size_t i = a->len; i-- > 0;) {
            uint64_t cur = rem * BIGINT_BASE + a->limb[i];
            q->limb[i] = (uint32_t)(cur / d);
            rem = cur % d;
        }
        q->len = a->len;
        trim(q);
        bigint_set_u128(m, rem);
    } else {
        const unsigned __int128 base = BIGINT_BASE;
        const uint64_t b2 = (uint64_t)bm.limb[bn - 1] * BIGINT_BASE + bm.limb[bn - 2];
        for (size_t i = a->len; i-- > 0;) {
            /* m = m * BASE + a[i]; m < bm * BASE keeps it within bn + 1 limbs */
            reserve(m, m->len + 1);
            if (m->len) memmove(m->limb + 1, m->limb, m->len * sizeof(uint32_t));
            m->limb[0] = a->limb[i];
            m->len++;
            trim(m);
            if (bigint_cmp_abs(m, &bm) < 0) continue;
            unsigned __int128 r3 = ((unsigned __int128)limb_at(m, bn) * base + limb_at(m, bn - 1)) * base +
                                   limb_at(m, bn - 2);
            unsigned __int128 est = r3 / b2;
            uint32_t qh = est > BIGINT_BASE - 1 ? BIGINT_BASE - 1 : (uint32_t)est;
            mag_mul_small(&prod, &bm, qh);
            while (bigint_cmp_abs(&prod, m) > 0) {
                qh--;
                mag_sub(&t, &prod, &bm);
                bigint_swap(&prod, &t);
            }
            for (;;) {
                mag_add(&t, &prod, &bm);
                if (bigint_cmp_abs(&t, m) > 0) break;
                qh++;
                bigint_swap(&prod, &t);
            }
            mag_sub(&t, m, &prod);
            bigint_swap(m, &t);
            q->limb[i] = qh;
        }
        q->len = a->len;
        trim(q);
    }
    bigint_free(&bm);
    bigint_free(&prod);
    bigint_free(&t);
}

int bigint_divmod_floor(BigInt* q, BigInt* m, const BigInt* a, const BigInt* b) {
    if (!b->len) return -1;
    BigInt tq, tm;
    bigint_init(&tq);
    bigint_init(&tm);
    mag_divmod(&tq, &tm, a, b);
    int qneg = a->neg != b->neg;
    if (qneg && tm.len) {
        /* Floor: one more in magnitude for the quotient, remainder taken from |b|. */
        BigInt t;
        bigint_init(&t);
        bigint_add_small(&tq, &tq, 1);
        mag_sub(&t, b, &tm);
        take(&tm, &t);
    }
    tq.neg = tq.len ? qneg : 0;
    tm.neg = tm.len ? b->neg : 0;
    if (q) take(q, &tq);
    if (m) take(m, &tm);
    bigint_free(&tq);
    bigint_free(&tm);
    return 0;
}

uint32_t bigint_abs_mod_small(const BigInt* a, uint32_t v) {
    uint64_t rem = 0;
    for (size_t i = a->len; i-- > 0;) rem = (rem * BIGINT_BASE + a->limb[i]) % v;
    return (uint32_t)rem;
}

void bigint_gcd(BigInt* r, const BigInt* a, const BigInt* b) {
    BigInt x, y, t;
    bigint_init(&x);
    bigint_init(&y);
    bigint_init(&t);
    bigint_abs(&x, a);
    bigint_abs(&y, b);
    while (y.len) {
        bigint_divmod_floor(NULL, &t, &x, &y);
        bigint_swap(&x, &y);
        bigint_swap(&y, &t);
    }
    take(r, &x);
    bigint_free(&y);
    bigint_free(&t);
}

void bigint_mul_pow10(BigInt* r, const BigInt* a, size_t k) {
    BigInt t, p;
    bigint_init(&t);
    bigint_init(&p);
    if (a->len) {
        size_t whole = k / 9;
        /* Shift by whole limbs, then multiply by the leftover power of ten. */
        reserve(&t, a->len + whole);
        memset(t.limb, 0, whole * sizeof(uint32_t));
        memcpy(t.limb + whole, a->limb, a->len * sizeof(uint32_t));
        t.len = a->len + whole;
        mag_mul_small(&p, &t, POW10[k % 9]);
        p.neg = a->neg;
    }
    take(r, &p);
    bigint_free(&t);
}

void bigint_divmod_pow10(BigInt* q, BigInt* m, const BigInt* a, size_t k) {
    size_t whole = k / 9;
    uint32_t part = POW10[k % 9];
    BigInt tq, tm;
    bigint_init(&tq);
    bigint_init(&tm);
    if (whole >= a->len) {
        bigint_copy(&tm, a);
    } else {
        /* Low `whole` limbs plus the low digits of the next limb form the remainder. */
        reserve(&tm, whole + 1);
        if (whole) memcpy(tm.limb, a->limb, whole * sizeof(uint32_t));
        tm.limb[whole] = a->limb[whole] % part;
        tm.len = whole + 1;
        trim(&tm);
        size_t n = a->len - whole;
        reserve(&tq, n);
        for (size_t i = 0; i < n; i++) {
            uint32_t lo = a->limb[whole + i] / part;
            uint32_t hi = whole + i + 1 < a->len ? a->limb[whole + i + 1] % part : 0;
            tq.limb[i] = lo + hi * (BIGINT_BASE / part);
        }
        tq.len = n;
        trim(&tq);
    }
    tm.neg = 0;
    if (q) take(q, &tq);
    if (m) take(m, &tm);
    bigint_free(&tq);
    bigint_free(&tm);
}

size_t bigint_trailing_zeros(const BigInt* a) {
    size_t z = 0, i = 0;
    if (!a->len) return 0;
    while (a->limb[i] == 0) {
        z += 9;
        i++;
    }
    uint32_t v = a->limb[i];
    while (v % 10u == 0) {
        v /= 10u;
        z++;
    }
    return z;
}
