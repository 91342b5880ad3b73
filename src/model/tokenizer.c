/* Byte-level tokenizer (see tokenizer.h). */
#include "model/tokenizer.h"

#include <string.h>

#include "core/check.h"
#include "model/gpt.h"

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
