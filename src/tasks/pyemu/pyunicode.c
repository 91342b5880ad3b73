/* Python str semantics over UTF-8 (see pyunicode.h). The tables are CPython 3.11's
 * (Unicode 14.0): str.isspace() code points, and the first code point of each run of ten
 * Unicode decimal digits (every Nd run is a contiguous 0..9, checked when this was made
 * with `unicodedata.decimal`). */
#include "tasks/pyemu/pyunicode.h"

#include <math.h>

uint32_t pyu_next(const char* str, size_t len, size_t* i) {
    const unsigned char* s = (const unsigned char*)str;
    size_t at = *i;
    unsigned c = s[at];
    int n;
    uint32_t min;
    if (c < 0x80) {
        *i = at + 1;
        return c;
    }
    if (c >= 0xC2 && c <= 0xDF) { n = 2; min = 0x80; }
    else if (c >= 0xE0 && c <= 0xEF) { n = 3; min = 0x800; }
    else if (c >= 0xF0 && c <= 0xF4) { n = 4; min = 0x10000; }
    else { *i = at + 1; return 0xDC00u + c; }
    if (at + (size_t)n > len) { *i = at + 1; return 0xDC00u + c; }
    uint32_t cp = c & (0x7Fu >> n);
    for (int k = 1; k < n; k++) {
        if ((s[at + k] & 0xC0) != 0x80) { *i = at + 1; return 0xDC00u + c; }
        cp = (cp << 6) | (s[at + k] & 0x3Fu);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) { *i = at + 1; return 0xDC00u + c; }
    *i = at + (size_t)n;
    return cp;
}

int pyu_isspace(uint32_t cp) {
    if (cp <= 0x20) return cp == 0x20 || (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x1F);
    if (cp < 0x85) return 0;
    switch (cp) {
        case 0x85: case 0xA0: case 0x1680: case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000:
            return 1;
        default:
            return cp >= 0x2000 && cp <= 0x200A;
    }
}

static const uint32_t DIGIT_ZEROS[] = {
    0x30, 0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66, 0xCE6, 0xD66, 0xDE6,
    0xE50, 0xED0, 0xF20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90, 0x1B50, 0x1BB0,
    0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10, 0x104A0, 0x10D30,
    0x11066, 0x110F0, 0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0, 0x11650, 0x116C0, 0x11730, 0x118E0,
    0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x16A60, 0x16AC0, 0x16B50, 0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC,
    0x1D7F6, 0x1E140, 0x1E2F0, 0x1E950, 0x1FBF0,
};

int pyu_decimal(uint32_t cp) {
    if (cp >= 0x30 && cp <= 0x39) return (int)(cp - 0x30);
    if (cp < 0x660) return -1;
    /* Largest run start <= cp, by binary search over the sorted table. */
    size_t lo = 0, hi = sizeof DIGIT_ZEROS / sizeof DIGIT_ZEROS[0];
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (DIGIT_ZEROS[mid] <= cp) lo = mid; else hi = mid;
    }
    uint32_t off = cp - DIGIT_ZEROS[lo];
    return off < 10 ? (int)off : -1;
}

void pyu_strip(const char* s, size_t len, size_t* b, size_t* e) {
    size_t i = 0, start = len, end = 0;
    /* First non-space code point start, and the end of the last non-space one. */
    while (i < len) {
        size_t at = i;
        uint32_t cp = pyu_next(s, len, &i);
        if (!pyu_isspace(cp)) {
            if (start == len) start = at;
            end = i;
        }
    }
    if (start == len) { *b = *e = 0; return; }
    *b = start;
    *e = end;
}

/* One code point as int()'s ASCII transform sees it: an ASCII byte as itself, other
 * whitespace as ' ', a decimal digit of any script as '0'..'9', anything else as '?'
 * (which int() then rejects). */
static char int_transform(uint32_t cp) {
    if (cp < 127) return (char)cp;
    if (pyu_isspace(cp)) return ' ';
    int d = pyu_decimal(cp);
    return d >= 0 ? (char)('0' + d) : '?';
}

static int ascii_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

int pyu_parse_int(const char* s, size_t len, PyInt* out) {
    enum { MAX_DIGITS = 4300 };
    size_t i = 0;
    char c = 0;
    int have = 0; /* c holds the current transformed character */
#define PEEK() (have ? c : (i < len ? (c = int_transform(pyu_next(s, len, &i)), have = 1, c) : '\0'))
#define TAKE() (have = 0)
    out->big = 0;
    out->negative = 0;
    out->value = 0;
    while (PEEK() && ascii_space(c)) TAKE();
    if (PEEK() == '+') TAKE();
    else if (c == '-') { out->negative = 1; TAKE(); }
    if (PEEK() == '_') return -1;
    uint64_t mag = 0;
    int digits = 0, prev_us = 0;
    for (;;) {
        char d = PEEK();
        if (d == '_') {
            if (prev_us) return -1;
            prev_us = 1;
            TAKE();
            continue;
        }
        if (d < '0' || d > '9') break;
        prev_us = 0;
        digits++;
        if (digits > MAX_DIGITS) return -1;
        if (!out->big) {
            unsigned dv = (unsigned)(d - '0');
            if (mag > (UINT64_MAX - dv) / 10) out->big = 1;
            else mag = mag * 10 + dv;
        }
        TAKE();
    }
    if (prev_us || digits == 0) return -1;
    while (PEEK() && ascii_space(c)) TAKE();
    PEEK();
    if (have) return -1; /* something other than trailing space is left (a NUL byte too) */
#undef PEEK
#undef TAKE
    if (!out->big) {
        if (out->negative) {
            if (mag > (uint64_t)INT64_MAX + 1) out->big = 1;
            else out->value = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
        } else {
            if (mag > (uint64_t)INT64_MAX) out->big = 1;
            else out->value = (int64_t)mag;
        }
    }
    if (!out->big) out->negative = out->value < 0;
    return 0;
}

int pyu_int_equals_double(const PyInt* v, double d) {
    if (v->big || !isfinite(d) || d != floor(d)) return 0;
    /* Every int64 is within [-2^63, 2^63); compare exactly in that range. */
    if (d < -9223372036854775808.0 || d >= 9223372036854775808.0) return 0;
    return (int64_t)d == v->value;
}
