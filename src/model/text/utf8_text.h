/* UTF-8 as Rust's str and String::from_utf8_lossy read it: the BPE tokenizer refuses text
 * that is not valid UTF-8 (the `tokenizers` library cannot even be handed such text), and
 * its decoder turns the bytes of an id sequence back into text the way the library does,
 * so a sequence cut inside a character reads exactly as the library prints it. */
#ifndef SAPO_MODEL_UTF8_TEXT_H
#define SAPO_MODEL_UTF8_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* The length of the well-formed prefix of s[0..len): len when all of it is valid UTF-8
 * (shortest forms, no surrogates, at most U+10FFFF). */
size_t utf8_valid_prefix(const char* s, size_t len);

/* The code point starting at s[*i] (valid UTF-8 assumed), *i moved past it. */
uint32_t utf8_next(const char* s, size_t* i);

/* s[0..len) with each maximal invalid subpart replaced by U+FFFD (the Unicode standard's
 * "substitution of maximal subparts", which Rust's from_utf8_lossy follows): a NUL-terminated
 * heap string, its length (NULs inside included) in *out_len when not NULL. */
char* utf8_lossy(const char* s, size_t len, size_t* out_len);

#endif
