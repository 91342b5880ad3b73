/* UTF-8 validation and lossy decoding (see utf8_text.h). */
#include "model/text/utf8_text.h"

#include <string.h>

#include "core/check.h"

/* How many bytes of a well-formed sequence start at s[0..len): its full length when it is
 * complete, else the negated length of the longest valid prefix (a maximal subpart: at
 * least 1 byte, which is what one U+FFFD stands for). */
static int utf8_sequence(const unsigned char* s, size_t len) {
    unsigned c = s[0];
    if (c < 0x80) return 1;
    int need;
    unsigned lo = 0x80, hi = 0xBF; /* the range of the second byte */
    if (c >= 0xC2 && c <= 0xDF) need = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        need = 3;
        if (c == 0xE0) lo = 0xA0;      /* no overlong forms */
        else if (c == 0xED) hi = 0x9F; /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 4;
        if (c == 0xF0) lo = 0x90;
        else if (c == 0xF4) hi = 0x8F; /* at most U+10FFFF */
    } else return -1;
    size_t k = 1;
    for (; k < (size_t)need; k++) {
        if (k >= len) return -(int)k;
        unsigned b = s[k];
        if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) return -(int)k;
    }
    return need;
}

size_t utf8_valid_prefix(const char* s, size_t len) {
    const unsigned char* p = (const unsigned char*)s;
    size_t i = 0;
    while (i < len) {
        if (p[i] < 0x80) { /* ASCII runs are most of any text */
            i++;
            continue;
        }
        int n = utf8_sequence(p + i, len - i);
        if (n < 0) return i;
        i += (size_t)n;
    }
    return len;
}

uint32_t utf8_next(const char* s, size_t* i) {
    const unsigned char* p = (const unsigned char*)s + *i;
    uint32_t c = p[0];
    if (c < 0x80) {
        *i += 1;
        return c;
    }
    if (c < 0xE0) {
        *i += 2;
        return ((c & 0x1F) << 6) | (p[1] & 0x3F);
    }
    if (c < 0xF0) {
        *i += 3;
        return ((c & 0x0F) << 12) | ((uint32_t)(p[1] & 0x3F) << 6) | (p[2] & 0x3F);
    }
    *i += 4;
    return ((c & 0x07) << 18) | ((uint32_t)(p[1] & 0x3F) << 12) | ((uint32_t)(p[2] & 0x3F) << 6) | (p[3] & 0x3F);
}

char* utf8_lossy(const char* s, size_t len, size_t* out_len) {
    /* Each invalid byte grows to at most the 3 bytes of U+FFFD. */
    char* out = mallocCheck(3 * len + 1);
    const unsigned char* p = (const unsigned char*)s;
    size_t i = 0, k = 0;
    while (i < len) {
        int n = utf8_sequence(p + i, len - i);
        if (n > 0) {
            memcpy(out + k, p + i, (size_t)n);
            k += (size_t)n;
            i += (size_t)n;
        } else {
            memcpy(out + k, "\xEF\xBF\xBD", 3);
            k += 3;
            i += (size_t)(-n);
        }
    }
    out[k] = '\0';
    if (out_len) *out_len = k;
    return out;
}
