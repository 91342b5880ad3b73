/* Divisor enumeration by factoring (see divisors.h). Arithmetic modulo an odd n < 2^127 is
 * done in Montgomery form with R = 2^128, using a 128x128 -> 256-bit product built from
 * 64-bit halves, so no step overflows. */
#include "tasks/ports/divisors.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"

typedef unsigned __int128 u128;

#define LO64(x) ((uint64_t)(x))
#define HI64(x) ((uint64_t)((x) >> 64))

/* (hi, lo) = a * b. */
static void mul_wide(u128 a, u128 b, u128* hi, u128* lo) {
    u128 p00 = (u128)LO64(a) * LO64(b), p01 = (u128)LO64(a) * HI64(b);
    u128 p10 = (u128)HI64(a) * LO64(b), p11 = (u128)HI64(a) * HI64(b);
    u128 mid = (u128)HI64(p00) + LO64(p01) + LO64(p10);
    *lo = (u128)LO64(p00) | ((u128)LO64(mid) << 64);
    *hi = p11 + HI64(p01) + HI64(p10) + HI64(mid);
}

typedef struct {
    u128 n, ninv; /* ninv = -n^-1 mod 2^128 */
    u128 one;     /* R mod n */
    u128 r2;      /* R^2 mod n */
} Mont;

static void mont_init(Mont* m, u128 n) {
    u128 inv = n; /* right to 3 bits for odd n; each Newton step doubles that */
    for (int i = 0; i < 7; i++) inv *= 2 - n * inv;
    m->n = n;
    m->ninv = 0 - inv;
    m->one = (0 - n) % n;
    u128 x = m->one;
    for (int i = 0; i < 128; i++) {
        x <<= 1; /* x < n < 2^127, so no overflow */
        if (x >= n) x -= n;
    }
    m->r2 = x;
}

static u128 mont_redc(const Mont* m, u128 hi, u128 lo) {
    u128 q = lo * m->ninv, mh, ml;
    mul_wide(q, m->n, &mh, &ml);
    u128 t = hi + mh + (lo != 0); /* lo + ml == 0 mod 2^128 carries exactly when lo != 0 */
    return t >= m->n ? t - m->n : t;
}

static u128 mont_mul(const Mont* m, u128 a, u128 b) {
    u128 hi, lo;
    mul_wide(a, b, &hi, &lo);
    return mont_redc(m, hi, lo);
}

static u128 mont_from(const Mont* m, u128 a) { return mont_mul(m, a % m->n, m->r2); }

static u128 mont_add(const Mont* m, u128 a, u128 b) {
    u128 s = a + b; /* both < n < 2^127 */
    return s >= m->n ? s - m->n : s;
}

static u128 mont_pow(const Mont* m, u128 base, u128 e) {
    u128 r = m->one;
    while (e) {
        if (e & 1) r = mont_mul(m, r, base);
        base = mont_mul(m, base, base);
        e >>= 1;
    }
    return r;
}

static u128 gcd_u128(u128 a, u128 b) {
    while (b) {
        u128 t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static const uint32_t SMALL_PRIMES[24] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37,
                                          41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89};

int divisors_is_prime(u128 n) {
    if (n < 2) return 0;
    for (int i = 0; i < 24; i++) {
        if (n == SMALL_PRIMES[i]) return 1;
        if (n % SMALL_PRIMES[i] == 0) return 0;
    }
    if (n >> DIVISORS_MAX_BITS) return 0; /* callers never pass these */
    Mont m;
    mont_init(&m, n);
    u128 d = n - 1;
    int s = 0;
    while (!(d & 1)) {
        d >>= 1;
        s++;
    }
    const u128 minus_one = n - m.one;
    /* 3.3e24 < 2^82: the first 13 bases are a proven test below that. */
    int nbases = (n >> 81) ? 24 : 13;
    for (int i = 0; i < nbases; i++) {
        u128 x = mont_pow(&m, mont_from(&m, SMALL_PRIMES[i]), d);
        if (x == m.one || x == minus_one) continue;
        int witness = 1;
        for (int r = 1; r < s && witness; r++) {
            x = mont_mul(&m, x, x);
            if (x == minus_one) witness = 0;
        }
        if (witness) return 0;
    }
    return 1;
}

/* A nontrivial factor of an odd composite n with no prime factor below 1000 (Brent's
 * variant of Pollard rho, products batched before each gcd). */
static u128 rho_factor(u128 n) {
    Mont m;
    mont_init(&m, n);
    for (uint64_t c0 = 1;; c0++) {
        u128 c = mont_from(&m, c0), y = mont_from(&m, 2), x = y, ys = y, q = m.one, g = 1;
        uint64_t r = 1;
        const uint64_t batch = 128;
        do {
            x = y;
            for (uint64_t i = 0; i < r; i++) y = mont_add(&m, mont_mul(&m, y, y), c);
            for (uint64_t k = 0; k < r && g == 1; k += batch) {
                ys = y;
                for (uint64_t i = 0; i < batch && i < r - k; i++) {
                    y = mont_add(&m, mont_mul(&m, y, y), c);
                    u128 diff = x > y ? x - y : y - x;
                    q = mont_mul(&m, q, diff);
                }
                g = gcd_u128(q, n);
            }
            r *= 2;
        } while (g == 1);
        if (g == n) {
            /* The batch overshot: step one at a time from its start. */
            do {
                ys = mont_add(&m, mont_mul(&m, ys, ys), c);
                u128 diff = x > ys ? x - ys : ys - x;
                g = gcd_u128(diff, n);
            } while (g == 1);
        }
        if (g != n) return g;
        /* This constant found the whole n; try the next one. */
    }
}

typedef struct {
    u128* p;
    size_t n, cap;
} PrimeList;

static void primes_push(PrimeList* l, u128 p) {
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        u128* q = realloc(l->p, l->cap * sizeof(u128));
        if (!q) sapo_die("out of memory listing prime factors");
        l->p = q;
    }
    l->p[l->n++] = p;
}

/* Prime factors (with multiplicity) of an n with no factor below 1000. */
static void factor_large(u128 n, PrimeList* out) {
    if (n == 1) return;
    if (n < 1000000 || divisors_is_prime(n)) {
        primes_push(out, n);
        return;
    }
    u128 d = rho_factor(n);
    factor_large(d, out);
    factor_large(n / d, out);
}

static int cmp_u128(const void* a, const void* b) {
    u128 x = *(const u128*)a, y = *(const u128*)b;
    return x < y ? -1 : x > y;
}

int divisors_all(u128 n, u128** out, size_t* count) {
    *out = NULL;
    *count = 0;
    if (n == 0 || (n >> DIVISORS_MAX_BITS)) return -1;
    PrimeList f = {0};
    for (uint32_t p = 2; p < 1000 && (u128)p * p <= n; p += (p == 2 ? 1 : 2)) {
        while (n % p == 0) {
            primes_push(&f, p);
            n /= p;
        }
    }
    if (n > 1 && n < 1000000) {
        primes_push(&f, n); /* no factor below 1000 left, so n is prime */
        n = 1;
    }
    factor_large(n, &f);
    if (f.n) qsort(f.p, f.n, sizeof(u128), cmp_u128);
    /* Multiply out: for each distinct prime p^e, extend the list by p, p^2, ..., p^e times it. */
    size_t cap = 1;
    for (size_t i = 0; i < f.n;) {
        size_t e = 0;
        u128 p = f.p[i];
        while (i < f.n && f.p[i] == p) {
            e++;
            i++;
        }
        cap *= e + 1;
    }
    u128* d = mallocCheck(cap * sizeof(u128));
    size_t nd = 1;
    d[0] = 1;
    for (size_t i = 0; i < f.n;) {
        size_t e = 0;
        u128 p = f.p[i];
        while (i < f.n && f.p[i] == p) {
            e++;
            i++;
        }
        size_t base = nd;
        u128 pk = 1;
        for (size_t k = 1; k <= e; k++) {
            pk *= p;
            for (size_t j = 0; j < base; j++) d[nd++] = d[j] * pk;
        }
    }
    free(f.p);
    qsort(d, nd, sizeof(u128), cmp_u128);
    *out = d;
    *count = nd;
    return 0;
}
