/* Tokenizers. Two families behind one interface (the Tokenizer functions below):
 *   - "byte": each UTF-8 byte is a token 0..255; prompts start with TOK_BOS and completions
 *     end with TOK_EOS (model/gpt.h). The swarm's byte-level GPT uses it, through the tok_*
 *     functions; received rollouts are plain text, re-encoded here.
 *   - "bpe": a byte-level BPE read from a Hugging Face tokenizer.json, equal id for id and
 *     text for text to the `tokenizers` library (model/text/bpe_tokenizer.h says what is
 *     supported). */
#ifndef SAPO_MODEL_TOKENIZER_H
#define SAPO_MODEL_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

/* ---- the byte tokenizer, directly ---------------------------------------------------- */

/* Writes TOK_BOS then the bytes of text (at most max_tokens in all, keeping the END of a
 * text that does not fit, so the question's tail and the answer cue survive); returns the
 * number of tokens written. */
int tok_encode_prompt(const char* text, int* out, int max_tokens);
/* The bytes of text, no specials; returns the count (truncated at max_tokens). */
int tok_encode(const char* text, int* out, int max_tokens);
/* Bytes of tokens[0..n) as a NUL-terminated heap string; special tokens are skipped. */
char* tok_decode(const int* tokens, int n);

/* ---- the interface ------------------------------------------------------------------- */

typedef struct Tokenizer Tokenizer;

/* The byte tokenizer: encode gives the bytes of the text (as tok_encode, no specials; all
 * len bytes, where tok_encode stops at a NUL),
 * decode the bytes of ids 0..255 (as tok_decode: specials skipped, bytes as they are). */
Tokenizer* tokenizer_byte(void);
/* A BPE tokenizer from a tokenizer.json; NULL with a one-line reason in err. */
Tokenizer* tokenizer_load(const char* tokenizer_json_path, char* err, size_t errlen);
void tokenizer_free(Tokenizer* t);

/* The ids of text[0..len) as a heap array (*ids, never NULL on success; *n of them). BPE: no
 * tokens are added around the text (the files supported add none). 0, or -1 with a reason in
 * err (BPE: text that is not valid UTF-8). */
int tokenizer_encode(const Tokenizer* t, const char* text, size_t len, int** ids, int* n, char* err, size_t errlen);
/* The text of ids[0..n) as a NUL-terminated heap string. BPE: special tokens included as
 * their text, bytes that are not valid UTF-8 as U+FFFD, unknown ids skipped (the library's
 * decode(ids, skip_special_tokens=False)). */
char* tokenizer_decode(const Tokenizer* t, const int* ids, int n);
/* The same, with the byte length in *len (the text may hold U+0000). */
char* tokenizer_decode_n(const Tokenizer* t, const int* ids, int n, size_t* len);

int tokenizer_vocab(const Tokenizer* t); /* 1 + the highest id, added tokens included (byte: GPT_VOCAB) */
/* The id of a token given by its text ("<|im_end|>", "<|endoftext|>", "<|im_start|>"), or -1
 * when absent. The byte tokenizer names none of its specials: always -1. */
int tokenizer_token_id(const Tokenizer* t, const char* token_text);
const char* tokenizer_kind(const Tokenizer* t); /* "byte" or "bpe" */
/* FNV-1a (core/fnv1a.h) of what decides the ids: vocabulary, merges, added tokens and the
 * text pipeline; two tokenizers with equal fingerprints tokenize alike. */
uint64_t tokenizer_fingerprint(const Tokenizer* t);

#endif
