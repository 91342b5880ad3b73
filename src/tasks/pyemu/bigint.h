/* Arbitrary-precision signed integers with Python int semantics for the few operations the
 * arithmetic task ports need: + - *, floor division and modulo (Python's // and %), gcd,
 * powers of ten and decimal text. Limbs are base 10^9 so decimal digits, shifts by powers of
 * ten and str() are cheap; sizes here are tens of digits, so the schoolbook algorithms are
 * plenty. Every result argument may alias an operand. Allocation failure is fatal. */
#ifndef SAPO_TASKS_BIGINT_H
#define SAPO_TASKS_BIGINT_H

#include <stddef.h>
#include <stdint.h>

#define BIGINT_BASE 1000000000u

typedef struct {
    uint32_t* limb; /* little-endian base-10^9 limbs; no leading zero limb */
    size_t len;     /* 0 for the value zero */
    size_t cap;
    int neg;        /* 1 for a negative value (never for zero) */
} BigInt;

void bigint_init(BigInt* a);
void bigint_free(BigInt* a);
void bigint_copy(BigInt* dst, const BigInt* src);
void bigint_swap(BigInt* a, BigInt* b);

void bigint_set_i64(BigInt* a, int64_t v);
void bigint_set_u128(BigInt* a, unsigned __int128 v);
/* The magnitude |a| as unsigned __int128: 0 when it fits, -1 when it does not. */
int bigint_abs_u128(const BigInt* a, unsigned __int128* out);
/* a as int64: 0 when it fits, -1 when it does not. */
int bigint_get_i64(const BigInt* a, int64_t* out);
/* The magnitude from n ASCII digits '0'..'9' (leading zeros allowed, n may be 0 for zero). */
void bigint_set_digits(BigInt* a, const char* digits, size_t n);
/* str(a): heap, never NULL ("-123", "0"). */
char* bigint_to_string(const BigInt* a);
/* Writes the decimal digits of |a| (no sign; "0" for zero) to out, which must hold
 * bigint_ndigits(a) + 1 bytes. */
void bigint_abs_digits(const BigInt* a, char* out);

int bigint_is_zero(const BigInt* a);
/* Decimal digits of |a|; 1 for zero. */
size_t bigint_ndigits(const BigInt* a);
int bigint_cmp(const BigInt* a, const BigInt* b);     /* -1, 0, 1 */
int bigint_cmp_abs(const BigInt* a, const BigInt* b); /* compares |a| and |b| */
int bigint_is_odd(const BigInt* a);

void bigint_neg(BigInt* r, const BigInt* a);
void bigint_abs(BigInt* r, const BigInt* a);
void bigint_add(BigInt* r, const BigInt* a, const BigInt* b);
void bigint_sub(BigInt* r, const BigInt* a, const BigInt* b);
void bigint_mul(BigInt* r, const BigInt* a, const BigInt* b);
void bigint_add_small(BigInt* r, const BigInt* a, uint32_t v); /* r = a + v */
/* Python's q = a // b and m = a % b (floor); q or m may be NULL. Returns -1 when b is zero
 * (Python's ZeroDivisionError), leaving q and m unchanged. */
int bigint_divmod_floor(BigInt* q, BigInt* m, const BigInt* a, const BigInt* b);
/* |a| mod v for 1 <= v < 2^32. */
uint32_t bigint_abs_mod_small(const BigInt* a, uint32_t v);
/* gcd(|a|, |b|) (Python's math.gcd). */
void bigint_gcd(BigInt* r, const BigInt* a, const BigInt* b);

/* r = a * 10^k. */
void bigint_mul_pow10(BigInt* r, const BigInt* a, size_t k);
/* For a >= 0: q = a // 10^k and m = a % 10^k; q or m may be NULL. */
void bigint_divmod_pow10(BigInt* q, BigInt* m, const BigInt* a, size_t k);
/* Number of trailing zero decimal digits of a nonzero a (0 for zero). */
size_t bigint_trailing_zeros(const BigInt* a);

#endif
