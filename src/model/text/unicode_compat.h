/* Where the Unicode data of the `tokenizers` library (0.21) and of the C libraries sapo uses
 * disagree, what the library does wins, so that token ids stay equal for every code point:
 *   - its regexes (Oniguruma, Unicode 16) know letters and numbers that PCRE2 10.42
 *     (Unicode 14) does not, and do not count U+180E as \s (PCRE2 does);
 *   - its NFC (the unicode-normalization-alignments crate, Unicode 10 data) does not know
 *     about 110 combining characters and one composition that utf8proc (Unicode 15) knows:
 *     to it they are starters that neither reorder nor compose.
 * The tables were derived by running both sides over every code point, and
 * tests/reference/test_bpe_tokenizer.py checks them over every code point again. */
#ifndef SAPO_MODEL_UNICODE_COMPAT_H
#define SAPO_MODEL_UNICODE_COMPAT_H

#include <stddef.h>
#include <stdint.h>

/* The character PCRE2 should see in place of cp so that \p{L}, \p{N} and \s classify it as
 * the library's regexes do: a stand-in of the same UTF-8 length (a letter, a number, or a
 * format character), or 0 when cp needs none. */
uint32_t ucompat_regex_stand_in(uint32_t cp);

/* True when the library's NFC does not know cp (a starter there; utf8proc would reorder or
 * compose it). */
int ucompat_nfc_opaque(uint32_t cp);

#endif
