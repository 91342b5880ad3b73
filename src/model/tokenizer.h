/* Byte-level tokenizer: each UTF-8 byte is a token 0..255; prompts start with TOK_BOS and
 * completions end with TOK_EOS. Received rollouts are plain text, re-encoded here. */
#ifndef SAPO_MODEL_TOKENIZER_H
#define SAPO_MODEL_TOKENIZER_H

#include <stddef.h>

/* Writes TOK_BOS then the bytes of text (at most max_tokens in all, keeping the END of a
 * text that does not fit, so the question's tail and the answer cue survive); returns the
 * number of tokens written. */
int tok_encode_prompt(const char* text, int* out, int max_tokens);
/* The bytes of text, no specials; returns the count (truncated at max_tokens). */
int tok_encode(const char* text, int* out, int max_tokens);
/* Bytes of tokens[0..n) as a NUL-terminated heap string; special tokens are skipped. */
char* tok_decode(const int* tokens, int n);

#endif
