/* A growable NUL-terminated text buffer with printf-style appends, for building question
 * texts and answers whose length is not known in advance. Allocation failure is fatal. */
#ifndef SAPO_TASKS_TEXTBUF_H
#define SAPO_TASKS_TEXTBUF_H

#include <stddef.h>

typedef struct {
    char* data; /* always NUL-terminated once anything was appended */
    size_t len;
    size_t cap;
} TextBuf;

void textbuf_append(TextBuf* b, const char* s);
void textbuf_append_n(TextBuf* b, const char* s, size_t n);
void textbuf_printf(TextBuf* b, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
/* Hands the text to the caller (heap, never NULL) and leaves the buffer empty. */
char* textbuf_take(TextBuf* b);
void textbuf_free(TextBuf* b);

#endif
