/* Character-level TextBuf appends (see textbuf_chars.h). */
#include "tasks/textbuf_chars.h"

#include <stdlib.h>
#include <string.h>

void textbuf_append_char(TextBuf* b, char c) { textbuf_append_n(b, &c, 1); }

void textbuf_append_repeat(TextBuf* b, char c, size_t n) {
    char chunk[256];
    memset(chunk, c, sizeof chunk);
    while (n) {
        size_t k = n < sizeof chunk ? n : sizeof chunk;
        textbuf_append_n(b, chunk, k);
        n -= k;
    }
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
