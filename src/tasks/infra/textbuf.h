/* A growable NUL-terminated text buffer: the task generators build questions, programs and
 * JSON-ready strings piece by piece. A zeroed TextBuf is a valid empty buffer. Out of memory
 * stops the program (sapo_die). */
#ifndef SAPO_TASKS_TEXTBUF_H
#define SAPO_TASKS_TEXTBUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    char* data; /* always NUL-terminated once initialised */
    size_t len;
    size_t cap;
} TextBuf;

void textbuf_init(TextBuf* b);
void textbuf_free(TextBuf* b);
void textbuf_append(TextBuf* b, const char* s);
void textbuf_append_n(TextBuf* b, const char* s, size_t n);
void textbuf_append_char(TextBuf* b, char c);
void textbuf_append_repeat(TextBuf* b, char c, size_t n);
void textbuf_appendf(TextBuf* b, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same as textbuf_appendf (both ports' names, kept when their branches were merged). */
void textbuf_printf(TextBuf* b, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
/* One Unicode code point as UTF-8 (code points of lone surrogates are written as their
 * 3-byte form, as Python's surrogatepass would). */
void textbuf_append_codepoint(TextBuf* b, uint32_t cp);
/* Hands the string to the caller (heap, never NULL) and leaves the buffer empty. */
char* textbuf_take(TextBuf* b);

#endif
