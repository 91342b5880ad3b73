/* The text side of a Hugging Face tokenizer.json before its BPE model: the normalizer and
 * the pre-tokenizer, read from the file and run as the `tokenizers` library runs them.
 * Supported (what the Qwen2.5 and SmolLM2 files use): normalizer null or NFC (libutf8proc);
 * pre_tokenizer a Sequence of, or one of, Split (a Regex or String pattern, any behavior,
 * invert), Digits (individual_digits) and ByteLevel (add_prefix_space, use_regex with the
 * GPT-2 pattern), ByteLevel last. Regexes are compiled with PCRE2 (UTF + Unicode
 * properties) from the file's own pattern text. Any other component is refused with a
 * one-line error naming it. */
#ifndef SAPO_MODEL_PRETOKENIZE_H
#define SAPO_MODEL_PRETOKENIZE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

typedef struct Pretok Pretok;

/* The pieces of one text after pre-tokenization: each span refers to buf (a copy of the
 * text, plus the prefixed copies ByteLevel's add_prefix_space makes). Reused across calls. */
typedef struct {
    size_t off, len;
} PretokSpan;
typedef struct {
    char* buf;
    char* view; /* buf as the regexes see it (model/text/unicode_compat.h): same length, same offsets */
    size_t buf_len, buf_cap;
    PretokSpan* spans;
    int n, cap;
    PretokSpan* scratch; /* the next step's spans while a step runs */
    int scratch_cap;
} PretokPieces;

/* From tokenizer.json's "normalizer" and "pre_tokenizer" members (NULL or JSON null: none).
 * NULL with "tokenizer.json: ..." in err when a component is not supported or malformed. */
Pretok* pretok_from_json(const cJSON* normalizer, const cJSON* pre_tokenizer, char* err, size_t errlen);
void pretok_free(Pretok* p);

/* True when the pipeline ends with ByteLevel (the BPE model then reads bytes). */
int pretok_byte_level(const Pretok* p);

/* The normalized text of s[0..len) (valid UTF-8): *out is s itself when normalization leaves
 * it unchanged (no normalizer, or ASCII text under NFC), else a heap copy the caller frees
 * (*owned set to 1). 0, or -1 with a reason in err. */
int pretok_normalize(const Pretok* p, const char* s, size_t len, const char** out, size_t* out_len, int* owned,
                     char* err, size_t errlen);

/* Splits normalized text s[0..len) into pieces (replacing what pieces held); empty pieces are
 * dropped as the library drops them. 0, or -1 with a reason in err (a regex failure). */
int pretok_split(const Pretok* p, const char* s, size_t len, PretokPieces* pieces, char* err, size_t errlen);
void pretok_pieces_free(PretokPieces* pieces);

/* Folds a canonical description of the pipeline (component types, patterns, flags) into an
 * FNV-1a digest: two pipelines that tokenize differently fold differently. */
uint64_t pretok_fingerprint(const Pretok* p, uint64_t h);

#endif
