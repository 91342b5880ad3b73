/* Growable text buffer (see textbuf.h). */
#include "tasks/infra/textbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"

static void textbuf_reserve(TextBuf* b, size_t extra) {
    if (!b->data) textbuf_init(b);
    if (b->len + extra + 1 <= b->cap) return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra + 1) cap *= 2;
    char* p = realloc(b->data, cap);
    if (!p) sapo_die("out of memory growing a text buffer to %zu bytes", cap);
    b->data = p;
    b->cap = cap;
}

void textbuf_init(TextBuf* b) {
    b->cap = 64;
    b->len = 0;
    b->data = mallocCheck(b->cap);
    b->data[0] = 0;
}

void textbuf_free(TextBuf* b) {
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

void textbuf_append_n(TextBuf* b, const char* s, size_t n) {
    textbuf_reserve(b, n);
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
}

void textbuf_append(TextBuf* b, const char* s) { textbuf_append_n(b, s, strlen(s)); }

void textbuf_append_char(TextBuf* b, char c) { textbuf_append_n(b, &c, 1); }

void textbuf_append_repeat(TextBuf* b, char c, size_t n) {
    textbuf_reserve(b, n);
    memset(b->data + b->len, c, n);
    b->len += n;
    b->data[b->len] = 0;
}

static void textbuf_vappendf(TextBuf* b, const char* fmt, va_list ap) {
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    if (n < 0) sapo_die("bad format string '%s'", fmt);
    textbuf_reserve(b, (size_t)n);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, again);
    va_end(again);
    b->len += (size_t)n;
}

void textbuf_appendf(TextBuf* b, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    textbuf_vappendf(b, fmt, ap);
    va_end(ap);
}

void textbuf_printf(TextBuf* b, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    textbuf_vappendf(b, fmt, ap);
    va_end(ap);
}

void textbuf_append_codepoint(TextBuf* b, uint32_t cp) {
    char s[4];
    size_t n;
    if (cp < 0x80) {
        s[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        s[0] = (char)(0xC0 | (cp >> 6));
        s[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        s[0] = (char)(0xE0 | (cp >> 12));
        s[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        s[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        s[0] = (char)(0xF0 | (cp >> 18));
        s[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        s[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        s[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    textbuf_append_n(b, s, n);
}

char* textbuf_take(TextBuf* b) {
    if (!b->data) textbuf_init(b);
    char* s = b->data;
    b->data = NULL;
    b->len = b->cap = 0;
    return s;
}
