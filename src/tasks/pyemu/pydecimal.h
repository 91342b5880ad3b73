/* The subset of Python's decimal module (CPython 3.11, libmpdec) that decimal_arithmetic
 * uses: Decimal(str) with its exact parsing rules (Unicode digits and spaces, underscores,
 * Infinity/NaN, exponent limits), + - * / rounded to a context precision with
 * ROUND_HALF_EVEN and the default exponent limits (Emax 999999, Emin -999999), the signals
 * that raise (InvalidOperation, DivisionByZero, Overflow), str(), and comparing |x| with a
 * power of ten. Values are sign, coefficient (a BigInt) and exponent. */
#ifndef SAPO_TASKS_PYDECIMAL_H
#define SAPO_TASKS_PYDECIMAL_H

#include <stddef.h>
#include <stdint.h>

#include "tasks/pyemu/bigint.h"

typedef enum { PYDEC_FINITE = 0, PYDEC_INF, PYDEC_NAN, PYDEC_SNAN } PyDecKind;

typedef struct {
    PyDecKind kind;
    int neg;
    BigInt coef; /* >= 0; meaningful for finite values */
    int64_t exp; /* value = (-1)^neg * coef * 10^exp */
} PyDec;

/* What a Python operation did: 0 fine, else the trapped signal Python raises. */
typedef enum {
    PYDEC_OK = 0,
    PYDEC_INVALID,  /* decimal.InvalidOperation (also 0/0: DivisionUndefined) */
    PYDEC_DIVZERO,  /* decimal.DivisionByZero */
    PYDEC_OVERFLOW, /* decimal.Overflow */
} PyDecStatus;

/* The arithmetic context: precision; Emax / Emin are Python's defaults. */
typedef struct {
    int64_t prec;
} PyDecContext;

#define PYDEC_EMAX 999999
#define PYDEC_EMIN (-999999)

void pydec_init(PyDec* d);
void pydec_free(PyDec* d);
void pydec_copy(PyDec* dst, const PyDec* src);
/* A finite value coef * 10^exp with a sign. */
void pydec_set(PyDec* d, int neg, const BigInt* coef, int64_t exp);

/* Decimal(s[0..len)) for UTF-8 text. Returns 0, or -1 where Python raises
 * InvalidOperation (syntax, or a value the constructor cannot hold exactly). */
int pydec_parse(PyDec* d, const char* s, size_t len);

/* r = a op b in the context (finite operands only). r may alias a or b. On a non-OK status
 * r is left unspecified. */
PyDecStatus pydec_add(PyDec* r, const PyDec* a, const PyDec* b, const PyDecContext* ctx);
PyDecStatus pydec_sub(PyDec* r, const PyDec* a, const PyDec* b, const PyDecContext* ctx);
PyDecStatus pydec_mul(PyDec* r, const PyDec* a, const PyDec* b, const PyDecContext* ctx);
PyDecStatus pydec_div(PyDec* r, const PyDec* a, const PyDec* b, const PyDecContext* ctx);

/* str(d) (to-scientific-string, capital E): heap, never NULL. */
char* pydec_to_string(const PyDec* d);

/* For a finite d: -1, 0, 1 as |d| is below, equal to, above 10^p. */
int pydec_cmp_abs_pow10(const PyDec* d, int64_t p);

#endif
