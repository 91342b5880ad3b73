/* The byte tokenizer, and the Tokenizer interface over it and the BPE (see tokenizer.h). */
#include "model/tokenizer.h"

#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "core/fnv1a.h"
#include "model/text/bpe_tokenizer.h"
#include "model/model.h"

int tok_encode(const char* text, int* out, int max_tokens) {
    int n = 0;
    for (const unsigned char* p = (const unsigned char*)text; *p && n < max_tokens; p++) out[n++] = *p;
    return n;
}

int tok_encode_prompt(const char* text, int* out, int max_tokens) {
    if (max_tokens <= 0) return 0;
    size_t len = strlen(text);
    size_t room = (size_t)max_tokens - 1;
    const char* start = len > room ? text + (len - room) : text;
    out[0] = TOK_BOS;
    return 1 + tok_encode(start, out + 1, max_tokens - 1);
}

char* tok_decode(const int* tokens, int n) {
    char* s = mallocCheck((size_t)n + 1);
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (tokens[i] >= 0 && tokens[i] < 256) s[k++] = (char)tokens[i];
    }
    s[k] = '\0';
    return s;
}

/* ---- the interface ------------------------------------------------------------------- */

typedef enum { KIND_BYTE, KIND_BPE } TokenizerKind;

struct Tokenizer {
    TokenizerKind kind;
    BpeTokenizer* bpe; /* KIND_BPE */
};

Tokenizer* tokenizer_byte(void) {
    Tokenizer* t = callocCheck(1, sizeof *t);
    t->kind = KIND_BYTE;
    return t;
}

Tokenizer* tokenizer_load(const char* path, char* err, size_t errlen) {
    BpeTokenizer* b = bpe_load(path, err, errlen);
    if (!b) return NULL;
    Tokenizer* t = callocCheck(1, sizeof *t);
    t->kind = KIND_BPE;
    t->bpe = b;
    return t;
}

void tokenizer_free(Tokenizer* t) {
    if (!t) return;
    bpe_free(t->bpe);
    free(t);
}

int tokenizer_encode(const Tokenizer* t, const char* text, size_t len, int** ids, int* n, char* err, size_t errlen) {
    if (t->kind == KIND_BPE) return bpe_encode(t->bpe, text, len, ids, n, err, errlen);
    int* v = mallocCheck((len ? len : 1) * sizeof *v);
    for (size_t i = 0; i < len; i++) v[i] = (unsigned char)text[i];
    *ids = v;
    *n = (int)len;
    return 0;
}

char* tokenizer_decode_n(const Tokenizer* t, const int* ids, int n, size_t* len) {
    if (t->kind == KIND_BPE) return bpe_decode(t->bpe, ids, n, len);
    char* s = tok_decode(ids, n);
    if (len) {
        /* tok_decode keeps byte 0 too; count what it wrote rather than strlen. */
        size_t k = 0;
        for (int i = 0; i < n; i++)
            if (ids[i] >= 0 && ids[i] < 256) k++;
        *len = k;
    }
    return s;
}

char* tokenizer_decode(const Tokenizer* t, const int* ids, int n) { return tokenizer_decode_n(t, ids, n, NULL); }

int tokenizer_vocab(const Tokenizer* t) { return t->kind == KIND_BPE ? bpe_vocab(t->bpe) : GPT_VOCAB; }

int tokenizer_token_id(const Tokenizer* t, const char* token_text) {
    return t->kind == KIND_BPE ? bpe_token_id(t->bpe, token_text) : -1;
}

const char* tokenizer_kind(const Tokenizer* t) { return t->kind == KIND_BPE ? "bpe" : "byte"; }

uint64_t tokenizer_fingerprint(const Tokenizer* t) {
    if (t->kind == KIND_BPE) return bpe_fingerprint(t->bpe);
    int spec[4] = {256, TOK_BOS, TOK_EOS, TOK_PAD};
    return fnv1a_update(fnv1a_update(FNV1A_OFFSET, "byte", 5), spec, sizeof spec);
}
