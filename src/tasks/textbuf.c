/* Growable text buffer (see textbuf.h). */
#include "tasks/textbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"

static void textbuf_reserve(TextBuf* b, size_t extra) {
    if (b->len + extra + 1 <= b->cap) return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra + 1) cap *= 2;
    char* p = realloc(b->data, cap);
    if (!p) sapo_die("out of memory growing a text buffer to %zu bytes", cap);
    b->data = p;
    b->cap = cap;
}

void textbuf_append_n(TextBuf* b, const char* s, size_t n) {
    textbuf_reserve(b, n);
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void textbuf_append(TextBuf* b, const char* s) { textbuf_append_n(b, s, strlen(s)); }

void textbuf_printf(TextBuf* b, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) sapo_die("bad format string '%s'", fmt);
    textbuf_reserve(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

char* textbuf_take(TextBuf* b) {
    textbuf_reserve(b, 0);
    char* s = b->data;
    b->data = NULL;
    b->len = b->cap = 0;
    return s;
}

void textbuf_free(TextBuf* b) {
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
