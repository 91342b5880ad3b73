/* Python str semantics that verifiers depend on, over UTF-8 text: str.isspace, the
 * Unicode decimal digits that int() and re's \d accept (Unicode 14.0, as CPython 3.11),
 * str.strip(), and int(s) in base 10. A verifier that calls int(answer.strip()) must accept
 * exactly what Python accepts, "٣" and "1_000" included. */
#ifndef SAPO_TASKS_PYUNICODE_H
#define SAPO_TASKS_PYUNICODE_H

#include <stddef.h>
#include <stdint.h>

/* Decodes the code point at s[*i] (i < len) and advances *i. A byte that does not start a
 * valid UTF-8 sequence is returned as 0xDC00 + byte (Python's surrogateescape), one byte
 * long: it is never whitespace, a digit or a letter. */
uint32_t pyu_next(const char* s, size_t len, size_t* i);

/* str.isspace() of one code point (bidi class WS/B/S or category Zs). */
int pyu_isspace(uint32_t cp);
/* unicodedata.decimal(cp): 0..9 for a Unicode decimal digit (category Nd), else -1. */
int pyu_decimal(uint32_t cp);

/* str.strip() with no argument: the byte range [*b, *e) of s[0..len) left after removing
 * leading and trailing whitespace code points. */
void pyu_strip(const char* s, size_t len, size_t* b, size_t* e);

/* Result of int(text) in base 10. */
typedef struct {
    int big;        /* |value| > INT64_MAX: only the sign is kept */
    int negative;   /* sign, meaningful when big */
    int64_t value;  /* the value when !big */
} PyInt;

/* int(s[0..len)) as CPython 3.11 does it: Unicode whitespace around, one optional sign,
 * decimal digits of any script, single underscores between digits, at most 4300 digits
 * (sys.int_info.default_max_str_digits). Returns 0, or -1 where Python raises ValueError. */
int pyu_parse_int(const char* s, size_t len, PyInt* out);

/* Python int == number comparison of a parsed int with a JSON number (a double). */
int pyu_int_equals_double(const PyInt* v, double d);

#endif
