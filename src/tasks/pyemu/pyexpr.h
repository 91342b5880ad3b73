/* Python's evaluation of an arithmetic expression text, over a number type the caller
 * supplies: number literals, parentheses, unary + and -, binary + - * / with Python's
 * precedence (unary signs bind tighter than * and /, which bind tighter than + and -) and
 * left-to-right association; spaces between tokens are skipped. basic_arithmetic evaluates
 * its text with Python ints ("/" read as "//"), decimal_arithmetic with Decimals in a
 * context: each hands in a PyExprOps table of its number operations. */
#ifndef SAPO_TASKS_PYEXPR_H
#define SAPO_TASKS_PYEXPR_H

#include <stddef.h>

/* The most bytes a value of the number type may take (the parser keeps temporaries on its
 * stack). */
#define PYEXPR_VALUE_MAX 64

typedef struct {
    size_t value_size; /* sizeof the number type, at most PYEXPR_VALUE_MAX */
    void (*init)(void* value);
    void (*free)(void* value);
    int decimal_point; /* literals are digits and '.' (else digits only) */
    /* value = the literal text[0..len) */
    void (*literal)(void* value, const char* text, size_t len, void* ctx);
    /* value = -value; NULL where the texts have no unary signs (one is then a syntax error) */
    void (*negate)(void* value, void* ctx);
    /* acc = acc op rhs for op in + - * /: NULL, or the Python exception raised */
    const char* (*binary)(char op, void* acc, const void* rhs, void* ctx);
} PyExprOps;

/* Evaluates the whole of text into *value (initialised by the caller). Returns 0, or -1
 * with *why the syntax error or the exception Python raises. */
int pyexpr_eval(const char* text, const PyExprOps* ops, void* ctx, void* value, const char** why);

#endif
