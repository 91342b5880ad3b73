/* A byte-level BPE tokenizer read from a Hugging Face tokenizer.json, giving the ids and the
 * text that the `tokenizers` library (0.21) gives for the same file: encode(text).ids with
 * its default add_special_tokens=True, and decode(ids, skip_special_tokens=False).
 *
 * The pipeline, as the library runs it: added tokens (special or not) are cut out of the
 * raw text first (leftmost-longest match, honouring single_word, lstrip, rstrip, and
 * normalized: those match the normalized text; single_word's word characters approximate
 * Rust's \w by Unicode category); each remaining piece is normalized and
 * pre-tokenized (model/text/pretokenize.h), every resulting word is mapped to GPT-2's
 * byte-to-character alphabet and merged by merge rank (lowest first, leftmost among equals);
 * a byte the vocabulary lacks becomes the unk_token (runs of them one, with fuse_unk) or,
 * without one, is dropped.
 * Decoding maps each token's characters back to bytes (a token with a character outside the
 * alphabet contributes its own UTF-8 instead) and reads the bytes as
 * String::from_utf8_lossy does. Ids the file does not define are skipped, as the library
 * skips them. The post_processor may be null or ByteLevel (which adds no tokens);
 * truncation and padding must be null. Use model/tokenizer.h rather than this header. */
#ifndef SAPO_MODEL_BPE_TOKENIZER_H
#define SAPO_MODEL_BPE_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

typedef struct BpeTokenizer BpeTokenizer;

/* NULL with a one-line reason in err ("cannot read PATH: ...", "tokenizer.json: pre_tokenizer
 * type 'Metaspace' is not supported", ...). */
BpeTokenizer* bpe_load(const char* path, char* err, size_t errlen);
void bpe_free(BpeTokenizer* t);

/* The ids of text[0..len) in a heap array (*ids, *n; *ids is never NULL on success). 0, or -1
 * with a reason in err (text that is not valid UTF-8). Safe to call from several threads. */
int bpe_encode(const BpeTokenizer* t, const char* text, size_t len, int** ids, int* n, char* err, size_t errlen);
/* The text of ids[0..n) as a NUL-terminated heap string; its byte length in *len (may be NULL). */
char* bpe_decode(const BpeTokenizer* t, const int* ids, int n, size_t* len);

int bpe_vocab(const BpeTokenizer* t);                      /* 1 + the highest id, added tokens included */
int bpe_token_id(const BpeTokenizer* t, const char* text); /* an added token's or vocabulary entry's id, or -1 */
uint64_t bpe_fingerprint(const BpeTokenizer* t);           /* FNV-1a of vocab, merges, added tokens, pipeline */

#endif
