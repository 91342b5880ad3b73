/* eval() of an answer text for the subset of Python a matrix (or any nested list of
 * numbers and strings) is written in, as binary_matrix's verifier needs: list and tuple
 * displays, parentheses, integer literals (every form: 0x/0o/0b, underscores), str and
 * bytes literals (prefixes, escapes, implicit concatenation, f-strings without replacement
 * fields), True/False/None, unary + - ~ and binary + - (int arithmetic within 64 bits,
 * concatenation), with the tokenizer's rules on comments, blank lines, indentation, line
 * continuations and nesting (200 brackets). Any other construct (names, calls, other
 * operators, subscripts, conditionals, comprehensions, f-strings with replacement fields,
 * \N{...} escapes, more than 1000 operators) is refused, where Python might compute a
 * value. */
#ifndef SAPO_TASKS_PYLITERAL_H
#define SAPO_TASKS_PYLITERAL_H

#include <stddef.h>
#include <stdint.h>

typedef enum { PYLIT_INT, PYLIT_BOOL, PYLIT_NONE, PYLIT_STR, PYLIT_BYTES, PYLIT_LIST, PYLIT_TUPLE } PyLiteralKind;

/* A value of the subset. Text is kept one byte per code point: ASCII as itself, anything
 * else as 0xFF, which never equals a byte of an oracle (digits, spaces, newlines). */
typedef struct PyLiteral {
    PyLiteralKind kind;
    int64_t i;       /* PYLIT_INT, PYLIT_BOOL */
    int big;         /* PYLIT_INT beyond int64 */
    char* text;      /* PYLIT_STR, PYLIT_BYTES: len bytes, not NUL-terminated; may be NULL when len is 0 */
    size_t len, text_cap;
    struct PyLiteral** items; /* PYLIT_LIST, PYLIT_TUPLE */
    size_t n, cap;
} PyLiteral;

/* eval(text[0..n)): the value, or NULL where Python raises or the text is outside the
 * subset. Free it with pyliteral_free. */
PyLiteral* pyliteral_eval(const char* text, size_t n);
void pyliteral_free(PyLiteral* v);

#endif
