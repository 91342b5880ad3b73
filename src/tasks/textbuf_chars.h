/* Character-level appends to a TextBuf (tasks/textbuf.h) that the arc_1d, bf and
 * propositional_logic ports need: one byte, a run of one byte, one code point as UTF-8. */
#ifndef SAPO_TASKS_TEXTBUF_CHARS_H
#define SAPO_TASKS_TEXTBUF_CHARS_H

#include <stddef.h>
#include <stdint.h>

#include "tasks/textbuf.h"

void textbuf_append_char(TextBuf* b, char c);
void textbuf_append_repeat(TextBuf* b, char c, size_t n);
/* Lone surrogates (U+D800..U+DFFF) are written in their 3-byte form, as Python's
 * surrogatepass would. */
void textbuf_append_codepoint(TextBuf* b, uint32_t cp);

#endif
